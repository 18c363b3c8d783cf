// SPDX-License-Identifier: Apache-2.0
// Depthwise with channels in vector lanes (kDepthwiseLanes): one input and
// one output channel per group on a small map, 16 groups at a time through
// the micro-kernel library's DepthwiseLanes (a zero-padded channels-last
// block, a vector multiply-add per output pixel and tap, transposes in and
// out), where rows of 7 to 28 columns leave most of a vector's lanes and
// most of each row's time to setup. Taken when the library runs it on this
// CPU (AVX-512) and its block fits (uk::DepthwiseLanesFloats, the
// workspace per slot). Single layers, vnpu, 1 thread: 3x3 on 384
// channels of 14x14 15 -> 29 GFLOP/s, 5x5 on 672 channels of 14x14 21 ->
// 51 (ONNX Runtime 45 and 58).
//
// kGroupLanes: a grouped convolution of 16 input and 16 output channels
// per group (RegNet-X's group width) the same way, one group per call.
#include "epctx_uk/depthwise.h"
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

uk::DwShape DwShapeOf(const Shape& s) {
  return uk::DwShape{s.H, s.W, s.OH, s.OW, s.KH, s.KW, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl};
}

uint64_t LanesFloats(const Shape& s) {
  return s.cig == 1 && s.cog == 1 ? uk::DepthwiseLanesFloats(DwShapeOf(s)) : 0;
}

uint64_t GroupLanesFloatsOf(const Shape& s) {
  return s.cig == 16 && s.cog == 16 && s.G > 1 && s.KH * s.KW > 1
             ? uk::GroupLanesFloats(DwShapeOf(s))
             : 0;
}

// Threads split the groups (of every image). Either weight layout: output
// channel o, input channel i, tap t at wg + (o / 8) * L.ss + o % 8 + i *
// L.ks + t * L.tap.
void RunGroupLanes(const ConvCall& call) {
  const Shape& s = call.s;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const uk::DwShape dws = DwShapeOf(s);
  const int64_t HW = s.H * s.W, OHW = s.OH * s.OW;
  ForRangeSlots(
      bd.par, s.N * s.G, MinUnits(256 * OHW * s.KH * s.KW),
      [&](int64_t u0, int64_t u1, uint32_t slot) {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t n = u / s.G, gi = u % s.G;
          float* yg = call.y + (n * s.CO + gi * 16) * OHW;
          const uk::LaneWeights lw{call.w + gi * s.nb * s.cig * s.kstride, call.L.ss, 1, call.L.ks,
                                   call.L.tap};
          uk::GroupLanes(dws, call.x + (n * s.C + gi * 16) * HW, HW, lw,
                         call.bias ? call.bias + gi * 16 : nullptr, yg, OHW, bd.slot(slot));
          if (c->activation() != fb::Activation::NONE)
            ActivateRow(c->activation(), yg, yg, uint64_t(16 * OHW), c->alpha(), c->beta());
        }
      });
}

// Threads split the blocks of 16 channels (of every image).
void RunDepthwiseLanes(const ConvCall& call) {
  const Shape& s = call.s;
  const fb::Conv2D* c = call.c;
  const Bindings& bd = call.b;
  const uk::DwShape dws = DwShapeOf(s);
  const int64_t HW = s.H * s.W, OHW = s.OH * s.OW, blocks = (s.G + 15) / 16;
  ForRangeSlots(
      bd.par, s.N * blocks, MinUnits(16 * OHW * s.KH * s.KW),
      [&](int64_t u0, int64_t u1, uint32_t slot) {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t n = u / blocks, c0 = (u % blocks) * 16;
          const int nc = static_cast<int>(s.G - c0 < 16 ? s.G - c0 : 16);
          float* yb = call.y + (n * s.CO + c0) * OHW;
          uk::DepthwiseLanes(dws, nc, call.x + (n * s.C + c0) * HW, HW, call.w + c0 * s.kstride,
                             s.kstride, 8, call.bias ? call.bias + c0 : nullptr, yb, OHW,
                             bd.slot(slot));
          if (c->activation() != fb::Activation::NONE)
            ActivateRow(c->activation(), yb, yb, uint64_t(nc * OHW), c->alpha(), c->beta());
        }
      });
}

}  // namespace vnpu
}  // namespace epctx
