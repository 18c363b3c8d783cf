// SPDX-License-Identifier: Apache-2.0
// The vnpu "hardware": one loop nest per op of a validated command stream.
//
// Every index here stays inside the shapes that vnpu_validate.cc checked, so
// the loops need no bounds checks of their own except where a window reaches
// into padding. CONV2D lives in conv/ (one file per strategy). GEMM runs the micro-kernel
// library's block tile on its packed weights. Activations and binary
// ops pick a per-kind loop once per row, never a switch per element.
#include <cmath>
#include <cstring>

#include "epctx_uk/elementwise.h"
#include "epctx_uk/pool.h"
#include "epctx_uk/sgemm.h"
#include "conv/plan.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

using Act = fb::Activation;

struct Runner {
  const Bindings& b;
  const fb::Graph* g;
  const fb::Tensor* T(uint32_t i) const { return g->tensors()->Get(i); }

  void Gemm(const fb::Gemm* c, const OpPlan& p);
  void Binary(const fb::Binary* c);
  void Pool(const fb::Pool* c);
  void Softmax(const fb::Softmax* c);
  void Transpose(const fb::Transpose* c);
  void Concat(const fb::Concat* c, const OpPlan& p);
  void ScaleShift(const fb::ScaleShift* c);
};

// GEMM blocking: block tiles of 8 rows x 48 columns (each value loaded
// serves 8 rows or 48 columns) over K slices of GemmKc rows: with more
// than one row block, the micro-kernel library's BlockKc (B's block in L1
// while the row blocks sweep it); one row block reads B once whatever the
// slice, so slices of kGemmKc only bound the packing slot. With at least
// kGemmPackRows rows of a, each 48-column block's B slice is first copied
// from the weights' 8-wide strips into rows of 48 floats in the worker's
// workspace slot (one load a vector instead of two and a shuffle); fewer
// rows (decode-like shapes) read the strips in place. On AVX-512, long
// slices keep each strip's copy one long sequential read, which the
// hardware prefetcher streams from memory (slices of 256 rows made
// ViT-B/16 5% slower there; prefetching the next slice by hand, 6%).
constexpr int64_t kGemmKc = 1024;
constexpr int64_t kGemmPackRows = 16;

bool GemmPacks(int64_t M) { return M >= kGemmPackRows; }

// Columns [j0, j0 + nc) x rows [k0, k0 + kc) of the packed weights
// [ceil(N/8)][K][8] into dst[k][48] (strips side by side).
void PackGemmB(const float* w, int64_t K, int64_t j0, int64_t nc, int64_t k0, int64_t kc,
               float* dst) {
  const int64_t strips = (nc + 7) / 8;
  for (int64_t s = 0; s < strips; ++s) {
    const float* src = w + (j0 + s * 8) * K + k0 * 8;
    float* d = dst + s * 8;
    for (int64_t k = 0; k < kc; ++k) __builtin_memcpy(d + k * uk::kNr2, src + k * 8, 32);
  }
}

}  // namespace

int64_t GemmKc(const fb::Gemm* c) {
  const int64_t kc = int64_t(c->m()) > uk::kMr2 ? uk::BlockKc(uk::Isa::kAuto) : kGemmKc;
  return int64_t(c->k()) < kc ? int64_t(c->k()) : kc;
}

uint64_t GemmWorkFloats(const fb::Gemm* c) {
  if (!GemmPacks(static_cast<int64_t>(c->m()))) return 0;
  return uint64_t(GemmKc(c)) * uk::kNr2;
}

