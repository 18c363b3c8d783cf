// SPDX-License-Identifier: Apache-2.0
// The vnpu CONV2D unit over the packed weight layout
// [groups][ceil(Cout_g / 8)][Cin_g][KH][KW][8] (README "Weight layouts").
//
// - Dense: a GEMM of weights (M = output channels) x im2col (N = output
//   pixels, K = Cin_g * KH * KW) on the micro-kernel library's tile kernel
//   (ukernels/, shared with the CPU kernels). The packed weights already are
//   its A panels (row r of block b at k: w[b][k][r], k-stride 8), so they
//   are read in place. B is packed per 24-pixel block and 32-row K chunk
//   into a 3 KiB stack buffer of whole 24-float rows (execute may not
//   allocate and the arena is planned by the compiler), with the bounds of
//   every tap resolved once per chunk and shared by all output channels; a
//   1x1 stride-1 convolution reads its input rows directly. Bias, RELU and
//   CLIP are fused into the tile's last K slice; other activations run on
//   the block while it is in cache. Rows of two tiles or more go a row
//   block at a time instead (DenseRows).
// - ShiftedTaps (KW = 1, stride 1, unpadded), RowShift (1xK, stride 1, the
//   row padded to its width; edge columns redone) and Narrow (one-channel
//   1-D convolutions with few output pixels): the same tile with nothing
//   packed, a conv's taps as slices of one tile call (Tile::segs); see each.
// - Depthwise (one input and one output channel per group): at column
//   stride 1, the micro-kernel library's WeightedRows sums every tap of a
//   row in registers; else a row-wise multiply-add, one tap at a time. Only
//   lane 0 of each 8-wide weight block is real, so a GEMM would spend 7 of
//   every 8 multiply-adds on padding.
#include "epctx_uk/rows.h"
#include "epctx_uk/sgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

struct Shape {
  int64_t N, C, H, W, CO, OH, OW, G, cig, cog, nb, KH, KW, sh, sw, dh, dw, pt, pl, kstride;
};

// The most K rows (x 24 floats: 96 KiB) any path's workspace slot holds
// for one pixel block (DenseRows' row block, the 1x1 shift pack, the
// transposed ring); get_graph sizes the slots for every op that uses one
// and execute refuses a scratch without them.
constexpr int64_t kWorkK = 1024;

// K rows per packed B chunk of Dense's 48-pixel blocks (see Dense).
constexpr int64_t kDenseKc = 512;

// Taps up to which PackPatch gathers the rows of narrow maps (3x3, 1x3).
constexpr int64_t kGatherTaps = 9;

// Rows [k0, k0+kc) (k = (ic, kh, kw)) x pixels [p0, p0+np) of the group's
// im2col matrix into buf as rows of one whole tile: buf[k * kNr + j] (the
// tile reads it with strip stride 8 and k stride kNr), columns past np zero.
// Whole rows keep every run of valid taps contiguous in buf, so a stride-1
// tap row is one straight copy, not a scatter over strips. The pixels are cut
// once into output-row segments; per row k and segment the valid columns are
// one range, so no pixel is bounds-checked on its own.
void PackPatch(const Shape& s, const float* xg, int64_t k0, int64_t kc, int64_t p0, int64_t np,
               float* buf, int64_t pitch = uk::kNr) {
  struct Seg {
    int64_t j, oh, ow0, ow1;
  };
  Seg seg[uk::kNr];
  int64_t nseg = 0;
  {
    int64_t oh = p0 / s.OW, ow = p0 - oh * s.OW, j = 0;
    while (j < np) {
      const int64_t ow1 = s.OW - ow < np - j ? s.OW : ow + (np - j);
      seg[nseg++] = Seg{j, oh, ow, ow1};
      j += ow1 - ow;
      ow = 0;
      ++oh;
    }
  }
  const int64_t padded = (np + 7) / 8 * 8, HW = s.H * s.W;
  int64_t kw = k0 % s.KW, t = k0 / s.KW;
  int64_t kh = t % s.KH, ic = t / s.KH;
  if (nseg > 3 && s.KH * s.KW <= kGatherTaps && HW < (int64_t(1) << 31)) {
    // Rows of a few columns (a block spans more than 3 output rows): the
    // segment bookkeeping would cost more than the copies. Each tap's
    // offsets into a channel plane (-1: padding) are the same for every
    // input channel, so they are computed once and each K row is a gather.
    int32_t map[kGatherTaps][uk::kNr];
    for (int64_t th = 0; th < s.KH; ++th)
      for (int64_t tw = 0; tw < s.KW; ++tw) {
        int32_t* m = map[th * s.KW + tw];
        for (int64_t g = 0; g < nseg; ++g) {
          const Seg& sg = seg[g];
          const int64_t ih = sg.oh * s.sh - s.pt + th * s.dh;
          for (int64_t o = sg.ow0; o < sg.ow1; ++o) {
            const int64_t iw = o * s.sw + tw * s.dw - s.pl;
            m[sg.j + o - sg.ow0] =
                ih >= 0 && ih < s.H && iw >= 0 && iw < s.W ? int32_t(ih * s.W + iw) : -1;
          }
        }
      }
    for (int64_t k = 0; k < kc; ++k) {
      float* __restrict d = buf + k * pitch;
      const float* xc = xg + ic * HW;
      const int32_t* m = map[kh * s.KW + kw];
      for (int64_t j = 0; j < np; ++j) d[j] = m[j] >= 0 ? xc[m[j]] : 0.0f;
      for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
      if (++kw == s.KW) {
        kw = 0;
        if (++kh == s.KH) {
          kh = 0;
          ++ic;
        }
      }
    }
    return;
  }
  for (int64_t k = 0; k < kc; ++k) {
    float* __restrict d = buf + k * pitch;
    const float* xc = xg + ic * HW;
    // Output columns ow whose tap iw = ow * sw + off lies in [0, W): [lo, hi).
    const int64_t off = kw * s.dw - s.pl;
    // (Stride 1 needs no division: this runs once per K row of every block.)
    int64_t lo, hi;
    if (s.sw == 1) {
      lo = off >= 0 ? 0 : -off;
      hi = s.W - off < 0 ? 0 : s.W - off;
    } else {
      lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
      hi = s.W - 1 - off < 0 ? 0 : (s.W - 1 - off) / s.sw + 1;
    }
    for (int64_t g = 0; g < nseg; ++g) {
      const Seg& sg = seg[g];
      float* __restrict ds = d + (sg.j - sg.ow0);  // column of ow == 0
      const int64_t ih = sg.oh * s.sh - s.pt + kh * s.dh;
      int64_t a = sg.ow1, b = sg.ow1;
      if (ih >= 0 && ih < s.H) {
        a = lo > sg.ow0 ? lo : sg.ow0;
        b = hi < sg.ow1 ? hi : sg.ow1;
        if (b < a) a = b = sg.ow1;
      }
      for (int64_t o = sg.ow0; o < a; ++o) ds[o] = 0.0f;
      if (a < b) {
        const float* __restrict row = xc + ih * s.W + off;
        if (s.sw == 1) {
          int64_t o = a;
          for (; o + 4 <= b; o += 4) Store4(ds + o, Load4(row + o));
          if (o < b && b - a >= 4)  // the last four again, overlapping: no scalar tail
            Store4(ds + b - 4, Load4(row + b - 4));
          else
            for (; o < b; ++o) ds[o] = row[o];
        } else {
          int64_t o = a;
          if (s.sw == 2)  // even lanes of two vectors, while both lie in the row
            for (; o + 4 <= b && 2 * o + 8 <= s.W - off; o += 4)
              Store4(ds + o, __builtin_shufflevector(Load4(row + 2 * o), Load4(row + 2 * o + 4), 0,
                                                     2, 4, 6));
          for (; o < b; ++o) ds[o] = row[o * s.sw];
        }
      }
      for (int64_t o = b; o < sg.ow1; ++o) ds[o] = 0.0f;
    }
    for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
    if (++kw == s.KW) {
      kw = 0;
      if (++kh == s.KH) {
        kh = 0;
        ++ic;
      }
    }
  }
}

