// SPDX-License-Identifier: Apache-2.0
// The vnpu CONV_TRANSPOSE2D unit (ONNX ConvTranspose), scatter form: each
// input pixel adds weight x value into the Cout_g x KH x KW outputs it
// reaches. Rows of the kernel are clipped to the output once per input row,
// so the inner loop over kernel columns has no per-element bounds check
// beyond the column test. Weights [groups][Cin_g][Cout_g][KH][KW] are ONNX's
// own layout; the output starts at the bias and gets the fused activation
// per output plane at the end.
//
// When the kernel tiles the output exactly (kernel == stride, no padding or
// dilation: the 2x2 stride-2 upsampling of detection necks) every output
// pixel comes from one input pixel and one tap, so the op is a GEMM,
// [Cout_g x KH x KW] x [Cin_g] times [Cin_g x pixels], on the micro-kernel
// tile: the ONNX weights are its A in place (row stride 1, K stride
// Cout_g*KH*KW) and B 24 pixels of one input row from every input channel,
// packed into the worker's workspace slot once per block (the channels lie
// H x W floats apart, a multiple of 4 KiB on 160x160 maps: read in place,
// every k step's line would fall in one L1 set). Each 4 x 24 result is
// written, not added, to its output pixels; a row's last block overlaps the
// one before it when W is not a multiple of 24.
#include "epctx_uk/sgemm.h"
#include "conv/plan.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

struct Dims {
  int64_t C, H, W, CO, OH, OW, G, cig, cog, KH, KW;
};

// Input pixels per packed segment of a row (8 tiles), and input channels
// per packed chunk: the slot holds kDeconvWorkK x kSegment floats; more
// channels than that repack per 4-row tile, accumulating.
constexpr int64_t kSegment = 8 * uk::kNr;
constexpr int64_t kDeconvWorkK = 512;

// Input rows of the first of two chained exact deconvolutions per band
// (RunConvTransposePair): ocr_det's 24 -> 24 on 160x160 writes 2 x 61 KiB
// of output per row, so a band of 8 stays in L2 for the 24 -> 1 that reads it.
constexpr int64_t kPairRows = 8;

Dims DimsOf(const fb::Graph* g, const fb::ConvTranspose2D* c) {
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const int64_t C = Dim(xt, 1), CO = Dim(yt, 1), G = c->groups();
  return Dims{C,     Dim(xt, 2), Dim(xt, 3),    CO,           Dim(yt, 2), Dim(yt, 3), G,
              C / G, CO / G,     c->kernel_h(), c->kernel_w()};
}

bool TilesExactly(const Dims& d, const fb::ConvTranspose2D* c) {
  return c->kernel_h() == c->stride_h() && c->kernel_w() == c->stride_w() && c->dilation_h() == 1 &&
         c->dilation_w() == 1 && c->pad_top() == 0 && c->pad_left() == 0 && d.OH == d.H * d.KH &&
         d.OW == d.W * d.KW && d.W >= 1;
}