namespace {

// y = a[M x K] * w + bias on the micro-kernel library's block tile: w's
// packed layout [ceil(N/8)][K][8] is the tile's B strips (zero-padded to 8
// columns), read in place or packed per slice (above); GEMM_BLOCKED's
// [ceil(N/48)][K][48] is already the block tile's B, read in place (block
// j0 / 48 starts at float j0 * K, its rows as wide as its columns rounded up
// to 8). a is read in place as rows of A. Threads split the output by 48-column blocks, or by
// 8-row blocks when there are fewer column blocks than row blocks; each
// block is computed whole by one thread in the same K order, so the bytes
// do not depend on the split.
void Runner::Gemm(const fb::Gemm* c, const OpPlan& p) {
  static_assert(uk::kNr2 == layout::kGemmBlockCols, "GEMM_BLOCKED's blocks are block tiles");
  const bool blocked = p.strategy == Strategy::kGemmBlocked;
  const float* a = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const int64_t M = int64_t(c->m()), K = int64_t(c->k()), N = int64_t(c->n());
  const Act act = c->activation();
  const uk::TileFn tile = p.tile;
  uk::Tile base{};
  p.Epilogue(&base);
  const bool post = p.post;
  base.a_rs = K;
  base.a_ks = 1;
  base.ldc = N;
  const bool pack = p.strategy == Strategy::kGemmPacked;
  const int64_t kc = p.chunk_k;  // GemmKc: K's slices (0 only when K is 0)
  constexpr int64_t kRows = uk::kMr2, kCols = uk::kNr2;
  const int64_t col_blocks = (N + kCols - 1) / kCols, row_blocks = (M + kRows - 1) / kRows;
  const bool by_cols = col_blocks >= row_blocks;
  const int64_t units = by_cols ? col_blocks : row_blocks;
  const int64_t unit_work = by_cols ? M * K * kCols : kRows * K * N;
  ForRangeSlots(b.par, units, MinUnits(unit_work), [&](int64_t u0, int64_t u1, uint32_t slot) {
    uk::Tile t = base;
    float* buf = pack ? b.slot(slot) : nullptr;
    const int64_t j_lo = by_cols ? u0 * kCols : 0;
    const int64_t j_hi = by_cols ? (u1 * kCols < N ? u1 * kCols : N) : N;
    const int64_t m_lo = by_cols ? 0 : u0 * kRows;
    const int64_t m_hi = by_cols ? M : (u1 * kRows < M ? u1 * kRows : M);
    for (int64_t j0 = j_lo; j0 < j_hi; j0 += kCols) {
      t.cols = static_cast<int32_t>(N - j0 < kCols ? N - j0 : kCols);
      t.col_bias = bias ? bias + j0 : nullptr;
      for (int64_t k0 = 0; k0 < K; k0 += kc) {
        t.kc = K - k0 < kc ? K - k0 : kc;
        t.accumulate = k0 > 0;
        t.last = k0 + t.kc == K;
        if (blocked) {
          t.b_ss = 8;
          t.b_ks = (t.cols + 7) / 8 * 8;
          t.b = w + j0 * K + k0 * t.b_ks;
        } else if (buf) {
          PackGemmB(w, K, j0, t.cols, k0, t.kc, buf);
          t.b = buf;
          t.b_ss = 8;
          t.b_ks = kCols;
        } else {
          t.b = w + j0 * K + k0 * 8;  // strip j0 / 8 at row k0
          t.b_ss = K * 8;
          t.b_ks = 8;
        }
        for (int64_t m = m_lo; m < m_hi; m += kRows) {
          t.a = a + m * K + k0;
          t.rows = static_cast<int32_t>(M - m < kRows ? M - m : kRows);
          t.c = y + m * N + j0;
          tile(t);
        }
      }
    }
    if (post)
      ActivateRows(act, y + m_lo * N + j_lo, uint64_t(m_hi - m_lo), uint64_t(j_hi - j_lo),
                   uint64_t(N), c->alpha(), c->beta());
  });
}

// One output row of a Binary op. The op is a template argument so each
// (op, stride pattern) pair is its own tight loop; the contiguous and the
// scalar-operand cases are the ones elementwise chains such as hard-swish hit.

// T is float or V4 (GCC generic vector: lane-wise operators and ?:).
template <fb::BinaryKind K, typename T>
inline T BinOp(T a, T b) {
  switch (K) {
    case fb::BinaryKind::ADD: return a + b;
    case fb::BinaryKind::SUB: return a - b;
    case fb::BinaryKind::MUL: return a * b;
    case fb::BinaryKind::DIV: return a / b;
    case fb::BinaryKind::MAXIMUM: return a > b ? a : b;
    case fb::BinaryKind::MINIMUM: return a < b ? a : b;
  }
  return a;
}

// Contiguous and held-scalar operands go to the micro-kernel library's
// BinaryRow (vectors as wide as the CPU has); other strides lane by lane.
// Loads are done before the store of the same lanes, so y may equal a or b.
template <fb::BinaryKind K>
void BinRow(const float* a, const float* b, float* y, int64_t n, int64_t sa, int64_t sb) {
  if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (sa || sb)) {
    constexpr uk::Bin kUk = K == fb::BinaryKind::ADD       ? uk::Bin::kAdd
                            : K == fb::BinaryKind::SUB     ? uk::Bin::kSub
                            : K == fb::BinaryKind::MUL     ? uk::Bin::kMul
                            : K == fb::BinaryKind::DIV     ? uk::Bin::kDiv
                            : K == fb::BinaryKind::MAXIMUM ? uk::Bin::kMax
                                                           : uk::Bin::kMin;
    uk::BinaryRow(kUk, a, b, y, n, int(sa), int(sb));
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = BinOp<K>(a[i * sa], b[i * sb]);
}

using BinRowFn = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

BinRowFn PickBinRow(fb::BinaryKind k) {
  switch (k) {
    case fb::BinaryKind::ADD: return BinRow<fb::BinaryKind::ADD>;
    case fb::BinaryKind::SUB: return BinRow<fb::BinaryKind::SUB>;
    case fb::BinaryKind::MUL: return BinRow<fb::BinaryKind::MUL>;
    case fb::BinaryKind::DIV: return BinRow<fb::BinaryKind::DIV>;
    case fb::BinaryKind::MAXIMUM: return BinRow<fb::BinaryKind::MAXIMUM>;
    case fb::BinaryKind::MINIMUM: return BinRow<fb::BinaryKind::MINIMUM>;
  }
  return BinRow<fb::BinaryKind::ADD>;
}

void Runner::Binary(const fb::Binary* c) {
  const fb::Tensor* yt = T(c->output());
  const float* pa = b.ptr(c->a());
  const float* pb = b.ptr(c->b());
  float* y = b.ptr(c->output());
  const uint64_t total = Elements(yt);
  if (total == 0) return;
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  const BinRowFn row = PickBinRow(c->kind());
  if (r == 0) {
    row(pa, pb, y, 1, 1, 1);
    return;
  }
  // Walk the output row by row (last dimension innermost), carrying the
  // offsets of a and b with an odometer over the outer dimensions. Trailing
  // dimensions where a and b are both contiguous (or both a held scalar)
  // fold into one longer row.
  const auto* as = c->a_strides();
  const auto* bs = c->b_strides();
  int64_t inner = Dim(yt, r - 1);
  const int64_t sa = I64(as, r - 1), sb = I64(bs, r - 1);
  uint32_t outer_r = r - 1;
  while (outer_r > 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
    const uint32_t d = outer_r - 1;
    if (I64(as, d) != sa * inner || I64(bs, d) != sb * inner) break;
    inner *= Dim(yt, d);
    outer_r = d;
  }
  // Threads split the rows, and long rows into segments of kSegment; a run
  // starts its odometer from its first row's index.
  constexpr int64_t kSegment = 16384;
  const int64_t rows = int64_t(total) / inner;
  const int64_t segs = (inner + kSegment - 1) / kSegment;
  const int64_t seg_len = (inner + segs - 1) / segs;
  ForRange(b.par, rows * segs, MinUnits(seg_len), [&](int64_t u0, int64_t u1) {
    int64_t idx[8] = {0};
    int64_t oa = 0, ob = 0;
    int64_t rest = u0 / segs;
    for (int32_t d = int32_t(outer_r) - 1; d >= 0; --d) {
      idx[d] = rest % Dim(yt, d);
      rest /= Dim(yt, d);
      oa += idx[d] * I64(as, d);
      ob += idx[d] * I64(bs, d);
    }
    for (int64_t u = u0; u < u1;) {
      const int64_t rw = u / segs, s0 = u % segs;
      const int64_t s1 = segs - s0 < u1 - u ? segs : s0 + (u1 - u);
      const int64_t e0 = s0 * seg_len, e1 = s1 * seg_len < inner ? s1 * seg_len : inner;
      row(pa + oa + e0 * sa, pb + ob + e0 * sb, y + rw * inner + e0, e1 - e0, sa, sb);
      u += s1 - s0;
      if (s1 < segs) break;  // the run ends inside this row
      for (int32_t d = int32_t(outer_r) - 1; d >= 0; --d) {
        oa += I64(as, d);
        ob += I64(bs, d);
        if (++idx[d] < Dim(yt, d)) break;
        oa -= I64(as, d) * idx[d];
        ob -= I64(bs, d) * idx[d];
        idx[d] = 0;
      }
    }
  });
}

struct PoolWindow {
  int64_t H, W, OH, OW, KH, KW, sh, sw, pt, pl, hlim, wlim;
  bool count_include_pad;
};

// One channel of MAX_POOL (kMax) or AVG_POOL. Output columns whose window
// lies inside the row ([ow_lo, ow_hi)) of rows whose window lies inside the
// plane are one uk::PoolRow call per row; the rest clip per output. A NaN
// in a window makes the maximum NaN, the first one in tap order, as the CPU
// kernel does.
template <bool kMax>
void PoolPlane(const PoolWindow& p, const float* xc, float* yc) {
  const int64_t nt = p.KH * p.KW;
  int64_t ow_lo, ow_hi;
  PoolRowColumns(p.W, p.KW, p.sw, p.pl, p.OW, nt, &ow_lo, &ow_hi);
  const float* rows[kPoolRowTaps];
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* yr = yc + oh * p.OW;
    const int64_t h0 = oh * p.sh - p.pt;
    const bool row_inside = h0 >= 0 && h0 + p.KH <= p.H;
    int64_t ow = 0;
    auto clipped = [&](int64_t o) {
      int64_t a0 = h0, w0 = o * p.sw - p.pl;
      int64_t a1 = a0 + p.KH < p.hlim ? a0 + p.KH : p.hlim;
      int64_t w1 = w0 + p.KW < p.wlim ? w0 + p.KW : p.wlim;
      const int64_t padded = (a1 - a0) * (w1 - w0);
      a0 = a0 < 0 ? 0 : a0;
      w0 = w0 < 0 ? 0 : w0;
      a1 = a1 > p.H ? p.H : a1;
      w1 = w1 > p.W ? p.W : w1;
      float acc = kMax ? -INFINITY : 0.f;
      for (int64_t ih = a0; ih < a1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) {
          const float v = xc[ih * p.W + iw];
          if (!kMax) acc += v;
          else if (v > acc || (v != v && acc == acc)) acc = v;
        }
      if (!kMax) {
        const int64_t cnt = p.count_include_pad ? padded : (a1 - a0) * (w1 - w0);
        acc = cnt > 0 ? acc / float(cnt) : 0.f;
      }
      yr[o] = acc;
    };
    if (!row_inside || ow_hi <= ow_lo) {
      for (; ow < p.OW; ++ow) clipped(ow);
      continue;
    }
    for (; ow < ow_lo; ++ow) clipped(ow);
    const float* xr = xc + h0 * p.W + ow_lo * p.sw - p.pl;
    for (int64_t kh = 0; kh < p.KH; ++kh)
      for (int64_t kw = 0; kw < p.KW; ++kw) rows[kh * p.KW + kw] = xr + kh * p.W + kw;
    uk::PoolRow(kMax ? uk::PoolOp::kMax : uk::PoolOp::kAverage, rows, nt, p.sw, 1.f / float(nt),
                yr + ow_lo, ow_hi - ow_lo);
    for (ow = ow_hi; ow < p.OW; ++ow) clipped(ow);
  }
}

