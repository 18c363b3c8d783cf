// SPDX-License-Identifier: Apache-2.0
// NonMaxSuppression (opsets 10..21), float32 boxes and scores, as ONNX
// Runtime does it: per batch and class, the boxes whose score is above
// score_threshold (when given) are visited by descending score (ties: lower
// box index first); a box is kept unless its IoU with an already kept box of
// that class exceeds iou_threshold; at most max_output_boxes_per_class are
// kept (0 or absent: none). Output rows are (batch, class, box) in that
// order. Boxes are corners [y1, x1, y2, x2] in either diagonal order
// (center_point_box 0) or [x_center, y_center, width, height] (1).
#include <cstring>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

struct Box {
  float x0, y0, x1, y1;
};

struct Candidate {
  float score;
  int64_t index;
};

// a comes before b: higher score, then lower index.
inline bool Before(const Candidate& a, const Candidate& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

// In-place heap sort into Before order (no recursion, O(n log n)).
void SortCandidates(Candidate* c, int64_t n) {
  auto sift = [c](int64_t root, int64_t end) {
    for (;;) {
      int64_t child = 2 * root + 1;
      if (child >= end) return;
      // A max-heap on "comes after", so the root is the last in order.
      if (child + 1 < end && Before(c[child], c[child + 1])) ++child;
      if (!Before(c[root], c[child])) return;
      const Candidate t = c[root];
      c[root] = c[child];
      c[child] = t;
      root = child;
    }
  };
  for (int64_t i = n / 2; i-- > 0;) sift(i, n);
  for (int64_t end = n; end-- > 1;) {
    const Candidate t = c[0];
    c[0] = c[end];
    c[end] = t;
    sift(0, end);
  }
}

inline Box ReadBox(const float* b, bool center) {
  Box r;
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    r.x0 = b[0] - hw;
    r.x1 = b[0] + hw;
    r.y0 = b[1] - hh;
    r.y1 = b[1] + hh;
  } else {
    r.y0 = b[0] < b[2] ? b[0] : b[2];
    r.y1 = b[0] < b[2] ? b[2] : b[0];
    r.x0 = b[1] < b[3] ? b[1] : b[3];
    r.x1 = b[1] < b[3] ? b[3] : b[1];
  }
  return r;
}

inline bool Suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ix0 = a.x0 > b.x0 ? a.x0 : b.x0, ix1 = a.x1 < b.x1 ? a.x1 : b.x1;
  if (ix1 <= ix0) return false;
  const float iy0 = a.y0 > b.y0 ? a.y0 : b.y0, iy1 = a.y1 < b.y1 ? a.y1 : b.y1;
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0.0f) return false;
  const float area_a = (a.x1 - a.x0) * (a.y1 - a.y0);
  const float area_b = (b.x1 - b.x0) * (b.y1 - b.y0);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

Status NonMaxSuppression(KernelContext& ctx) {
  const TensorRef *boxes, *scores;
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "boxes", &boxes));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "scores", &scores));
  if (boxes->rank != 3 || boxes->dims[2] != 4)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "boxes must have shape [batches, boxes, 4], found %s",
                    ShapeOf(*boxes).s);
  if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "scores must have shape [%lld, classes, %lld] to match boxes, found %s",
                    static_cast<long long>(boxes->dims[0]), static_cast<long long>(boxes->dims[1]),
                    ShapeOf(*scores).s);
  const int64_t center = ctx.AttrInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "center_point_box is %lld, expected 0 or 1",
                    static_cast<long long>(center));
  int64_t max_out = 0;
  if (const TensorRef* t = ctx.input(2)) {
    if (t->elements() > 1)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "max_output_boxes_per_class must be a scalar, found shape %s", ShapeOf(*t).s);
    if (t->elements() == 1) {
      uint32_t n = 0;
      EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "max_output_boxes_per_class", &max_out, 1, &n));
    }
  }
  if (max_out < 0) max_out = 0;
  float iou = 0.0f, score_threshold = 0.0f;
  bool has_score_threshold = false;
  if (const TensorRef* t = ctx.input(3); t && t->elements() > 0) {
    EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *t, "iou_threshold", &iou));
    if (!(iou >= 0.0f && iou <= 1.0f))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "iou_threshold is %g, expected a value in [0, 1]",
                      static_cast<double>(iou));
  }
  if (const TensorRef* t = ctx.input(4); t && t->elements() > 0) {
    EPCTX_RETURN_IF_ERROR(ReadScalarFloat(ctx, *t, "score_threshold", &score_threshold));
    has_score_threshold = true;
  }

  const int64_t batches = boxes->dims[0], n = boxes->dims[1], classes = scores->dims[1];
  const int64_t per_class = max_out < n ? max_out : n;
  int64_t cap = 0;
  if (!MulOk(batches, classes, &cap) || !MulOk(cap, per_class, &cap))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "boxes %s and scores %s are too large",
                    ShapeOf(*boxes).s, ShapeOf(*scores).s);
  int64_t* sel = nullptr;
  Candidate* cand = nullptr;
  Box* kept = nullptr;
  int64_t count = 0;
  if (cap > 0) {
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(cap) * 3, &sel));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(n), &cand));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(per_class), &kept));
    const float* B = static_cast<const float*>(boxes->data);
    const float* S = static_cast<const float*>(scores->data);
    for (int64_t b = 0; b < batches; ++b) {
      const float* bb = B + b * n * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* sc = S + (b * classes + c) * n;
        int64_t m = 0;
        for (int64_t i = 0; i < n; ++i)
          if (!has_score_threshold || sc[i] > score_threshold) cand[m++] = {sc[i], i};
        SortCandidates(cand, m);
        int64_t k = 0;
        for (int64_t i = 0; i < m && k < per_class; ++i) {
          const Box box = ReadBox(bb + cand[i].index * 4, center == 1);
          bool drop = false;
          for (int64_t j = 0; j < k && !drop; ++j) drop = Suppresses(kept[j], box, iou);
          if (drop) continue;
          kept[k++] = box;
          sel[count * 3] = b;
          sel[count * 3 + 1] = c;
          sel[count * 3 + 2] = cand[i].index;
          ++count;
        }
      }
    }
  }
  const int64_t ydims[2] = {count, 3};
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_INT64, 2, ydims, &y));
  if (count > 0) memcpy(y->data, sel, static_cast<size_t>(count) * 3 * sizeof(int64_t));
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
