// SPDX-License-Identifier: Apache-2.0
// The transformer level (stream 1.8): REDUCE, LAYER_NORM, BATCH_MATMUL and
// STRIDED_COPY on validated streams (vnpu_validate_transformer.cc checked
// every index these loops reach).
//
// BATCH_MATMUL runs the micro-kernel library's Sgemm (the tile of the
// CPU's instruction set) once per batch index and block of rows: A and B
// are read in place through their strides, so the transposes the compiler
// folded into them cost nothing; an addend (attention mask, bias) is
// copied into C first and summed as Sgemm's beta = 1 term. LAYER_NORM and
// REDUCE over a last axis (inner 1) run on rows of four-float vectors; the
// same loops serve every thread split, so the bytes never depend on it.
#include <cmath>
#include <cstring>

#include "conv/plan.h"
#include "epctx_uk/resize.h"
#include "epctx_uk/sgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

// Sum of n floats as four partial sums of every fourth element (then the
// rest in order), the same bits whichever run holds the row.
inline float SumRow(const float* x, uint64_t n) {
  V4 acc = {0.f, 0.f, 0.f, 0.f};
  uint64_t i = 0;
  for (; i + 4 <= n; i += 4) acc += Load4(x + i);
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; ++i) s += x[i];
  return s;
}

// Sum of (x[i] - m)^2, the same way.
inline float SquaresRow(const float* x, uint64_t n, float m) {
  V4 acc = {0.f, 0.f, 0.f, 0.f};
  const V4 m4 = V4{} + m;
  uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 d = Load4(x + i) - m4;
    acc += d * d;
  }
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  return s;
}

void RunReduce(const Bindings& b, const fb::Reduce* c) {
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const uint64_t outer = c->outer(), n = c->axis(), inner = c->inner();
  const fb::ReduceKind kind = c->kind();
  ForRange(b.par, int64_t(outer), MinUnits(int64_t(n * inner)), [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      const float* xo = x + uint64_t(o) * n * inner;
      float* yo = y + uint64_t(o) * inner;
      if (inner == 1 && (kind == fb::ReduceKind::SUM || kind == fb::ReduceKind::MEAN)) {
        const float s = SumRow(xo, n);
        yo[0] = kind == fb::ReduceKind::MEAN ? s / float(n) : s;
        continue;
      }
      // Row by row into the output: every inner lane its own running value.
      memcpy(yo, xo, inner * 4);
      for (uint64_t a = 1; a < n; ++a) {
        const float* r = xo + a * inner;
        switch (kind) {
          case fb::ReduceKind::MAXIMUM:
            for (uint64_t i = 0; i < inner; ++i) yo[i] = r[i] > yo[i] ? r[i] : yo[i];
            break;
          case fb::ReduceKind::MINIMUM:
            for (uint64_t i = 0; i < inner; ++i) yo[i] = r[i] < yo[i] ? r[i] : yo[i];
            break;
          default:
            for (uint64_t i = 0; i < inner; ++i) yo[i] += r[i];
        }
      }
      if (kind == fb::ReduceKind::MEAN)
        for (uint64_t i = 0; i < inner; ++i) yo[i] /= float(n);
    }
  });
}