void Runner::Pool(const fb::Pool* c) {
  const fb::Tensor* xt = T(c->input());
  const fb::Tensor* yt = T(c->output());
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const int64_t NC = Dim(xt, 0) * Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t OH = Dim(yt, 2), OW = Dim(yt, 3);
  if (c->kind() == fb::PoolKind::GLOBAL_AVG) {
    // Eight running sums (two 4-lane vectors) per plane, not one scalar
    // chain: the chain's add latency was 15% of ocr_cls. Threads split the
    // planes.
    const int64_t HW = H * W;
    ForRange(b.par, NC, MinUnits(HW), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const float* xp = x + i * HW;
        V4 s0 = {}, s1 = {};
        int64_t j = 0;
        for (; j + 8 <= HW; j += 8) {
          s0 += Load4(xp + j);
          s1 += Load4(xp + j + 4);
        }
        s0 += s1;
        float s = (s0[0] + s0[1]) + (s0[2] + s0[3]);
        for (; j < HW; ++j) s += xp[j];
        y[i] = HW > 0 ? s / float(HW) : 0.f;
      }
    });
    return;
  }
  const int64_t KH = c->kernel_h(), KW = c->kernel_w(), sh = c->stride_h(), sw = c->stride_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  const int64_t hlim = H + c->pad_bottom(), wlim = W + c->pad_right();
  const PoolWindow pw{H, W, OH, OW, KH, KW, sh, sw, pt, pl, hlim, wlim, c->count_include_pad()};
  const bool max = c->kind() == fb::PoolKind::MAX_POOL;
  ForRange(b.par, NC, MinUnits(OH * OW * KH * KW), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      if (max) PoolPlane<true>(pw, x + i * H * W, y + i * OH * OW);
      else PoolPlane<false>(pw, x + i * H * W, y + i * OH * OW);
    }
  });
}