// Columns c0, c0 + 2, ... (n of them) of a row of W floats into ev and
// c0 + 1, c0 + 3, ... into od, zero outside [0, W).
void SplitCols(const float* src, int64_t W, int64_t c0, int64_t n, float* ev, float* od) {
  auto one = [&](int64_t k) {
    const int64_t je = c0 + 2 * k, jo = je + 1;
    ev[k] = je >= 0 && je < W ? src[je] : 0.0f;
    od[k] = jo >= 0 && jo < W ? src[jo] : 0.0f;
  };
  int64_t i = 0;
  for (; i < n && c0 + 2 * i < 0; ++i) one(i);
  for (; i + 4 <= n && c0 + 2 * i + 8 <= W; i += 4) {
    const V4 a = Load4(src + c0 + 2 * i), b = Load4(src + c0 + 2 * i + 4);
    Store4(ev + i, __builtin_shufflevector(a, b, 0, 2, 4, 6));
    Store4(od + i, __builtin_shufflevector(a, b, 1, 3, 5, 7));
  }
  for (; i < n; ++i) one(i);
}

// The im2col rows of np output pixels from (oh, ow0) at column stride 2,
// column dilation 1, into buf (rows `pitch` apart, padded to whole strips):
// each input row a tap row reads is split once into its even and odd
// columns (in `split`, 2 * (np + KW) floats), so tap kw's row is a copy of
// one half from column kw / 2.
void PackRowS2(const Shape& s, const float* xg, int64_t oh, int64_t ow0, int64_t np, float* buf,
               int64_t pitch, float* split) {
  const int64_t n = np + (s.KW - 1) / 2, padded = (np + 7) / 8 * 8, HW = s.H * s.W;
  float* ev = split;
  float* od = split + np + s.KW;
  float* d = buf;
  for (int64_t ic = 0; ic < s.cig; ++ic)
    for (int64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
      const bool in = ih >= 0 && ih < s.H;
      if (in) SplitCols(xg + ic * HW + ih * s.W, s.W, 2 * ow0 - s.pl, n, ev, od);
      for (int64_t kw = 0; kw < s.KW; ++kw, d += pitch) {
        if (in) __builtin_memcpy(d, (kw % 2 ? od : ev) + kw / 2, size_t(np) * 4);
        else
          for (int64_t j = 0; j < np; ++j) d[j] = 0.0f;
        for (int64_t j = np; j < padded; ++j) d[j] = 0.0f;
      }
    }
}

// Dense one output row at a time, up to kRowBlock pixels of it per unit
// (a row block): the block's im2col rows (all of K) packed once, rows
// kRowBlock floats apart, then every 4-row weight tile runs across the
// block, so each output channel's row is written in one run and the
// im2col bookkeeping (row segments, tap bounds) is paid once per block, not
// once per 24 pixels. At column stride 2 (a backbone's first convolution:
// 3 -> 16 channels, 3x3, on 640x640) each input row is split into its even
// and odd columns once and the taps are copies of a half (PackRowS2), where
// PackPatch would shuffle every tap's row out of the input again.
// ocr_det's first convolution: 3.6 -> 2.6 ms. Needs K * kRowBlock floats
// of workspace (K <= 128) and rows of at least two tiles.
constexpr int64_t kRowBlock = 192;

bool DenseRowsApplies(const Shape& s) {
  const int64_t K = s.cig * s.KH * s.KW;
  return s.OW >= 2 * uk::kNr && K * kRowBlock <= kWorkK * uk::kNr && !(s.KH == 1 && s.KW == 1);
}

uint64_t DenseRowsFloats(const Shape& s) {
  return uint64_t(s.cig * s.KH * s.KW * kRowBlock + 2 * (kRowBlock + s.KW));
}

void DenseRows(const Shape& s, const float* x, const float* w, const float* bias, float* y,
               const fb::Conv2D* c, const Bindings& bd) {
  const uk::TileFn tile = uk::TileKernel2(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t per_row = (s.OW + kRowBlock - 1) / kRowBlock;
  const int64_t units = s.N * s.G * s.OH * per_row;
  base.a_rs = 1;
  base.a_ks = 8;
  base.ldc = OHW;
  base.b_ss = 8;
  base.b_ks = kRowBlock;
  base.kc = K;
  base.last = true;
  ForRangeSlots(
      bd.par, units, MinUnits(s.cog * K * kRowBlock), [&](int64_t u0, int64_t u1, uint32_t slot) {
        float* buf = bd.slot(slot);
        uk::Tile t = base;
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t rb = u % per_row, row = u / per_row;
          const int64_t oh = row % s.OH, ng = row / s.OH, gi = ng % s.G, n = ng / s.G;
          const float* xg = x + (n * s.C + gi * s.cig) * HW;
          const float* wg = w + gi * s.nb * s.cig * s.kstride;
          float* yg = y + (n * s.CO + gi * s.cog) * OHW;
          const int64_t p0 = oh * s.OW + rb * kRowBlock;
          const int64_t np = s.OW - rb * kRowBlock < kRowBlock ? s.OW - rb * kRowBlock : kRowBlock;
          if (s.sw == 2 && s.dw == 1)
            PackRowS2(s, xg, oh, rb * kRowBlock, np, buf, kRowBlock, buf + K * kRowBlock);
          else PackPatch(s, xg, 0, K, p0, np, buf, kRowBlock);
          for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
            t.a = wg + (r0 / 8) * s.cig * s.kstride;
            t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
            t.row_bias = bias ? bias + gi * s.cog + r0 : nullptr;
            for (int64_t j0 = 0; j0 < np; j0 += uk::kNr2) {
              t.cols = static_cast<int32_t>(np - j0 < uk::kNr2 ? np - j0 : uk::kNr2);
              t.b = buf + j0;
              t.c = yg + r0 * OHW + p0 + j0;
              tile(t);
            }
          }
          if (post)
            ActivateRows(c->activation(), yg + p0, uint64_t(s.cog), uint64_t(np), uint64_t(OHW),
                         c->alpha(), c->beta());
        }
      });
}