void RunLayerNorm(const Bindings& b, const fb::LayerNorm* c) {
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const float* scale = c->has_scale() ? b.ptr(c->scale()) : nullptr;
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  const uint64_t outer = c->outer(), n = c->axis(), inner = c->inner();
  const float eps = c->epsilon();
  const bool rms = c->rms();
  const uint64_t vectors = outer * inner;  // validated: no overflow
  ForRange(b.par, int64_t(vectors), MinUnits(int64_t(n) * 4), [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const uint64_t o = uint64_t(v) / inner, in = uint64_t(v) % inner;
      const float* xv = x + o * n * inner + in;
      float* yv = y + o * n * inner + in;
      float m = 0.f, var;
      if (inner == 1) {
        if (!rms) m = SumRow(xv, n) / float(n);
        var = SquaresRow(xv, n, m) / float(n);
      } else {
        float s = 0.f;
        if (!rms) {
          for (uint64_t a = 0; a < n; ++a) s += xv[a * inner];
          m = s / float(n);
        }
        s = 0.f;
        for (uint64_t a = 0; a < n; ++a) s += (xv[a * inner] - m) * (xv[a * inner] - m);
        var = s / float(n);
      }
      // Divided, not multiplied by a reciprocal: the decomposed graph's Div.
      const float inv = __builtin_sqrtf(var + eps);
      if (inner == 1) {
        const V4 m4 = V4{} + m, i4 = V4{} + inv;
        uint64_t a = 0;
        for (; a + 4 <= n; a += 4) {
          V4 t = (Load4(xv + a) - m4) / i4;
          if (scale) t *= Load4(scale + a);
          if (bias) t += Load4(bias + a);
          Store4(yv + a, t);
        }
        for (; a < n; ++a) {
          float t = (xv[a] - m) / inv;
          if (scale) t *= scale[a];
          if (bias) t += bias[a];
          yv[a] = t;
        }
        continue;
      }
      for (uint64_t a = 0; a < n; ++a) {
        float t = (xv[a * inner] - m) / inv;
        if (scale) t *= scale[a];
        if (bias) t += bias[a];
        yv[a * inner] = t;
      }
    }
  });
}

// Element offset of batch index `bi` (row-major over `dims`) by `strides`.
inline uint64_t BatchOffset(uint64_t bi, const flatbuffers::Vector<int64_t>* dims,
                            const flatbuffers::Vector<int64_t>* strides) {
  uint64_t off = 0;
  for (uint32_t d = dims->size(); d-- > 0;) {
    const uint64_t len = uint64_t(I64(dims, d));
    off += (bi % len) * uint64_t(I64(strides, d));
    bi /= len;
  }
  return off;
}

void RunBatchMatMul(const Bindings& b, const fb::BatchMatMul* c, const OpPlan& p) {
  const float* a = b.ptr(c->a());
  const float* bm = b.ptr(c->b());
  float* y = b.ptr(c->output());
  const float* add = c->has_addend() ? b.ptr(c->addend()) : nullptr;
  const auto* dims = c->batch();
  uint64_t batches = 1;
  for (uint32_t d = 0; d < dims->size(); ++d) batches *= uint64_t(I64(dims, d));
  const int64_t M = int64_t(c->m()), N = int64_t(c->n()), K = int64_t(c->k());
  const int64_t rows = p.chunk_k;  // rows per unit (planned)
  const int64_t row_units = (M + rows - 1) / rows;
  const uint32_t r = dims->size();
  const int64_t add_rs = add ? I64(c->addend_strides(), r) : 0;
  const int64_t add_cs = add ? I64(c->addend_strides(), r + 1) : 0;
  const fb::Activation act = c->activation();
  uk::Gemm base;
  base.trans_b = c->trans_b();
  base.K = K;
  base.N = N;
  base.alpha = c->alpha();
  base.lda = int64_t(c->a_rs());
  base.ldb = int64_t(c->b_rs());
  base.ldc = N;
  base.beta = add ? 1.0f : 0.0f;
  base.lo = p.lo;
  base.hi = p.hi;
  ForRangeSlots(b.par, int64_t(batches) * row_units, MinUnits(rows * N * K),
                [&](int64_t lo, int64_t hi, uint32_t slot) {
                  for (int64_t u = lo; u < hi; ++u) {
                    const uint64_t bi = uint64_t(u / row_units);
                    const int64_t m0 = (u % row_units) * rows;
                    uk::Gemm g = base;
                    g.M = M - m0 < rows ? M - m0 : rows;
                    g.A = a + BatchOffset(bi, dims, c->a_strides()) + m0 * base.lda;
                    g.B = bm + BatchOffset(bi, dims, c->b_strides());
                    g.C = y + (int64_t(bi) * M + m0) * N;
                    if (add) {
                      const float* s = add + BatchOffset(bi, dims, c->addend_strides());
                      for (int64_t i = 0; i < g.M; ++i) {
                        const float* sr = s + (m0 + i) * add_rs;
                        float* cr = g.C + i * N;
                        if (add_cs == 1) memcpy(cr, sr, size_t(N) * 4);
                        else
                          for (int64_t j = 0; j < N; ++j) cr[j] = sr[j * add_cs];
                      }
                    }
                    uk::Sgemm(g, b.slot(slot));
                    if (p.post)
                      ActivateRows(act, g.C, uint64_t(g.M), uint64_t(N), uint64_t(N),
                                   c->act_alpha(), c->act_beta());
                  }
                });
}