// Input rows [h0, h1) of every group on the calling thread, packing into
// buf (the worker's workspace slot); a row's output rows are its own. A row
// goes in segments of up to kSegment pixels: the segment is packed (every
// channel), then each 4-row tile of A (one output channel's taps for a 2x2
// kernel) runs over the segment's 24-pixel blocks, so the output is written
// one plane's rows at a time rather than 24 planes at once (those lie a
// multiple of 4 KiB apart too, and would evict each other from L1).
void ExactRows(const Dims& d, const float* x, const float* w, const float* bias, float* y,
               const fb::ConvTranspose2D* c, const OpPlan& p, float* buf, int64_t h0, int64_t h1) {
  const uk::TileFn tile = p.tile;
  uk::Tile base{};
  p.Epilogue(&base);
  const bool post = p.post;
  const int64_t HW = d.H * d.W, taps = d.KH * d.KW, R = d.cog * taps;
  const int64_t chunk = d.cig < kDeconvWorkK ? d.cig : kDeconvWorkK;
  base.a_rs = 1;
  base.a_ks = R;
  base.b_ss = 8;
  base.ldc = uk::kNr;
  for (int64_t gi = 0; gi < d.G; ++gi) {
    const float* xg = x + gi * d.cig * HW;
    const float* wg = w + gi * d.cig * R;
    float* yg = y + gi * d.cog * d.OH * d.OW;
    {
      float cbuf[uk::kMr * uk::kNr];
      float rb[uk::kMr];
      uk::Tile t = base;
      t.c = cbuf;
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t s0 = 0; s0 < d.W; s0 += kSegment) {
          // Blocks of 24 from the segment's start, the last one ending at
          // its end (overlapping the one before); a row under 24 pixels is
          // one short block, its packed rows zero-padded to 24.
          const int64_t len = d.W - s0 < kSegment ? d.W - s0 : kSegment;
          const int64_t cols = len < uk::kNr ? len : uk::kNr, ld = len < uk::kNr ? uk::kNr : len;
          const int64_t blocks = (len + uk::kNr - 1) / uk::kNr;
          const float* src = xg + ih * d.W + s0;
          t.cols = static_cast<int32_t>(cols);
          t.b_ks = ld;
          auto pack = [&](int64_t k0, int64_t kc) {
            for (int64_t k = 0; k < kc; ++k) {
              float* dst = buf + k * ld;
              __builtin_memcpy(dst, src + (k0 + k) * HW, size_t(len) * 4);
              for (int64_t j = len; j < ld; ++j) dst[j] = 0.0f;
            }
          };
          if (chunk == d.cig) pack(0, d.cig);
          const bool pairs = d.KW == 2 && cols == uk::kNr;
          for (int64_t r0 = 0; r0 < R; r0 += uk::kMr) {
            const int64_t rows = R - r0 < uk::kMr ? R - r0 : uk::kMr;
            t.rows = static_cast<int32_t>(rows);
            if (bias) {
              for (int64_t i = 0; i < rows; ++i) rb[i] = bias[gi * d.cog + (r0 + i) / taps];
              t.row_bias = rb;
            }
            for (int64_t bi = 0; bi < blocks; ++bi) {
              const int64_t o = bi * uk::kNr < len - cols ? bi * uk::kNr : len - cols;
              for (int64_t k0 = 0; k0 < d.cig; k0 += chunk) {
                const int64_t kc = d.cig - k0 < chunk ? d.cig - k0 : chunk;
                if (chunk < d.cig) pack(k0, kc);
                t.a = wg + k0 * R + r0;
                t.b = buf + o;
                t.kc = kc;
                t.accumulate = k0 > 0;
                t.last = k0 + kc == d.cig;
                tile(t);
              }
              // An activation the tile cannot clamp runs on the stack tile,
              // not in a pass of its own over the output.
              if (post)
                ActivateRows(c->activation(), cbuf, uint64_t(rows), uint64_t(cols),
                             uint64_t(uk::kNr), c->alpha(), c->beta());
              for (int64_t i = 0; i < rows; ++i) {
                const int64_t r = r0 + i, oc = r / taps, kh = r / d.KW % d.KH, kw = r % d.KW;
                float* yr = yg + (oc * d.OH + ih * d.KH + kh) * d.OW + (s0 + o) * d.KW + kw;
                const float* cr = cbuf + i * uk::kNr;
                // Kernel width 2: the tap row's two kernel columns
                // interleave into 48 consecutive outputs.
                if (pairs && kw == 0 && i + 1 < rows) {
                  const float* cn = cr + uk::kNr;
                  for (int64_t j = 0; j < uk::kNr; j += 4) {
                    const V4 e = Load4(cr + j), f = Load4(cn + j);
                    Store4(yr + 2 * j, __builtin_shufflevector(e, f, 0, 4, 1, 5));
                    Store4(yr + 2 * j + 4, __builtin_shufflevector(e, f, 2, 6, 3, 7));
                  }
                  ++i;
                  continue;
                }
                for (int64_t j = 0; j < cols; ++j) yr[j * d.KW] = cr[j];
              }
            }
          }
        }
    }
  }
}

// Threads split the input rows.
void ExactGemm(const Dims& d, const float* x, const float* w, const float* bias, float* y,
               const fb::ConvTranspose2D* c, const OpPlan& p, const Bindings& bd) {
  ForRangeSlots(bd.par, d.H, MinUnits(d.cog * d.KH * d.KW * d.cig * d.W),
                [&](int64_t h0, int64_t h1, uint32_t slot) {
                  ExactRows(d, x, w, bias, y, c, p, bd.slot(slot), h0, h1);
                });
}

}  // namespace

uint64_t ConvTransposeWorkFloats(const fb::Graph* g, const fb::ConvTranspose2D* c) {
  const Dims d = DimsOf(g, c);
  if (!TilesExactly(d, c)) return 0;
  return uint64_t(d.cig < kDeconvWorkK ? d.cig : kDeconvWorkK) * kSegment;
}

namespace {

// Bytes [offset, offset + size) of tensor t in the arena, or false when it
// lives elsewhere.
bool ArenaRange(const fb::Graph* g, uint32_t t, uint64_t* lo, uint64_t* hi) {
  const fb::Tensor* ten = g->tensors()->Get(t);
  if (ten->location() != fb::Location::ARENA) return false;
  *lo = ten->offset();
  *hi = *lo + Elements(ten) * 4;
  return true;
}

}  // namespace

