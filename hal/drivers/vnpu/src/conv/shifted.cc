// SPDX-License-Identifier: Apache-2.0
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {
namespace {

// Pixels per run of ShiftedPass' output rows (4 blocks of 48 or 8 of 24).
constexpr int64_t kShiftGroupPixels = 192;

// A 1x1 convolution whose channel planes lie a multiple of 4 KiB apart
// (H * W a multiple of 1024: ocr_det's 160x160 and 320x320 maps) reads its
// K input rows at one L1 set offset, so the group's B rows (K x 192
// floats, reread by every 8-row weight tile) cannot stay in L1 and every
// tile reloads them from L2. Such a pass copies the group's rows once into
// the worker's workspace slot, kShiftPackStride floats apart (not a
// multiple of 4 KiB), and the tiles read the copy: ocr_det's 16 -> 32
// layer on 320x320, 4.0 -> 3.4 ms, its 48 -> 48 on 160x160 3.1 -> 2.1 ms.
// Elsewhere the copy costs more than it saves (measured on 320x322).
constexpr int64_t kShiftPackStride = kShiftGroupPixels + 16;

// ShiftedPass' 1x1 in 24-column panels: units [u0, u1) of the pass' blocks
// (bw pixels each; the last unit also takes the last block, here a short
// one, not overlapping: its chunks accumulate, and the copy reads only its
// pixels), in groups of kShiftGroupPixels; per group and K chunk of kc
// rows, the blocks' rows are copied into panels of 24 (block i's at buf +
// i * bw * kc, its second half b_ps = 24 * kc further), then every 8-row
// weight tile sweeps the group's blocks.
void PanelPass(const ConvCall& call, const float* xg, const float* wg, const float* bias, float* yg,
               int64_t q0, int64_t n, int64_t bw, int64_t u0, int64_t u1, int64_t units,
               int64_t blocks, int64_t kc, float* buf, uk::Tile t) {
  const Shape& s = call.s;
  const WLayout& L = call.L;
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W, K = s.cig;
  const int64_t group = kShiftGroupPixels / bw, halves = bw / uk::kNr;
  const int64_t b1 = n % bw != 0 && blocks > 1 && u1 == units ? blocks : u1;
  t.b_ks = uk::kNr;
  t.segs = 1;
  for (int64_t g0 = u0; g0 < b1; g0 += group) {
    const int64_t g1 = b1 - g0 < group ? b1 : g0 + group;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
      const int64_t kn = K - k0 < kc ? K - k0 : kc;
      for (int64_t k = 0; k < kn; ++k)
        for (int64_t bi = g0; bi < g1; ++bi) {
          const int64_t p0 = bi * bw, np = n - p0 < bw ? n - p0 : bw;
          const float* src = xg + q0 + p0 + (k0 + k) * HW;
          float* dst = buf + (bi - g0) * bw * kn + k * uk::kNr;
          if (np == bw) {
            for (int64_t h = 0; h < halves; ++h)
              __builtin_memcpy(dst + h * uk::kNr * kn, src + h * uk::kNr, uk::kNr * sizeof(float));
          } else {
            for (int64_t j = 0; j < np; ++j)
              dst[(j / uk::kNr) * uk::kNr * kn + j % uk::kNr] = src[j];
          }
        }
      t.kc = kn;
      t.b_ps = halves > 1 ? uk::kNr * kn : 0;
      t.accumulate = k0 > 0;
      t.last = k0 + kn == K;
      for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
        t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
        t.row_bias = bias ? bias + r0 : nullptr;
        t.a = wg + (r0 / 8) * L.ss + k0 * L.ks;
        for (int64_t bi = g0; bi < g1; ++bi) {
          const int64_t p0 = bi * bw;
          t.cols = static_cast<int32_t>(n - p0 < bw ? n - p0 : bw);
          t.c = yg + r0 * OHW + q0 + p0;
          t.b = buf + (bi - g0) * bw * kn;
          call.plan.tile(t);
        }
        if (call.plan.post && t.last) {
          const int64_t a1 = g1 * bw < n ? g1 * bw : n;
          ActivateRows(call.c->activation(), yg + r0 * OHW + q0 + g0 * bw, uint64_t(t.rows),
                       uint64_t(a1 - g0 * bw), uint64_t(OHW), call.c->alpha(), call.c->beta());
        }
      }
    }
  }
}

}  // namespace

