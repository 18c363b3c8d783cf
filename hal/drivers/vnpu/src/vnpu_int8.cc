// SPDX-License-Identifier: Apache-2.0
// The vnpu int8 level (stream 1.2, hardware vnpu-1.1): quantise /
// dequantise at the edges of int8 regions, int8 convolution and matrix
// multiply with int32 accumulation and per-channel requantisation, and the
// int8 elementwise, lookup, pooling and concat units. The rounding is the
// README's ("int8 level"): round half to even, then saturate, as ONNX
// Runtime's CPU kernels do.
//
// Every field was validated at load (vnpu_validate_int8.cc): scales are
// finite and > 0, zero points and clamp bounds lie in the dtype, reductions
// are short enough for int32 accumulators. Weight-segment values (the
// multipliers) are not trusted to be finite: every float -> int conversion
// is preceded by a clamp that also sends NaN to the low bound.
#include <cstring>

#include "epctx_uk/pool.h"
#include "vnpu_internal.h"
#include "conv/plan.h"
#include "vnpu_quant.h"

namespace epctx {
namespace vnpu {
namespace {

const fb::Tensor* Ten(const Bindings& b, uint32_t t) { return b.graph->stream->tensors()->Get(t); }
template <typename T>
T* Ptr(const Bindings& b, uint32_t t) {
  return reinterpret_cast<T*>(b.ptr(t));
}

// Quantised byte at index i of a tensor of dtype d.
inline int32_t Q(const void* p, fb::DType d, uint64_t i) {
  return d == fb::DType::INT8 ? int32_t(static_cast<const int8_t*>(p)[i])
                              : int32_t(static_cast<const uint8_t*>(p)[i]);
}
// Integer operands are read as raw bytes: an INT8 byte b is
// (b ^ 0x80) - 128, so with `flip` 0x80 for INT8 (0 for UINT8) the offset
// folds into the zero point and one loop serves all four dtype pairs.
struct Operand {
  const uint8_t* p;
  uint32_t flip;
  int32_t zp;  // zero point plus the INT8 offset
};
Operand MakeOperand(const Bindings& b, uint32_t t, int32_t zp) {
  const bool s = Ten(b, t)->dtype() == fb::DType::INT8;
  return {Ptr<const uint8_t>(b, t), s ? 0x80u : 0u, zp + (s ? 128 : 0)};
}

// Output rows in tiles of up to kTile pixels with int32 accumulators on the
// stack: for each weight tap the valid span of the tile is one branch-free
// (for stride 1, contiguous and vectorisable) multiply-add over input bytes.
// Padding holds the zero point, so taps outside the input add nothing.
constexpr int64_t kTile = 128;

void QConvRun(const Bindings& b, const fb::QConv2D* c, const Epilogue& ep, Operand x, Operand w) {
  const fb::Tensor *xt = Ten(b, c->input()), *yt = Ten(b, c->output());
  void* y = b.ptr(c->output());
  const int64_t N = Dim(xt, 0), C = Dim(xt, 1), H = Dim(xt, 2), Wd = Dim(xt, 3);
  const int64_t CO = Dim(yt, 1), OH = Dim(yt, 2), OW = Dim(yt, 3), G = c->groups();
  const int64_t cig = C / G, cog = CO / G, KH = c->kernel_h(), KW = c->kernel_w();
  const int64_t sh = c->stride_h(), sw = c->stride_w(), dh = c->dilation_h(), dw = c->dilation_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  int32_t acc[kTile];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < CO; ++oc) {
      const int64_t g = oc / cog;
      const uint8_t* wo = w.p + oc * cig * KH * KW;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow0 = 0; ow0 < OW; ow0 += kTile) {
          const int64_t tile = OW - ow0 < kTile ? OW - ow0 : kTile;
          for (int64_t i = 0; i < tile; ++i) acc[i] = 0;
          for (int64_t ic = 0; ic < cig; ++ic) {
            const uint8_t* xc = x.p + ((n * C + g * cig + ic) * H) * Wd;
            const uint8_t* wc = wo + ic * KH * KW;
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * sh - pt + kh * dh;
              if (ih < 0 || ih >= H) continue;
              const uint8_t* row = xc + ih * Wd;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int32_t wv = int32_t(wc[kh * KW + kw] ^ w.flip) - w.zp;
                // Valid outputs: 0 <= ow * sw - pl + kw * dw < Wd.
                const int64_t off = kw * dw - pl;
                int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                int64_t hi = Wd - 1 - off < 0 ? -1 : (Wd - 1 - off) / sw;  // inclusive
                if (lo < ow0) lo = ow0;
                if (hi > ow0 + tile - 1) hi = ow0 + tile - 1;
                if (wv == 0 || lo > hi) continue;
                // restrict: a byte pointer may alias anything, and without it
                // the compiler keeps every accumulator in memory.
                const uint8_t* __restrict xp = row + off;
                int32_t* __restrict a = acc - ow0;
                const uint32_t flip = x.flip;
                const int32_t zp = x.zp;
                if (sw == 1) {
                  for (int64_t ow = lo; ow <= hi; ++ow) a[ow] += wv * (int32_t(xp[ow] ^ flip) - zp);
                } else {
                  for (int64_t ow = lo; ow <= hi; ++ow)
                    a[ow] += wv * (int32_t(xp[ow * sw] ^ flip) - zp);
                }
              }
            }
          }
          const uint64_t base = uint64_t(((n * CO + oc) * OH + oh) * OW + ow0);
          for (int64_t i = 0; i < tile; ++i) ep(y, base + uint64_t(i), uint64_t(oc), acc[i]);
        }
    }
}

