// SPDX-License-Identifier: Apache-2.0
// Conv (1-D, 2-D and 3-D, float32): three paths chosen by shape.
//  - depthwise (one input channel per group, more than one group, any
//    channel multiplier): per output channel, at column stride 1 or 2
//    weighted rows of the micro-kernel library (DepthwiseRing,
//    DepthwiseSplit; DepthwiseRows for rings too tall), else a direct loop
//    whose inner loop runs over a contiguous output row with precomputed
//    valid bounds;
//  - 1x1 kernels with stride 1 and no padding: the input already is the
//    im2col matrix, so the packed SGEMM reads it directly;
//  - everything else (including one group with one input channel, such as
//    an STFT filter bank): the packed SGEMM weights x im2col, with the
//    im2col matrix packed straight from the image into B strips.
// The bias is added by the SGEMM's last K slice, not in a pass of its own.
//
// PrepareConv packs constant weights once, at session create, as the
// SGEMM's A panels (one PackedA per group); the GEMM paths then read them in
// place instead of packing W again in every column block of every Run. The
// depthwise loop reads W as it is and has nothing to prepare.
#include "epctx_uk/depthwise.h"
#include "epctx_uk/elementwise.h"
#include "epctx_uk/im2col.h"
#include "epctx_uk/rows.h"
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/window.h"

namespace epctx {
namespace kern {
namespace {

struct ConvShape {
  int64_t batch, cin, cout, group, cin_g, cout_g;
  Window w;
};

// Taps of a window DepthwiseRows keeps on the stack (7x7 and under).
constexpr int64_t kRowTaps = 49;

// The tap rows [kh0, kh1) of an output row whose window starts at input
// row ih0 that lie inside the input's H rows (a contiguous run: their
// weights are one slice of W).
void TapRows(int64_t ih0, int64_t KH, int64_t dh, int64_t H, int64_t* kh0, int64_t* kh1) {
  int64_t a = 0, b = KH;
  while (a < KH && ih0 + a * dh < 0) ++a;
  while (b > a && ih0 + (b - 1) * dh >= H) --b;
  *kh0 = a;
  *kh1 = b;
}

// Output row oh's first input row *ih0 and its tap rows inside the input,
// [*kh0, *kh1); when there are none, the row is the bias and false.
bool OutputRowTaps(const Window& w, int64_t oh, float bias, float* orow, int64_t* ih0, int64_t* kh0,
                   int64_t* kh1) {
  *ih0 = oh * w.stride[1] - w.pad_begin[1];
  TapRows(*ih0, w.kernel[1], w.dilation[1], w.in[1], kh0, kh1);
  if (*kh0 < *kh1) return true;
  for (int64_t ow = 0; ow < w.out[2]; ++ow) orow[ow] = bias;
  return false;
}

// The lanes kernels' geometry of a 2-D window (axis 0 is depth), and
// whether the window is 2-D (depth 1 in, out and kernel).
uk::DwShape LanesShape(const Window& w) {
  return uk::DwShape{w.in[1],       w.in[2],       w.out[1],       w.out[2],
                     w.kernel[1],   w.kernel[2],   w.stride[1],    w.stride[2],
                     w.dilation[1], w.dilation[2], w.pad_begin[1], w.pad_begin[2]};
}
bool Planar(const Window& w) { return w.in[0] == 1 && w.kernel[0] == 1 && w.out[0] == 1; }

// units lanes-kernel calls split over the threads, each worker with its
// own `floats` of scratch: fn(unit, work). unit_work is what a unit costs.
template <typename Fn>
void ForLaneUnits(KernelContext& ctx, int64_t units, uint64_t floats, int64_t unit_work, Fn fn) {
  float* work =
      static_cast<float*>(ctx.Scratch(uint64_t(ctx.threads()) * floats * sizeof(float), 64));
  const uint32_t chunks = ctx.Chunks(units, unit_work > 0 ? unit_work : 1);
  ctx.ParallelFor(chunks, [&](uint32_t c, uint32_t worker) {
    int64_t lo, hi;
    ChunkRange(units, chunks, c, 1, &lo, &hi);
    for (int64_t u = lo; u < hi; ++u) fn(u, work + worker * floats);
  });
}

// One 2-D depthwise plane at column stride 1 by weighted rows: per output
// row the valid tap rows (a contiguous run of kh, so their weights are one
// slice of W) give every column whose window lies inside the input row as
// one uk::WeightedRows call (vectors across the row, each output written
// once); the few edge columns are summed tap by tap. Returns false (nothing
// written) when the window does not fit (DepthwiseChannel then runs).
bool DepthwiseRows(const ConvShape& cs, const float* in, const float* wk, float bias, float* out) {
  const Window& w = cs.w;
  const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  const int64_t KH = w.kernel[1], KW = w.kernel[2], dh = w.dilation[1], dw = w.dilation[2];
  const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2], sh = w.stride[1];
  if (w.in[0] != 1 || w.kernel[0] != 1 || w.out[0] != 1 || w.stride[2] != 1 || KH * KW > kRowTaps)
    return false;
  // Columns whose every tap lies inside the row: ow - pl >= 0 and
  // ow - pl + (KW - 1) * dw < W.
  int64_t a = pl, b = W + pl - (KW - 1) * dw;
  if (b > OW) b = OW;
  if (b < 0) b = 0;
  if (a > b) a = b;
  const float* rows[kRowTaps];
  for (int64_t oh = 0; oh < OH; ++oh) {
    float* __restrict orow = out + oh * OW;
    const int64_t ih0 = oh * sh - pt;
    int64_t kh0, kh1;
    TapRows(ih0, KH, dh, H, &kh0, &kh1);
    const float* wv = wk + kh0 * KW;
    const int64_t nt = (kh1 - kh0) * KW;
    auto edge = [&](int64_t ow) {
      float acc = bias;
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const float* irow = in + (ih0 + kh * dh) * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t iw = ow - pl + kw * dw;
          if (iw >= 0 && iw < W) acc += wk[kh * KW + kw] * irow[iw];
        }
      }
      orow[ow] = acc;
    };
    for (int64_t ow = 0; ow < a; ++ow) edge(ow);
    if (a < b) {
      if (nt == 0) {
        for (int64_t ow = a; ow < b; ++ow) orow[ow] = bias;
      } else {
        int64_t t = 0;
        for (int64_t kh = kh0; kh < kh1; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw)
            rows[t++] = in + (ih0 + kh * dh) * W + (a - pl + kw * dw);
        uk::WeightedRows(rows, wv, nt, bias, orow + a, b - a);
      }
    }
    for (int64_t ow = b; ow < OW; ++ow) edge(ow);
  }
  return true;
}