void Runner::Softmax(const fb::Softmax* c) {
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const uint64_t outer = c->outer(), n = c->axis(), inner = c->inner();
  if (inner == 1 && n > 0) {
    // Rows of the last axis (attention scores): vector rows, split by row.
    ForRange(b.par, int64_t(outer), MinUnits(int64_t(n) * 16), [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) uk::SoftmaxRow(x + o * n, y + o * n, int64_t(n));
    });
    return;
  }
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = 0; i < inner; ++i) {
      const float* xs = x + o * n * inner + i;
      float* ys = y + o * n * inner + i;
      float mx = -INFINITY;
      for (uint64_t k = 0; k < n; ++k) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
      float sum = 0.f;
      for (uint64_t k = 0; k < n; ++k) {
        const float e = expf(xs[k * inner] - mx);
        ys[k * inner] = e;
        sum += e;
      }
      for (uint64_t k = 0; k < n; ++k) ys[k * inner] /= sum;
    }
}

// The permutation is read once into output dims and input strides, dims of
// 1 dropped and neighbours that stay neighbours in the input merged. Then
// whole rows are copied when the last axis keeps its place (heads split or
// merged: [1, 197, 12, 64] -> [1, 12, 197, 64]), 16 x 16 tiles swap the last
// two axes when the input's contiguous axis ends up second to last (K^T),
// and otherwise each output row gathers with the input stride of its axis.
// Split by outer index, and tiles by bands of 16 rows.
void Runner::Transpose(const fb::Transpose* c) {
  const fb::Tensor* xt = T(c->input());
  const fb::Tensor* yt = T(c->output());
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const uint64_t total = Elements(yt);
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  if (total == 0) return;
  int64_t in_stride[8], od[8], st[8];
  int64_t s = 1;
  for (int32_t d = int32_t(r) - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= Dim(xt, uint32_t(d));
  }
  uint32_t n = 0;
  for (uint32_t d = 0; d < r; ++d) {
    const int64_t len = Dim(yt, d), str = in_stride[c->perm()->Get(d)];
    if (len == 1) continue;
    if (n > 0 && st[n - 1] == str * len) {
      od[n - 1] *= len;
      st[n - 1] = str;
    } else {
      od[n] = len;
      st[n] = str;
      ++n;
    }
  }
  if (n == 0 || (n == 1 && st[0] == 1)) {
    __builtin_memcpy(y, x, total * sizeof(float));
    return;
  }
  // Rows: the last axis (copied whole), or the last two (tiles).
  const bool rows = st[n - 1] == 1;
  const bool tiles = !rows && n >= 2 && st[n - 2] == 1;
  const uint32_t inner = tiles ? 2 : 1;
  const uint32_t outer_rank = n - inner;
  int64_t outer = 1;
  for (uint32_t d = 0; d < outer_rank; ++d) outer *= od[d];
  const int64_t block = int64_t(total) / outer;
  // Tiles go in bands of 16 output rows, so a single swap of two axes
  // (ConvNeXt's [C, H * W] <-> [H * W, C], outer 1) is split too.
  const int64_t R = tiles ? od[n - 2] : 1, bands = (R + 15) / 16;
  ForRange(b.par, outer * bands, MinUnits(block / bands), [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t o = u / bands;
      int64_t off = 0;
      for (int64_t t = o, d = int64_t(outer_rank) - 1; d >= 0; --d) {
        off += (t % od[d]) * st[d];
        t /= od[d];
      }
      float* yo = y + o * block;
      const float* xo = x + off;
      if (rows) {
        __builtin_memcpy(yo, xo, size_t(block) * sizeof(float));
      } else if (tiles) {
        // yo[i][j] = xo[i + j * sc]: i along the input's contiguous axis.
        const int64_t C = od[n - 1], sc = st[n - 1];
        const int64_t i0 = (u % bands) * 16, i1 = i0 + 16 < R ? i0 + 16 : R;
        for (int64_t j0 = 0; j0 < C; j0 += 16) {
          const int64_t j1 = j0 + 16 < C ? j0 + 16 : C;
          for (int64_t j = j0; j < j1; ++j)
            for (int64_t i = i0; i < i1; ++i) yo[i * C + j] = xo[i + j * sc];
        }
      } else {
        for (int64_t i = 0; i < block; ++i) yo[i] = xo[i * st[n - 1]];
      }
    }
  });
}

