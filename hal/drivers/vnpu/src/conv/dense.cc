// SPDX-License-Identifier: Apache-2.0
// Dense (kDense): a GEMM of weights (M = output channels) x im2col (N =
// output pixels, K = Cin_g * KH * KW) on the micro-kernel library's block
// tile. The packed weights already are its A panels (row r of block b at
// k: w[b][k][r], k-stride 8), so they are read in place. B is packed per
// 48-pixel block and K chunk into the worker's workspace slot, with the
// bounds of every tap resolved once per chunk and shared by all output
// channels: in rows of the group's pixels, or in panels of 24 pixels
// where the block tile reads those best (plan.panel, uk::BlockPanelCols:
// AVX2). Elsewhere a 1x1 stride-1 convolution whose input stays in L2
// reads its input rows directly (plan.in_place). A last block of at most 8 pixels
// (7x7 maps: 1, 14x14: 4) goes to the narrow kernel (uk::NarrowKernel,
// rows in the vectors, AVX2 and AVX-512) rather than a padded 8-pixel
// block tile. Bias, RELU
// and CLIP are fused into the last K slice; other activations run on the
// block while it is in cache.
#include "conv/strategies.h"

namespace epctx {
namespace vnpu {

// Threads split each group's pixel blocks of kNr2 (48): every block is
// packed and computed whole by one of them, so the bytes do not depend on
// the split. K is packed in chunks of at most plan.chunk_k rows; later
// chunks accumulate into C. plan.group blocks share one packed panel per
// chunk: with one (weights and input that fit in L2), the block's B (96 KiB
// at most) stays in cache while every 8-row tile of the output channels
// sweeps it; with more (weights or input that do not), the panel's rows
// are long runs of the input, and each 8-row weight panel stays in L1
// while it sweeps the group's blocks, so the weights stream from memory
// once per group instead of once per block (FCN-ResNet50's 2048 -> 512
// 3x3 head on 32x32: 98 -> 155 GFLOP/s).

namespace {

// Output channels the narrow kernel takes at a time (8 weight panels),
// counted from a run's first row. Runs depend on the shape only, so its
// calls do not depend on the thread split.
constexpr int64_t kNarrowRows = 8 * uk::kMr2;

// One image and group's pixel blocks [b0, b1) and output channels [r_lo,
// r_hi), with the worker's slot.
struct DenseGroup {
  const float* xg;  // the group's input planes
  const float* wg;  // its weight panels
  const float* bias;
  float* yg;  // its output planes
};

void DenseBlocks(const ConvCall& call, const DenseGroup& dg, int64_t b0, int64_t b1, int64_t r_lo,
                 int64_t r_hi, float* buf) {
  const Shape& s = call.s;
  const OpPlan& plan = call.plan;
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t group = plan.group > 0 ? plan.group : 1;
  const uk::Im2colShape geom = Im2colOf(s);
  uk::Tile t{};
  plan.Epilogue(&t);
  t.a_rs = 1;
  t.a_ks = 8;
  t.ldc = OHW;
  t.b_ss = 8;
  // The group's blocks: their first pixel and pixels. One packed panel
  // holds them all, its rows the group's pixels (the input read in long
  // runs); block g's B starts at column g * 48.
  int64_t p0s[kDenseMaxGroup], nps[kDenseMaxGroup];
  for (int64_t q0 = b0; q0 < b1; q0 += group) {
    const int64_t ng = b1 - q0 < group ? b1 - q0 : group;
    const int64_t pitch = ng * uk::kNr2, first = q0 * uk::kNr2;
    const int64_t npix = OHW - first < pitch ? OHW - first : pitch;
    for (int64_t g = 0; g < ng; ++g) {
      p0s[g] = first + g * uk::kNr2;
      nps[g] = OHW - p0s[g] < uk::kNr2 ? OHW - p0s[g] : uk::kNr2;
    }
    // Input rows read in place need whole 8-wide strips inside the row;
    // then K is one chunk.
    const bool direct = plan.in_place && npix % 8 == 0;
    // A last block of a few pixels goes to the narrow kernel (rows in the
    // vectors), the others to the block tile.
    const bool narrow = plan.narrow && nps[ng - 1] <= uk::kNarrowCols;
    const int64_t nfull = narrow ? ng - 1 : ng;
    for (int64_t k0 = 0; k0 < K;) {
      const int64_t kc = direct ? K : (K - k0 < plan.chunk_k ? K - k0 : plan.chunk_k);
      const float* b = dg.xg + first;
      int64_t b_ks = HW, b_ps = 0, b_gs = uk::kNr2;  // b_gs: block g's B at b + g * b_gs
      if (!direct && uk::kPanelIsa && plan.panel == uk::kNr) {
        // Panels of 24 columns, each its kc rows one after the other:
        // block g's halves at buf + g * b_gs and + b_ps.
        for (int64_t j = 0; j < npix; j += uk::kNr)
          plan.im2col(geom, dg.xg, k0, kc, first + j, npix - j < uk::kNr ? npix - j : uk::kNr,
                      buf + (j / uk::kNr) * kc * uk::kNr, uk::kNr);
        b = buf;
        b_ks = uk::kNr;
        b_ps = kc * uk::kNr;
        b_gs = 2 * b_ps;
      } else if (!direct) {
        plan.im2col(geom, dg.xg, k0, kc, first, npix, buf, pitch);
        b = buf;
        b_ks = pitch;
      }
      t.kc = kc;
      t.b_ks = b_ks;
      t.b_ps = b_ps;
      t.accumulate = k0 > 0;
      t.last = k0 + kc == K;
      // The narrow kernel takes the rows of up to 8 weight panels at a
      // time, right after the block tiles read them, so the panels come
      // from cache rather than streaming the weights a second time (a
      // 7x7 map's last pixel re-read all 9.4 MB of a 512 -> 512 3x3).
      for (int64_t r0 = r_lo; r0 < r_hi; r0 += uk::kMr2) {
        t.a = dg.wg + (r0 / 8) * s.cig * s.kstride + k0 * 8;
        t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
        t.row_bias = dg.bias ? dg.bias + r0 : nullptr;
        for (int64_t g = 0; g < nfull; ++g) {
          t.cols = static_cast<int32_t>(nps[g]);
          t.b = b + g * b_gs;
          t.c = dg.yg + r0 * OHW + p0s[g];
          plan.tile(t);
        }
        // The narrow group's first row: groups of kNarrowRows from r_lo.
        const int64_t n0 = r_lo + (r0 - r_lo) / kNarrowRows * kNarrowRows;
        if (narrow && (r0 + uk::kMr2 >= r_hi || r0 + uk::kMr2 - n0 == kNarrowRows)) {
          uk::NarrowTile nt{};
          nt.kc = kc;
          nt.a = dg.wg + (n0 / 8) * s.cig * s.kstride + k0 * 8;
          nt.a_ps = s.cig * s.kstride;
          nt.b = b + (ng - 1) * b_gs;
          nt.b_ks = b_ks;
          nt.c = dg.yg + n0 * OHW + p0s[ng - 1];
          nt.ldc = OHW;
          nt.rows = static_cast<int32_t>((r_hi < r0 + uk::kMr2 ? r_hi : r0 + uk::kMr2) - n0);
          nt.cols = static_cast<int32_t>(nps[ng - 1]);
          nt.accumulate = t.accumulate;
          nt.last = t.last;
          nt.row_bias = dg.bias ? dg.bias + n0 : nullptr;
          nt.lo = t.lo;
          nt.hi = t.hi;
          plan.narrow(nt);
        }
      }
      k0 += kc;
    }
    if (plan.post)
      ActivateRows(call.c->activation(), dg.yg + r_lo * OHW + first, uint64_t(r_hi - r_lo),
                   uint64_t(npix), uint64_t(OHW), call.c->alpha(), call.c->beta());
  }
}

}  // namespace

// Threads take units of (run of output channels, pixel block group),
// run-major: a map with few block groups (7x7: 2 blocks, one of a single
// pixel) is also cut across its output channels, in runs of whole 8-row
// tiles, so two threads each take half of the channels over all of the
// pixels (block-major, one took the 48-pixel block and the other the last
// pixel: MobileNetV2's 7x7 layers ran no faster on 2 threads). A thread
// runs each block group it holds units of once, over the rows of all its
// runs there, so the group's im2col is packed once per thread.
void RunDense(const ConvCall& call) {
  const Shape& s = call.s;
  const Bindings& bd = call.b;
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t blocks = (OHW + uk::kNr2 - 1) / uk::kNr2;
  const int64_t group = call.plan.group > 0 ? call.plan.group : 1;
  const int64_t groups = (blocks + group - 1) / group;
  const int64_t tiles = (s.cog + uk::kMr2 - 1) / uk::kMr2;
  int64_t runs = groups >= kDenseMinUnits ? 1 : (kDenseMinUnits + groups - 1) / groups;
  runs = runs < tiles ? runs : tiles;
  const int64_t units = groups * runs;
  // Run r's first row: whole 8-row tiles, split as evenly as runs allow.
  auto row = [&](int64_t r) {
    const int64_t v = tiles * r / runs * uk::kMr2;
    return v < s.cog ? v : s.cog;
  };
  // One split over every image and group: a grouped convolution (RegNet's
  // 16-channel groups) has few units per group, and a split per group ran
  // most of its groups on one thread.
  ForRangeSlots(bd.par, s.N * s.G * units, MinUnits(s.cog * K * uk::kNr2 * group / runs),
                [&](int64_t v0, int64_t v1, uint32_t slot) {
                  for (int64_t v = v0; v < v1;) {
                    const int64_t ng = v / units, n = ng / s.G, gi = ng % s.G;
                    const DenseGroup dg{call.x + (n * s.C + gi * s.cig) * HW,
                                        call.w + gi * s.nb * s.cig * s.kstride,
                                        call.bias ? call.bias + gi * s.cog : nullptr,
                                        call.y + (n * s.CO + gi * s.cog) * OHW};
                    // This image and group's units [u0, u1): unit u is run u /
                    // groups of block group u % groups. Block group q holds
                    // the consecutive runs [ra, rb] of them.
                    const int64_t u0 = v % units,
                                  u1 = v1 - ng * units < units ? v1 - ng * units : units;
                    for (int64_t q = 0; q < groups; ++q) {
                      const int64_t ra = u0 <= q ? 0 : (u0 - q + groups - 1) / groups;
                      const int64_t rb = u1 - 1 < q ? -1 : (u1 - 1 - q) / groups;
                      if (ra > rb) continue;  // every run holds at least one tile
                      const int64_t b1 = (q + 1) * group < blocks ? (q + 1) * group : blocks;
                      DenseBlocks(call, dg, q * group, b1, row(ra), row(rb + 1), bd.slot(slot));
                    }
                    v = ng * units + u1;
                  }
                });
}

}  // namespace vnpu
}  // namespace epctx