void QGemmRun(const Bindings& b, const fb::QGemm* c, const Epilogue& ep, Operand a, Operand w) {
  void* y = b.ptr(c->output());
  const uint64_t M = c->m(), K = c->k(), N = c->n();
  for (uint64_t i = 0; i < M; ++i) {
    const uint8_t* ar = a.p + i * K;
    for (uint64_t j = 0; j < N; ++j) {
      const uint8_t* wr = w.p + j * K;
      int32_t acc = 0;
      for (uint64_t k = 0; k < K; ++k)
        acc += (int32_t(ar[k] ^ a.flip) - a.zp) * (int32_t(wr[k] ^ w.flip) - w.zp);
      ep(y, i * N + j, j, acc);
    }
  }
}

Epilogue MakeEpilogue(const Bindings& b, uint32_t out, bool has_bias, uint32_t bias, uint32_t mult,
                      int32_t zp, int32_t lo, int32_t hi) {
  Epilogue e{
      Ten(b, out)->dtype(), has_bias ? Ptr<const int32_t>(b, bias) : nullptr, nullptr, zp, lo, hi};
  if (e.dtype != fb::DType::INT32) e.mult = Ptr<const float>(b, mult);
  return e;
}

int32_t InputZp(const Bindings& b, uint32_t x, int32_t zp, bool has_tensor, uint32_t tensor) {
  return has_tensor ? Q(b.ptr(tensor), Ten(b, x)->dtype(), 0) : zp;
}

void RunQConv(const Bindings& b, const fb::QConv2D* c) {
  const Epilogue ep = MakeEpilogue(b, c->output(), c->has_bias(), c->bias(), c->multipliers(),
                                   c->output_zero_point(), c->output_min(), c->output_max());
  const int32_t xzp =
      InputZp(b, c->input(), c->input_zero_point(), c->has_input_zp_tensor(), c->input_zp_tensor());
  QConvRun(b, c, ep, MakeOperand(b, c->input(), xzp),
           MakeOperand(b, c->weights(), c->weight_zero_point()));
}

void RunQGemm(const Bindings& b, const fb::QGemm* c) {
  const Epilogue ep = MakeEpilogue(b, c->output(), c->has_bias(), c->bias(), c->multipliers(),
                                   c->output_zero_point(), c->output_min(), c->output_max());
  const int32_t xzp =
      InputZp(b, c->input(), c->input_zero_point(), c->has_input_zp_tensor(), c->input_zp_tensor());
  QGemmRun(b, c, ep, MakeOperand(b, c->input(), xzp),
           MakeOperand(b, c->weights(), c->weight_zero_point()));
}

void RunQuantize(const Bindings& b, const fb::Quantize* c, const OpPlan& p) {
  const fb::Tensor* yt = Ten(b, c->output());
  const float* x = Ptr<const float>(b, c->input());
  void* y = b.ptr(c->output());
  const fb::DType d = yt->dtype();
  const float s = c->scale();
  const int32_t zp = c->zero_point(), lo = QMin(d), hi = QMax(d);
  const uint64_t n = Elements(yt);
  if (p.quantize) {  // threads split runs of at least 64k elements
    ForRange(b.par, int64_t(n), int64_t{1} << 16, [&](int64_t i0, int64_t i1) {
      p.quantize(x + i0, i1 - i0, s, zp, lo, hi, static_cast<uint8_t*>(y) + i0);
    });
    return;
  }
  for (uint64_t i = 0; i < n; ++i) StoreQ(y, d, i, Requantize(x[i] / s, zp, lo, hi));
}