// Threads split the output's rows (outer) and long rows into segments of
// kConcatSegment floats; each piece copies the parts of the inputs it
// covers (DenseNet concatenates every earlier layer's features at each
// layer: serial, a 7x7 concat took twice as long on 2 threads as on 1,
// reading what the other core had just written).
void Runner::Concat(const fb::Concat* c, const OpPlan& p) {
  const fb::Tensor* yt = T(c->output());
  float* y = b.ptr(c->output());
  const uint32_t r = yt->shape()->size(), axis = c->axis();
  int64_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < axis; ++d) outer *= Dim(yt, d);
  for (uint32_t d = axis + 1; d < r; ++d) inner *= Dim(yt, d);
  const int64_t out_row = Dim(yt, axis) * inner;
  if (outer == 0 || out_row == 0) return;
  constexpr int64_t kConcatSegment = 16384;
  const int64_t segs = (out_row + kConcatSegment - 1) / kConcatSegment;
  const int64_t seg_len = (out_row + segs - 1) / segs;
  const uint32_t n = c->inputs()->size();
  ForRange(p.serial ? nullptr : b.par, outer * segs, MinUnits(seg_len),
           [&](int64_t u0, int64_t u1) {
             for (int64_t u = u0; u < u1; ++u) {
               const int64_t o = u / segs, e0 = (u % segs) * seg_len;
               const int64_t e1 = e0 + seg_len < out_row ? e0 + seg_len : out_row;
               // Input i covers output columns [col, col + row) of each outer row.
               int64_t col = 0;
               for (uint32_t i = 0; i < n && col < e1; ++i) {
                 const uint32_t t = c->inputs()->Get(i);
                 const int64_t row = Dim(T(t), axis) * inner;
                 const int64_t a = e0 > col ? e0 : col, z = e1 < col + row ? e1 : col + row;
                 if (a < z)
                   memmove(y + o * out_row + a, b.ptr(t) + o * row + (a - col), size_t(z - a) * 4);
                 col += row;
               }
             }
           });
}