// Threads split each group's pixel blocks of kNr2 (48): every block is
// packed and computed whole by one of them, so the bytes do not depend on
// the split. K is packed in chunks of at most kDenseKc rows (a 24 KiB B
// block that stays in L1 while every 8-row block tile of the output
// channels sweeps it); later chunks accumulate into C.
void Dense(const Shape& s, const float* x, const float* w, const float* bias, float* y,
           const fb::Conv2D* c, const Bindings& bd) {
  const int64_t chunk_k = int64_t(bd.graph->work_floats / uk::kNr2) < kDenseKc
                              ? int64_t(bd.graph->work_floats / uk::kNr2)
                              : kDenseKc;
  const uk::TileFn tile = uk::TileKernel2(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
  const int64_t K = s.cig * s.KH * s.KW, OHW = s.OH * s.OW, HW = s.H * s.W;
  const bool pointwise = s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 &&
                         s.pl == 0 && s.OH == s.H && s.OW == s.W;
  base.a_rs = 1;
  base.a_ks = 8;
  base.ldc = OHW;
  base.b_ss = 8;
  const int64_t blocks = (OHW + uk::kNr2 - 1) / uk::kNr2;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW;
      ForRangeSlots(
          bd.par, blocks, MinUnits(s.cog * K * uk::kNr2),
          [&](int64_t b0, int64_t b1, uint32_t slot) {
            float* buf = bd.slot(slot);
            uk::Tile t = base;
            for (int64_t p0 = b0 * uk::kNr2; p0 < OHW && p0 < b1 * uk::kNr2; p0 += uk::kNr2) {
              const int64_t np = OHW - p0 < uk::kNr2 ? OHW - p0 : uk::kNr2;
              // Input rows read in place need whole 8-wide strips inside the row.
              const bool direct = pointwise && np % 8 == 0;
              t.cols = static_cast<int32_t>(np);
              for (int64_t k0 = 0; k0 < K;) {
                const int64_t kc = direct ? K : (K - k0 < chunk_k ? K - k0 : chunk_k);
                if (direct) {
                  t.b = xg + p0;
                  t.b_ks = HW;
                } else {
                  // PackPatch fills up to one tile's 24 columns a call.
                  for (int64_t j = 0; j < np; j += uk::kNr)
                    PackPatch(s, xg, k0, kc, p0 + j, np - j < uk::kNr ? np - j : uk::kNr, buf + j,
                              uk::kNr2);
                  t.b = buf;
                  t.b_ks = uk::kNr2;
                }
                t.kc = kc;
                t.accumulate = k0 > 0;
                t.last = k0 + kc == K;
                for (int64_t r0 = 0; r0 < s.cog; r0 += uk::kMr2) {
                  t.a = wg + (r0 / 8) * s.cig * s.kstride + k0 * 8;
                  t.rows = static_cast<int32_t>(s.cog - r0 < uk::kMr2 ? s.cog - r0 : uk::kMr2);
                  t.c = yg + r0 * OHW + p0;
                  t.row_bias = bias ? bias + gi * s.cog + r0 : nullptr;
                  tile(t);
                }
                k0 += kc;
              }
              if (post)
                ActivateRows(c->activation(), yg + p0, uint64_t(s.cog), uint64_t(np), uint64_t(OHW),
                             c->alpha(), c->beta());
            }
          });
    }
}

// Taps of the depthwise row kernel below (a 7x7 window at most).
constexpr int64_t kMaxTaps = 49;

// Input channels gathered per call at the edges of Transposed (a 4 x 128
// float stack tile).
constexpr int64_t kEdgeChunk = 128;

// Few output channels (at most one tile's 24 columns) from many input
// channels, e.g. the 96 -> 24 3x3 convolutions of a detection head: as
// Dense, each 24-pixel block would pack its whole K (864 rows for those)
// for only 6 four-row tiles, so packing costs about as much as the
// multiply-adds. Transposed, C^T = im2col^T x W^T, the tile's rows are 4
// output pixels of one row and its columns the output channels: for each
// kernel tap, A is the input itself (pixel r at column stride sw, channel
// stride H * W) and B the packed weights at that tap (strip = 8-channel
// block, k stride one tap's 8 floats), one call of K = Cin_g per tap
// accumulated in a stack tile, so nothing is packed. Taps whose input row
// lies outside are skipped; at the left and right edges the 4 pixels'
// inputs are gathered with zeros for the padding. The 4 x 24 result goes
// to the channel-major output through the stack tile.
// Where the transposed path finds tap t's weights for input channel ic and
// output channel j: w_group + t * tap + ic * ks + (j / 8) * ss + j % 8.
struct WLayout {
  int64_t tap, ss, ks;
};

// CONV2D's blocked layout [ceil(Cout_g / 8)][Cin_g][KH][KW][8]: one tap's
// output channel blocks lie Cin_g x KH x KW x 8 floats apart. CONV2D_TAPS'
// [KH][KW][Cin_g][ceil(Cout_g / 8) * 8]: side by side (the tile then loads
// two blocks as one 16-float vector).
WLayout BlockedLayout(const Shape& s) { return WLayout{8, s.cig * s.kstride, s.kstride}; }
WLayout TapsLayout(const Shape& s) { return WLayout{s.cig * s.nb * 8, 8, s.nb * 8}; }

bool TransposedApplies(const Shape& s) {
  return s.cog <= uk::kNr && s.cig >= 16 && s.KH * s.KW > 1 && s.KH * s.KW <= kMaxTaps &&
         s.OW >= uk::kMr;
}

// A transposed tile's nr pixels x cog channels (rows kNr floats apart) into
// the channel-major output: channel j's pixels at y + j * ld.
void StoreTransposed(const float* cbuf, int64_t cog, int64_t nr, float* y, int64_t ld) {
  for (int64_t j = 0; j < cog; ++j)
    for (int64_t r = 0; r < nr; ++r) y[j * ld + r] = cbuf[r * uk::kNr + j];
}

// Transposed with the input rows packed: a ring of KH rows per worker (in
// its workspace slot), each holding one input row of every channel of the
// group, zero-padded left and right, channel rows PackedStride apart. The
// channels of the input itself lie H x W floats apart, a multiple of 4 KiB
// on 160x160 and 320x320 maps, so the tile's A loads (one line per channel,
// per k step) all fall in one L1 set and miss; packed, they do not, and the
// padding needs no edge path. Each input row is packed once per worker run
// (output rows go in order), a copy of 1/(KW * Cout) of the row's work.
// Needs row dilation 1 (an output row's KH input rows are consecutive, so
// they never share a slot) and the ring within kWorkK * 24 floats.
constexpr int64_t kRingFloats = 65536;

// Input row src (w floats) into dst as PW floats: pl zeros, the row, zeros
// (columns past PW dropped). Padded column j holds input column j - pl.
void PadRow(const float* src, int64_t w, int64_t pl, int64_t PW, float* dst) {
  const int64_t lo = pl < PW ? pl : PW;
  const int64_t n = w < PW - lo ? w : PW - lo;
  for (int64_t j = 0; j < lo; ++j) dst[j] = 0.0f;
  if (n > 0) __builtin_memcpy(dst + lo, src, size_t(n) * 4);
  for (int64_t j = lo + (n > 0 ? n : 0); j < PW; ++j) dst[j] = 0.0f;
}

