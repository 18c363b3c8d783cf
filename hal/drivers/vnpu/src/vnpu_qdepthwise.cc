// SPDX-License-Identifier: Apache-2.0
// The int8 depthwise strategy of QCONV2D (kQDepthwise): one input and one
// output channel per group, weight zero point 0 once read as signed bytes
// (symmetric int8 weights, or UINT8 weights with zero point 128), and a
// window the micro-kernel takes (uk::QDwFits). Each channel's input is
// copied once into the worker's workspace as unsigned bytes with its
// padding written out as the input zero point, so every output row is
// branch-free: uk::QDwPlane computes sum w * x over the taps (VNNI: 16 outputs
// and four taps a vpdpbusd), and the zero point comes in as
// -x_zp * sum w, a per-channel constant (Graph::qsums), with the bias; then
// the row is requantised like the panel strategies' tiles. The same bytes
// as the reference unit (vnpu_int8.cc), whose tap loops stay for the
// rest.
#include <cstring>

#include "conv/plan.h"
#include "vnpu_quant.h"

namespace epctx {
namespace vnpu {
namespace {

const fb::Tensor* Ten(const fb::Graph* g, uint32_t t) { return g->tensors()->Get(t); }

// The padded plane of one channel: rows from input row -pad_top, columns
// from -pad_left, each row 64 bytes longer than any window reaches.
struct Padded {
  int64_t rows, width, reach;  // reach: columns any window reads
};
Padded PaddedOf(const fb::Graph* g, const fb::QConv2D* c) {
  const fb::Tensor *xt = Ten(g, c->input()), *yt = Ten(g, c->output());
  const int64_t W = Dim(xt, 3), OH = Dim(yt, 2), OW = Dim(yt, 3);
  const int64_t reach_h = (OH - 1) * c->stride_h() + (int64_t(c->kernel_h()) - 1) * c->dilation_h();
  const int64_t reach_w = (OW - 1) * c->stride_w() + (int64_t(c->kernel_w()) - 1) * c->dilation_w();
  const int64_t wide = W + c->pad_left() > reach_w + 1 ? W + c->pad_left() : reach_w + 1;
  return Padded{reach_h + 1, wide + 64, reach_w + 1};
}

}  // namespace

bool QDepthwiseFits(const fb::Graph* g, const fb::QConv2D* c, uint64_t* work_floats) {
  const fb::Tensor *xt = Ten(g, c->input()), *yt = Ten(g, c->output());
  const int64_t C = Dim(xt, 1), CO = Dim(yt, 1);
  if (c->groups() != uint64_t(C) || CO != C) return false;
  const bool u8w = Ten(g, c->weights())->dtype() == fb::DType::UINT8;
  if (c->weight_zero_point() != (u8w ? 128 : 0)) return false;
  if (!uk::QDwFits(c->kernel_h(), c->kernel_w(), c->stride_w(), c->dilation_w())) return false;
  const Padded pd = PaddedOf(g, c);
  const uint64_t bytes = uint64_t(pd.rows * pd.width) + uint64_t(Dim(yt, 2) * Dim(yt, 3)) * 4;
  *work_floats = (bytes + 3) / 4;
  return true;
}

void RunQDepthwise(const Bindings& b, const fb::QConv2D* c, const OpPlan& p, const QFinish& fin) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor *xt = Ten(g, c->input()), *yt = Ten(g, c->output());
  const int64_t N = Dim(xt, 0), C = Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t OH = Dim(yt, 2), OW = Dim(yt, 3);
  const int32_t KH = int32_t(c->kernel_h()), KW = int32_t(c->kernel_w());
  const int64_t sh = c->stride_h(), dh = c->dilation_h(), pt = c->pad_top(), pl = c->pad_left();
  const Padded pd = PaddedOf(g, c);
  const uint8_t* x = reinterpret_cast<const uint8_t*>(b.ptr(c->input()));
  const uint8_t* w = reinterpret_cast<const uint8_t*>(b.ptr(c->weights()));
  uint8_t* y = reinterpret_cast<uint8_t*>(b.ptr(c->output()));
  const uint8_t xflip = xt->dtype() == fb::DType::INT8 ? 0x80 : 0;
  const uint8_t wflip = Ten(g, c->weights())->dtype() == fb::DType::UINT8 ? 0x80 : 0;
  const uint8_t zpb = uint8_t(fin.xz);  // the zero point, unsigned
  ForRangeSlots(
      b.par, N * C, MinUnits(OH * OW * KH * KW), [&](int64_t lo, int64_t hi, uint32_t slot) {
        uint8_t* plane = reinterpret_cast<uint8_t*>(b.slot(slot));
        int32_t* raw = reinterpret_cast<int32_t*>(plane + pd.rows * pd.width);
        int8_t ws[64];
        for (int64_t u = lo; u < hi; ++u) {
          const int64_t ch = u % C;
          const uint8_t* xc = x + u * H * W;
          for (int64_t i = 0; i < pd.rows; ++i) {
            uint8_t* dst = plane + i * pd.width;
            const int64_t ih = i - pt;
            if (ih < 0 || ih >= H) {
              memset(dst, zpb, size_t(pd.reach > pl + W ? pd.reach : pl + W));
              continue;
            }
            memset(dst, zpb, size_t(pl));
            memcpy(dst + pl, xc + ih * W, size_t(W));
            if (xflip)
              for (int64_t j = pl; j < pl + W; ++j) dst[j] ^= xflip;
            // Past the last column a window reaches, bytes only feed lanes that
            // are never stored: zero points up to the reach, the slack unwritten.
            if (pd.reach > pl + W) memset(dst + pl + W, zpb, size_t(pd.reach - pl - W));
          }
          for (int32_t t = 0; t < KH * KW; ++t)
            ws[t] = int8_t(uint8_t(w[ch * KH * KW + t] ^ wflip));
          const int32_t rowc = fin.RowConstant(ch);
          p.qdw(uk::QDwPlane{plane, pd.width, ws, KH, KW, int32_t(sh), int32_t(c->stride_w()),
                             int32_t(dh), int32_t(c->dilation_w()), OH, OW, raw});
          const uint64_t base = uint64_t(u * OH * OW);
          if (p.qrequant) {
            p.qrequant(uk::QRequant{raw, 1, int32_t(OH * OW), nullptr, 0, &rowc, fin.ep.mult + ch,
                                    fin.ep.zp, fin.ep.lo, fin.ep.hi, y + base, 0});
          } else {
            for (int64_t o = 0; o < OH * OW; ++o) fin(y, base + uint64_t(o), ch, raw[o], 0);
          }
        }
      });
}

}  // namespace vnpu
}  // namespace epctx
