/* SPDX-License-Identifier: Apache-2.0 */
#include "ocr_recognize.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OCR_MAX_DICT_BYTES (16u << 20)

int ocr_dict_load(const char* path, ocr_dict* dict, char* err, size_t cap) {
  memset(dict, 0, sizeof(*dict));
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "cannot read dictionary %s: %s", path, strerror(errno));
    return -1;
  }
  size_t size = 0, room = 1 << 16;
  char* text = malloc(room + 2);
  while (text) {
    size_t got = fread(text + size, 1, room - size, f);
    size += got;
    if (size < room) break;
    if (room >= OCR_MAX_DICT_BYTES) {
      snprintf(err, cap, "dictionary %s: larger than %u bytes", path, OCR_MAX_DICT_BYTES);
      free(text);
      fclose(f);
      return -1;
    }
    room *= 2;
    char* grown = realloc(text, room + 2);
    if (!grown) free(text);
    text = grown;
  }
  int read_error = ferror(f);
  fclose(f);
  if (!text || read_error) {
    snprintf(err, cap, "cannot read dictionary %s: %s", path,
             text ? "read error" : "out of memory");
    free(text);
    return -1;
  }
  if (size && text[size - 1] == '\n') --size;  // readlines() has no empty last entry
  text[size] = '\0';
  int lines = size ? 1 : 0;
  for (size_t i = 0; i < size; ++i) lines += text[i] == '\n';
  if (lines == 0) {
    snprintf(err, cap, "dictionary %s: empty, expected one character per line", path);
    free(text);
    return -1;
  }
  dict->chars = malloc(((size_t)lines + 1) * sizeof(char*));
  if (!dict->chars) {
    snprintf(err, cap, "dictionary %s: out of memory", path);
    free(text);
    return -1;
  }
  char* p = text;
  for (int k = 0; k < lines; ++k) {
    char* end = strchr(p, '\n');
    if (end) *end = '\0';
    size_t len = strlen(p);
    if (len && p[len - 1] == '\r') p[len - 1] = '\0';
    dict->chars[k] = p;
    p = end ? end + 1 : p + len;
  }
  dict->chars[lines] = " ";
  dict->count = lines + 1;
  dict->text = text;
  return 0;
}

void ocr_dict_free(ocr_dict* dict) {
  free(dict->text);
  free((void*)dict->chars);
  memset(dict, 0, sizeof(*dict));
}

int ocr_line_input(const ocr_image* crop, int in_h, int in_w, float* out) {
  double want = ceil(in_h * (double)crop->width / crop->height);
  int rw = want > in_w ? in_w : (int)want;
  rw = rw < 1 ? 1 : rw;
  ocr_image resized;
  if (ocr_image_alloc(&resized, rw, in_h)) return -1;
  ocr_image_resize(crop, &resized);
  const size_t plane = (size_t)in_h * in_w;
  memset(out, 0, plane * 3 * sizeof(float));
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < in_h; ++y) {
      const uint8_t* row = resized.rgb + (size_t)y * rw * 3;
      float* o = out + c * plane + (size_t)y * in_w;
      for (int x = 0; x < rw; ++x) o[x] = row[x * 3 + (2 - c)] * (2.0f / 255.0f) - 1.0f;
    }
  ocr_image_free(&resized);
  return 0;
}

int ocr_ctc_decode(const float* probs, int steps, int classes, const ocr_dict* dict, char** text,
                   float* score) {
  size_t room = 1;
  for (int t = 0; t < steps; ++t) room += 8;  // a dictionary entry is one character
  char* out = malloc(room);
  if (!out) return -1;
  size_t len = 0;
  double sum = 0;
  int kept = 0, prev = -1;
  for (int t = 0; t < steps; ++t) {
    const float* p = probs + (size_t)t * classes;
    int best = 0;
    for (int k = 1; k < classes; ++k)
      if (p[k] > p[best]) best = k;
    if (best != 0 && best != prev && best <= dict->count) {
      const char* ch = dict->chars[best - 1];
      size_t n = strlen(ch);
      if (len + n + 1 > room) {
        char* grown = realloc(out, (len + n + 1) * 2);
        if (!grown) {
          free(out);
          return -1;
        }
        out = grown;
        room = (len + n + 1) * 2;
      }
      memcpy(out + len, ch, n);
      len += n;
      sum += p[best];
      ++kept;
    }
    prev = best;
  }
  out[len] = '\0';
  *text = out;
  *score = kept ? (float)(sum / kept) : 0.0f;
  return 0;
}
