/* SPDX-License-Identifier: Apache-2.0 */
/* Text-line classification and recognition around PP-OCR's angle classifier
 * and CRNN-style recogniser, as PaddleOCR documents them:
 * - a line crop is scaled to the model's height keeping its aspect (at most
 *   the model's width), normalised to (v / 255 - 0.5) / 0.5 in B, G, R
 *   order, and zero-padded on the right;
 * - the recogniser gives per-time-step class probabilities; greedy CTC
 *   decoding keeps each step's best class unless it is the blank (class 0)
 *   or repeats the previous step's; class k > 0 is the dictionary's
 *   (k - 1)th entry, and the class after the dictionary is a space.
 *
 * An ocr_dict owns the file's text; its entries point into it. */
#ifndef EPCTX_OCR_RECOGNIZE_H
#define EPCTX_OCR_RECOGNIZE_H

#include "ocr_image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ocr_dict {
  char* text;         /* the file, NUL-separated entries */
  const char** chars; /* count entries, UTF-8; the last is " " */
  int count;
} ocr_dict;

/* One character per line (PaddleOCR's ppocr_keys_v1.txt), plus the space.
 * 0, or -1 with "PATH: ..." in err. */
int ocr_dict_load(const char* path, ocr_dict* dict, char* err, size_t cap);
void ocr_dict_free(ocr_dict* dict);

/* The [3, in_h, in_w] input for a line crop. -1 when out of memory. */
int ocr_line_input(const ocr_image* crop, int in_h, int in_w, float* out);

/* Greedy CTC over probs [steps, classes] (classes == dict->count + 1). The
 * text (malloc'ed, UTF-8) and the mean probability of its characters (0
 * for none). -1 when out of memory. */
int ocr_ctc_decode(const float* probs, int steps, int classes, const ocr_dict* dict, char** text,
                   float* score);

#ifdef __cplusplus
}
#endif
#endif
