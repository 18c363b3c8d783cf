/* SPDX-License-Identifier: Apache-2.0 */
/* 8-bit RGB images for the OCR example: reading (PNG, PPM/PGM, JPEG, BMP
 * through Debian's stb_image), writing PNG (stb_image_write), and the few
 * geometric operations the pipeline needs, each sampling as OpenCV's
 * INTER_LINEAR does (half-pixel centres) so the numbers follow PaddleOCR's
 * Python pipeline closely.
 *
 * An ocr_image owns its pixels (malloc); ocr_image_free releases them. */
#ifndef EPCTX_OCR_IMAGE_H
#define EPCTX_OCR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ocr_image {
  int width, height;
  uint8_t* rgb; /* width * height * 3, rows top to bottom */
} ocr_image;

typedef struct ocr_point {
  float x, y;
} ocr_point;

/* 0, or -1 with "cannot read PATH: reason" in err. Images larger than
 * 16384 x 16384 are refused. */
int ocr_image_load(const char* path, ocr_image* out, char* err, size_t cap);
/* 0, or -1 with a message in err. */
int ocr_image_save_png(const char* path, const ocr_image* img, char* err, size_t cap);
/* 0, or -1 when out of memory. Pixels are zero. */
int ocr_image_alloc(ocr_image* img, int width, int height);
void ocr_image_free(ocr_image* img);

/* Bilinear resize of src into dst (already allocated at its size). */
void ocr_image_resize(const ocr_image* src, ocr_image* dst);
/* The quadrilateral quad (tl, tr, br, bl in src) mapped onto all of dst by
 * the perspective transform, bilinear, border pixels replicated. */
void ocr_image_warp_quad(const ocr_image* src, const ocr_point quad[4], ocr_image* dst);
/* 90 degrees counter-clockwise (numpy's rot90) into dst (height x width). */
int ocr_image_rotate90(const ocr_image* src, ocr_image* dst);
/* 180 degrees, in place. */
void ocr_image_rotate180(ocr_image* img);

/* A closed polygon outline `thickness` pixels wide, clipped to the image. */
void ocr_image_draw_polygon(ocr_image* img, const ocr_point* pts, int count, const uint8_t rgb[3],
                            int thickness);

#ifdef __cplusplus
}
#endif
#endif
