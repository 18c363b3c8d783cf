// SPDX-License-Identifier: Apache-2.0
// The int8 micro-kernels (ukernels/ qgemm.h): every kernel this CPU has
// (AVX2 and AVX-512 VNNI on x86-64 where present, and the portable one
// everywhere)
// against a plain reference on shapes off the 8 x 48 tile: K not a multiple
// of 4 (the tail group), UINT8 weights (the XOR), dot products of any
// length, requantisation with NaN, infinite and huge multipliers, and the
// im2col packer over strides, pads, dilations and partial panels, and the
// depthwise plane over windows, strides and dilations. Equal
// integers are required, and equal bytes after requantisation.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "epctx_uk/qconv.h"
#include "epctx_uk/qgemm.h"

namespace {

namespace uk = epctx::uk;
using uk::kQCols;

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = uint8_t(rng());
  return v;
}

// Portable, AVX2 (its own tile wherever the CPU has AVX2, VNNI or not) and
// whatever kAuto picks (AVX-512 VNNI, when present).
std::vector<uk::Isa> Isas() {
  std::vector<uk::Isa> v{uk::Isa::kPortable};
  if (uk::IsaAvailable(uk::Isa::kAvx2)) v.push_back(uk::Isa::kAvx2);
  if (uk::QHasVnni()) v.push_back(uk::Isa::kAuto);
  return v;
}

// Panel of groups x 48 columns from column-major bytes col[q][k] (k < K).
std::vector<uint8_t> Panel(const std::vector<uint8_t>& col, int64_t K) {
  const int64_t groups = (K + 3) / 4;
  std::vector<uint8_t> p(size_t(groups * kQCols * 4), 0);
  for (int64_t q = 0; q < kQCols; ++q)
    for (int64_t k = 0; k < K; ++k)
      p[size_t(((k / 4) * kQCols + q) * 4 + k % 4)] = col[size_t(q * K + k)];
  return p;
}

void tile_matches_reference_with_tails_and_flips(void**) {
  for (uk::Isa isa : Isas()) {
    const uk::QTileFn tile = uk::QTileKernel(isa);
    for (int64_t K : {1, 3, 4, 5, 16, 27, 64, 147, 256, 257, 290, 1027}) {
      for (int32_t rows = 1; rows <= uk::kQRows; ++rows) {
        for (uint8_t wflip : {uint8_t(0), uint8_t(0x80)}) {
          const uint32_t seed = uint32_t(K * 131 + rows * 7 + wflip);
          // The weight buffer ends exactly at the last row's K-th byte.
          std::vector<uint8_t> w = Bytes(size_t(rows * K), seed);
          std::vector<uint8_t> col = Bytes(size_t(kQCols * K), seed + 1);
          // Extremes where pairs of products leave int16 (vpmaddubsw would
          // saturate them): activations 255 against weights -128 (row 1)
          // and 127 (row 2); row 3 alternates -128 and 127 against 0 and 255.
          for (int64_t k = 0; k < K; ++k) {
            const uint8_t lo = uint8_t(0x80 ^ wflip), hi = uint8_t(0x7f ^ wflip);
            if (rows > 1) w[size_t(K + k)] = lo;
            if (rows > 2) w[size_t(2 * K + k)] = hi;
            if (rows > 3) w[size_t(3 * K + k)] = k % 2 ? lo : hi;
            for (int64_t q = 0; q < kQCols; q += 3) col[size_t(q * K + k)] = 255;
            col[size_t(K + k)] = k % 2 ? 0 : 255;
          }
          const std::vector<uint8_t> panel = Panel(col, K);
          std::vector<uint32_t> tail(size_t(rows), 0);
          for (int32_t r = 0; r < rows; ++r)
            memcpy(&tail[size_t(r)], w.data() + r * K + K / 4 * 4, size_t(K % 4));
          std::vector<int32_t> out(size_t(rows * kQCols), -7);
          tile(uk::QTile{w.data(), K, K / 4, K % 4 ? tail.data() : nullptr, wflip, panel.data(),
                         out.data(), rows});
          for (int32_t r = 0; r < rows; ++r)
            for (int64_t q = 0; q < kQCols; ++q) {
              int32_t want = 0;
              for (int64_t k = 0; k < K; ++k)
                want += int32_t(int8_t(uint8_t(w[size_t(r * K + k)] ^ wflip))) *
                        int32_t(col[size_t(q * K + k)]);
              if (out[size_t(r * kQCols + q)] != want)
                fail_msg("%s K %lld rows %d flip %d: [%d][%lld] %d, want %d", uk::IsaName(isa),
                         (long long)K, rows, wflip, r, (long long)q, out[size_t(r * kQCols + q)],
                         want);
            }
        }
      }
    }
  }
}