void Runner::ScaleShift(const fb::ScaleShift* c) {
  const float* x = b.ptr(c->input());
  const float* sc = b.ptr(c->scale());
  const float* sh = b.ptr(c->shift());
  float* y = b.ptr(c->output());
  const uint64_t outer = c->outer(), C = c->channels(), inner = c->inner();
  // Four lanes at a time (a multiply, then an add: the same floats as one at
  // a time; the scalar loop was 1.2% of ocr_det's samples). Threads split
  // the planes (DenseNet's BatchNorm before every layer ran serially).
  ForRange(b.par, int64_t(outer * C), MinUnits(int64_t(inner)), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const uint64_t ch = uint64_t(p) % C, base = uint64_t(p) * inner;
      const V4 s4 = V4{} + sc[ch], h4 = V4{} + sh[ch];
      uint64_t i = 0;
      for (; i + 4 <= inner; i += 4) Store4(y + base + i, Load4(x + base + i) * s4 + h4);
      for (; i < inner; ++i) y[base + i] = x[base + i] * sc[ch] + sh[ch];
    }
  });
}

template <Act K>
inline float Activate(float v, float alpha, float beta) {
  switch (K) {
    case Act::NONE: return v;
    case Act::RELU: return v > 0.f ? v : 0.f;
    case Act::LEAKY_RELU: return v >= 0.f ? v : v * alpha;
    case Act::LEAKY_RELU_MAX: {
      const float l = v >= 0.f ? v : v * alpha;
      return l > beta ? l : beta;
    }
    case Act::CLIP: return v < alpha ? alpha : (v > beta ? beta : v);
    case Act::HARD_SIGMOID: {
      float h = alpha * v + beta;
      return h < 0.f ? 0.f : (h > 1.f ? 1.f : h);
    }
    case Act::TANH: return tanhf(v);
    case Act::SWISH: return v * (1.f / (1.f + expf(-v)));  // uk::Act::kSwish runs it
    case Act::HARD_SWISH: {
      // The ONNX ops' order and roundings: (x + 3) clipped, times x, / 6.
      float h = v + 3.f;
      h = h < 0.f ? 0.f : (h > 6.f ? 6.f : h);
      return v * h / 6.f * alpha + beta;
    }
    case Act::EXP: return expf(v);
    case Act::SQRT: return __builtin_sqrtf(v);
    case Act::RECIPROCAL: return 1.f / v;
    case Act::NEG: return -v;
    case Act::LOG: return logf(v);
    case Act::ABS: return __builtin_fabsf(v);
    case Act::POW:
      // The exponents exporters write, exactly as ONNX Pow computes them.
      if (alpha == 2.f) return v * v;
      if (alpha == 3.f) return v * v * v;
      if (alpha == 1.f) return v;
      if (alpha == 0.5f) return __builtin_sqrtf(v);
      return powf(v, alpha);
    case Act::ERF:   // uk::Act::kErf runs it
    case Act::GELU:  // uk::Act::kGelu
      break;
  }
  return v;
}