// Column stride 2 (no column dilation) by weighted rows over split input
// rows: each tap row is split once per output row into its even and odd
// columns, zero-padded (E[t] = x[2 (t - P)], O[t] = x[2 (t - P) + 1], zero
// outside the row), so tap kw reads E or O from a fixed offset for every
// output column and the whole row is one uk::WeightedRows call with no edge
// columns. Floats of work per plane: SplitFloats.
int64_t SplitPad(const Window& w) { return (w.pad_begin[2] + 1) / 2; }
int64_t SplitLen(const Window& w) { return w.out[2] + w.kernel[2] / 2 + SplitPad(w) + 1; }
bool SplitApplies(const Window& w) {
  return w.in[0] == 1 && w.kernel[0] == 1 && w.out[0] == 1 && w.stride[2] == 2 &&
         w.dilation[2] == 1 && w.kernel[1] * w.kernel[2] <= kRowTaps;
}
int64_t SplitFloats(const Window& w) { return 2 * w.kernel[1] * SplitLen(w); }

void DepthwiseSplit(const ConvShape& cs, const float* in, const float* wk, float bias, float* out,
                    float* work) {
  const Window& w = cs.w;
  const int64_t W = w.in[2], OH = w.out[1], OW = w.out[2];
  const int64_t KW = w.kernel[2], dh = w.dilation[1], pl = w.pad_begin[2];
  const int64_t P = SplitPad(w), L = SplitLen(w);
  const float* rows[kRowTaps];
  for (int64_t oh = 0; oh < OH; ++oh) {
    float* __restrict orow = out + oh * OW;
    int64_t ih0, kh0, kh1;
    if (!OutputRowTaps(w, oh, bias, orow, &ih0, &kh0, &kh1)) continue;
    int64_t t = 0;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const float* r = in + (ih0 + kh * dh) * W;
      float* __restrict e = work + 2 * (kh - kh0) * L;
      float* __restrict o = e + L;
      for (int64_t i = 0; i < L; ++i) {
        const int64_t c = 2 * (i - P);
        e[i] = c >= 0 && c < W ? r[c] : 0.0f;
        o[i] = c + 1 >= 0 && c + 1 < W ? r[c + 1] : 0.0f;
      }
      for (int64_t kw = 0; kw < KW; ++kw) {
        // Input column 2 ow + d: E[ow + d / 2 + P] (d even), O[ow + (d - 1) / 2 + P].
        const int64_t d = kw - pl, m = d >= 0 ? d / 2 : -((1 - d) / 2);
        rows[t++] = ((d - 2 * m) == 0 ? e : o) + m + P;
      }
    }
    uk::WeightedRows(rows, wk + kh0 * KW, t, bias, orow, OW);
  }
}