void RunDequantize(const Bindings& b, const fb::Dequantize* c, const OpPlan& p) {
  const fb::Tensor* xt = Ten(b, c->input());
  const void* x = b.ptr(c->input());
  float* y = Ptr<float>(b, c->output());
  const uint64_t n = Elements(xt);
  const float s = c->scale();
  const int32_t zp = c->zero_point();
  if (xt->dtype() == fb::DType::INT32) {
    const int32_t* xi = static_cast<const int32_t*>(x);
    for (uint64_t i = 0; i < n; ++i) y[i] = float(xi[i]) * s;  // zero point 0 (validated)
    return;
  }
  if (p.dequantize) {  // threads split runs of at least 64k elements
    ForRange(b.par, int64_t(n), int64_t{1} << 16, [&](int64_t i0, int64_t i1) {
      p.dequantize(static_cast<const uint8_t*>(x) + i0, i1 - i0, xt->dtype() == fb::DType::INT8, zp,
                   s, y + i0);
    });
    return;
  }
  for (uint64_t i = 0; i < n; ++i) y[i] = float(Q(x, xt->dtype(), i) - zp) * s;
}

// As ONNX Runtime: [min, max] widened to include 0, scale (max - min) / 255
// (1 when the range is empty), zero point round(clamp(-min / scale, 0, 255)).
void RunDynamicQuantize(const Bindings& b, const fb::DynamicQuantize* c, const OpPlan& p) {
  const float* x = Ptr<const float>(b, c->input());
  uint8_t* y = Ptr<uint8_t>(b, c->output());
  const uint64_t n = Elements(Ten(b, c->input()));
  // Four lanes, then the lanes: min and max are the same whatever the
  // order (a NaN never wins a comparison; -0 never replaces the +0 start).
  V4 lo4 = {0.0f, 0.0f, 0.0f, 0.0f}, hi4 = lo4;
  uint64_t i0 = 0;
  for (; i0 + 4 <= n; i0 += 4) {
    const V4 v = Load4(x + i0);
    lo4 = v < lo4 ? v : lo4;
    hi4 = v > hi4 ? v : hi4;
  }
  float lo = 0.0f, hi = 0.0f;
  for (int k = 0; k < 4; ++k) {
    lo = lo4[k] < lo ? lo4[k] : lo;
    hi = hi4[k] > hi ? hi4[k] : hi;
  }
  for (uint64_t i = i0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const int32_t zp = Requantize(0.0f - lo / scale, 0, 0, 255);  // NaN: 0
  *Ptr<float>(b, c->scale()) = scale;
  *Ptr<uint8_t>(b, c->zero_point()) = uint8_t(zp);
  if (p.quantize) {
    p.quantize(x, int64_t(n), scale, zp, 0, 255, y);
    return;
  }
  for (uint64_t i = 0; i < n; ++i) y[i] = uint8_t(Requantize(x[i] / scale, zp, 0, 255));
}

// One step of an odometer over the first `rank` output dimensions: idx
// counts up, and the operands' offsets ia, ib move by their strides.
inline void Advance(int64_t* idx, const int64_t* dims, const int64_t* sa, const int64_t* sb,
                    uint32_t rank, uint64_t* ia, uint64_t* ib) {
  for (uint32_t k = rank; k-- > 0;) {
    *ia += uint64_t(sa[k]);
    *ib += uint64_t(sb[k]);
    if (++idx[k] < dims[k]) return;
    *ia -= uint64_t(sa[k] * dims[k]);
    *ib -= uint64_t(sb[k] * dims[k]);
    idx[k] = 0;
  }
}

void RunQBinary(const Bindings& b, const fb::QBinary* c, const OpPlan& p, bool clamped) {
  const fb::Tensor* yt = Ten(b, c->output());
  const fb::DType d = yt->dtype();
  const void *a = b.ptr(c->a()), *bb = b.ptr(c->b());
  void* y = b.ptr(c->output());
  const uint64_t total = Elements(yt);
  if (total == 0) return;
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  int64_t idx[8] = {0}, dims[8], sa[8], sb[8];
  for (uint32_t k = 0; k < r; ++k) {
    dims[k] = Dim(yt, k);
    sa[k] = I64(c->a_strides(), k);
    sb[k] = I64(c->b_strides(), k);
  }
  const float as = c->a_scale(), bs = c->b_scale(), ys = c->y_scale();
  const int32_t az = c->a_zero_point(), bz = c->b_zero_point(), yz = c->y_zero_point();
  // QBINARY_CLAMPED: the validator checked the clamp lies in the dtype's range.
  const int32_t lo = clamped ? c->output_min() : QMin(d);
  const int32_t hi = clamped ? c->output_max() : QMax(d);
  const bool add = c->kind() == fb::BinaryKind::ADD;
  // Rows for the row kernel: the innermost dimensions over which each
  // operand either runs contiguously (mode 1) or stays on one element
  // (mode 0, broadcast: a per-channel gate over a plane).
  int64_t inner = 1;
  int am = -1, bm = -1;
  uint32_t kin = r;
  for (uint32_t k = r; k-- > 0;) {
    if (dims[k] == 1) {
      kin = k;
      continue;
    }
    const int ma = sa[k] == inner ? 1 : sa[k] == 0 ? 0 : -1;
    const int mb = sb[k] == inner ? 1 : sb[k] == 0 ? 0 : -1;
    if (ma < 0 || mb < 0 || (am >= 0 && ma != am) || (bm >= 0 && mb != bm)) break;
    am = ma;
    bm = mb;
    inner *= dims[k];
    kin = k;
  }
  if (p.qbinary && inner >= 16) {
    // Threads split rows cut into pieces of at most kQBinaryPiece elements
    // (a residual add of two whole tensors is one row); each unit finds its
    // row's operands from the row's index over the outer dimensions.
    constexpr int64_t kQBinaryPiece = 16384;
    const uint8_t *pa = static_cast<const uint8_t*>(a), *pb = static_cast<const uint8_t*>(bb);
    uint8_t* py = static_cast<uint8_t*>(y);
    const int64_t rows = int64_t(total / uint64_t(inner));
    const int64_t pieces = (inner + kQBinaryPiece - 1) / kQBinaryPiece;
    const int64_t piece = (inner + pieces - 1) / pieces;
    ForRange(b.par, rows * pieces, MinUnits(piece * 4), [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t o = u / pieces, s0 = u % pieces * piece;
        const int64_t n = inner - s0 < piece ? inner - s0 : piece;
        uint64_t ia = 0, ib = 0;
        for (int64_t k = int64_t(kin), rest = o; k-- > 0;) {
          const int64_t i = rest % dims[k];
          rest /= dims[k];
          ia += uint64_t(i * sa[k]);
          ib += uint64_t(i * sb[k]);
        }
        if (am == 1) ia += uint64_t(s0);
        if (bm == 1) ib += uint64_t(s0);
        p.qbinary(uk::QBinaryRow{pa + ia, pb + ib, py + o * inner + s0, n, d == fb::DType::INT8,
                                 !add, am == 0, bm == 0, as, bs, ys, az, bz, yz, lo, hi});
      }
    });
    return;
  }
  uint64_t ia = 0, ib = 0;
  for (uint64_t i = 0; i < total; ++i) {
    const float va = float(Q(a, d, ia) - az) * as, vb = float(Q(bb, d, ib) - bz) * bs;
    StoreQ(y, d, i, Requantize((add ? va + vb : va * vb) / ys, yz, lo, hi));
    Advance(idx, dims, sa, sb, r, &ia, &ib);
  }
}