template <Act K>
void ActRow(const float* x, float* y, uint64_t n, float alpha, float beta) {
  for (uint64_t i = 0; i < n; ++i) y[i] = Activate<K>(x[i], alpha, beta);
}

// RELU, LEAKY_RELU(_MAX), CLIP, HARD_SWISH and SIGMOID run in the
// micro-kernel library, as wide as the CPU has (the scalar Activate above
// does the same operations for the first four). False for the others.
bool UkAct(Act kind, uk::Act* out) {
  switch (kind) {
    case Act::RELU: *out = uk::Act::kRelu; return true;
    case Act::LEAKY_RELU: *out = uk::Act::kLeaky; return true;
    case Act::LEAKY_RELU_MAX: *out = uk::Act::kLeakyMax; return true;
    case Act::CLIP: *out = uk::Act::kClip; return true;
    case Act::HARD_SWISH: *out = uk::Act::kHardSwish; return true;
    case Act::SIGMOID: *out = uk::Act::kSigmoid; return true;
    case Act::HARD_SIGMOID: *out = uk::Act::kHardSigmoid; return true;
    case Act::SWISH: *out = uk::Act::kSwish; return true;
    case Act::GELU: *out = uk::Act::kGelu; return true;
    case Act::ERF: *out = uk::Act::kErf; return true;
    default: return false;
  }
}

}  // namespace

void ActivateRow(Act kind, const float* x, float* y, uint64_t n, float alpha, float beta) {
  uk::Act k;
  if (UkAct(kind, &k)) return uk::ActivateRow(k, x, y, int64_t(n), alpha, beta);
  switch (kind) {
    case Act::TANH: return ActRow<Act::TANH>(x, y, n, alpha, beta);
    case Act::EXP: return ActRow<Act::EXP>(x, y, n, alpha, beta);
    case Act::SQRT: return ActRow<Act::SQRT>(x, y, n, alpha, beta);
    case Act::RECIPROCAL: return ActRow<Act::RECIPROCAL>(x, y, n, alpha, beta);
    case Act::NEG: return ActRow<Act::NEG>(x, y, n, alpha, beta);
    case Act::LOG: return ActRow<Act::LOG>(x, y, n, alpha, beta);
    case Act::ABS: return ActRow<Act::ABS>(x, y, n, alpha, beta);
    case Act::POW: return ActRow<Act::POW>(x, y, n, alpha, beta);
    default:  // NONE
      if (x != y && n > 0) memmove(y, x, n * 4);
  }
}

void ActivateRows(Act kind, float* y, uint64_t rows, uint64_t n, uint64_t ld, float alpha,
                  float beta) {
  uk::Act k;
  // uk::ActivateRows leaves out erf (no convolution fuses it).
  if (UkAct(kind, &k) && k != uk::Act::kErf)
    return uk::ActivateRows(k, y, int64_t(rows), int64_t(n), int64_t(ld), alpha, beta);
  if (kind == Act::NONE) return;
  for (uint64_t r = 0; r < rows; ++r) ActivateRow(kind, y + r * ld, y + r * ld, n, alpha, beta);
}