int64_t PackedWidth(const Shape& s) { return (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1; }

int64_t PackedStride(const Shape& s) {
  int64_t st = (PackedWidth(s) + 15) / 16 * 16;
  if (st % 1024 == 0) st += 16;  // 4 KiB apart again: shift by a line
  return st;
}

uint64_t PackedRingFloats(const Shape& s) {
  return uint64_t(s.KH) * uint64_t(s.cig) * uint64_t(PackedStride(s));
}

bool PackedRingApplies(const Shape& s) {
  return s.dh == 1 && PackedRingFloats(s) <= uint64_t(kRingFloats);
}

void TransposedPacked(const Shape& s, const WLayout& L, const float* x, const float* w,
                      const float* bias, float* y, const fb::Conv2D* c, const Bindings& bd) {
  const uk::TileFn tile = uk::TileKernel(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W, units = s.N * s.G * s.OH;
  const int64_t PW = PackedWidth(s), PS = PackedStride(s);
  base.b_ss = L.ss;
  base.b_ks = L.ks;
  base.ldc = uk::kNr;
  base.cols = static_cast<int32_t>(s.cog);
  base.a_rs = s.sw;
  base.a_ks = PS;
  base.kc = s.cig;
  base.segs = static_cast<int32_t>(s.KW);
  base.a_seg = s.dw;
  base.b_seg = L.tap;
  ForRangeSlots(bd.par, units, MinUnits(s.cog * s.cig * s.KH * s.KW * s.OW),
                [&](int64_t u0, int64_t u1, uint32_t slot) {
                  float* ring = bd.slot(slot);
                  int64_t tag[kMaxTaps];  // image-group and input row held by each slot
                  for (int64_t k = 0; k < s.KH; ++k) tag[k] = -1;
                  float cbuf[uk::kMr * uk::kNr];
                  uk::Tile t = base;
                  t.c = cbuf;
                  for (int64_t u = u0; u < u1; ++u) {
                    const int64_t oh = u % s.OH, ng = u / s.OH, gi = ng % s.G, n = ng / s.G;
                    const float* xg = x + (n * s.C + gi * s.cig) * HW;
                    const float* wg = w + gi * s.nb * s.cig * s.kstride;
                    float* yg = y + (n * s.CO + gi * s.cog) * OHW + oh * s.OW;
                    t.col_bias = bias ? bias + gi * s.cog : nullptr;
                    const float* rows[kMaxTaps];  // packed row of tap kh, or null (padding)
                    int64_t last = -1;
                    for (int64_t kh = 0; kh < s.KH; ++kh) {
                      const int64_t ih = oh * s.sh - s.pt + kh;
                      rows[kh] = nullptr;
                      if (ih < 0 || ih >= s.H) continue;
                      last = kh;
                      const int64_t k = ih % s.KH, want = ng * s.H + ih;
                      float* pr = ring + k * s.cig * PS;
                      if (tag[k] != want) {
                        for (int64_t ic = 0; ic < s.cig; ++ic)
                          PadRow(xg + ic * HW + ih * s.W, s.W, s.pl, PW, pr + ic * PS);
                        tag[k] = want;
                      }
                      rows[kh] = pr;
                    }
                    for (int64_t ow0 = 0; ow0 < s.OW; ow0 += uk::kMr) {
                      const int64_t nr = s.OW - ow0 < uk::kMr ? s.OW - ow0 : uk::kMr;
                      t.rows = static_cast<int32_t>(nr);
                      if (last < 0) {  // every tap in the padding: bias and activation only
                        t.kc = 0;
                        t.accumulate = false;
                        t.last = true;
                        tile(t);
                        t.kc = s.cig;
                      }
                      bool first = true;
                      for (int64_t kh = 0; kh <= last; ++kh) {
                        if (!rows[kh]) continue;
                        t.a = rows[kh] + ow0 * s.sw;  // the row's KW taps: slices dw apart
                        t.b = wg + kh * s.KW * L.tap;
                        t.accumulate = !first;
                        t.last = kh == last;
                        tile(t);
                        first = false;
                      }
                      StoreTransposed(cbuf, s.cog, nr, yg + ow0, OHW);
                    }
                    if (post)
                      ActivateRows(c->activation(), yg, uint64_t(s.cog), uint64_t(s.OW),
                                   uint64_t(OHW), c->alpha(), c->beta());
                  }
                });
}

// Threads split the output rows (of every image and group).
void Transposed(const Shape& s, const WLayout& L, const float* x, const float* w, const float* bias,
                float* y, const fb::Conv2D* c, const epctx_hal_parallel* par) {
  const uk::TileFn tile = uk::TileKernel(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W, units = s.N * s.G * s.OH;
  base.b_ss = L.ss;
  base.b_ks = L.ks;
  base.ldc = uk::kNr;
  base.cols = static_cast<int32_t>(s.cog);
  ForRange(par, units, MinUnits(s.cog * s.cig * s.KH * s.KW * s.OW), [&](int64_t u0, int64_t u1) {
    float cbuf[uk::kMr * uk::kNr];
    float abuf[uk::kMr * kEdgeChunk];
    uk::Tile t = base;
    t.c = cbuf;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t oh = u % s.OH, gi = (u / s.OH) % s.G, n = u / (s.OH * s.G);
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW + oh * s.OW;
      t.col_bias = bias ? bias + gi * s.cog : nullptr;
      // Input rows of this output row's taps (-1: outside, skipped).
      int64_t ihs[kMaxTaps];
      int64_t last = -1;
      for (int64_t kh = 0; kh < s.KH; ++kh) {
        const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
        ihs[kh] = ih >= 0 && ih < s.H ? ih : -1;
        if (ihs[kh] >= 0) last = kh;
      }
      for (int64_t ow0 = 0; ow0 < s.OW; ow0 += uk::kMr) {
        const int64_t nr = s.OW - ow0 < uk::kMr ? s.OW - ow0 : uk::kMr;
        t.rows = static_cast<int32_t>(nr);
        bool first = true;
        if (last < 0) {  // every tap in the padding: bias and activation only
          t.kc = 0;
          t.accumulate = false;
          t.last = true;
          tile(t);
        }
        for (int64_t kh = 0; kh <= last; ++kh) {
          if (ihs[kh] < 0) continue;
          const float* xrow = xg + ihs[kh] * s.W;
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t iw0 = ow0 * s.sw + kw * s.dw - s.pl;
            const int64_t iwn = iw0 + (nr - 1) * s.sw;
            const float* wt = wg + (kh * s.KW + kw) * L.tap;
            const bool final_tap = kh == last && kw == s.KW - 1;
            if (iw0 >= 0 && iwn < s.W) {
              t.a = xrow + iw0;
              t.a_rs = s.sw;
              t.a_ks = HW;
              t.b = wt;
              t.kc = s.cig;
              t.accumulate = !first;
              t.last = final_tap;
              tile(t);
              first = false;
              continue;
            }
            for (int64_t ic0 = 0; ic0 < s.cig; ic0 += kEdgeChunk) {
              const int64_t kc = s.cig - ic0 < kEdgeChunk ? s.cig - ic0 : kEdgeChunk;
              for (int64_t r = 0; r < nr; ++r) {
                const int64_t iw = iw0 + r * s.sw;
                const bool in = iw >= 0 && iw < s.W;
                for (int64_t k = 0; k < kc; ++k)
                  abuf[k * uk::kMr + r] = in ? xrow[(ic0 + k) * HW + iw] : 0.0f;
              }
              t.a = abuf;
              t.a_rs = 1;
              t.a_ks = uk::kMr;
              t.b = wt + ic0 * L.ks;
              t.kc = kc;
              t.accumulate = !first;
              t.last = final_tap && ic0 + kc == s.cig;
              tile(t);
              first = false;
            }
          }
        }
        StoreTransposed(cbuf, s.cog, nr, yg + ow0, OHW);
      }
      if (post)
        ActivateRows(c->activation(), yg, uint64_t(s.cog), uint64_t(s.OW), uint64_t(OHW),
                     c->alpha(), c->beta());
    }
  });
}

// A column convolution (KW = 1, stride 1, no padding, e.g. 3x1) is a sum
// over its KH taps of 1x1 convolutions of the input shifted by whole rows:
// for tap kh, pixel p reads input p + kh * dh * W of every channel, so B is
// the input itself (K stride H * W) and A the packed weights at that tap.
// Nothing is packed and each tile's K is one slice per tap. The last pixel
// block overlaps the one before (each block is computed from scratch, so
// the overlap is written twice with the same values) rather than reading
// past the input.
bool ShiftApplies(const Shape& s) {
  return s.KW == 1 && s.KH <= kMaxTaps && s.sw == 1 && s.sh == 1 && s.pl == 0 && s.pt == 0 &&
         s.OW == s.W && s.OH == s.H - (s.KH - 1) * s.dh && s.OH * s.OW >= uk::kNr;
}

// A row convolution (KH = 1, KW > 1, stride 1, the row padded to keep its
// width, e.g. 1x3 with pads 1/1) the same way over the flattened plane: for
// tap kw, pixel p reads input p + kw * dw - pl, right for every column whose
// window lies inside its row. The pl + pr columns at each row's edges read
// a neighbouring row instead of the padding; they are computed again
// afterwards (EdgeColumns) and overwritten. Pixels [pl, H * W - pr) only, so
// nothing is read outside the input. Dense would pack Cin * KW rows per
// 24-pixel block, each packed float feeding only Cout multiply-adds: on the
// 24..48-channel 1x3 layers of a keyword model, a quarter of the layer.
// Worth it where the edges are few (W >= 16).
bool RowShiftApplies(const Shape& s) {
  const int64_t ext = (s.KW - 1) * s.dw;
  return s.KH == 1 && s.KW > 1 && s.KW <= kMaxTaps && s.sw == 1 && s.sh == 1 && s.pt == 0 &&
         s.OH == s.H && s.OW == s.W && s.W >= 16 && ext * 4 <= s.W && s.pl <= ext && s.cig >= 8 &&
         s.cig * s.KW <= kWorkK && s.OH * s.OW - ext >= uk::kNr;
}

// Workspace floats of EdgeColumns per worker: a packed B of Cin * KW rows
// of one tile, and the tile's Cout x 24 results.
uint64_t EdgeWorkFloats(const Shape& s) { return uint64_t((s.cig * s.KW + s.cog) * uk::kNr); }

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

// At most the im2col chunk's workspace (Dense's kWorkK x 24 floats, up to
// 118 input channels), so the copy never makes a worker's slot larger than
// a dense convolution's.
bool ShiftPackApplies(const Shape& s) {
  return s.KH == 1 && s.KW == 1 && (s.H * s.W) % 1024 == 0 &&
         s.cig * kShiftPackStride <= kWorkK * uk::kNr;
}

// One image and group of a shifted-taps convolution over pixels [q0, q0 + n)
// (n >= 24): tap t reads B at xg + q + b0 + t * bstep with A at the tap's
// weights in layout L, all taps one tile call (slices). With `work` (slots
// of work_floats floats) a 1x1 pass whose planes alias in L1 reads copies
// of its rows (ShiftPackApplies). Threads split the pixel blocks; the
// overlapping last block stays with the one before it (both write the
// overlap), so no two threads write one pixel.
void ShiftedPass(const Shape& s, const WLayout& L, const float* xg, const float* wg,
                 const float* bias, float* yg, const fb::Conv2D* c, const epctx_hal_parallel* par,
                 int64_t q0, int64_t n, int64_t taps, int64_t b0, int64_t bstep, float* work,
                 uint64_t work_floats) {
  const uk::TileFn tile = uk::TileKernel2(uk::Isa::kAuto);
  // Block tiles: 8 output channels x 48 pixels, or 24 when there are fewer.
  const int64_t bw = n >= uk::kNr2 ? uk::kNr2 : uk::kNr;
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
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
  const bool packs = work && taps == 1 && ShiftPackApplies(s);
  ForRangeSlots(par, units, MinUnits(s.cog * s.cig * taps * bw),
                [&](int64_t u0, int64_t u1, uint32_t slot) {
                  uk::Tile t = base;
                  float* pack = packs ? work + uint64_t(slot) * work_floats : nullptr;
                  if (pack) t.b_ks = kShiftPackStride;
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

void ShiftedTaps(const Shape& s, const float* x, const float* w, const float* bias, float* y,
                 const fb::Conv2D* c, const Bindings& bd) {
  const int64_t OHW = s.OH * s.OW, HW = s.H * s.W;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi)
      ShiftedPass(s, BlockedLayout(s), x + (n * s.C + gi * s.cig) * HW,
                  w + gi * s.nb * s.cig * s.kstride, bias ? bias + gi * s.cog : nullptr,
                  y + (n * s.CO + gi * s.cog) * OHW, c, bd.par, 0, OHW, s.KH, 0, s.dh * s.W,
                  bd.work, bd.graph->work_floats);
}

// The pl + pr edge columns of every row of a RowShift convolution, 24 rows
// of one edge column at a time: their im2col columns packed tap-major (a tap
// outside the row is a zero row; inside, a read down the column), one tile
// call (a slice of K = Cin per tap) into the worker's slot, then written to
// the output column.
void EdgeColumns(const Shape& s, const WLayout& L, const float* xg, const float* wg,
                 const float* bias, float* yg, const fb::Conv2D* c, const Bindings& bd) {
  const uk::TileFn tile = uk::TileKernel(uk::Isa::kAuto);
  uk::Tile base{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &base);
  const int64_t ext = (s.KW - 1) * s.dw, pr = ext - s.pl, OHW = s.OH * s.OW, HW = s.H * s.W;
  const int64_t K = s.cig * s.KW, row_blocks = (s.OH + uk::kNr - 1) / uk::kNr;
  base.kc = s.cig;
  base.a_rs = 1;
  base.a_ks = L.ks;
  base.b_ss = 8;
  base.b_ks = uk::kNr;
  base.ldc = uk::kNr;
  base.last = true;
  base.segs = static_cast<int32_t>(s.KW);
  base.a_seg = L.tap;
  base.b_seg = s.cig * uk::kNr;
  ForRangeSlots(bd.par, ext * row_blocks, MinUnits(s.cog * K * uk::kNr),
                [&](int64_t c0, int64_t c1, uint32_t slot) {
                  float* buf = bd.slot(slot);
                  float* cb = buf + K * uk::kNr;
                  uk::Tile t = base;
                  t.b = buf;
                  for (int64_t ch = c0; ch < c1; ++ch) {
                    const int64_t e = ch / row_blocks, r0 = (ch % row_blocks) * uk::kNr;
                    const int64_t nr = s.OH - r0 < uk::kNr ? s.OH - r0 : uk::kNr;
                    const int64_t ow = e < s.pl ? e : s.W - pr + (e - s.pl);
                    for (int64_t kw = 0, k = 0; kw < s.KW; ++kw) {
                      const int64_t iw = ow + kw * s.dw - s.pl;
                      const bool in = iw >= 0 && iw < s.W;
                      for (int64_t ic = 0; ic < s.cig; ++ic, ++k) {
                        float* d = buf + k * uk::kNr;
                        const float* xr = xg + ic * HW + r0 * s.W + iw;
                        int64_t j = 0;
                        if (in)
                          for (; j < nr; ++j) d[j] = xr[j * s.W];
                        for (; j < uk::kNr; ++j) d[j] = 0.0f;
                      }
                    }
                    t.cols = static_cast<int32_t>(nr);
                    for (int64_t o0 = 0; o0 < s.cog; o0 += uk::kMr) {
                      t.rows = static_cast<int32_t>(s.cog - o0 < uk::kMr ? s.cog - o0 : uk::kMr);
                      t.a = wg + (o0 / 8) * L.ss + o0 % 8;
                      t.c = cb + o0 * uk::kNr;
                      t.row_bias = bias ? bias + o0 : nullptr;
                      tile(t);
                    }
                    if (post)
                      ActivateRows(c->activation(), cb, uint64_t(s.cog), uint64_t(nr),
                                   uint64_t(uk::kNr), c->alpha(), c->beta());
                    for (int64_t oc = 0; oc < s.cog; ++oc) {
                      float* yc = yg + oc * OHW + r0 * s.OW + ow;
                      for (int64_t j = 0; j < nr; ++j) yc[j * s.OW] = cb[oc * uk::kNr + j];
                    }
                  }
                });
}

void RowShift(const Shape& s, const WLayout& L, const float* x, const float* w, const float* bias,
              float* y, const fb::Conv2D* c, const Bindings& bd) {
  const int64_t ext = (s.KW - 1) * s.dw, OHW = s.OH * s.OW, HW = s.H * s.W;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi * s.cig) * HW;
      const float* wg = w + gi * s.nb * s.cig * s.kstride;
      const float* bg = bias ? bias + gi * s.cog : nullptr;
      float* yg = y + (n * s.CO + gi * s.cog) * OHW;
      ShiftedPass(s, L, xg, wg, bg, yg, c, bd.par, s.pl, OHW - ext, s.KW, -s.pl, s.dw, nullptr, 0);
      EdgeColumns(s, L, xg, wg, bg, yg, c, bd);
    }
}

// A 1-D convolution of one input channel with few output pixels and no
// padding (an STFT as a convolution: 1 -> 257 channels, 512 taps, 5 frames):
// as Dense, every tile would be a few pixels wide and a fraction of its
// columns wasted. Transposed, C^T = im2col^T x W^T, pixels are the tile rows
// and channels its 24 columns: im2col^T is the input itself (row p at
// p * sw, tap stride dw) and the packed weight blocks are the B strips, so
// nothing is packed and K is one slice. The 4 x 24 result goes through a
// stack tile to the channel-major output.
bool NarrowApplies(const Shape& s) {
  return s.cig == 1 && s.cog >= 8 && s.KH == 1 && s.H == 1 && s.OH == 1 && s.pt == 0 && s.pl == 0 &&
         s.OW < 16 && (s.OW - 1) * s.sw + (s.KW - 1) * s.dw < s.W;
}

void Narrow(const Shape& s, const float* x, const float* w, const float* bias, float* y,
            const fb::Conv2D* c) {
  const uk::TileFn tile = uk::TileKernel(uk::Isa::kAuto);
  uk::Tile t{};
  const bool post = !FusedAct(c->activation(), c->alpha(), c->beta(), &t);
  float cbuf[uk::kMr * uk::kNr];
  t.kc = s.KW;
  t.a_rs = s.sw;
  t.a_ks = s.dw;
  t.b_ss = s.kstride;  // one 8-channel block: cig (1) x KH (1) x KW x 8
  t.b_ks = 8;
  t.c = cbuf;
  t.ldc = uk::kNr;
  t.last = true;
  const int64_t OW = s.OW;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t gi = 0; gi < s.G; ++gi) {
      const float* xg = x + (n * s.C + gi) * s.W;
      const float* wg = w + gi * s.nb * s.kstride;
      float* yg = y + (n * s.CO + gi * s.cog) * OW;
      for (int64_t ch0 = 0; ch0 < s.cog; ch0 += uk::kNr) {
        const int64_t nc = s.cog - ch0 < uk::kNr ? s.cog - ch0 : uk::kNr;
        t.b = wg + (ch0 / 8) * s.kstride;
        t.cols = static_cast<int32_t>(nc);
        t.col_bias = bias ? bias + gi * s.cog + ch0 : nullptr;
        for (int64_t p0 = 0; p0 < OW; p0 += uk::kMr) {
          const int64_t np = OW - p0 < uk::kMr ? OW - p0 : uk::kMr;
          t.a = xg + p0 * s.sw;
          t.rows = static_cast<int32_t>(np);
          tile(t);
          for (int64_t r = 0; r < np; ++r)
            for (int64_t j = 0; j < nc; ++j) yg[(ch0 + j) * OW + p0 + r] = cbuf[r * uk::kNr + j];
        }
      }
      if (post)
        for (int64_t j = 0; j < s.cog; ++j) {
          float* yr = yg + j * OW;
          ActivateRow(c->activation(), yr, yr, uint64_t(OW), c->alpha(), c->beta());
        }
    }
}