void RunStridedCopy(const Bindings& b, const fb::StridedCopy* c) {
  const fb::Tensor* yt = b.graph->stream->tensors()->Get(c->output());
  const uint64_t es = ElementSize(yt);
  const uint8_t* x = reinterpret_cast<const uint8_t*>(b.ptr(c->input())) + c->offset() * es;
  uint8_t* y = reinterpret_cast<uint8_t*>(b.ptr(c->output()));
  const uint64_t total = Elements(yt);
  const uint32_t rank = yt->shape() ? yt->shape()->size() : 0;
  if (total == 0) return;
  if (rank == 0) {
    memcpy(y, x, es);
    return;
  }
  const uint64_t row = uint64_t(Dim(yt, rank - 1));
  const int64_t step = I64(c->strides(), rank - 1);
  const uint64_t rows = total / row;
  // Offsets are signed from 1.9 (validated to stay inside the input).
  ForRange(b.par, int64_t(rows), MinUnits(int64_t(row)), [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      int64_t off = 0;
      for (uint64_t t = uint64_t(o), d = rank - 1; d-- > 0;) {
        const uint64_t len = uint64_t(Dim(yt, uint32_t(d)));
        off += int64_t(t % len) * I64(c->strides(), uint32_t(d));
        t /= len;
      }
      const uint8_t* xs = x + off * int64_t(es);
      uint8_t* yo = y + uint64_t(o) * row * es;
      if (step == 1) {
        memcpy(yo, xs, row * es);
      } else if (es == 4) {
        const float* xf = reinterpret_cast<const float*>(xs);
        float* yf = reinterpret_cast<float*>(yo);
        for (int64_t i = 0; i < int64_t(row); ++i) yf[i] = xf[i * step];
      } else {
        for (int64_t i = 0; i < int64_t(row); ++i)
          memcpy(yo + i * int64_t(es), xs + i * step * int64_t(es), es);
      }
    }
  });
}

// Rows of the output plane-major: each output row reads one (NEAREST) or
// two (LINEAR) input rows; LINEAR blends with the CPU kernel's products and
// order (w = wx * wy, the x taps fastest).
void RunResize(const Bindings& b, const fb::Resize* c, const OpPlan& p) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const uint32_t r = xt->shape()->size();
  const int64_t H = Dim(xt, r - 2), W = Dim(xt, r - 1), OH = Dim(yt, r - 2), OW = Dim(yt, r - 1);
  const int64_t rows = int64_t(Elements(yt)) / (OW > 0 ? OW : 1);
  if (OW == 0 || rows == 0) return;
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const ResizeTap* th = b.graph->resize_taps + p.taps_at;
  const ResizeTap* tw = th + 2 * OH;
  const bool linear = c->mode() == fb::ResizeMode::LINEAR;
  ForRange(b.par, rows, MinUnits(OW * 4), [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t o = row / OH, i = row % OH;
      const float* plane = x + o * H * W;
      float* yr = y + row * OW;
      const float* s0 = plane + int64_t(th[2 * i].index) * W;
      if (!linear) {
        for (int64_t j = 0; j < OW; ++j) yr[j] = s0[tw[2 * j].index];
        continue;
      }
      const float* s1 = plane + int64_t(th[2 * i + 1].index) * W;
      const float wy0 = th[2 * i].weight, wy1 = th[2 * i + 1].weight;
      for (int64_t j = 0; j < OW; ++j) {
        const int32_t x0 = tw[2 * j].index, x1 = tw[2 * j + 1].index;
        const float wx0 = tw[2 * j].weight, wx1 = tw[2 * j + 1].weight;
        float acc = 0;
        acc += wx0 * wy0 * s0[x0];
        acc += wx1 * wy0 * s0[x1];
        acc += wx0 * wy1 * s1[x0];
        acc += wx1 * wy1 * s1[x1];
        yr[j] = acc;
      }
    }
  });
}