// A column convolution (KW = 1, stride 1, no padding, e.g. 3x1) is a sum
// over its KH taps of 1x1 convolutions of the input shifted by whole rows:
// for tap kh, pixel p reads input p + kh * dh * W of every channel, so B is
// the input itself (K stride H * W) and A the packed weights at that tap.
// Nothing is packed and each tile's K is one slice per tap. The last pixel
// block overlaps the one before (each block is computed from scratch, so
// the overlap is written twice with the same values) rather than reading
// past the input.
//
// A 1x1 goes to dense instead where this pass loses: when the overlapping
// last block would redo more than 1/20 of the pixels (a 7x7 map computes
// 96 pixels for 49, a 14x14 one 240 for 196; dense pads only its last
// strip), and when the planes alias in L1 and are too many to copy (K
// rows of 192 floats reread from L2 by every weight tile). Single 1x1
// convolutions, vnpu GFLOP/s before -> after: 2048 -> 512 on 7x7 80 ->
// 112, on 32x32 51 -> 137; 1024 -> 256 on 32x32 42 -> 132; 960 -> 256 on
// 16x16 152 -> 161.
bool ShiftApplies(const Shape& s) {
  if (!(s.KW == 1 && s.KH <= kMaxTaps && s.sw == 1 && s.sh == 1 && s.pl == 0 && s.pt == 0 &&
        s.OW == s.W && s.OH == s.H - (s.KH - 1) * s.dh && s.OH * s.OW >= uk::kNr))
    return false;
  if (s.KH != 1) return true;
  const int64_t n = s.OH * s.OW, bw = n >= uk::kNr2 ? uk::kNr2 : uk::kNr;
  const int64_t redone = n % bw ? bw - n % bw : 0;
  if (redone * 20 > n) return false;
  return (s.H * s.W) % 1024 != 0 || ShiftPackApplies(s);
}

// At most the im2col chunk's workspace (Dense's kWorkK x 24 floats, up to
// 118 input channels), so the copy never makes a worker's slot larger than
// a dense convolution's.
bool ShiftPackApplies(const Shape& s) {
  return s.KH == 1 && s.KW == 1 && (s.H * s.W) % 1024 == 0 &&
         s.cig * kShiftPackStride <= kWorkK * uk::kNr;
}

