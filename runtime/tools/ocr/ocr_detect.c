/* SPDX-License-Identifier: Apache-2.0 */
#include "ocr_detect.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ocr_det_params_default(ocr_det_params* p) {
  p->threshold = 0.3f;
  p->box_threshold = 0.6f;
  p->unclip_ratio = 1.5f;
  p->max_candidates = 1000;
}

int ocr_det_input(const ocr_image* img, int in_h, int in_w, float* out, float* scale, int* valid_h,
                  int* valid_w) {
  float s = 1.0f;
  if ((float)in_w / img->width < s) s = (float)in_w / img->width;
  if ((float)in_h / img->height < s) s = (float)in_h / img->height;
  int rw = (int)lroundf(img->width * s), rh = (int)lroundf(img->height * s);
  rw = rw < 1 ? 1 : rw > in_w ? in_w : rw;
  rh = rh < 1 ? 1 : rh > in_h ? in_h : rh;
  ocr_image small;
  if (ocr_image_alloc(&small, rw, rh)) return -1;
  ocr_image_resize(img, &small);
  /* ImageNet statistics in B, G, R order. */
  static const float kMean[3] = {0.485f, 0.456f, 0.406f}, kStd[3] = {0.229f, 0.224f, 0.225f};
  const size_t plane = (size_t)in_h * in_w;
  memset(out, 0, plane * 3 * sizeof(float));
  for (int c = 0; c < 3; ++c) {
    const int src_c = 2 - c;  // RGB pixels, BGR planes
    const float mul = 1.0f / (255.0f * kStd[c]), add = -kMean[c] / kStd[c];
    for (int y = 0; y < rh; ++y) {
      const uint8_t* row = small.rgb + (size_t)y * rw * 3;
      float* o = out + c * plane + (size_t)y * in_w;
      for (int x = 0; x < rw; ++x) o[x] = row[x * 3 + src_c] * mul + add;
    }
  }
  ocr_image_free(&small);
  *scale = (float)rw / img->width;
  *valid_h = rh;
  *valid_w = rw;
  return 0;
}

/* A rotated rectangle: centre, unit axis u (its normal is n = (-u.y, u.x))
 * and the extents along each. */
typedef struct rect {
  double cx, cy, ux, uy, w, h;
} rect;

static double cross(const ocr_point* o, const ocr_point* a, const ocr_point* b) {
  return ((double)a->x - o->x) * ((double)b->y - o->y) -
         ((double)a->y - o->y) * ((double)b->x - o->x);
}

static int by_xy(const void* pa, const void* pb) {
  const ocr_point *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  return (a->y > b->y) - (a->y < b->y);
}

/* Andrew's monotone chain; pts sorted in place, hull written to out (room
 * for n + 1). Returns the hull's size. */
static int convex_hull(ocr_point* pts, int n, ocr_point* out) {
  qsort(pts, (size_t)n, sizeof(*pts), by_xy);
  if (n < 3) {
    memcpy(out, pts, sizeof(*pts) * (size_t)n);
    return n;
  }
  int k = 0;
  for (int i = 0; i < n; ++i) {
    while (k >= 2 && cross(&out[k - 2], &out[k - 1], &pts[i]) <= 0) --k;
    out[k++] = pts[i];
  }
  for (int i = n - 2, lo = k + 1; i >= 0; --i) {
    while (k >= lo && cross(&out[k - 2], &out[k - 1], &pts[i]) <= 0) --k;
    out[k++] = pts[i];
  }
  return k - 1;
}

/* The minimum-area rectangle around a convex hull: one of its sides lies on
 * a hull edge, so each edge is tried. */
static rect min_area_rect(const ocr_point* hull, int n) {
  rect best = {0, 0, 1, 0, 0, 0};
  if (n == 1) {
    best.cx = hull[0].x;
    best.cy = hull[0].y;
    return best;
  }
  double best_area = -1;
  for (int i = 0; i < n; ++i) {
    const ocr_point *a = &hull[i], *b = &hull[(i + 1) % n];
    double ux = (double)b->x - a->x, uy = (double)b->y - a->y, len = sqrt(ux * ux + uy * uy);
    if (len == 0) continue;
    ux /= len;
    uy /= len;
    double lo_u = 1e30, hi_u = -1e30, lo_n = 1e30, hi_n = -1e30;
    for (int k = 0; k < n; ++k) {
      double pu = hull[k].x * ux + hull[k].y * uy, pn = -hull[k].x * uy + hull[k].y * ux;
      lo_u = pu < lo_u ? pu : lo_u;
      hi_u = pu > hi_u ? pu : hi_u;
      lo_n = pn < lo_n ? pn : lo_n;
      hi_n = pn > hi_n ? pn : hi_n;
    }
    double area = (hi_u - lo_u) * (hi_n - lo_n);
    if (best_area < 0 || area < best_area) {
      best_area = area;
      double mu = (lo_u + hi_u) / 2, mn = (lo_n + hi_n) / 2;
      best.cx = mu * ux - mn * uy;
      best.cy = mu * uy + mn * ux;
      best.ux = ux;
      best.uy = uy;
      best.w = hi_u - lo_u;
      best.h = hi_n - lo_n;
    }
  }
  return best;
}