bool FusedAct(fb::Activation kind, float alpha, float beta, uk::Tile* t) {
  t->leaky = false;
  if (FusedClamp(kind, alpha, beta, &t->lo, &t->hi)) return true;
  if (kind != fb::Activation::LEAKY_RELU_MAX || !(alpha > 0.0f && alpha <= 1.0f)) return false;
  t->leaky = true;
  t->slope = alpha;
  t->lo = beta;
  t->hi = __builtin_inff();
  return true;
}

float* Bindings::ptr(uint32_t t) const {
  const fb::Tensor* ten = graph->stream->tensors()->Get(t);
  switch (ten->location()) {
    case fb::Location::INPUT: return static_cast<float*>(inputs[ten->index()].data);
    case fb::Location::OUTPUT: return static_cast<float*>(outputs[ten->index()].data);
    case fb::Location::ARENA: return reinterpret_cast<float*>(scratch + ten->offset());
    case fb::Location::WEIGHT:
      if (graph->widened && graph->widened[t]) return graph->widened[t];
      // Read-only by validation: no op writes a WEIGHT tensor.
      return const_cast<float*>(
          reinterpret_cast<const float*>(graph->ctx->weights + ten->offset()));
  }
  return nullptr;
}

int RunGraph(const Bindings& b, Msg& msg) {
  const fb::Graph* g = b.graph->stream;
  if (!g->ops()) return EPCTX_OK;
  Runner r{b, g};
  for (uint32_t i = 0; i < g->ops()->size(); ++i) {
    const fb::Op* o = g->ops()->Get(i);
    const OpPlan& p = b.graph->plans[i];
    switch (o->params_type()) {
      case fb::OpParams::Conv2D: RunConv(b, o->params_as_Conv2D(), p, false); break;
      case fb::OpParams::Conv2DTaps: RunConv(b, o->params_as_Conv2DTaps(), p, true); break;
      case fb::OpParams::Gemm: r.Gemm(o->params_as_Gemm(), p); break;
      case fb::OpParams::GemmBlocked: r.Gemm(o->params_as_GemmBlocked(), p); break;
      case fb::OpParams::Binary: r.Binary(o->params_as_Binary()); break;
      case fb::OpParams::Unary: {
        const fb::Unary* c = o->params_as_Unary();
        const float* x = b.ptr(c->input());
        float* y = b.ptr(c->output());
        // Threads split the elements (runs of at least 64k).
        ForRange(b.par, int64_t(Elements(r.T(c->input()))), int64_t{1} << 16,
                 [&](int64_t lo, int64_t hi) {
                   ActivateRow(c->kind(), x + lo, y + lo, uint64_t(hi - lo), c->alpha(), c->beta());
                 });
        break;
      }
      case fb::OpParams::Pool: r.Pool(o->params_as_Pool()); break;
      case fb::OpParams::Softmax: r.Softmax(o->params_as_Softmax()); break;
      case fb::OpParams::Transpose: r.Transpose(o->params_as_Transpose()); break;
      case fb::OpParams::Concat: r.Concat(o->params_as_Concat(), p); break;
      case fb::OpParams::Copy: {
        const fb::Copy* c = o->params_as_Copy();
        const uint64_t n = Elements(r.T(c->input()));
        if (n > 0) memmove(b.ptr(c->output()), b.ptr(c->input()), n * ElementSize(r.T(c->input())));
        break;
      }
      case fb::OpParams::ScaleShift: r.ScaleShift(o->params_as_ScaleShift()); break;
      case fb::OpParams::Convert: RunConvert(b, o->params_as_Convert()); break;
      case fb::OpParams::ConvTranspose2D: {
        const fb::ConvTranspose2D* c = o->params_as_ConvTranspose2D();
        if (p.strategy == Strategy::kDeconvPair) {  // planned: op i + 1 is the second
          RunConvTransposePair(b, c, g->ops()->Get(i + 1)->params_as_ConvTranspose2D(), p,
                               b.graph->plans[i + 1]);
          ++i;
          break;
        }
        RunConvTranspose(b, c, p);
        break;
      }
      default:
        if (RunInt8(b, o, p) || RunTransformer(b, o, p)) break;
        msg.s("vnpu: graph '").s(b.graph->name).s("' op ").u(i).s(": unknown op type");
        return EPCTX_EP_FAIL;
    }
  }
  return EPCTX_OK;
}

}  // namespace vnpu
}  // namespace epctx