void dot_matches_reference_at_every_length(void**) {
  for (uk::Isa isa : Isas()) {
    const uk::QDotFn dot = uk::QDotKernel(isa);
    for (int64_t K : {1, 7, 63, 64, 65, 200}) {
      for (int64_t n : {1, 3, 4, 9}) {
        for (uint8_t wflip : {uint8_t(0), uint8_t(0x80)}) {
          const std::vector<uint8_t> a = Bytes(size_t(K), uint32_t(K + n));
          const std::vector<uint8_t> w = Bytes(size_t(n * K), uint32_t(K * n + 5));
          std::vector<int32_t> out(size_t(n), -7);
          dot(uk::QDot{a.data(), w.data(), K, K, wflip, out.data(), n});
          for (int64_t j = 0; j < n; ++j) {
            int32_t want = 0;
            for (int64_t k = 0; k < K; ++k)
              want +=
                  int32_t(a[size_t(k)]) * int32_t(int8_t(uint8_t(w[size_t(j * K + k)] ^ wflip)));
            assert_int_equal(out[size_t(j)], want);
          }
        }
      }
    }
  }
}

// The vnpu reference's requantisation (vnpu_quant.h), written out.
uint8_t RefRequant(int32_t acc, float m, int32_t zp, int32_t lo, int32_t hi) {
  float v = float(acc) * m;
  const float flo = float(lo - zp), fhi = float(hi - zp);
  if (!(v >= flo)) v = flo;
  if (!(v <= fhi)) v = fhi;
  return uint8_t(int32_t(std::nearbyint(v)) + zp);
}

void requant_matches_reference_with_nan_and_huge_multipliers(void**) {
  const float kMult[] = {0.0123f,
                         1e-6f,
                         3.5f,
                         1e30f,
                         -2.0f,
                         std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity(),
                         0.5f};
  for (uk::Isa isa : Isas()) {
    const uk::QRequantFn rq = uk::QRequantKernel(isa);
    std::mt19937 rng(3);
    for (int32_t cols : {1, 15, 16, 17, 47, 48}) {
      for (int wzc : {0, 5}) {
        std::vector<int32_t> raw(size_t(8 * kQCols)), colsum(kQCols), rowc(8);
        for (int32_t& v : raw) v = int32_t(rng() % 200001) - 100000;
        for (int32_t& v : colsum) v = int32_t(rng() % 4000);
        for (int32_t& v : rowc) v = int32_t(rng() % 20001) - 10000;
        // Row 7 holds the float-rounding ties: acc * 0.5 = k + 0.5.
        for (int32_t q = 0; q < kQCols; ++q) raw[size_t(7 * kQCols + q)] = 2 * q + 1 - rowc[7];
        for (int32_t zp : {0, 128, -3}) {
          const int32_t lo = zp == -3 ? -128 : 0, hi = zp == -3 ? 127 : 255;
          std::vector<uint8_t> y(size_t(8 * 64), 0xee);
          rq(uk::QRequant{raw.data(), 8, cols, wzc ? colsum.data() : nullptr, wzc, rowc.data(),
                          kMult, zp, lo, hi, y.data(), 64});
          for (int32_t r = 0; r < 8; ++r) {
            for (int32_t c = 0; c < 64; ++c) {
              const uint8_t got = y[size_t(r * 64 + c)];
              if (c >= cols) {
                assert_int_equal(got, 0xee);  // nothing past cols
                continue;
              }
              const int32_t acc =
                  int32_t(uint32_t(raw[size_t(r * kQCols + c)]) + uint32_t(rowc[size_t(r)]) -
                          uint32_t(wzc) * uint32_t(wzc ? colsum[size_t(c)] : 0));
              const uint8_t want = RefRequant(acc, kMult[r], zp, lo, hi);
              if (got != want)
                fail_msg("%s cols %d zp %d [%d][%d]: %d, want %d", uk::IsaName(isa), cols, zp, r, c,
                         got, want);
            }
          }
        }
      }
    }
  }
}