/* PaddleOCR's get_mini_boxes order: the corners sorted by x; of the two
 * leftmost the upper is top-left, of the two rightmost the upper is
 * top-right. */
static void rect_corners(const rect* r, ocr_point out[4]) {
  const double hu = r->w / 2, hn = r->h / 2, nx = -r->uy, ny = r->ux;
  ocr_point c[4];
  const double su[4] = {-1, 1, 1, -1}, sn[4] = {-1, -1, 1, 1};
  for (int i = 0; i < 4; ++i) {
    c[i].x = (float)(r->cx + su[i] * hu * r->ux + sn[i] * hn * nx);
    c[i].y = (float)(r->cy + su[i] * hu * r->uy + sn[i] * hn * ny);
  }
  qsort(c, 4, sizeof(c[0]), by_xy);
  int tl = c[1].y > c[0].y ? 0 : 1, bl = 1 - tl;
  int tr = c[3].y > c[2].y ? 2 : 3, br = 5 - tr;
  out[0] = c[tl];
  out[1] = c[tr];
  out[2] = c[br];
  out[3] = c[bl];
}

/* Mean probability over the map pixels inside the quad (corners truncated
 * to integers, edges included, as OpenCV's fillPoly on the bounding box). */
static float box_score(const float* map, int map_w, int valid_h, int valid_w,
                       const ocr_point q[4]) {
  double xmin = q[0].x, xmax = q[0].x, ymin = q[0].y, ymax = q[0].y;
  for (int i = 1; i < 4; ++i) {
    xmin = q[i].x < xmin ? q[i].x : xmin;
    xmax = q[i].x > xmax ? q[i].x : xmax;
    ymin = q[i].y < ymin ? q[i].y : ymin;
    ymax = q[i].y > ymax ? q[i].y : ymax;
  }
  int x0 = (int)floor(xmin), x1 = (int)ceil(xmax), y0 = (int)floor(ymin), y1 = (int)ceil(ymax);
  x0 = x0 < 0 ? 0 : x0 > valid_w - 1 ? valid_w - 1 : x0;
  x1 = x1 < 0 ? 0 : x1 > valid_w - 1 ? valid_w - 1 : x1;
  y0 = y0 < 0 ? 0 : y0 > valid_h - 1 ? valid_h - 1 : y0;
  y1 = y1 < 0 ? 0 : y1 > valid_h - 1 ? valid_h - 1 : y1;
  ocr_point iq[4];
  for (int i = 0; i < 4; ++i) {
    iq[i].x = (float)(int)q[i].x;
    iq[i].y = (float)(int)q[i].y;
  }
  double sum = 0;
  long count = 0;
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      ocr_point p = {(float)x, (float)y};
      int pos = 0, neg = 0;
      for (int i = 0; i < 4; ++i) {
        double c = cross(&iq[i], &iq[(i + 1) % 4], &p);
        pos += c > 0;
        neg += c < 0;
      }
      if (pos && neg) continue;
      sum += map[(size_t)y * map_w + x];
      ++count;
    }
  return count ? (float)(sum / count) : 0.0f;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* PaddleOCR's order_points_clockwise: left pair by y gives tl, bl; right
 * pair by y gives tr, br. */
static void order_clockwise(ocr_point q[4]) {
  ocr_point c[4];
  memcpy(c, q, sizeof(c));
  qsort(c, 4, sizeof(c[0]), by_xy);
  int tl = c[0].y <= c[1].y ? 0 : 1, tr = c[2].y <= c[3].y ? 2 : 3;
  q[0] = c[tl];
  q[1] = c[tr];
  q[2] = c[5 - tr];
  q[3] = c[1 - tl];
}

static double dist(ocr_point a, ocr_point b) { return hypot((double)a.x - b.x, (double)a.y - b.y); }

/* Step 4 and the image-space filter for one candidate; 1 when kept. */
static int finish_box(rect r, float scale, int img_w, int img_h, const ocr_det_params* params,
                      ocr_quad* out) {
  double d = r.w * r.h * params->unclip_ratio / (2 * (r.w + r.h));
  r.w += 2 * d;
  r.h += 2 * d;
  if ((r.w < r.h ? r.w : r.h) < 5) return 0;
  rect_corners(&r, out->p);
  for (int i = 0; i < 4; ++i) {
    out->p[i].x = clampf(roundf(out->p[i].x / scale), 0, (float)img_w);
    out->p[i].y = clampf(roundf(out->p[i].y / scale), 0, (float)img_h);
  }
  order_clockwise(out->p);
  for (int i = 0; i < 4; ++i) {
    out->p[i].x = clampf(out->p[i].x, 0, (float)(img_w - 1));
    out->p[i].y = clampf(out->p[i].y, 0, (float)(img_h - 1));
  }
  return (int)dist(out->p[0], out->p[1]) > 3 && (int)dist(out->p[0], out->p[3]) > 3;
}