// One image and group of a shifted-taps convolution over pixels [q0, q0 + n)
// (n >= 24): tap t reads B at xg + q + b0 + t * bstep with A at the tap's
// weights in layout L, all taps one tile call (slices). With `packs`
// (kShiftedPacked) a 1x1 pass whose planes alias in L1 reads copies of its
// rows in the worker's slot; with plan.panel 24 (kShifted 1x1 on AVX2) each
// group's rows are copied plan.chunk_k at a time into 24-column panels,
// which the block tile streams (uk::BlockPanelCols), and the chunks
// accumulate. Threads split the pixel blocks; the
// overlapping last block stays with the one before it (both write the
// overlap), so no two threads write one pixel.
void ShiftedPass(const ConvCall& call, const float* xg, const float* wg, const float* bias,
                 float* yg, int64_t q0, int64_t n, int64_t taps, int64_t b0, int64_t bstep,
                 bool packs) {
  const Shape& s = call.s;
  const WLayout& L = call.L;
  const fb::Conv2D* c = call.c;
  const epctx_hal_parallel* par = call.b.par;
  const uk::TileFn tile = call.plan.tile;
  // Block tiles: 8 output channels x 48 pixels, or 24 when there are fewer.
  const int64_t bw = n >= uk::kNr2 ? uk::kNr2 : uk::kNr;
  uk::Tile base{};
  call.plan.Epilogue(&base);
  const bool post = call.plan.post;
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W;
  base.kc = s.cig;
  base.a_rs = 1;
  base.a_ks = L.ks;
  base.b_ss = 8;
  base.b_ks = HW;
  base.ldc = OHW;
  base.cols = static_cast<int32_t>(bw);
  base.segs = static_cast<int32_t>(taps);
  base.a_seg = L.tap;
  base.b_seg = bstep;
  base.last = true;
  const int64_t blocks = (n + bw - 1) / bw, group = kShiftGroupPixels / bw;
  const bool overlap = n % bw != 0 && blocks > 1;
  const int64_t units = overlap ? blocks - 1 : blocks;
  const bool panels =
      uk::kPanelIsa && call.plan.strategy == Strategy::kShifted && call.plan.panel == uk::kNr;
  const int64_t kc = panels ? call.plan.chunk_k : s.cig;
  ForRangeSlots(par, units, MinUnits(s.cog * s.cig * taps * bw),
                [&](int64_t u0, int64_t u1, uint32_t slot) {
                  uk::Tile t = base;
                  float* pack = packs ? call.b.slot(slot) : nullptr;
                  if (pack) t.b_ks = kShiftPackStride;
                  if (panels) {
                    PanelPass(call, xg, wg, bias, yg, q0, n, bw, u0, u1, units, blocks, kc,
                              call.b.slot(slot), t);
                    return;
                  }
                  const int64_t b1 = overlap && u1 == units ? blocks : u1;
                  // Blocks go in groups: each 8-row tile of weights runs over the group's
                  // blocks in turn, so every output row is written in runs of
                  // kShiftGroupPixels rather than one block at a time (few output
                  // streams at once: the 1x1 convolutions of a large map are bound by
                  // memory).
                  for (int64_t g0 = u0; g0 < b1; g0 += group) {
                    const int64_t g1 = b1 - g0 < group ? b1 : g0 + group;
                    if (pack) {
                      for (int64_t k = 0; k < s.cig; ++k)
                        for (int64_t bi = g0; bi < g1; ++bi) {
                          const int64_t p0 = bi * bw;
                          const int64_t q = q0 + (n - p0 < bw ? n - bw : p0);
                          __builtin_memcpy(pack + k * kShiftPackStride + (bi - g0) * bw,
                                           xg + q + b0 + k * HW, size_t(bw) * 4);
                        }
                    }
                    for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
                      t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
                      t.row_bias = bias ? bias + r0 : nullptr;
                      const float* wr = wg + (r0 / 8) * L.ss;
                      for (int64_t bi = g0; bi < g1; ++bi) {
                        const int64_t p0 = bi * bw;
                        const int64_t q = q0 + (n - p0 < bw ? n - bw : p0);
                        t.c = yg + r0 * OHW + q;
                        t.a = wr;
                        t.b = pack ? pack + (bi - g0) * bw : xg + q + b0;
                        tile(t);
                      }
                      // The group's pixels are one contiguous range, activated once per
                      // tile's rows while they are in L1 (from the overlapping last
                      // block's start when it opens the group: it rewrote pixels the
                      // group before had activated).
                      if (post) {
                        const int64_t a0 = n - g0 * bw < bw ? n - bw : g0 * bw;
                        const int64_t a1 = g1 * bw < n ? g1 * bw : n;
                        ActivateRows(c->activation(), yg + r0 * OHW + q0 + a0, uint64_t(t.rows),
                                     uint64_t(a1 - a0), uint64_t(OHW), c->alpha(), c->beta());
                      }
                    }
                  }
                });
}

namespace {

void Shifted(const ConvCall& call, bool packs) {
  const Shape& s = call.s;
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi)
      ShiftedPass(call, call.x + (n * s.C + gi * s.cig) * HW,
                  call.w + gi * s.nb * s.cig * s.kstride,
                  call.bias ? call.bias + gi * s.cog : nullptr,
                  call.y + (n * s.CO + gi * s.cog) * OHW, 0, OHW, s.KH, 0, s.dh * s.W, packs);
}

}  // namespace

void RunShifted(const ConvCall& call) { Shifted(call, false); }
void RunShiftedPacked(const ConvCall& call) { Shifted(call, true); }

uint64_t ShiftPackFloats(const Shape& s) { return uint64_t(s.cig * kShiftPackStride); }

uint64_t ShiftPanelFloats(const Shape& s) {
  return uint64_t((s.cig < kShiftPanelKc ? s.cig : kShiftPanelKc) * kShiftGroupPixels);
}

}  // namespace vnpu
}  // namespace epctx