// Column stride 1 by weighted rows over a ring of zero-padded input rows:
// each input row is copied once, when an output row first needs it, into
// ring slot ih % RingRows (padded column j holds input column j - pl, zero
// outside the row), so tap kw of every output column reads its slot at a
// fixed offset and the whole output row is one uk::WeightedRows call: no
// edge columns summed tap by tap (a 3x3 on 7x7 has 2 of 7). Floats of work
// per plane: RingFloats.
int64_t RingLen(const Window& w) { return w.out[2] + (w.kernel[2] - 1) * w.dilation[2]; }
int64_t RingRows(const Window& w) { return (w.kernel[1] - 1) * w.dilation[1] + 1; }
bool RingApplies(const Window& w) {
  return w.in[0] == 1 && w.kernel[0] == 1 && w.out[0] == 1 && w.stride[2] == 1 &&
         w.kernel[1] * w.kernel[2] <= kRowTaps && RingRows(w) <= kRowTaps;
}
int64_t RingFloats(const Window& w) { return RingRows(w) * RingLen(w); }

void DepthwiseRing(const ConvShape& cs, const float* in, const float* wk, float bias, float* out,
                   float* work) {
  const Window& w = cs.w;
  const int64_t W = w.in[2], OH = w.out[1], OW = w.out[2];
  const int64_t KW = w.kernel[2], dh = w.dilation[1], dw = w.dilation[2], pl = w.pad_begin[2];
  const int64_t R = RingRows(w), L = RingLen(w);
  // The columns of a padded row that hold input: [c0, c1).
  const int64_t c0 = pl < L ? pl : L, c1 = pl + W < L ? pl + W : L;
  int64_t held[kRowTaps];
  for (int64_t i = 0; i < R; ++i) held[i] = -1;
  const float* rows[kRowTaps];
  for (int64_t oh = 0; oh < OH; ++oh) {
    float* __restrict orow = out + oh * OW;
    int64_t ih0, kh0, kh1;
    if (!OutputRowTaps(w, oh, bias, orow, &ih0, &kh0, &kh1)) continue;
    int64_t t = 0;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const int64_t ih = ih0 + kh * dh, slot = ih % R;
      float* __restrict e = work + slot * L;
      if (held[slot] != ih) {
        held[slot] = ih;
        for (int64_t j = 0; j < c0; ++j) e[j] = 0.0f;
        if (c1 > c0) __builtin_memcpy(e + c0, in + ih * W + (c0 - pl), size_t(c1 - c0) * 4);
        for (int64_t j = c1 > c0 ? c1 : c0; j < L; ++j) e[j] = 0.0f;
      }
      for (int64_t kw = 0; kw < KW; ++kw) rows[t++] = e + kw * dw;
    }
    uk::WeightedRows(rows, wk + kh0 * KW, t, bias, orow, OW);
  }
}

