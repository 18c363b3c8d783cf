/* SPDX-License-Identifier: Apache-2.0 */
/* Text detection around the DB (differentiable binarisation) model of
 * PP-OCR, as PaddleOCR documents its pre- and post-processing:
 *
 * 1. The image is scaled down (never up) to fit the model's fixed input and
 *    placed at the top left; the rest is zero after normalisation. Channels
 *    are B, G, R, normalised with ImageNet's mean and deviation, as
 *    PaddleOCR feeds the BGR images OpenCV reads.
 * 2. The model gives a text probability per pixel. Pixels above `threshold`
 *    form a bitmap; each 8-connected component of it is a candidate (where
 *    PaddleOCR takes OpenCV's contours: the outer contour of a component has
 *    the same convex hull).
 * 3. A candidate's minimum-area rectangle (rotating calipers over its convex
 *    hull) is kept when its short side is >= 3 pixels and the mean
 *    probability inside it is >= `box_threshold`.
 * 4. The rectangle is grown by d = area * unclip_ratio / perimeter on every
 *    side (the minimum-area rectangle of PaddleOCR's rounded polygon offset
 *    is exactly that), mapped back to image pixels, and dropped when a side
 *    is <= 3 pixels there.
 * 5. Boxes are sorted into reading order: top to bottom, and left to right
 *    among boxes whose tops are less than 10 pixels apart. */
#ifndef EPCTX_OCR_DETECT_H
#define EPCTX_OCR_DETECT_H

#include "ocr_image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ocr_det_params {
  float threshold;     /* pixel probability for the bitmap (0.3) */
  float box_threshold; /* mean probability inside a box (0.6) */
  float unclip_ratio;  /* how far boxes grow (1.5) */
  int max_candidates;  /* components looked at (1000) */
} ocr_det_params;

void ocr_det_params_default(ocr_det_params* p);

/* A box in image pixels: tl, tr, br, bl. */
typedef struct ocr_quad {
  ocr_point p[4];
  float score; /* mean probability inside, before growing */
} ocr_quad;

/* Writes the model's [3, in_h, in_w] input for img; returns the scale
 * (model pixels per image pixel, <= 1) and the covered region. -1 when out
 * of memory. */
int ocr_det_input(const ocr_image* img, int in_h, int in_w, float* out, float* scale, int* valid_h,
                  int* valid_w);

/* Boxes from the probability map [map_h, map_w] whose top-left valid_h x
 * valid_w part covers the image at `scale`. *boxes is malloc'ed (free it);
 * returns their count, or -1 when out of memory. */
int ocr_det_boxes(const float* map, int map_h, int map_w, int valid_h, int valid_w, float scale,
                  int img_w, int img_h, const ocr_det_params* params, ocr_quad** boxes);

void ocr_sort_boxes(ocr_quad* boxes, int count);

#ifdef __cplusplus
}
#endif
#endif