struct Geo {
  int64_t C, H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
};

void pack_matches_im2col_on_every_geometry(void**) {
  const Geo kGeos[] = {
      {3, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  {2, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {3, 12, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, {1, 20, 60, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3},
      {2, 10, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},  {5, 4, 70, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2},
      {1, 5, 5, 3, 3, 1, 3, 1, 1, 0, 4, 0, 4},   {3, 3, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
  };
  for (uk::Isa isa : Isas()) {
    for (const Geo& g : kGeos) {
      const uk::QPackFn pack = uk::QPackKernel(isa, g.KW, g.sw);
      const int64_t OH = (g.H + g.pt + g.pb - g.dh * (g.KH - 1) - 1) / g.sh + 1;
      const int64_t OW = (g.W + g.pl + g.pr - g.dw * (g.KW - 1) - 1) / g.sw + 1;
      const int64_t K = g.C * g.KH * g.KW, P = OH * OW, groups = (K + 3) / 4;
      const std::vector<uint8_t> x = Bytes(size_t(g.C * g.H * g.W), uint32_t(K + P));
      for (uint8_t xflip : {uint8_t(0), uint8_t(0x80)}) {
        const uint8_t pad = 0x5a;
        for (int64_t p0 = 0; p0 < P; p0 += kQCols) {
          const int64_t cols = P - p0 < kQCols ? P - p0 : kQCols;
          std::vector<uint8_t> panel(size_t(groups * kQCols * 4), 0xee);
          std::vector<uint64_t> scratch(size_t(uk::kQPackScratch) / 8);
          pack(uk::QConvPanel{x.data(), g.H, g.W, OW, g.KH, g.KW, g.sh, g.sw, g.dh, g.dw, g.pt,
                              g.pl, K, p0, cols, pad, xflip, panel.data(), scratch.data()});
          for (int64_t k = 0; k < groups * 4; ++k)
            for (int64_t q = 0; q < cols; ++q) {
              uint8_t want = 0;
              if (k < K) {
                const int64_t ic = k / (g.KH * g.KW), t = k % (g.KH * g.KW);
                const int64_t oh = (p0 + q) / OW, ow = (p0 + q) % OW;
                const int64_t ih = oh * g.sh - g.pt + t / g.KW * g.dh;
                const int64_t iw = ow * g.sw - g.pl + t % g.KW * g.dw;
                const bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
                want = uint8_t((in ? x[size_t((ic * g.H + ih) * g.W + iw)] : pad) ^ xflip);
              }
              const uint8_t got = panel[size_t(((k / 4) * kQCols + q) * 4 + k % 4)];
              if (got != want)
                fail_msg("%s geometry C%lld H%lld W%lld k%lldx%lld s%lld: p0 %lld k %lld q %lld: "
                         "%d, want %d",
                         uk::IsaName(isa), (long long)g.C, (long long)g.H, (long long)g.W,
                         (long long)g.KH, (long long)g.KW, (long long)g.sw, (long long)p0,
                         (long long)k, (long long)q, got, want);
            }
        }
      }
    }
  }
}

void depthwise_plane_matches_reference(void**) {
  struct Dw {
    int32_t KH, KW, sh, sw, dh, dw;
    int64_t OH, OW;
  };
  const Dw kCases[] = {
      {3, 3, 1, 1, 1, 1, 5, 17}, {3, 3, 2, 2, 1, 1, 4, 33}, {5, 5, 1, 1, 1, 1, 3, 16},
      {5, 5, 2, 2, 1, 1, 2, 7},  {7, 7, 1, 1, 2, 2, 2, 20}, {1, 8, 1, 2, 1, 3, 2, 9},
      {3, 1, 3, 1, 1, 1, 3, 1},  {2, 2, 1, 3, 1, 1, 2, 9},  {3, 3, 2, 2, 1, 1, 3, 8}};
  for (uk::Isa isa : Isas()) {
    const uk::QDwFn dw = uk::QDwKernel(isa);
    for (const Dw& c : kCases) {
      assert_true(uk::QDwFits(c.KH, c.KW, c.sw, c.dw));
      const int64_t rows = (c.OH - 1) * c.sh + (c.KH - 1) * c.dh + 1;
      const int64_t pitch = (c.OW - 1) * c.sw + (c.KW - 1) * c.dw + 1 + 64;
      const std::vector<uint8_t> x = Bytes(size_t(rows * pitch), uint32_t(c.OW * 7 + c.KH));
      const std::vector<uint8_t> wb = Bytes(size_t(c.KH * c.KW), uint32_t(c.OH));
      std::vector<int8_t> w(wb.size());
      for (size_t i = 0; i < wb.size(); ++i) w[i] = int8_t(wb[i]);
      std::vector<int32_t> out(size_t(c.OH * c.OW + 16), -7);
      dw(uk::QDwPlane{x.data(), pitch, w.data(), c.KH, c.KW, c.sh, c.sw, c.dh, c.dw, c.OH, c.OW,
                      out.data()});
      for (int64_t oh = 0; oh < c.OH; ++oh)
        for (int64_t ow = 0; ow < c.OW; ++ow) {
          int32_t want = 0;
          for (int32_t kh = 0; kh < c.KH; ++kh)
            for (int32_t kw = 0; kw < c.KW; ++kw)
              want += int32_t(w[size_t(kh * c.KW + kw)]) *
                      int32_t(x[size_t((oh * c.sh + kh * c.dh) * pitch + ow * c.sw + kw * c.dw)]);
          if (out[size_t(oh * c.OW + ow)] != want)
            fail_msg("%s %dx%d s%d d%d: [%lld][%lld] %d, want %d", uk::IsaName(isa), c.KH, c.KW,
                     c.sw, c.dw, (long long)oh, (long long)ow, out[size_t(oh * c.OW + ow)], want);
        }
      for (size_t i = size_t(c.OH * c.OW); i < out.size(); ++i) assert_int_equal(out[i], -7);
    }
  }
}

// The vnpu reference's QBINARY element, written out (no fused multiply-add:
// this file is compiled as the kernels are, see CMakeLists.txt).
uint8_t RefBinary(const uk::QBinaryRow& r, int64_t i) {
  const uint8_t ba = r.a[r.a_one ? 0 : i], bb = r.b[r.b_one ? 0 : i];
  const int32_t qa = r.is_signed ? int32_t(int8_t(ba)) : int32_t(ba);
  const int32_t qb = r.is_signed ? int32_t(int8_t(bb)) : int32_t(bb);
  const float va = float(qa - r.az) * r.as;
  const float vb = float(qb - r.bz) * r.bs;
  float v = (r.mul ? va * vb : va + vb) / r.ys;
  const float flo = float(r.lo - r.yz), fhi = float(r.hi - r.yz);
  if (!(v >= flo)) v = flo;
  if (!(v <= fhi)) v = fhi;
  return uint8_t(int32_t(std::nearbyint(v)) + r.yz);
}

void binary_rows_match_reference(void**) {
  for (uk::Isa isa : Isas()) {
    const uk::QBinaryFn bin = uk::QBinaryKernel(isa);
    for (int64_t n : {1, 15, 16, 17, 100}) {
      for (int kind = 0; kind < 16; ++kind) {
        const bool is_signed = kind & 1, mul = kind & 2, a_one = kind & 4, b_one = kind & 8;
        const std::vector<uint8_t> a = Bytes(size_t(n), uint32_t(n + kind));
        const std::vector<uint8_t> b = Bytes(size_t(n), uint32_t(n * 3 + kind));
        std::vector<uint8_t> y(size_t(n) + 16, 0xee);
        const uk::QBinaryRow r{a.data(),
                               b.data(),
                               y.data(),
                               n,
                               is_signed,
                               mul,
                               a_one,
                               b_one,
                               0.05f,
                               0.0371f,
                               mul ? 0.9f : 0.083f,
                               is_signed ? -5 : 120,
                               is_signed ? 3 : 128,
                               is_signed ? -2 : 131,
                               is_signed ? -128 : 0,
                               is_signed ? 127 : 255};
        bin(r);
        for (int64_t i = 0; i < n; ++i)
          if (y[size_t(i)] != RefBinary(r, i))
            fail_msg("%s n %lld kind %d [%lld]: %d, want %d", uk::IsaName(isa), (long long)n, kind,
                     (long long)i, y[size_t(i)], RefBinary(r, i));
        for (size_t i = size_t(n); i < y.size(); ++i) assert_int_equal(y[i], 0xee);
      }
    }
  }
}

void lut_quantize_dequantize_rows_match_reference(void**) {
  std::vector<uint8_t> table = Bytes(256, 77);
  for (uk::Isa isa : Isas()) {
    const uk::QLutFn lut = uk::QLutKernel(isa);
    const uk::QuantizeFn quant = uk::QuantizeKernel(isa);
    const uk::DequantizeFn deq = uk::DequantizeKernel(isa);
    for (int64_t n : {1, 16, 63, 64, 65, 300}) {
      const std::vector<uint8_t> x = Bytes(size_t(n), uint32_t(n));
      std::vector<uint8_t> y(size_t(n) + 64, 0xee);
      lut(x.data(), table.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) assert_int_equal(y[size_t(i)], table[x[size_t(i)]]);
      for (size_t i = size_t(n); i < y.size(); ++i) assert_int_equal(y[i], 0xee);

      std::vector<float> f(static_cast<size_t>(n));
      std::mt19937 rng(static_cast<uint32_t>(n));
      for (int64_t i = 0; i < n; ++i)
        f[size_t(i)] = i % 7 == 3    ? std::numeric_limits<float>::quiet_NaN()
                       : i % 11 == 5 ? 0.5f * float(i % 9) * 0.02f  // ties at scale 0.02
                                     : float(int32_t(rng() % 20001) - 10000) * 0.001f;
      for (int dt = 0; dt < 2; ++dt) {
        const int32_t zp = dt ? -3 : 128, lo = dt ? -128 : 0, hi = dt ? 127 : 255;
        std::fill(y.begin(), y.end(), 0xee);
        quant(f.data(), n, 0.02f, zp, lo, hi, y.data());
        for (int64_t i = 0; i < n; ++i) {
          float v = f[size_t(i)] / 0.02f;
          if (!(v >= float(lo - zp))) v = float(lo - zp);
          if (!(v <= float(hi - zp))) v = float(hi - zp);
          assert_int_equal(y[size_t(i)], uint8_t(int32_t(std::nearbyint(v)) + zp));
        }
        for (size_t i = size_t(n); i < y.size(); ++i) assert_int_equal(y[i], 0xee);
        std::vector<float> back(size_t(n) + 16, -1.0f);
        deq(x.data(), n, dt == 1, zp, 0.37f, back.data());
        for (int64_t i = 0; i < n; ++i) {
          const int32_t q = dt ? int32_t(int8_t(x[size_t(i)])) : int32_t(x[size_t(i)]);
          assert_true(back[size_t(i)] == float(q - zp) * 0.37f);
        }
        for (size_t i = size_t(n); i < back.size(); ++i) assert_true(back[i] == -1.0f);
      }
    }
  }
}

}  // namespace

// QConvRun's units are the same work however a caller cuts them (as
// threads do): on a map of few blocks (7x7: one block; 2 images of 3x5: 2)
// with many output channels, the units are runs of each block's 8-row
// tiles, and one call over all units, one call per unit and every two-call
// split give the same bytes (a run that starts a call packs its block's
// panel itself), with every ISA's kernels the portable kernels' bytes.
// Activations and weights include runs of 255 x -128 and 255 x 127.
void conv_units_give_the_same_bytes_however_cut(void**) {
  struct G {
    int64_t N, C, H, W, CO;
  } const cases[] = {{1, 5, 7, 7, 44}, {2, 3, 3, 5, 30}, {1, 4, 9, 9, 8}};
  for (const G& g : cases) {
    uk::QConvJob j{};
    const int64_t K = g.C * 9;
    std::vector<uint8_t> x(size_t(g.N * g.C * g.H * g.W)), w(size_t(g.CO * K));
    for (size_t i = 0; i < x.size(); ++i) x[i] = i % 5 < 2 ? 255 : uint8_t(i * 29 + 7);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = i % 7 < 3 ? uint8_t(i % 2 ? 0x80 : 0x7f) : uint8_t(i * 53 + 3);
    std::vector<int32_t> wsum(size_t(g.CO)), bias(size_t(g.CO));
    std::vector<float> mult(size_t(g.CO));
    uk::QWeightSums(w.data(), g.CO, K, 0, wsum.data());
    for (int64_t c = 0; c < g.CO; ++c) {
      bias[size_t(c)] = int32_t(c * 31 - 400);
      mult[size_t(c)] = 0.001f * float(c + 1);
    }
    j.x = x.data();
    j.w = w.data();
    j.N = g.N, j.C = g.C, j.H = g.H, j.W = g.W, j.CO = g.CO, j.OH = g.H, j.OW = g.W, j.G = 1;
    j.KH = j.KW = 3, j.sh = j.sw = j.dh = j.dw = 1, j.pt = j.pl = 1;
    j.wsum = wsum.data();
    j.xz = 9, j.wz = 0;
    j.bias = bias.data();
    j.mult = mult.data();
    j.zp = 3, j.lo = 0, j.hi = 255;
    const int64_t units = uk::QConvUnits(j);
    const int64_t blocks = g.N * ((g.H * g.W + uk::kQCols - 1) / uk::kQCols);
    assert_true(units >= blocks);
    // Each call gets a workspace of its own, filled with junk, as a thread's.
    std::vector<uint64_t> work((uk::QConvWorkBytes(j) + 7) / 8 + 8);
    void* wk =
        reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(work.data()) + 63) & ~uintptr_t(63));
    const auto fresh = [&]() {
      std::fill(work.begin(), work.end(), 0x5a5a5a5a5a5a5a5aull);
      return wk;
    };
    const size_t ny = size_t(g.N * g.CO * g.H * g.W);
    std::vector<uint8_t> portable(ny, 0xee);
    for (uk::Isa isa : Isas()) {
      j.tile = uk::QTileKernel(isa);
      j.pack = uk::QPackKernel(isa, 3, 1);
      j.requant = uk::QRequantKernel(isa);
      std::vector<uint8_t> whole(ny, 0xee);
      j.y = whole.data();
      uk::QConvRun(j, 0, units, fresh());
      if (isa == uk::Isa::kPortable) portable = whole;
      assert_memory_equal(whole.data(), portable.data(), ny);
      std::vector<uint8_t> one(ny, 0xee);
      j.y = one.data();
      for (int64_t u = 0; u < units; ++u) uk::QConvRun(j, u, u + 1, fresh());
      assert_memory_equal(whole.data(), one.data(), ny);
      for (int64_t k = 1; k < units; ++k) {
        std::vector<uint8_t> two(ny, 0xee);
        j.y = two.data();
        uk::QConvRun(j, 0, k, fresh());
        uk::QConvRun(j, k, units, fresh());
        assert_memory_equal(whole.data(), two.data(), ny);
      }
    }
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tile_matches_reference_with_tails_and_flips),
      cmocka_unit_test(dot_matches_reference_at_every_length),
      cmocka_unit_test(requant_matches_reference_with_nan_and_huge_multipliers),
      cmocka_unit_test(pack_matches_im2col_on_every_geometry),
      cmocka_unit_test(depthwise_plane_matches_reference),
      cmocka_unit_test(binary_rows_match_reference),
      cmocka_unit_test(lut_quantize_dequantize_rows_match_reference),
      cmocka_unit_test(conv_units_give_the_same_bytes_however_cut),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