void DepthwiseChannel(const ConvShape& cs, const float* in, const float* wk, float bias, float* out,
                      float* work) {
  if (work && SplitApplies(cs.w)) return DepthwiseSplit(cs, in, wk, bias, out, work);
  if (work && RingApplies(cs.w)) return DepthwiseRing(cs, in, wk, bias, out, work);
  if (DepthwiseRows(cs, in, wk, bias, out)) return;
  const Window& w = cs.w;
  const int64_t D = w.in[0], H = w.in[1], W = w.in[2];
  const int64_t OD = w.out[0], OH = w.out[1], OW = w.out[2];
  const int64_t sh = w.stride[1], sw = w.stride[2];
  for (int64_t od = 0; od < OD; ++od) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* __restrict orow = out + (od * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) orow[ow] = bias;
      for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
        const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
        if (id < 0 || id >= D) continue;
        for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
          const int64_t ih = oh * sh - w.pad_begin[1] + kh * w.dilation[1];
          if (ih < 0 || ih >= H) continue;
          const float* __restrict irow = in + (id * H + ih) * W;
          const float* wrow = wk + (kd * w.kernel[1] + kh) * w.kernel[2];
          for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
            const float wv = wrow[kw];
            const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
            int64_t lo, hi;
            ValidRange(off, sw, W, OW, &lo, &hi);
            if (sw == 1) {
              const float* __restrict src = irow + off;
              for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * src[ow];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * irow[ow * sw + off];
            }
          }
        }
      }
    }
  }
}

// Implicit im2col: rows [k0, k0+kc) x columns [j0, j0+nc) of one group's
// im2col matrix (row k = (c, kd, kh, kw), column j = output position),
// written straight into the SGEMM's packed B strips (uk::PackBFn), so the
// matrix is never materialised. Bounds are resolved once per row k and
// output row, never per tap.
// A 1-D or 2-D convolution packs with the micro-kernel library's im2col
// packer (uk::Im2colKernel: masked AVX-512 runs where the CPU has them),
// chosen once per Run.
struct ImageB {
  const ConvShape* cs;
  const float* in;          // the group's first input channel
  uk::Im2colFn im2col;      // null: 3-D, packed below
  uk::Im2colShape plane2d;  // its geometry
};

void PackImage(const void* vctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst,
               int64_t ss, int64_t ks) {
  const ImageB& ib = *static_cast<const ImageB*>(vctx);
  if (ib.im2col && ss == uk::kStrip) return ib.im2col(ib.plane2d, ib.in, k0, kc, j0, nc, dst, ks);
  const Window& w = ib.cs->w;
  const int64_t D = w.in[0], H = w.in[1], W = w.in[2];
  const int64_t OH = w.out[1], OW = w.out[2];
  const int64_t KD = w.kernel[0], KH = w.kernel[1], KW = w.kernel[2];
  const int64_t sw = w.stride[2];
  int64_t kw = k0 % KW, t = k0 / KW;
  int64_t kh = t % KH;
  t /= KH;
  int64_t kd = t % KD, c = t / KD;
  const int64_t row0 = j0 / OW, first_ow = j0 - row0 * OW;
  const int64_t first_od = row0 / OH, first_oh = row0 - first_od * OH;
  const int64_t padded = (nc + uk::kStrip - 1) / uk::kStrip * uk::kStrip;
  for (int64_t k = 0; k < kc; ++k) {
    float* d = dst + k * ks;
    // Column j of this row of B lives at d[(j / 8) * ss + j % 8].
    auto zero = [&](int64_t ja, int64_t jb) {
      for (int64_t j = ja; j < jb; ++j) d[(j >> 3) * ss + (j & 7)] = 0.0f;
    };
    const float* volume = ib.in + c * D * H * W;
    const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
    int64_t lo, hi;
    ValidRange(off, sw, W, OW, &lo, &hi);
    int64_t od = first_od, oh = first_oh, ow0 = first_ow;
    int64_t j = 0;
    while (j < nc) {
      const int64_t ow1 = OW - ow0 < nc - j ? OW : ow0 + (nc - j);
      const int64_t jbase = j - ow0;  // column of ow == 0 in this output row
      const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
      const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
      if (id < 0 || id >= D || ih < 0 || ih >= H) {
        zero(jbase + ow0, jbase + ow1);
      } else {
        const float* irow = volume + (id * H + ih) * W;
        // The valid columns [lo, hi) clipped to this run [ow0, ow1); a run
        // may end before lo (wide left padding) or start after hi.
        int64_t a = lo > ow0 ? lo : ow0;
        if (a > ow1) a = ow1;
        int64_t b = hi < ow1 ? hi : ow1;
        if (b < a) b = a;
        zero(jbase + ow0, jbase + a);
        if (sw == 1) {
          // Strip-sized contiguous runs.
          const float* src = irow + off;
          int64_t o = a;
          while (o < b) {
            const int64_t jj = jbase + o, lane = jj & 7;
            int64_t n = 8 - lane;
            if (n > b - o) n = b - o;
            float* __restrict q = d + (jj >> 3) * ss + lane;
            for (int64_t i = 0; i < n; ++i) q[i] = src[o + i];
            o += n;
          }
        } else {
          for (int64_t o = a; o < b; ++o) {
            const int64_t jj = jbase + o;
            d[(jj >> 3) * ss + (jj & 7)] = irow[o * sw + off];
          }
        }
        zero(jbase + b, jbase + ow1);
      }
      j += ow1 - ow0;
      ow0 = 0;
      if (++oh == OH) {
        oh = 0;
        ++od;
      }
    }
    zero(nc, padded);
    if (++kw == KW) {
      kw = 0;
      if (++kh == KH) {
        kh = 0;
        if (++kd == KD) {
          kd = 0;
          ++c;
        }
      }
    }
  }
}