static_assert(uint8_t(fb::ResizeCoord::HALF_PIXEL_SYMMETRIC) ==
                      uint8_t(uk::ResizeCoord::kHalfPixelSymmetric) &&
                  uint8_t(fb::ResizeCoord::ALIGN_CORNERS) ==
                      uint8_t(uk::ResizeCoord::kAlignCorners) &&
                  uint8_t(fb::ResizeRound::CEIL) == uint8_t(uk::ResizeRound::kCeil),
              "the stream's resize enums are the micro-kernels'");

// The input index output index i (begin removed) reads along an axis of n
// elements; -1 outside the input in CONSTANT mode.
inline int64_t PadSource(fb::PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == fb::PadMode::REFLECT) return i < 0 ? -i : 2 * (n - 1) - i;
  if (mode == fb::PadMode::EDGE) return i < 0 ? 0 : n - 1;
  return -1;
}

// Output rows (every index but the last). CONSTANT: a row whose outer
// indices all fall inside the input is the value, the input row, the value;
// any other is the value throughout. REFLECT and EDGE: every row reads the
// input row at its mirrored or clamped outer indices, and its ends read the
// mirrored or clamped columns.
void RunPad(const Bindings& b, const fb::Pad* c) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  const uint64_t total = Elements(yt);
  if (total == 0) return;
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const float v = c->value();
  const fb::PadMode mode = c->mode();
  if (r == 0) {
    y[0] = x[0];
    return;
  }
  const int64_t ow = Dim(yt, r - 1), iw = Dim(xt, r - 1), bw = I64(c->begins(), r - 1);
  const int64_t rows = int64_t(total) / ow;
  ForRange(b.par, rows, MinUnits(ow), [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      float* yr = y + row * ow;
      int64_t src = 0, stride = iw;
      bool inside = Elements(xt) > 0;
      for (int64_t t = row, d = int64_t(r) - 2; d >= 0 && inside; --d) {
        const int64_t len = Dim(yt, uint32_t(d));
        const int64_t i =
            PadSource(mode, t % len - I64(c->begins(), uint32_t(d)), Dim(xt, uint32_t(d)));
        t /= len;
        inside = i >= 0;
        src += i * stride;
        stride *= Dim(xt, uint32_t(d));
      }
      if (!inside) {
        for (int64_t j = 0; j < ow; ++j) yr[j] = v;
        continue;
      }
      const float* xr = x + src;
      for (int64_t j = 0; j < bw; ++j) {
        const int64_t i = PadSource(mode, j - bw, iw);
        yr[j] = i < 0 ? v : xr[i];
      }
      memcpy(yr + bw, xr, size_t(iw) * 4);
      for (int64_t j = bw + iw; j < ow; ++j) {
        const int64_t i = PadSource(mode, j - bw, iw);
        yr[j] = i < 0 ? v : xr[i];
      }
    }
  });
}