// Output row oh of one depthwise channel at column stride 1. Columns whose
// every tap lies inside the row ([i0, i1)) go to the micro-kernel library's
// WeightedRows, which sums every tap in registers and writes y once; the few
// edge columns check each tap.
void DepthwiseRowStride1(const Shape& s, const float* xc, const float* wc, float bv, int64_t oh,
                         float* __restrict yr) {
  const float* rows[kMaxTaps];
  float wv[kMaxTaps];
  int64_t offs[kMaxTaps];
  int64_t nt = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
    if (ih < 0 || ih >= s.H) continue;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      rows[nt] = xc + ih * s.W;
      offs[nt] = kw * s.dw - s.pl;
      wv[nt] = wc[(kh * s.KW + kw) * 8];
      ++nt;
    }
  }
  const int64_t span = (s.KW - 1) * s.dw;
  int64_t i0 = s.pl < s.OW ? s.pl : s.OW;
  int64_t i1 = s.W - span + s.pl;
  i1 = i1 < s.OW ? i1 : s.OW;
  if (i1 < i0) i1 = i0;
  auto edge = [&](int64_t ow) {
    float acc = bv;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t iw = ow + offs[t];
      if (iw >= 0 && iw < s.W) acc += wv[t] * rows[t][iw];
    }
    yr[ow] = acc;
  };
  for (int64_t ow = 0; ow < i0; ++ow) edge(ow);
  for (int64_t ow = i1; ow < s.OW; ++ow) edge(ow);
  if (i1 == i0) return;
  for (int64_t t = 0; t < nt; ++t) rows[t] += i0 + offs[t];
  uk::WeightedRows(rows, wv, nt, bv, yr + i0, i1 - i0);
}