// What PrepareConv leaves: the weights it packed and their packing.
struct ConvPrepared {
  const void* weights;  // W's data: the state serves only that W
  int64_t group, cout_g, K;
  uk::PackedA* packed;  // [group], or null
  // 16 -> 16 channels per group: each group's weights gathered in the
  // order uk::GroupLanes reads them ([group][taps * 256]), or null.
  const float* lanes;
};

// The prepared state when it was made for these weights and shape.
const ConvPrepared* PreparedFor(const KernelContext& ctx, const TensorRef& wt, const ConvShape& cs,
                                int64_t K) {
  const ConvPrepared* pp = static_cast<const ConvPrepared*>(ctx.prepared());
  if (!pp || pp->weights != wt.data || pp->group != cs.group || pp->cout_g != cs.cout_g ||
      pp->K != K)
    return nullptr;
  return pp;
}

Status ReadConvShape(KernelContext& ctx, const TensorRef& x, const TensorRef& wt, ConvShape* cs) {
  if (x.rank > 5)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "%u-D convolution (input %s) is not supported",
                    x.rank - 2, ShapeOf(x).s);
  if (x.rank < 3)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input X must have rank 3, 4 or 5, found shape %s",
                    ShapeOf(x).s);
  if (wt.rank != x.rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "weights W must have rank %u like X, found shape %s",
                    x.rank, ShapeOf(wt).s);
  const int64_t group = ctx.AttrInt("group", 1);
  if (group < 1 || group > kMaxWindowValue)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "group is %lld, expected >= 1",
                    static_cast<long long>(group));
  cs->batch = x.dims[0];
  cs->cin = x.dims[1];
  cs->cout = wt.dims[0];
  cs->group = group;
  cs->cin_g = wt.dims[1];
  int64_t expect_cin = 0;
  if (!MulOk(cs->cin_g, group, &expect_cin) || expect_cin != cs->cin)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "X has %lld channels but W %s with group %lld expects %lld",
                    static_cast<long long>(cs->cin), ShapeOf(wt).s, static_cast<long long>(group),
                    static_cast<long long>(cs->cin_g * group));
  if (cs->cout % group != 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "W has %lld output channels, expected a multiple of group %lld",
                    static_cast<long long>(cs->cout), static_cast<long long>(group));
  cs->cout_g = cs->cout / group;
  return ComputeWindow(ctx, x.rank - 2, x.dims + 2, wt.dims + 2, false, &cs->w);
}

// The clamp a FusedConv (com.microsoft, what ONNX Runtime's optimizer and
// epctx-compile write for Conv then Relu or Clip) applies to its result:
// activation "Relu" is [0, +inf), "Clip" [activation_params[0], [1]].
// Other activations are refused by name.
Status FusedClamp(KernelContext& ctx, float* lo, float* hi) {
  const StrView act = ctx.AttrString("activation", "");
  if (act.eq("Relu")) {
    *lo = 0.0f;
    return Status::Ok();
  }
  if (act.eq("Clip")) {
    const float* p = nullptr;
    uint32_t n = 0;
    if (!ctx.AttrFloats("activation_params", &p, &n) || n != 2)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "activation Clip needs activation_params [min, max], found %u values", n);
    *lo = p[0];
    *hi = p[1];
    return Status::Ok();
  }
  return ctx.Fail(EPCTX_NOT_IMPLEMENTED,
                  "activation '%.*s' is not supported (expected Relu or Clip)", act.len(),
                  act.data);
}