void RunQLut(const Bindings& b, const fb::QLut* c, const OpPlan& p) {
  const uint8_t* x = Ptr<const uint8_t>(b, c->input());
  const uint8_t* t = Ptr<const uint8_t>(b, c->table());
  uint8_t* y = Ptr<uint8_t>(b, c->output());
  const uint64_t n = Elements(Ten(b, c->input()));
  if (p.qlut) {
    p.qlut(x, t, y, int64_t(n));
    return;
  }
  for (uint64_t i = 0; i < n; ++i) y[i] = t[x[i]];
}

// QMAX_POOL, one plane at a time (threads split the planes): output
// columns whose window lies inside the row, of rows whose window lies inside
// the plane, are one uk::QMaxPoolRow call per row (16 bytes a vector); the
// rest clip their window per output.
void RunQMaxPool(const Bindings& b, const fb::QMaxPool* c) {
  const fb::Tensor *xt = Ten(b, c->input()), *yt = Ten(b, c->output());
  const bool is_signed = xt->dtype() == fb::DType::INT8;
  const uint8_t* x = Ptr<const uint8_t>(b, c->input());
  uint8_t* y = Ptr<uint8_t>(b, c->output());
  const int64_t NC = Dim(xt, 0) * Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t OH = Dim(yt, 2), OW = Dim(yt, 3), KH = c->kernel_h(), KW = c->kernel_w();
  const int64_t sh = c->stride_h(), sw = c->stride_w(), pt = c->pad_top(), pl = c->pad_left();
  const int64_t nt = KH * KW;
  int64_t ow_lo, ow_hi;
  PoolRowColumns(W, KW, sw, pl, OW, nt, &ow_lo, &ow_hi);
  const int32_t lowest = is_signed ? -128 : 0;
  ForRange(b.par, NC, MinUnits(OH * OW * nt), [&](int64_t lo, int64_t hi) {
    const uint8_t* rows[kPoolRowTaps];
    for (int64_t p = lo; p < hi; ++p) {
      const uint8_t* xc = x + p * H * W;
      for (int64_t oh = 0; oh < OH; ++oh) {
        uint8_t* yr = y + (p * OH + oh) * OW;
        const int64_t h0 = oh * sh - pt;
        const bool inside = h0 >= 0 && h0 + KH <= H && ow_lo < ow_hi;
        // The validator ensures every window holds an element.
        const auto clipped = [&](int64_t ow) {
          const int64_t w0 = ow * sw - pl;
          int32_t m = lowest;
          for (int64_t ih = h0 < 0 ? 0 : h0; ih < h0 + KH && ih < H; ++ih)
            for (int64_t iw = w0 < 0 ? 0 : w0; iw < w0 + KW && iw < W; ++iw) {
              const uint8_t u = xc[ih * W + iw];
              const int32_t v = is_signed ? int32_t(int8_t(u)) : int32_t(u);
              m = v > m ? v : m;
            }
          yr[ow] = uint8_t(m);
        };
        if (!inside) {
          for (int64_t ow = 0; ow < OW; ++ow) clipped(ow);
          continue;
        }
        for (int64_t ow = 0; ow < ow_lo; ++ow) clipped(ow);
        const uint8_t* xr = xc + h0 * W + ow_lo * sw - pl;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) rows[kh * KW + kw] = xr + kh * W + kw;
        uk::QMaxPoolRow(rows, nt, sw, is_signed, yr + ow_lo, ow_hi - ow_lo);
        for (int64_t ow = ow_hi; ow < OW; ++ow) clipped(ow);
      }
    }
  });
}

