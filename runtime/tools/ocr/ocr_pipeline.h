/* SPDX-License-Identifier: Apache-2.0 */
/* The OCR pipeline of PaddleOCR's TextSystem, independent of the runtime
 * that runs the three models: detect text boxes (ocr_detect.h), crop each
 * box upright by a perspective warp (turning crops at least 1.5 times
 * taller than wide by 90 degrees), let the angle classifier turn crops it
 * reads as upside down (class "180" above `cls_threshold`), recognise each
 * crop (ocr_recognize.h) and keep lines scoring >= `drop_score`, in reading
 * order.
 *
 * The models run through an ocr_engine: epctx-ocr's runs epctx sessions of
 * the compiled packages, the test's runs ONNX Runtime on the original
 * models, so both read the same pixels the same way. */
#ifndef EPCTX_OCR_PIPELINE_H
#define EPCTX_OCR_PIPELINE_H

#include <stdint.h>

#include "json_writer.h"
#include "ocr_detect.h"
#include "ocr_image.h"
#include "ocr_recognize.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ocr_model { OCR_DET = 0, OCR_CLS = 1, OCR_REC = 2, OCR_MODELS = 3 } ocr_model;

/* A model's output, owned by the engine: valid until its next run. */
typedef struct ocr_output {
  const float* data;
  int64_t dims[4];
  size_t rank;
} ocr_output;

typedef struct ocr_engine {
  void* user;
  /* Each model's [1, 3, H, W] input: det and cls take one W. */
  int input_h[OCR_MODELS], input_w[OCR_MODELS];
  /* The recogniser's widths, ascending (several compiled packages, a width
   * bucket each); none: any width. A line takes PaddleOCR's width
   * (max(320, 48 * aspect)), or the smallest bucket that holds it (the
   * largest when none does), zero-padded on the right. */
  const int* rec_widths;
  int rec_width_count;
  /* Where a model's input of this width is written (3 * H * width floats),
   * owned by the engine: the pipeline fills it, then calls run. */
  float* (*input)(void* user, ocr_model model, int width);
  /* Runs one model on its input; 0, or non-zero with a message in err. */
  int (*run)(void* user, ocr_model model, int width, ocr_output* out, char* err, size_t cap);
} ocr_engine;

/* "det", "cls", "rec" */
const char* ocr_model_name(ocr_model model);
/* Whether a model with this input and output shape is of the kind asked:
 * 0, or -1 with "expected ..., found ..." in err. dict_classes is the
 * dictionary's size plus the blank. */
int ocr_check_model(ocr_model model, const int64_t* in_dims, size_t in_rank,
                    const int64_t* out_dims, size_t out_rank, int dict_classes, char* err,
                    size_t cap);

typedef struct ocr_params {
  ocr_det_params det;
  float cls_threshold; /* 0.9 */
  float drop_score;    /* 0.5 */
} ocr_params;

void ocr_params_default(ocr_params* p);

typedef struct ocr_line {
  ocr_quad box;
  char* text; /* UTF-8 */
  float score;
  int angle; /* 0, or 180 when the classifier turned the crop */
} ocr_line;

typedef struct ocr_result {
  ocr_line* lines; /* reading order */
  int count;
  int boxes;      /* detected, before recognition dropped any */
  float* det_map; /* the probability map's valid part, map_h x map_w */
  int map_h, map_w;
  float scale; /* map pixels per image pixel */
  double det_ms, cls_ms, rec_ms, post_ms;
} ocr_result;

/* 0, or -1 with a message in err (and *result empty). */
int ocr_run(const ocr_engine* engine, const ocr_image* img, const ocr_dict* dict,
            const ocr_params* params, ocr_result* result, char* err, size_t cap);
void ocr_result_free(ocr_result* result);

/* The median of n > 0 timings (sorts v). */
double ocr_median(double* v, int n);

/* The picture: img with the boxes drawn, beside the detection map. */
int ocr_render(const ocr_image* img, const ocr_result* result, ocr_image* out);

/* Writes the "lines" member: [{"text", "score", "angle", "box": [[x, y] x 4]}]. */
void ocr_json_lines(epctx_json* j, const ocr_result* result);

#ifdef __cplusplus
}
#endif
#endif