// Clamps the planes a direct (depthwise) path wrote, while they are in
// cache; nothing when there is no clamp.
void ClampPlanes(float* y, int64_t n, float lo, float hi) {
  if (lo == -__builtin_inff() && hi == __builtin_inff()) return;
  if (hi == __builtin_inff() && lo == 0.0f) uk::ActivateRow(uk::Act::kRelu, y, y, n, 0.0f, 0.0f);
  else uk::ActivateRow(uk::Act::kClip, y, y, n, lo, hi);
}

Status ConvClamped(KernelContext& ctx, float act_lo, float act_hi) {
  const TensorRef *x, *wt, *b = ctx.input(2);
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 0, "X", &x));
  EPCTX_RETURN_IF_ERROR(FloatInput(ctx, 1, "W", &wt));
  ConvShape cs;
  EPCTX_RETURN_IF_ERROR(ReadConvShape(ctx, *x, *wt, &cs));
  if (b) {
    if (b->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, "B", b->dtype);
    if (b->rank != 1 || b->dims[0] != cs.cout)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "bias B must have shape [%lld], found %s",
                      static_cast<long long>(cs.cout), ShapeOf(*b).s);
  }
  const Window& w = cs.w;
  int64_t ydims[2 + kMaxSpatial] = {cs.batch, cs.cout};
  for (uint32_t i = 0; i + 2 < x->rank; ++i) ydims[2 + i] = w.out[WindowBase(x->rank - 2) + i];
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, x->rank, ydims, 4, "output Y"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, x->rank, ydims, &y));

  const float* X = static_cast<const float*>(x->data);
  const float* Wt = static_cast<const float*>(wt->data);
  const float* B = b ? static_cast<const float*>(b->data) : nullptr;
  float* Y = static_cast<float*>(y->data);
  const int64_t HW = w.in_size();
  const int64_t OHW = w.out_size();
  if (y->elements() == 0) return Status::Ok();
  int64_t KHW = 0, K = 0;
  if (!Product(wt->dims, 2, wt->rank, &KHW) || !Product(wt->dims, 1, wt->rank, &K))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "weights W %s are too large", ShapeOf(*wt).s);

  // Depthwise (one input channel per group, several groups): a direct loop.
  // A single group with one input channel (an STFT frame bank: 1 -> 257
  // channels, 512 taps) is an ordinary GEMM with K = taps.
  if (cs.cin_g == 1 && cs.group > 1) {
    // Small 2-D maps, one output channel per group: 16 channels at a time
    // in vector lanes (uk::DepthwiseLanes), the threads taking blocks.
    const uk::DwShape dws = LanesShape(w);
    const uint64_t lanes = cs.cout_g == 1 && Planar(w) ? uk::DepthwiseLanesFloats(dws) : 0;
    if (lanes) {
      const int64_t blocks = (cs.cout + 15) / 16;
      ForLaneUnits(ctx, cs.batch * blocks, lanes, 16 * OHW * KHW, [&](int64_t u, float* work) {
        const int64_t n = u / blocks, c0 = (u % blocks) * 16;
        const int nc = static_cast<int>(cs.cout - c0 < 16 ? cs.cout - c0 : 16);
        uk::DepthwiseLanes(dws, nc, X + (n * cs.cin + c0) * HW, HW, Wt + c0 * KHW, KHW, 1,
                           B ? B + c0 : nullptr, Y + (n * cs.cout + c0) * OHW, OHW, work);
        ClampPlanes(Y + (n * cs.cout + c0) * OHW, nc * OHW, act_lo, act_hi);
      });
      return Status::Ok();
    }
    // Output channels are independent: the threads take runs of them.
    const int64_t planes = cs.batch * cs.cout;
    const uint32_t chunks =
        ctx.Chunks(planes, KHW && OHW > INT64_MAX / KHW ? INT64_MAX : OHW * KHW);
    // Column stride 2: split rows, column stride 1: a ring of padded rows,
    // in each worker's slice of scratch (the direct loop when there is none).
    const int64_t split = SplitApplies(w) ? SplitFloats(w) : RingApplies(w) ? RingFloats(w) : 0;
    float* work = split ? static_cast<float*>(ctx.Scratch(
                              uint64_t(ctx.threads()) * uint64_t(split) * sizeof(float), 64))
                        : nullptr;
    ctx.ParallelFor(chunks, [&](uint32_t c, uint32_t worker) {
      int64_t lo, hi;
      ChunkRange(planes, chunks, c, 1, &lo, &hi);
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t n = p / cs.cout, oc = p % cs.cout, ic = oc / cs.cout_g;
        DepthwiseChannel(cs, X + (n * cs.cin + ic) * HW, Wt + oc * KHW, B ? B[oc] : 0.0f,
                         Y + p * OHW, work ? work + worker * split : nullptr);
        ClampPlanes(Y + p * OHW, OHW, act_lo, act_hi);
      }
    });
    return Status::Ok();
  }

  // 16 input and 16 output channels per group on a small 2-D map (RegNet-X's
  // group convolutions): uk::GroupLanes, the threads taking groups.
  const uk::DwShape gls = LanesShape(w);
  const uint64_t glanes = cs.cin_g == 16 && cs.cout_g == 16 && cs.group > 1 && KHW > 1 && Planar(w)
                              ? uk::GroupLanesFloats(gls)
                              : 0;
  if (glanes) {
    const ConvPrepared* lp = PreparedFor(ctx, *wt, cs, K);
    const float* gathered = lp ? lp->lanes : nullptr;
    ForLaneUnits(ctx, cs.batch * cs.group, glanes, 256 * OHW * KHW, [&](int64_t u, float* work) {
      const int64_t n = u / cs.group, g = u % cs.group;
      uk::LaneWeights lw{Wt + g * 256 * KHW, 8 * 16 * KHW, 16 * KHW, KHW, 1};
      if (gathered) lw.gathered = gathered + g * uk::GroupLaneWeightsFloats(KHW);
      uk::GroupLanes(gls, X + (n * cs.cin + g * 16) * HW, HW, lw, B ? B + g * 16 : nullptr,
                     Y + (n * cs.cout + g * 16) * OHW, OHW, work);
      ClampPlanes(Y + (n * cs.cout + g * 16) * OHW, 16 * OHW, act_lo, act_hi);
    });
    return Status::Ok();
  }

  // 1x1, stride 1, no padding: the input already is the im2col matrix.
  bool pointwise = KHW == 1;
  for (uint32_t a = 0; a < kMaxSpatial; ++a)
    pointwise = pointwise && w.stride[a] == 1 && w.pad_begin[a] == 0 && w.pad_end[a] == 0;
  const ConvPrepared* pp = PreparedFor(ctx, *wt, cs, K);
  const bool flat = w.in[0] == 1 && w.kernel[0] == 1 && w.out[0] == 1;
  const uk::Im2colFn im2col = flat ? uk::Im2colKernel() : nullptr;
  const uk::Im2colShape plane2d{w.in[1],       w.in[2],        w.out[2],       w.kernel[1],
                                w.kernel[2],   w.stride[1],    w.stride[2],    w.dilation[1],
                                w.dilation[2], w.pad_begin[1], w.pad_begin[2], HW};
  GemmRunner gemm;
  EPCTX_RETURN_IF_ERROR(gemm.Init(ctx, cs.cout_g, OHW, K));
  for (int64_t n = 0; n < cs.batch; ++n) {
    for (int64_t g = 0; g < cs.group; ++g) {
      const float* xg = X + (n * cs.cin + g * cs.cin_g) * HW;
      ImageB image{&cs, xg, im2col, plane2d};
      uk::Gemm gm;
      gm.M = cs.cout_g;
      gm.N = OHW;
      gm.K = K;
      if (pp) {
        gm.packed_a = &pp->packed[g];
      } else {
        gm.A = Wt + g * cs.cout_g * K;
        gm.lda = K;
      }
      if (pointwise) {
        gm.B = xg;
        gm.ldb = HW;
      } else {
        gm.pack_b = PackImage;
        gm.pack_b_ctx = &image;
      }
      gm.C = Y + (n * cs.cout + g * cs.cout_g) * OHW;
      gm.ldc = OHW;
      gm.row_bias = B ? B + g * cs.cout_g : nullptr;
      gm.lo = act_lo;
      gm.hi = act_hi;
      gemm.Run(gm);
    }
  }
  return Status::Ok();
}

}  // namespace

