/* SPDX-License-Identifier: Apache-2.0 */
#include "ocr_image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#define OCR_MAX_SIDE 16384

int ocr_image_alloc(ocr_image* img, int width, int height) {
  img->width = width;
  img->height = height;
  img->rgb = calloc((size_t)width * (size_t)height * 3u + 1u, 1);
  return img->rgb ? 0 : -1;
}

void ocr_image_free(ocr_image* img) {
  free(img->rgb);
  img->rgb = NULL;
  img->width = img->height = 0;
}

int ocr_image_load(const char* path, ocr_image* out, char* err, size_t cap) {
  memset(out, 0, sizeof(*out));
  int w = 0, h = 0, channels = 0;
  if (!stbi_info(path, &w, &h, &channels)) {
    FILE* f = fopen(path, "rb");
    if (!f) {
      snprintf(err, cap, "cannot read image %s: no such file or not readable", path);
      return -1;
    }
    fclose(f);
    snprintf(err, cap, "cannot read image %s: %s (expected PNG, PPM, JPEG or BMP)", path,
             stbi_failure_reason());
    return -1;
  }
  if (w <= 0 || h <= 0 || w > OCR_MAX_SIDE || h > OCR_MAX_SIDE) {
    snprintf(err, cap, "image %s is %d x %d: expected at most %d pixels a side", path, w, h,
             OCR_MAX_SIDE);
    return -1;
  }
  unsigned char* px = stbi_load(path, &w, &h, &channels, 3);
  if (!px) {
    snprintf(err, cap, "cannot read image %s: %s", path, stbi_failure_reason());
    return -1;
  }
  if (ocr_image_alloc(out, w, h)) {
    stbi_image_free(px);
    snprintf(err, cap, "image %s: out of memory", path);
    return -1;
  }
  memcpy(out->rgb, px, (size_t)w * (size_t)h * 3u);
  stbi_image_free(px);
  return 0;
}

int ocr_image_save_png(const char* path, const ocr_image* img, char* err, size_t cap) {
  if (!stbi_write_png(path, img->width, img->height, 3, img->rgb, img->width * 3)) {
    snprintf(err, cap, "cannot write %s", path);
    return -1;
  }
  return 0;
}

/* One axis of OpenCV's INTER_LINEAR: the left tap and its weight. */
static void linear_tap(int dst, double scale, int src_size, int* i0, float* frac) {
  double f = (dst + 0.5) * scale - 0.5;
  int i = (int)floor(f);
  double a = f - i;
  if (i < 0) {
    i = 0;
    a = 0;
  }
  if (i >= src_size - 1) {
    i = src_size - 1;
    a = 0;
  }
  *i0 = i;
  *frac = (float)a;
}