void RunQConcat(const Bindings& b, const fb::QConcat* c) {
  const fb::Tensor* yt = Ten(b, c->output());
  uint8_t* y = Ptr<uint8_t>(b, c->output());
  const uint32_t axis = c->axis(), r = yt->shape()->size();
  uint64_t outer = 1, inner = 1;
  for (uint32_t k = 0; k < axis; ++k) outer *= uint64_t(Dim(yt, k));
  for (uint32_t k = axis + 1; k < r; ++k) inner *= uint64_t(Dim(yt, k));
  const uint64_t row = uint64_t(Dim(yt, axis)) * inner;
  uint64_t at = 0;
  for (uint32_t i = 0; i < c->inputs()->size(); ++i) {
    const uint32_t t = c->inputs()->Get(i);
    const uint8_t* x = Ptr<const uint8_t>(b, t);
    const uint64_t part = uint64_t(Dim(Ten(b, t), axis)) * inner;
    for (uint64_t o = 0; o < outer && part > 0; ++o) memcpy(y + o * row + at, x + o * part, part);
    at += part;
  }
}

}  // namespace

bool RunInt8(const Bindings& b, const fb::Op* o, const OpPlan& p) {
  switch (o->params_type()) {
    case fb::OpParams::Quantize: RunQuantize(b, o->params_as_Quantize(), p); return true;
    case fb::OpParams::Dequantize: RunDequantize(b, o->params_as_Dequantize(), p); return true;
    case fb::OpParams::DynamicQuantize:
      RunDynamicQuantize(b, o->params_as_DynamicQuantize(), p);
      return true;
    case fb::OpParams::QConv2D:
      if (p.strategy != Strategy::kNone) RunQConvPanel(b, o->params_as_QConv2D(), p);
      else RunQConv(b, o->params_as_QConv2D());
      return true;
    case fb::OpParams::QGemm:
      if (p.strategy == Strategy::kNone) RunQGemm(b, o->params_as_QGemm());
      else RunQGemmPlanned(b, o->params_as_QGemm(), p);
      return true;
    case fb::OpParams::QBinary: RunQBinary(b, o->params_as_QBinary(), p, false); return true;
    case fb::OpParams::QBinaryClamped:
      RunQBinary(b, o->params_as_QBinaryClamped(), p, true);
      return true;
    case fb::OpParams::QLut: RunQLut(b, o->params_as_QLut(), p); return true;
    case fb::OpParams::QMaxPool: RunQMaxPool(b, o->params_as_QMaxPool()); return true;
    case fb::OpParams::QConcat: RunQConcat(b, o->params_as_QConcat()); return true;
    default: return false;
  }
}

}  // namespace vnpu
}  // namespace epctx
