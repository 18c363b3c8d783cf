/* SPDX-License-Identifier: Apache-2.0 */
#include "ocr_pipeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char* ocr_model_name(ocr_model model) {
  return model == OCR_DET ? "det" : model == OCR_CLS ? "cls" : "rec";
}

void ocr_params_default(ocr_params* p) {
  ocr_det_params_default(&p->det);
  p->cls_threshold = 0.9f;
  p->drop_score = 0.5f;
}

static void format_dims(const int64_t* dims, size_t rank, char* out, size_t cap) {
  size_t used = (size_t)snprintf(out, cap, "[");
  for (size_t i = 0; i < rank && used < cap; ++i)
    used += (size_t)snprintf(out + used, cap - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (used < cap) snprintf(out + used, cap - used, "]");
}

int ocr_check_model(ocr_model model, const int64_t* in_dims, size_t in_rank,
                    const int64_t* out_dims, size_t out_rank, int dict_classes, char* err,
                    size_t cap) {
  char in[96], out[96];
  format_dims(in_dims, in_rank, in, sizeof in);
  format_dims(out_dims, out_rank, out, sizeof out);
  if (in_rank != 4 || in_dims[0] != 1 || in_dims[1] != 3 || in_dims[2] < 8 || in_dims[3] < 8 ||
      in_dims[2] > 8192 || in_dims[3] > 8192) {
    snprintf(err, cap, "expected one fixed [1, 3, H, W] image input, found %s", in);
    return -1;
  }
  int ok = 0;
  const char* want = "";
  switch (model) {
    case OCR_DET:
      want = "a text detection model: output [1, 1, H, W] as its input's H and W";
      ok = out_rank == 4 && out_dims[0] == 1 && out_dims[1] == 1 && out_dims[2] == in_dims[2] &&
           out_dims[3] == in_dims[3];
      break;
    case OCR_CLS:
      want = "an angle classifier: output [1, 2]";
      ok = out_rank == 2 && out_dims[0] == 1 && out_dims[1] == 2;
      break;
    default:
      want = "a text recogniser: output [1, T, classes] with classes the dictionary's size + 1";
      ok = out_rank == 3 && out_dims[0] == 1 && out_dims[1] >= 1 && out_dims[2] == dict_classes;
      break;
  }
  if (!ok) {
    if (model == OCR_REC)
      snprintf(err, cap, "expected %s (%d), found input %s and output %s", want, dict_classes, in,
               out);
    else snprintf(err, cap, "expected %s, found input %s and output %s", want, in, out);
    return -1;
  }
  return 0;
}

/* Runs a model and checks its output is the shape the stage reads. */
static int run_model(const ocr_engine* e, ocr_model m, int width, int classes, ocr_output* out,
                     char* err, size_t cap) {
  char msg[1024];
  if (e->run(e->user, m, width, out, msg, sizeof msg)) {
    snprintf(err, cap, "%s model: %s", ocr_model_name(m), msg);
    return -1;
  }
  const int64_t* d = out->dims;
  int ok = !!out->data;
  if (m == OCR_DET)
    ok = ok && out->rank == 4 && d[0] == 1 && d[1] == 1 && d[2] == e->input_h[m] && d[3] == width;
  else if (m == OCR_CLS) ok = ok && out->rank == 2 && d[0] == 1 && d[1] == 2;
  else ok = ok && out->rank == 3 && d[0] == 1 && d[1] >= 1 && d[1] <= width && d[2] == classes;
  if (!ok) {
    format_dims(d, out->rank < 4 ? out->rank : 4, msg, sizeof msg);
    snprintf(err, cap, "%s model: output %s is not the shape its stage reads", ocr_model_name(m),
             msg);
    return -1;
  }
  return 0;
}

/* The upright crop of one box (PaddleOCR's get_rotate_crop_image). */
static int crop_box(const ocr_image* img, const ocr_quad* q, ocr_image* crop) {
  const ocr_point* p = q->p;
  double w01 = hypot(p[0].x - p[1].x, p[0].y - p[1].y),
         w23 = hypot(p[2].x - p[3].x, p[2].y - p[3].y);
  double h03 = hypot(p[0].x - p[3].x, p[0].y - p[3].y),
         h12 = hypot(p[1].x - p[2].x, p[1].y - p[2].y);
  int w = (int)(w01 > w23 ? w01 : w23), h = (int)(h03 > h12 ? h03 : h12);
  if (w < 1 || h < 1) return 1;
  if (ocr_image_alloc(crop, w, h)) return -1;
  ocr_image_warp_quad(img, p, crop);
  if (h >= 1.5 * w) {
    ocr_image turned;
    if (ocr_image_rotate90(crop, &turned)) return -1;
    ocr_image_free(crop);
    *crop = turned;
  }
  return 0;
}

/* PaddleOCR's recognition width for one line, or the bucket holding it. */
static int rec_width(const ocr_engine* e, const ocr_image* crop) {
  const int h = e->input_h[OCR_REC];
  double ratio = (double)crop->width / crop->height;
  int want = ratio * h > 320 ? (int)(ratio * h) : 320;
  if (e->rec_width_count == 0) return want > 8192 ? 8192 : want;
  for (int i = 0; i < e->rec_width_count; ++i)
    if (e->rec_widths[i] >= want) return e->rec_widths[i];
  return e->rec_widths[e->rec_width_count - 1];
}

static int read_line(const ocr_engine* e, const ocr_dict* dict, const ocr_params* params,
                     ocr_image* crop, ocr_line* line, ocr_result* r, char* err, size_t cap) {
  ocr_output out;
  double t0 = now_ms();
  const int cls_w = e->input_w[OCR_CLS];
  if (ocr_line_input(crop, e->input_h[OCR_CLS], cls_w, e->input(e->user, OCR_CLS, cls_w)))
    return -1;
  if (run_model(e, OCR_CLS, cls_w, 2, &out, err, cap)) return -2;
  if (out.data[1] > out.data[0] && out.data[1] > params->cls_threshold) {
    ocr_image_rotate180(crop);
    line->angle = 180;
  }
  double t1 = now_ms();
  const int rec_w = rec_width(e, crop);
  if (ocr_line_input(crop, e->input_h[OCR_REC], rec_w, e->input(e->user, OCR_REC, rec_w)))
    return -1;
  if (run_model(e, OCR_REC, rec_w, dict->count + 1, &out, err, cap)) return -2;
  double t2 = now_ms();
  if (ocr_ctc_decode(out.data, (int)out.dims[1], (int)out.dims[2], dict, &line->text, &line->score))
    return -1;
  r->cls_ms += t1 - t0;
  r->rec_ms += t2 - t1;
  r->post_ms += now_ms() - t2;
  return 0;
}

int ocr_run(const ocr_engine* e, const ocr_image* img, const ocr_dict* dict,
            const ocr_params* params, ocr_result* r, char* err, size_t cap) {
  memset(r, 0, sizeof(*r));
  ocr_quad* boxes = NULL;
  int status = -1, count = 0, valid_h = 0, valid_w = 0;
  const int dh = e->input_h[OCR_DET], dw = e->input_w[OCR_DET];
  double t0 = now_ms();
  if (ocr_det_input(img, dh, dw, e->input(e->user, OCR_DET, dw), &r->scale, &valid_h, &valid_w))
    goto oom;
  ocr_output out;
  double t1 = now_ms();
  if (run_model(e, OCR_DET, dw, 1, &out, err, cap)) goto done;
  double t2 = now_ms();
  r->det_ms = t2 - t1;
  count = ocr_det_boxes(out.data, dh, dw, valid_h, valid_w, r->scale, img->width, img->height,
                        &params->det, &boxes);
  if (count < 0) goto oom;
  ocr_sort_boxes(boxes, count);
  r->boxes = count;
  r->det_map = malloc((size_t)valid_h * valid_w * sizeof(float) + 1);
  r->lines = calloc((size_t)count + 1, sizeof(ocr_line));
  if (!r->det_map || !r->lines) goto oom;
  for (int y = 0; y < valid_h; ++y)
    memcpy(r->det_map + (size_t)y * valid_w, out.data + (size_t)y * dw, valid_w * sizeof(float));
  r->map_h = valid_h;
  r->map_w = valid_w;
  r->post_ms = (t1 - t0) + (now_ms() - t2);
  for (int i = 0; i < count; ++i) {
    double tc = now_ms();
    ocr_image crop;
    int rc = crop_box(img, &boxes[i], &crop);
    r->post_ms += now_ms() - tc;
    if (rc > 0) continue;
    if (rc < 0) goto oom;
    ocr_line line = {boxes[i], NULL, 0, 0};
    rc = read_line(e, dict, params, &crop, &line, r, err, cap);
    ocr_image_free(&crop);
    if (rc == -1) goto oom;
    if (rc) goto done;
    if (line.score >= params->drop_score && line.text[0]) r->lines[r->count++] = line;
    else free(line.text);
  }
  status = 0;
  goto done;
oom:
  snprintf(err, cap, "out of memory");
done:
  free(boxes);
  if (status) ocr_result_free(r);
  return status;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

double ocr_median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void ocr_result_free(ocr_result* r) {
  for (int i = 0; i < r->count; ++i) free(r->lines[i].text);
  free(r->lines);
  free(r->det_map);
  memset(r, 0, sizeof(*r));
}

int ocr_render(const ocr_image* img, const ocr_result* r, ocr_image* out) {
  const int w = img->width, h = img->height;
  if (ocr_image_alloc(out, 2 * w, h)) return -1;
  for (int y = 0; y < h; ++y) {
    memcpy(out->rgb + (size_t)y * out->width * 3, img->rgb + (size_t)y * w * 3, (size_t)w * 3);
    uint8_t* right = out->rgb + ((size_t)y * out->width + w) * 3;
    int my = (int)(y * r->scale);
    my = my >= r->map_h ? r->map_h - 1 : my;
    for (int x = 0; x < w; ++x) {
      int mx = (int)(x * r->scale);
      mx = mx >= r->map_w ? r->map_w - 1 : mx;
      float p = r->map_h > 0 && r->map_w > 0 ? r->det_map[(size_t)my * r->map_w + mx] : 0.0f;
      uint8_t v = (uint8_t)(p <= 0 ? 0 : p >= 1 ? 255 : p * 255.0f + 0.5f);
      right[x * 3] = v;  // probability as a dark-to-orange ramp
      right[x * 3 + 1] = (uint8_t)(v * 0.6f);
      right[x * 3 + 2] = (uint8_t)(v * 0.15f);
    }
  }
  static const uint8_t kBox[3] = {0, 170, 60}, kMapBox[3] = {90, 200, 255};
  const int thickness = w >= 800 ? 3 : 2;
  for (int i = 0; i < r->count; ++i) {
    ocr_image_draw_polygon(out, r->lines[i].box.p, 4, kBox, thickness);
    ocr_point shifted[4];
    for (int k = 0; k < 4; ++k) {
      shifted[k].x = r->lines[i].box.p[k].x + (float)w;
      shifted[k].y = r->lines[i].box.p[k].y;
    }
    ocr_image_draw_polygon(out, shifted, 4, kMapBox, 1);
  }
  return 0;
}

void ocr_json_lines(epctx_json* j, const ocr_result* r) {
  epctx_json_key(j, "lines");
  epctx_json_begin_array(j);
  for (int i = 0; i < r->count; ++i) {
    const ocr_line* l = &r->lines[i];
    epctx_json_begin_object(j);
    epctx_json_key(j, "text");
    epctx_json_string(j, l->text);
    epctx_json_key(j, "score");
    epctx_json_double(j, round(l->score * 1e4) / 1e4);
    epctx_json_key(j, "angle");
    epctx_json_int(j, l->angle);
    epctx_json_key(j, "box");
    epctx_json_begin_array(j);
    for (int k = 0; k < 4; ++k) {
      epctx_json_begin_array(j);
      epctx_json_int(j, (int64_t)lroundf(l->box.p[k].x));
      epctx_json_int(j, (int64_t)lroundf(l->box.p[k].y));
      epctx_json_end_array(j);
    }
    epctx_json_end_array(j);
    epctx_json_end_object(j);
  }
  epctx_json_end_array(j);
}