// Column stride 2 (the downsampling depthwise layers of MobileNet-style
// backbones): each input row is zero-padded and split once into its even and
// odd columns: in bands (below) up to 192 output columns, else a ring of KH
// such rows in the worker's workspace slot, one output row at a time. Output
// column ow's tap kw reads padded column 2 * ow + kw, which is column
// ow + kw / 2 of the even half (kw even) or of the odd half (kw odd), so
// every tap is a stride-1 row again and a whole output row is one
// WeightedRows call; tap by tap, each output was loaded and stored once per
// tap with a shuffle per four. Needs row dilation 1 and column dilation 1.
int64_t HalfWidth(const Shape& s) { return (s.OW + (s.KW + 1) / 2 + 15) / 16 * 16; }

// Input row src zero-padded (pl on the left) and split into its even and
// odd padded columns: ev[i] = padded column 2i, ev[HW2 + i] = 2i + 1.
void SplitRow(const Shape& s, const float* src, float* ev, int64_t HW2) {
  SplitCols(src, s.W, -s.pl, HW2, ev, ev + HW2);
}

// Column stride 1 (any row stride, any dilation), or 2 (column dilation 1):
// a band of output rows at a time from a band of input rows zero-padded
// left and right into the worker's workspace slot (at column stride 2 each
// also split into even and odd columns, as above), so every tap of every
// output column is a plain offset into the band and the band's interior
// rows are one WeightedRowBand call, activated in one pass: no edge
// columns, no per-row setup.
constexpr int64_t kBandFloats = 8192;  // 32 KiB: the band stays in L1

