// SPDX-License-Identifier: Apache-2.0
// The vnpu CONV2D unit: three loop nests over the packed weight layout
// [groups][ceil(Cout_g / 8)][Cin_g][KH][KW][8] (README "Weight layouts").
//
// - Depthwise (one input and one output channel per group): a row-wise
//   multiply-add over the output width, one tap at a time. Only lane 0 of
//   each 8-wide weight block is real, so the dense nest would spend 7 of
//   every 8 multiply-adds on padding.
// - Dense, stride-1 width, window inside the row: a 4-channel x 8-pixel
//   register tile. The accumulators are GCC generic vectors over adjacent
//   output pixels (contiguous in both input and output rows), which keeps the
//   tile in registers; the same technique as the CPU SGEMM, written apart
//   because the vnpu models a separate device.
// - Everything else (image borders, strided width, tails): the scalar
//   4-pixel x 8-channel nest with per-tap bounds checks.
//
// All three write the raw sums; the activation runs once per output row.
// Output rows are visited oh-outer so the input rows of one output row stay
// in cache while every output-channel block reads them.
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {


struct Shape {
  int64_t N, C, H, W, CO, OH, OW, G, cig, cog, nb, KH, KW, sh, sw, dh, dw, pt, pl, kstride;
};

// One 4-channel x 8-pixel tile: output channels j0..j0+3 of the packed block
// wb, output pixels ow..ow+7 of row oh. The caller guarantees stride-1 width
// and iw0 .. iw0 + (KW-1)*dw + 7 inside [0, W).
void Tile4x8(const Shape& s, const float* xg, const float* wb, int j0, const float* b8,
             int64_t ih0, int64_t iw0, float* yout, int64_t nvalid) {
  const int64_t HW = s.H * s.W;
  V4 a00 = V4{} + b8[j0], a01 = a00;
  V4 a10 = V4{} + b8[j0 + 1], a11 = a10;
  V4 a20 = V4{} + b8[j0 + 2], a21 = a20;
  V4 a30 = V4{} + b8[j0 + 3], a31 = a30;
  // Taps outer, input channels inner: the row check is per tap, and a 1x1
  // conv is one straight loop over the input channels.
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t ih = ih0 + kh * s.dh;
    if (ih < 0 || ih >= s.H) continue;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const float* xp = xg + ih * s.W + iw0 + kw * s.dw;
      const float* wk = wb + (kh * s.KW + kw) * 8 + j0;
      for (int64_t ic = 0; ic < s.cig; ++ic, xp += HW, wk += s.kstride) {
        const V4 x0 = Load4(xp), x1 = Load4(xp + 4);
        const float w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3];
        a00 += w0 * x0;
        a01 += w0 * x1;
        a10 += w1 * x0;
        a11 += w1 * x1;
        a20 += w2 * x0;
        a21 += w2 * x1;
        a30 += w3 * x0;
        a31 += w3 * x1;
      }
    }
  }
  const int64_t OHW = s.OH * s.OW;
  const V4 lo[4] = {a00, a10, a20, a30}, hi[4] = {a01, a11, a21, a31};
  for (int64_t j = 0; j < nvalid; ++j) {
    Store4(yout + j * OHW, lo[j]);
    Store4(yout + j * OHW + 4, hi[j]);
  }
}

// np (<= 4) output pixels from ow of row oh, all 8 channels of the block,
// with a bounds check per tap.
void Generic(const Shape& s, const float* xg, const float* wb, const float* b8, int64_t oh,
             int64_t ow, int64_t np, float* yblk, int64_t valid) {
  const int64_t HW = s.H * s.W;
  float acc[4][8];
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 8; ++j) acc[p][j] = b8[j];
  for (int64_t ic = 0; ic < s.cig; ++ic) {
    const float* xc = xg + ic * HW;
    const float* wc = wb + ic * s.kstride;
    for (int64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
      if (ih < 0 || ih >= s.H) continue;
      const float* row = xc + ih * s.W;
      for (int64_t kw = 0; kw < s.KW; ++kw) {
        const float* wk = wc + (kh * s.KW + kw) * 8;
        const int64_t iw0 = ow * s.sw - s.pl + kw * s.dw;
        for (int64_t p = 0; p < np; ++p) {
          const int64_t iw = iw0 + p * s.sw;
          if (iw < 0 || iw >= s.W) continue;
          const float v = row[iw];
          for (int j = 0; j < 8; ++j) acc[p][j] += v * wk[j];
        }
      }
    }
  }
  const int64_t OHW = s.OH * s.OW;
  for (int64_t j = 0; j < valid; ++j)
    for (int64_t p = 0; p < np; ++p) yblk[j * OHW + oh * s.OW + ow + p] = acc[p][j];
}