bool DeconvPairFits(const fb::Graph* g, const fb::ConvTranspose2D* a,
                    const fb::ConvTranspose2D* n) {
  if (n->input() != a->output()) return false;
  const Dims da = DimsOf(g, a), dn = DimsOf(g, n);
  if (!TilesExactly(da, a) || !TilesExactly(dn, n) || Dim(g->tensors()->Get(a->input()), 0) != 1)
    return false;
  // The second writes its rows while the first still reads its input: the
  // two must not share memory (the arena planner may give a tensor the
  // bytes of one that died before it was written; a graph input and output
  // may be one caller buffer).
  uint64_t il, ih, ol, oh;
  const bool in_arena = ArenaRange(g, a->input(), &il, &ih);
  const bool out_arena = ArenaRange(g, n->output(), &ol, &oh);
  if (in_arena && out_arena) return ih <= ol || oh <= il;
  return in_arena || out_arena;
}

void RunConvTransposePair(const Bindings& b, const fb::ConvTranspose2D* a,
                          const fb::ConvTranspose2D* n, const OpPlan& pa, const OpPlan& pn) {
  const fb::Graph* g = b.graph->stream;
  const Dims da = DimsOf(g, a), dn = DimsOf(g, n);
  const float* x = b.ptr(a->input());
  float* mid = b.ptr(a->output());
  float* y = b.ptr(n->output());
  const float* ba = a->has_bias() ? b.ptr(a->bias()) : nullptr;
  const float* bn = n->has_bias() ? b.ptr(n->bias()) : nullptr;
  const float* wa = b.ptr(a->weights());
  const float* wn = b.ptr(n->weights());
  // Bands are independent (the second's rows of a band read only the
  // first's rows of it): threads split the bands, each running both ops.
  const int64_t bands = (da.H + kPairRows - 1) / kPairRows;
  ForRangeSlots(b.par, bands, 1, [&](int64_t b0, int64_t b1, uint32_t slot) {
    for (int64_t bi = b0; bi < b1; ++bi) {
      const int64_t h0 = bi * kPairRows, h1 = da.H - h0 < kPairRows ? da.H : h0 + kPairRows;
      ExactRows(da, x, wa, ba, mid, a, pa, b.slot(slot), h0, h1);
      ExactRows(dn, mid, wn, bn, y, n, pn, b.slot(slot), h0 * da.KH, h1 * da.KH);
    }
  });
}

void RunConvTranspose(const Bindings& b, const fb::ConvTranspose2D* c, const OpPlan& p) {
  const fb::Graph* g = b.graph->stream;
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const Dims d = DimsOf(g, c);
  const int64_t N = Dim(g->tensors()->Get(c->input()), 0), C = d.C, H = d.H, W = d.W;
  const int64_t CO = d.CO, OH = d.OH, OW = d.OW, G = d.G, cig = d.cig, cog = d.cog;
  const int64_t KH = d.KH, KW = d.KW;
  const int64_t sh = c->stride_h(), sw = c->stride_w(), dh = c->dilation_h(), dw = c->dilation_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  const int64_t plane = OH * OW;
  if (p.strategy == Strategy::kDeconvExact) {  // get_graph reserved its workspace
    for (int64_t n = 0; n < N; ++n)
      ExactGemm(d, x + n * C * H * W, w, bias, y + n * CO * plane, c, p, b);
    return;
  }
  for (int64_t n = 0; n < N; ++n) {
    float* yn = y + n * CO * plane;
    for (int64_t o = 0; o < CO; ++o) {
      const float v = bias ? bias[o] : 0.f;
      for (int64_t i = 0; i < plane; ++i) yn[o * plane + i] = v;
    }
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t ic = 0; ic < cig; ++ic) {
        const int64_t ci = gi * cig + ic;
        const float* xc = x + (n * C + ci) * H * W;
        const float* wc = w + ci * cog * KH * KW;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t oh = ih * sh - pt + kh * dh;
            if (oh < 0 || oh >= OH) continue;
            for (int64_t oc = 0; oc < cog; ++oc) {
              float* yrow = yn + ((gi * cog + oc) * OH + oh) * OW;
              const float* wk = wc + (oc * KH + kh) * KW;
              for (int64_t iw = 0; iw < W; ++iw) {
                const float xv = xc[ih * W + iw];
                const int64_t base = iw * sw - pl;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ow = base + kw * dw;
                  if (ow >= 0 && ow < OW) yrow[ow] += xv * wk[kw];
                }
              }
            }
          }
      }
    if (c->activation() != fb::Activation::NONE)
      ActivateRow(c->activation(), yn, yn, uint64_t(CO * plane), c->alpha(), c->beta());
  }
}

}  // namespace vnpu
}  // namespace epctx