int64_t PaddedWidth(const Shape& s) { return s.OW + (s.KW - 1) * s.dw; }

// Floats from one band row to the next.
int64_t BandPitch(const Shape& s) { return s.sw == 1 ? PaddedWidth(s) : 2 * HalfWidth(s); }

// Output rows per band (0: the kernel's rows alone do not fit).
int64_t BandRows(const Shape& s) {
  const int64_t rows_in = kBandFloats / BandPitch(s), span = (s.KH - 1) * s.dh;
  if (rows_in <= span || s.KH * s.KW > kMaxTaps) return 0;
  const int64_t b = (rows_in - span - 1) / s.sh + 1;
  return b < s.OH ? b : s.OH;
}

// Input rows a band of nb output rows reads.
int64_t BandInputRows(const Shape& s, int64_t nb) {
  return (nb - 1) * s.sh + (s.KH - 1) * s.dh + 1;
}

// Input rows up to 192 columns: wider ones amortise their setup already,
// and a band of them is too large a working set for a layer bound by
// reading its input (ocr_det's 320-column 3x3 layers: 1.14 -> 1.54 ms at
// stride 1, 1.22 -> 1.81 ms at stride 2).
bool BandApplies(const Shape& s) {
  return (s.sw == 1 || (s.sw == 2 && s.dw == 1)) && s.W <= 192 && BandRows(s) > 0;
}

// Output rows [r0, r1) of one input channel into the group's cog output
// channels, a band of rows at a time (cog > 1: a single-input-channel
// convolution, e.g. 1 -> 24 channels 3x3 on a spectrogram; each band is
// filled once and every output channel's taps run over it). Output channel
// j's taps are lane j % 8 of weight block j / 8.
void DepthwiseBand(const Shape& s, const float* xc, const float* wg, const float* bg, float* band,
                   float* yg, const fb::Conv2D* c, int64_t r0, int64_t r1) {
  const int64_t PW = BandPitch(s), B = BandRows(s), span = (s.KH - 1) * s.dh;
  const int64_t HW2 = HalfWidth(s), OHW = s.OH * s.OW;
  // Output rows [top, bottom) have every kernel row inside the input; the
  // others (a few at the top and bottom, or all of a map only a few rows
  // high) run one at a time with only their kernel rows that are.
  int64_t top = (s.pt + s.sh - 1) / s.sh, bottom = (s.H - 1 + s.pt - span) / s.sh + 1;
  if (s.H - 1 + s.pt - span < 0) bottom = 0;
  if (top > s.OH) top = s.OH;
  if (bottom < top) bottom = top;
  const float* rows[kMaxTaps];
  const float* part[kMaxTaps];
  float wv[kMaxTaps], pw[kMaxTaps];
  const int64_t nt = s.KH * s.KW;
  for (int64_t kh = 0, t = 0; kh < s.KH; ++kh)
    for (int64_t kw = 0; kw < s.KW; ++kw, ++t)
      rows[t] = band + kh * s.dh * PW + (s.sw == 1 ? kw * s.dw : (kw % 2) * HW2 + kw / 2);
  for (int64_t oh0 = r0; oh0 < r1; oh0 += B) {
    const int64_t nb = r1 - oh0 < B ? r1 - oh0 : B, rows_in = BandInputRows(s, nb);
    // Band rows above or below the input are never read (no tap of any
    // output row below reaches them), so only the input's rows are filled.
    for (int64_t j = 0; j < rows_in; ++j) {
      float* pr = band + j * PW;
      const int64_t ih = oh0 * s.sh - s.pt + j;
      if (ih < 0 || ih >= s.H) continue;
      if (s.sw == 2) SplitRow(s, xc + ih * s.W, pr, HW2);
      else PadRow(xc + ih * s.W, s.W, s.pl, PW, pr);
    }
    for (int64_t oc = 0; oc < s.cog; ++oc) {
      const float* wc = wg + (oc / 8) * s.kstride + oc % 8;
      for (int64_t t = 0; t < nt; ++t) wv[t] = wc[t * 8];
      const float bv = bg ? bg[oc] : 0.f;
      float* yc = yg + oc * OHW;
      for (int64_t oh = oh0; oh < oh0 + nb;) {
        const int64_t shift = (oh - oh0) * s.sh * PW;
        if (oh >= top && oh < bottom) {
          const int64_t end = bottom < oh0 + nb ? bottom : oh0 + nb;
          for (int64_t t = 0; t < nt; ++t) part[t] = rows[t] + shift;
          uk::WeightedRowBand(part, wv, nt, bv, yc + oh * s.OW, s.OW, end - oh, s.sh * PW, s.OW);
          oh = end;
          continue;
        }
        int64_t np = 0;
        for (int64_t kh = 0, t = 0; kh < s.KH; ++kh) {
          const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
          for (int64_t kw = 0; kw < s.KW; ++kw, ++t)
            if (ih >= 0 && ih < s.H) {
              part[np] = rows[t] + shift;
              pw[np++] = wv[t];
            }
        }
        uk::WeightedRowBand(part, pw, np, bv, yc + oh * s.OW, s.OW, 1, 0, 0);
        ++oh;
      }
      float* yb = yc + oh0 * s.OW;
      if (c->activation() != fb::Activation::NONE)
        ActivateRow(c->activation(), yb, yb, uint64_t(nb * s.OW), c->alpha(), c->beta());
    }
  }
}

uint64_t S2RingFloats(const Shape& s) { return uint64_t(s.KH) * 2 * uint64_t(HalfWidth(s)); }

bool S2Applies(const Shape& s) {
  return s.sw == 2 && s.dw == 1 && s.dh == 1 && s.KH * s.KW <= kMaxTaps &&
         S2RingFloats(s) <= uint64_t(kRingFloats);
}

// One output row from the ring of KH split rows (row dilation 1: an output
// row's KH input rows are consecutive, so they never share a slot); each
// input row is split once, when it enters its slot.
void DepthwiseRowS2(const Shape& s, const float* xc, const float* wc, float bv, int64_t oh,
                    float* ring, int64_t* tag, float* __restrict yr) {
  const int64_t HW2 = HalfWidth(s);
  const float* rows[kMaxTaps];
  float wv[kMaxTaps];
  int64_t nt = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t ih = oh * s.sh - s.pt + kh;
    if (ih < 0 || ih >= s.H) continue;
    const int64_t slot = ih % s.KH;
    float* ev = ring + slot * 2 * HW2;
    if (tag[slot] != ih) {
      SplitRow(s, xc + ih * s.W, ev, HW2);
      tag[slot] = ih;
    }
    for (int64_t kw = 0; kw < s.KW; ++kw, ++nt) {
      rows[nt] = ev + (kw % 2 ? HW2 : 0) + kw / 2;
      wv[nt] = wc[(kh * s.KW + kw) * 8];
    }
  }
  uk::WeightedRows(rows, wv, nt, bv, yr, s.OW);
}