void Dense(const Shape& s, const float* x, const float* w, const float* bias, float* y,
           const fb::Conv2D* c) {
  const int64_t OHW = s.OH * s.OW;
  // Output columns whose whole window row lies inside the input (stride-1
  // width only): [fast_lo, fast_hi).
  const int64_t span = (s.KW - 1) * s.dw;
  const int64_t fast_lo = s.pl;
  const int64_t fast_hi = s.W - span + s.pl;  // iw0 + span < W  <=>  ow < fast_hi
  const bool fast = s.sw == 1;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi * s.cig) * s.H * s.W;
      for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ob = 0; ob < s.nb; ++ob) {
          const float* wb = w + (gi * s.nb + ob) * s.cig * s.kstride;
          const int64_t oc0 = gi * s.cog + ob * 8;
          const int64_t valid = s.cog - ob * 8 < 8 ? s.cog - ob * 8 : 8;
          float b8[8];
          for (int j = 0; j < 8; ++j) b8[j] = (bias && j < valid) ? bias[oc0 + j] : 0.f;
          float* yblk = y + (n * s.CO + oc0) * OHW;
          const int64_t ih0 = oh * s.sh - s.pt;
          int64_t ow = 0;
          while (ow < s.OW) {
            if (fast && ow >= fast_lo && ow + 8 <= fast_hi && ow + 8 <= s.OW) {
              float* yo = yblk + oh * s.OW + ow;
              const int64_t iw0 = ow - s.pl;
              Tile4x8(s, xg, wb, 0, b8, ih0, iw0, yo, valid < 4 ? valid : 4);
              if (valid > 4) Tile4x8(s, xg, wb, 4, b8, ih0, iw0, yo + 4 * OHW, valid - 4);
              ow += 8;
              continue;
            }
            int64_t np = s.OW - ow < 4 ? s.OW - ow : 4;
            // Stop at the start of the fast region so the tiles begin there.
            if (fast && ow < fast_lo && fast_lo - ow < np) np = fast_lo - ow;
            Generic(s, xg, wb, b8, oh, ow, np, yblk, valid);
            ow += np;
          }
          if (c->activation() != fb::Activation::NONE)
            for (int64_t j = 0; j < valid; ++j) {
              float* yr = yblk + j * OHW + oh * s.OW;
              ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
            }
        }
    }
}

// One input and one output channel per group: channel gi's taps are lane 0 of
// its 8-wide weight block.
void Depthwise(const Shape& s, const float* x, const float* w, const float* bias, float* y,
               const fb::Conv2D* c) {
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t ch = 0; ch < s.G; ++ch) {
      const float* xc = x + (n * s.C + ch) * s.H * s.W;
      const float* wc = w + ch * s.kstride;
      float* yc = y + (n * s.CO + ch) * s.OH * s.OW;
      const float bv = bias ? bias[ch] : 0.f;
      for (int64_t oh = 0; oh < s.OH; ++oh) {
        float* __restrict yr = yc + oh * s.OW;
        for (int64_t ow = 0; ow < s.OW; ++ow) yr[ow] = bv;
        for (int64_t kh = 0; kh < s.KH; ++kh) {
          const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
          if (ih < 0 || ih >= s.H) continue;
          const float* __restrict row = xc + ih * s.W;
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const float wv = wc[(kh * s.KW + kw) * 8];
            // Output columns whose tap iw = ow*sw + off lies in [0, W).
            const int64_t off = kw * s.dw - s.pl;
            const int64_t lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
            int64_t hi = s.W - 1 - off < 0 ? 0 : (s.W - 1 - off) / s.sw + 1;
            hi = hi < s.OW ? hi : s.OW;
            if (s.sw == 1) {
              int64_t ow = lo;
              for (; ow + 4 <= hi; ow += 4)
                Store4(yr + ow, Load4(yr + ow) + wv * Load4(row + ow + off));
              for (; ow < hi; ++ow) yr[ow] += wv * row[ow + off];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * row[ow * s.sw + off];
            }
          }
        }
        if (c->activation() != fb::Activation::NONE)
          ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
      }
    }
}

}  // namespace

void RunConv(const Bindings& b, const fb::Conv2D* c) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  Shape s;
  s.N = Dim(xt, 0), s.C = Dim(xt, 1), s.H = Dim(xt, 2), s.W = Dim(xt, 3);
  s.CO = Dim(yt, 1), s.OH = Dim(yt, 2), s.OW = Dim(yt, 3);
  s.G = c->groups(), s.cig = s.C / s.G, s.cog = s.CO / s.G, s.nb = (s.cog + 7) / 8;
  s.KH = c->kernel_h(), s.KW = c->kernel_w(), s.sh = c->stride_h(), s.sw = c->stride_w();
  s.dh = c->dilation_h(), s.dw = c->dilation_w(), s.pt = c->pad_top(), s.pl = c->pad_left();
  s.kstride = s.KH * s.KW * 8;
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  if (s.cig == 1 && s.cog == 1)
    Depthwise(s, x, w, bias, y, c);
  else
    Dense(s, x, w, bias, y, c);
}

}  // namespace vnpu
}  // namespace epctx