// The taps of one axis of `in` inputs and `out` outputs, two per output.
void AxisTaps(const fb::Resize* c, int64_t in, int64_t out, float scale, float len, ResizeTap* t) {
  const auto coord = static_cast<uk::ResizeCoord>(c->coord());
  const auto round = static_cast<uk::ResizeRound>(c->round());
  const bool identity = scale == 1.0f && in == out;
  for (int64_t o = 0; o < out; ++o) {
    const float fo = float(o);
    const float x =
        scale == 1.0f
            ? fo
            : uk::ResizeOriginal(coord, fo, scale,
                                 coord == uk::ResizeCoord::kAlignCorners ? len : float(out),
                                 float(in), 0.0f, 1.0f);
    int64_t i[2] = {o, o};
    float w[2] = {1.0f, 0.0f};
    if (identity) {
      // as is
    } else if (c->mode() == fb::ResizeMode::NEAREST) {
      int64_t k = uk::ResizeNearestIndex(round, x, scale < 1.0f);
      k = k > in - 1 ? in - 1 : (k < 0 ? 0 : k);
      i[0] = i[1] = k;
    } else {
      uk::ResizeLinearTaps(x, in, i, w);
    }
    t[2 * o] = {int32_t(i[0]), w[0]};
    t[2 * o + 1] = {int32_t(i[1]), w[1]};
  }
}

}  // namespace

uint64_t ResizeTapCount(const fb::Graph* g, const fb::Op* o) {
  if (o->params_type() != fb::OpParams::Resize) return 0;
  const fb::Tensor* yt = g->tensors()->Get(o->params_as_Resize()->output());
  const uint32_t r = yt->shape()->size();
  return 2 * uint64_t(Dim(yt, r - 2) + Dim(yt, r - 1));
}

void FillResizeTaps(const fb::Graph* g, const fb::Op* o, ResizeTap* taps) {
  const fb::Resize* c = o->params_as_Resize();
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const uint32_t r = yt->shape()->size();
  const int64_t OH = Dim(yt, r - 2);
  AxisTaps(c, Dim(xt, r - 2), OH, c->scale_h(), c->length_h(), taps);
  AxisTaps(c, Dim(xt, r - 1), Dim(yt, r - 1), c->scale_w(), c->length_w(), taps + 2 * OH);
}

uint64_t BatchMatMulRows(const fb::BatchMatMul* c) {
  // Units of at least 8 rows; about 8 units an op in all, so two to eight
  // threads find work when there are few batches (one head, one image).
  uint64_t batches = 1;
  for (uint32_t d = 0; d < c->batch()->size(); ++d) batches *= uint64_t(I64(c->batch(), d));
  const uint64_t m = c->m() ? c->m() : 1;
  const uint64_t per = batches >= 8 ? 1 : (8 + batches - 1) / batches;
  uint64_t rows = (m + per - 1) / per;
  rows = (rows + 7) / 8 * 8;
  return rows < m ? rows : m;
}

uint64_t BatchMatMulWorkFloats(const fb::BatchMatMul* c) {
  return uk::SgemmWorkspaceFloats(int64_t(BatchMatMulRows(c)), int64_t(c->n()), int64_t(c->k()));
}

bool RunTransformer(const Bindings& b, const fb::Op* o, const OpPlan& p) {
  switch (o->params_type()) {
    case fb::OpParams::Reduce: RunReduce(b, o->params_as_Reduce()); return true;
    case fb::OpParams::LayerNorm: RunLayerNorm(b, o->params_as_LayerNorm()); return true;
    case fb::OpParams::BatchMatMul: RunBatchMatMul(b, o->params_as_BatchMatMul(), p); return true;
    case fb::OpParams::StridedCopy: RunStridedCopy(b, o->params_as_StridedCopy()); return true;
    case fb::OpParams::Resize: RunResize(b, o->params_as_Resize(), p); return true;
    case fb::OpParams::Pad: RunPad(b, o->params_as_Pad()); return true;
    case fb::OpParams::PadMirror: RunPad(b, o->params_as_PadMirror()); return true;
    case fb::OpParams::Recurrent: RunRecurrent(b, o->params_as_Recurrent()); return true;
    default: return false;
  }
}

}  // namespace vnpu
}  // namespace epctx