// One input and one output channel per group: channel gi's taps are lane 0 of
// its 8-wide weight block.
void Depthwise(const Shape& s, const float* x, const float* w, const float* bias, float* y,
               const fb::Conv2D* c, const Bindings& bd) {
  const int64_t HW = s.H * s.W, OHW = s.OH * s.OW;
  if (bd.work && BandApplies(s)) {
    // Threads split the output rows (of every image and channel).
    ForRangeSlots(bd.par, s.N * s.G * s.OH, MinUnits(s.cog * s.OW * s.KH * s.KW),
                  [&](int64_t u0, int64_t u1, uint32_t slot) {
                    for (int64_t u = u0; u < u1;) {
                      const int64_t nc = u / s.OH, r0 = u % s.OH, n = nc / s.G, ch = nc % s.G;
                      const int64_t r1 = u1 - u < s.OH - r0 ? r0 + (u1 - u) : s.OH;
                      DepthwiseBand(s, x + (n * s.C + ch) * HW, w + ch * s.nb * s.kstride,
                                    bias ? bias + ch * s.cog : nullptr, bd.slot(slot),
                                    y + (n * s.CO + ch * s.cog) * OHW, c, r0, r1);
                      u += r1 - r0;
                    }
                  });
    return;
  }
  // Threads split the channels (of every image).
  const bool s2 = bd.work && S2Applies(s);
  ForRangeSlots(
      bd.par, s.N * s.G, MinUnits(s.OH * s.OW * s.KH * s.KW),
      [&](int64_t u0, int64_t u1, uint32_t slot) {
        int64_t tag[kMaxTaps];
        float* ws = bd.work ? bd.slot(slot) : nullptr;
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t n = u / s.G, ch = u % s.G;
          const float* xc = x + (n * s.C + ch) * s.H * s.W;
          const float* wc = w + ch * s.kstride;
          float* yc = y + (n * s.CO + ch) * s.OH * s.OW;
          const float bv = bias ? bias[ch] : 0.f;
          for (int64_t t = 0; t < s.KH && t < kMaxTaps; ++t) tag[t] = -1;
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            float* __restrict yr = yc + oh * s.OW;
            if (s2 || (s.sw == 1 && s.KH * s.KW <= kMaxTaps)) {
              if (s2) DepthwiseRowS2(s, xc, wc, bv, oh, ws, tag, yr);
              else DepthwiseRowStride1(s, xc, wc, bv, oh, yr);
              if (c->activation() != fb::Activation::NONE)
                ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
              continue;
            }
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
                } else if (s.sw == 2) {
                  // Four outputs read the even lanes of eight inputs: two loads
                  // and a shuffle, while all eight lie inside the row.
                  const V4 w4 = V4{} + wv;
                  int64_t ow = lo;
                  for (; ow + 4 <= hi && 2 * ow + off + 8 <= s.W; ow += 4) {
                    const float* p = row + 2 * ow + off;
                    const V4 even = __builtin_shufflevector(Load4(p), Load4(p + 4), 0, 2, 4, 6);
                    Store4(yr + ow, Load4(yr + ow) + w4 * even);
                  }
                  for (; ow < hi; ++ow) yr[ow] += wv * row[2 * ow + off];
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * row[ow * s.sw + off];
                }
              }
            }
            if (c->activation() != fb::Activation::NONE)
              ActivateRow(c->activation(), yr, yr, uint64_t(s.OW), c->alpha(), c->beta());
          }
        }
      });
}

Shape ShapeOf(const fb::Graph* g, const fb::Conv2D* c) {
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  Shape s;
  s.N = Dim(xt, 0), s.C = Dim(xt, 1), s.H = Dim(xt, 2), s.W = Dim(xt, 3);
  s.CO = Dim(yt, 1), s.OH = Dim(yt, 2), s.OW = Dim(yt, 3);
  s.G = c->groups(), s.cig = s.C / s.G, s.cog = s.CO / s.G, s.nb = (s.cog + 7) / 8;
  s.KH = c->kernel_h(), s.KW = c->kernel_w(), s.sh = c->stride_h(), s.sw = c->stride_w();
  s.dh = c->dilation_h(), s.dw = c->dilation_w(), s.pt = c->pad_top(), s.pl = c->pad_left();
  s.kstride = s.KH * s.KW * 8;
  return s;
}

enum class Path { kDepthwise, kNarrow, kShift, kRowShift, kTransposed, kDense };

Path PathOf(const Shape& s) {
  if (s.cig == 1 && s.cog == 1) return Path::kDepthwise;
  if (NarrowApplies(s)) return Path::kNarrow;
  // One input channel into several: the depthwise band, filled once for all
  // of them (embedding_model's 1 -> 24 3x3 on 76x32: 44 -> 13 us).
  if (s.cig == 1 && BandApplies(s)) return Path::kDepthwise;
  if (ShiftApplies(s)) return Path::kShift;
  if (RowShiftApplies(s)) return Path::kRowShift;
  if (TransposedApplies(s)) return Path::kTransposed;
  return Path::kDense;
}

void RunTransposed(const Shape& s, const WLayout& L, const float* x, const float* w,
                   const float* bias, float* y, const fb::Conv2D* c, const Bindings& b) {
  if (b.work && PackedRingApplies(s)) return TransposedPacked(s, L, x, w, bias, y, c, b);
  Transposed(s, L, x, w, bias, y, c, b.par);
}

}  // namespace

uint64_t ConvWorkFloats(const fb::Graph* g, const fb::Conv2D* c, bool taps) {
  const Shape s = ShapeOf(g, c);
  if (PathOf(s) == Path::kDepthwise) {
    if (BandApplies(s)) return uint64_t(BandInputRows(s, BandRows(s)) * BandPitch(s));
    return S2Applies(s) ? S2RingFloats(s) : 0;
  }
  if (RowShiftApplies(s)) return EdgeWorkFloats(s);
  if (!taps && PathOf(s) == Path::kShift && ShiftPackApplies(s))
    return uint64_t(s.cig * kShiftPackStride);
  if (taps || PathOf(s) == Path::kTransposed) return PackedRingApplies(s) ? PackedRingFloats(s) : 0;
  if (PathOf(s) != Path::kDense) return 0;
  const int64_t K = s.cig * s.KH * s.KW;
  if (DenseRowsApplies(s)) return DenseRowsFloats(s);
  return uint64_t(K < kDenseKc ? K : kDenseKc) * uk::kNr2;
}

void RunConvTaps(const Bindings& b, const fb::Conv2D* c) {
  const Shape s = ShapeOf(b.graph->stream, c);
  if (RowShiftApplies(s))
    return RowShift(s, TapsLayout(s), b.ptr(c->input()), b.ptr(c->weights()),
                    c->has_bias() ? b.ptr(c->bias()) : nullptr, b.ptr(c->output()), c, b);
  RunTransposed(s, TapsLayout(s), b.ptr(c->input()), b.ptr(c->weights()),
                c->has_bias() ? b.ptr(c->bias()) : nullptr, b.ptr(c->output()), c, b);
}

void RunConv(const Bindings& b, const fb::Conv2D* c) {
  const Shape s = ShapeOf(b.graph->stream, c);
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  switch (PathOf(s)) {
    case Path::kDepthwise: return Depthwise(s, x, w, bias, y, c, b);
    case Path::kNarrow: return Narrow(s, x, w, bias, y, c);
    case Path::kShift: return ShiftedTaps(s, x, w, bias, y, c, b);
    case Path::kRowShift: return RowShift(s, BlockedLayout(s), x, w, bias, y, c, b);
    case Path::kTransposed: return RunTransposed(s, BlockedLayout(s), x, w, bias, y, c, b);
    case Path::kDense:
      if (b.work && DenseRowsApplies(s)) return DenseRows(s, x, w, bias, y, c, b);
      return Dense(s, x, w, bias, y, c, b);
  }
}

}  // namespace vnpu
}  // namespace epctx