Status Conv(KernelContext& ctx) { return ConvClamped(ctx, -__builtin_inff(), __builtin_inff()); }

Status FusedConv(KernelContext& ctx) {
  if (ctx.input(3))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "the sum input Z is not supported (a Conv, Add and "
                                           "activation fusion; only Relu or Clip are fused)");
  float lo = -__builtin_inff(), hi = __builtin_inff();
  EPCTX_RETURN_IF_ERROR(FusedClamp(ctx, &lo, &hi));
  return ConvClamped(ctx, lo, hi);
}

namespace {

Status PrepareConvWeights(PrepareContext& pc) {
  const TensorRef* wt = pc.constant(1);
  if (!wt || wt->dtype != EPCTX_DTYPE_FLOAT || wt->rank < 3 || wt->rank > 5) return Status::Ok();
  KernelContext& ctx = pc.kernel();
  const int64_t group = ctx.AttrInt("group", 1);
  // Anything the kernel would refuse is left for it to report at Run.
  if (!ctx.AttrStatus().ok() || group < 1 || group > kMaxWindowValue) return Status::Ok();
  const int64_t cout = wt->dims[0], cin_g = wt->dims[1];
  if (cout <= 0 || cout % group != 0) return Status::Ok();
  if (cin_g == 1 && group > 1) return Status::Ok();  // depthwise: W is read as it is
  int64_t K = 0;
  if (!Product(wt->dims, 1, wt->rank, &K) || K <= 0) return Status::Ok();
  const int64_t cout_g = cout / group;
  // 16 -> 16 channels per group where the lanes kernel runs (AVX-512, AVX2): its
  // weights gathered once, for every group (Run takes them when the map
  // fits the kernel's block; else the packed GEMM weights below).
  int64_t taps = 0;
  float* lanes = nullptr;
  if (cin_g == 16 && cout_g == 16 && group > 1 && uk::HasLanesKernels() &&
      Product(wt->dims, 2, wt->rank, &taps) && taps > 1 && taps <= 49) {
    lanes = static_cast<float*>(
        pc.Alloc(uint64_t(group) * uk::GroupLaneWeightsFloats(taps) * sizeof(float), 64));
    if (!lanes) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared state");
    const float* W = static_cast<const float*>(wt->data);
    for (int64_t g = 0; g < group; ++g)
      uk::GatherGroupLaneWeights(
          uk::LaneWeights{W + g * 256 * taps, 8 * 16 * taps, 16 * taps, taps, 1}, taps,
          lanes + g * uk::GroupLaneWeightsFloats(taps));
  }
  ConvPrepared* pp = static_cast<ConvPrepared*>(pc.Alloc(sizeof(ConvPrepared), 16));
  uk::PackedA* packed =
      static_cast<uk::PackedA*>(pc.Alloc(static_cast<uint64_t>(group) * sizeof(uk::PackedA), 16));
  if (!pp || !packed) return pc.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for the prepared state");
  const float* W = static_cast<const float*>(wt->data);
  for (int64_t g = 0; g < group; ++g) {
    EPCTX_RETURN_IF_ERROR(PrepackA(pc, false, W + g * cout_g * K, K, cout_g, K, 1.0f, &packed[g]));
    if (!packed[g].data) return Status::Ok();
  }
  *pp = ConvPrepared{wt->data, group, cout_g, K, packed, lanes};
  pc.SetPrepared(pp);
  return Status::Ok();
}

}  // namespace

// One prepare each, so a selective build that keeps FusedConv and not Conv
// (or the other way round) links only the kernels it lists.
Status PrepareConv(PrepareContext& pc) { return PrepareConvWeights(pc); }
Status PrepareFusedConv(PrepareContext& pc) { return PrepareConvWeights(pc); }

}  // namespace kern
}  // namespace epctx