void ocr_image_resize(const ocr_image* src, ocr_image* dst) {
  const double sx = (double)src->width / dst->width, sy = (double)src->height / dst->height;
  for (int y = 0; y < dst->height; ++y) {
    int y0;
    float fy;
    linear_tap(y, sy, src->height, &y0, &fy);
    int y1 = y0 + 1 < src->height ? y0 + 1 : y0;
    const uint8_t* r0 = src->rgb + (size_t)y0 * src->width * 3;
    const uint8_t* r1 = src->rgb + (size_t)y1 * src->width * 3;
    uint8_t* out = dst->rgb + (size_t)y * dst->width * 3;
    for (int x = 0; x < dst->width; ++x) {
      int x0;
      float fx;
      linear_tap(x, sx, src->width, &x0, &fx);
      int x1 = x0 + 1 < src->width ? x0 + 1 : x0;
      for (int c = 0; c < 3; ++c) {
        float top = r0[x0 * 3 + c] + fx * (r0[x1 * 3 + c] - r0[x0 * 3 + c]);
        float bot = r1[x0 * 3 + c] + fx * (r1[x1 * 3 + c] - r1[x0 * 3 + c]);
        float v = top + fy * (bot - top);
        out[x * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
      }
    }
  }
}

/* Solves the 8 unknowns of the homography taking (0,0), (w,0), (w,h),
 * (0,h) to quad[0..3]. 0, or -1 for a degenerate quad. */
static int homography(const ocr_point quad[4], double w, double h, double m[9]) {
  const double from[4][2] = {{0, 0}, {w, 0}, {w, h}, {0, h}};
  double a[8][9];
  for (int i = 0; i < 4; ++i) {
    double x = from[i][0], y = from[i][1], X = quad[i].x, Y = quad[i].y;
    double r0[9] = {x, y, 1, 0, 0, 0, -x * X, -y * X, X};
    double r1[9] = {0, 0, 0, x, y, 1, -x * Y, -y * Y, Y};
    memcpy(a[2 * i], r0, sizeof(r0));
    memcpy(a[2 * i + 1], r1, sizeof(r1));
  }
  for (int c = 0; c < 8; ++c) {
    int p = c;
    for (int r = c + 1; r < 8; ++r)
      if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
    if (fabs(a[p][c]) < 1e-12) return -1;
    if (p != c)
      for (int k = 0; k < 9; ++k) {
        double t = a[c][k];
        a[c][k] = a[p][k];
        a[p][k] = t;
      }
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
    }
  }
  for (int i = 0; i < 8; ++i) m[i] = a[i][8] / a[i][i];
  m[8] = 1;
  return 0;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void ocr_image_warp_quad(const ocr_image* src, const ocr_point quad[4], ocr_image* dst) {
  double m[9];
  if (homography(quad, dst->width, dst->height, m)) {
    ocr_image_resize(src, dst);  // degenerate: never asked by the pipeline's boxes
    return;
  }
  const int w = src->width, h = src->height;
  for (int v = 0; v < dst->height; ++v) {
    uint8_t* out = dst->rgb + (size_t)v * dst->width * 3;
    for (int u = 0; u < dst->width; ++u) {
      double d = m[6] * u + m[7] * v + m[8];
      double sx = (m[0] * u + m[1] * v + m[2]) / d, sy = (m[3] * u + m[4] * v + m[5]) / d;
      if (!(fabs(sx) < 1e6 && fabs(sy) < 1e6)) sx = sy = 0;
      int x0 = (int)floor(sx), y0 = (int)floor(sy);
      float fx = (float)(sx - x0), fy = (float)(sy - y0);
      int xa = clampi(x0, 0, w - 1), xb = clampi(x0 + 1, 0, w - 1);
      int ya = clampi(y0, 0, h - 1), yb = clampi(y0 + 1, 0, h - 1);
      const uint8_t* p00 = src->rgb + ((size_t)ya * w + xa) * 3;
      const uint8_t* p01 = src->rgb + ((size_t)ya * w + xb) * 3;
      const uint8_t* p10 = src->rgb + ((size_t)yb * w + xa) * 3;
      const uint8_t* p11 = src->rgb + ((size_t)yb * w + xb) * 3;
      for (int c = 0; c < 3; ++c) {
        float top = p00[c] + fx * (p01[c] - p00[c]);
        float bot = p10[c] + fx * (p11[c] - p10[c]);
        float val = top + fy * (bot - top);
        out[u * 3 + c] = (uint8_t)(val < 0 ? 0 : val > 255 ? 255 : val + 0.5f);
      }
    }
  }
}

int ocr_image_rotate90(const ocr_image* src, ocr_image* dst) {
  if (ocr_image_alloc(dst, src->height, src->width)) return -1;
  /* numpy.rot90: out[i][j] = in[j][W - 1 - i] */
  for (int i = 0; i < dst->height; ++i)
    for (int j = 0; j < dst->width; ++j)
      memcpy(dst->rgb + ((size_t)i * dst->width + j) * 3,
             src->rgb + ((size_t)j * src->width + (src->width - 1 - i)) * 3, 3);
  return 0;
}

void ocr_image_rotate180(ocr_image* img) {
  size_t n = (size_t)img->width * img->height;
  for (size_t i = 0, j = n - 1; i < j; ++i, --j) {
    uint8_t t[3];
    memcpy(t, img->rgb + i * 3, 3);
    memcpy(img->rgb + i * 3, img->rgb + j * 3, 3);
    memcpy(img->rgb + j * 3, t, 3);
  }
}

static void dot(ocr_image* img, int x, int y, const uint8_t rgb[3], int thickness) {
  int r = thickness / 2;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) {
      int px = x + dx, py = y + dy;
      if (px < 0 || py < 0 || px >= img->width || py >= img->height) continue;
      memcpy(img->rgb + ((size_t)py * img->width + px) * 3, rgb, 3);
    }
}

void ocr_image_draw_polygon(ocr_image* img, const ocr_point* pts, int count, const uint8_t rgb[3],
                            int thickness) {
  for (int i = 0; i < count; ++i) {
    ocr_point a = pts[i], b = pts[(i + 1) % count];
    int x0 = (int)lroundf(a.x), y0 = (int)lroundf(a.y);
    int x1 = (int)lroundf(b.x), y1 = (int)lroundf(b.y);
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (int steps = 0; steps <= 2 * OCR_MAX_SIDE; ++steps) {  // Bresenham
      dot(img, x0, y0, rgb, thickness);
      if (x0 == x1 && y0 == y1) break;
      int e2 = 2 * e;
      if (e2 >= dy) {
        e += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        e += dx;
        y0 += sy;
      }
    }
  }
}