int ocr_det_boxes(const float* map, int map_h, int map_w, int valid_h, int valid_w, float scale,
                  int img_w, int img_h, const ocr_det_params* params, ocr_quad** boxes) {
  (void)map_h;
  *boxes = NULL;
  const size_t pixels = (size_t)valid_h * valid_w;
  uint8_t* seen = calloc(pixels + 1, 1);
  int32_t* queue = malloc((pixels + 1) * sizeof(int32_t));
  int* lo = malloc(((size_t)valid_h + 1) * sizeof(int));
  int* hi = malloc(((size_t)valid_h + 1) * sizeof(int));
  ocr_point* pts = malloc(((size_t)valid_h * 2 + 2) * sizeof(ocr_point));
  ocr_point* hull = malloc(((size_t)valid_h * 2 + 3) * sizeof(ocr_point));
  int cap = 16, count = 0, candidates = 0;
  ocr_quad* out = malloc((size_t)cap * sizeof(ocr_quad));
  int ok = seen && queue && lo && hi && pts && hull && out;
  for (size_t start = 0; ok && start < pixels && candidates < params->max_candidates; ++start) {
    if (seen[start] || !(map[(start / valid_w) * map_w + start % valid_w] > params->threshold))
      continue;
    ++candidates;
    /* Breadth-first over the 8-connected component; the queue ends up
     * holding exactly its pixels. */
    size_t head = 0, tail = 0;
    queue[tail++] = (int32_t)start;
    seen[start] = 1;
    int ymin = (int)(start / valid_w), ymax = ymin;
    while (head < tail) {
      int32_t p = queue[head++];
      int x = p % valid_w, y = p / valid_w;
      ymax = y > ymax ? y : ymax;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int nx = x + dx, ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= valid_w || ny >= valid_h) continue;
          size_t q = (size_t)ny * valid_w + nx;
          if (seen[q] || !(map[(size_t)ny * map_w + nx] > params->threshold)) continue;
          seen[q] = 1;
          queue[tail++] = (int32_t)q;
        }
    }
    /* The hull of a component is the hull of each row's two ends. */
    for (int y = ymin; y <= ymax; ++y) {
      lo[y - ymin] = valid_w;
      hi[y - ymin] = -1;
    }
    for (size_t k = 0; k < tail; ++k) {
      int x = queue[k] % valid_w, y = queue[k] / valid_w - ymin;
      lo[y] = x < lo[y] ? x : lo[y];
      hi[y] = x > hi[y] ? x : hi[y];
    }
    int n = 0;
    for (int y = ymin; y <= ymax; ++y) {
      if (hi[y - ymin] < 0) continue;
      pts[n].x = (float)lo[y - ymin];
      pts[n++].y = (float)y;
      if (hi[y - ymin] != lo[y - ymin]) {
        pts[n].x = (float)hi[y - ymin];
        pts[n++].y = (float)y;
      }
    }
    int hn = convex_hull(pts, n, hull);
    rect r = min_area_rect(hull, hn);
    if ((r.w < r.h ? r.w : r.h) < 3) continue;
    ocr_quad q;
    rect_corners(&r, q.p);
    q.score = box_score(map, map_w, valid_h, valid_w, q.p);
    if (q.score < params->box_threshold) continue;
    if (!finish_box(r, scale, img_w, img_h, params, &q)) continue;
    if (count == cap) {
      ocr_quad* grown = realloc(out, (size_t)cap * 2 * sizeof(ocr_quad));
      if (!grown) {
        ok = 0;
        break;
      }
      out = grown;
      cap *= 2;
    }
    out[count++] = q;
  }
  free(seen);
  free(queue);
  free(lo);
  free(hi);
  free(pts);
  free(hull);
  if (!ok) {
    free(out);
    return -1;
  }
  *boxes = out;
  return count;
}

void ocr_sort_boxes(ocr_quad* b, int n) {
  for (int i = 1; i < n; ++i)  // by (top-left y, x): insertion sort, n is small
    for (int j = i; j > 0; --j) {
      const ocr_point *a = &b[j - 1].p[0], *c = &b[j].p[0];
      if (a->y < c->y || (a->y == c->y && a->x <= c->x)) break;
      ocr_quad t = b[j];
      b[j] = b[j - 1];
      b[j - 1] = t;
    }
  for (int i = 0; i + 1 < n; ++i)
    for (int j = i; j >= 0; --j) {
      if (!(fabsf(b[j + 1].p[0].y - b[j].p[0].y) < 10 && b[j + 1].p[0].x < b[j].p[0].x)) break;
      ocr_quad t = b[j];
      b[j] = b[j + 1];
      b[j + 1] = t;
    }
}
