// SPDX-License-Identifier: Apache-2.0
// Measures epctx's packed SGEMM (runtime/ukernels) against XNNPACK's
// fully-connected f32 operator (Debian's libxnnpack-dev) on the GEMM shapes
// the real models' convolutions and Gemms make, one thread each, alternating
// rounds, and prints GFLOP/s per shape and the ratio. This is the measurement
// behind the decision recorded in tests/bench/README.md ("XNNPACK").
//
// usage: xnnpack_sgemm [--rounds N] [--round-ms MS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <xnnpack.h>

#include "epctx_uk/sgemm.h"

namespace {

struct Shape {
  const char* what;
  int64_t M, N, K;  // C[M x N] = A[M x K] * W[N x K]^T
};

// Rows = output pixels, columns = output channels, depth = taps x input
// channels: the implicit-im2col GEMMs of the models' convolutions.
const Shape kShapes[] = {
    {"ocr_det 3x3 conv 16->16 @160x160", 25600, 16, 144},
    {"ocr_det 1x1 conv 64->256 @40x40", 1600, 256, 64},
    {"ocr_det 3x3 conv 96->96 @20x20", 400, 96, 864},
    {"embedding 1x1 conv 128->128 @32x32", 1024, 128, 128},
    {"ocr_cls 3x3 conv 32->32 @24x80", 1920, 32, 288},
    {"Gemm 1x512 -> 1000", 1, 1000, 512},
    {"Gemm 64x256 -> 256", 64, 256, 256},
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs fn repeatedly for at least `ms` milliseconds; returns seconds per call.
template <class F>
double time_round(F&& fn, double ms) {
  fn();  // warm
  int n = 0;
  double t0 = now_s(), t1;
  do {
    fn();
    ++n;
    t1 = now_s();
  } while ((t1 - t0) * 1e3 < ms);
  return (t1 - t0) / n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  double round_ms = 150;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--round-ms") && i + 1 < argc) {
      round_ms = atof(argv[++i]);
    } else {
      fprintf(stderr, "usage: xnnpack_sgemm [--rounds N] [--round-ms MS]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  if (xnn_initialize(nullptr) != xnn_status_success) {
    fprintf(stderr, "xnnpack_sgemm: error: xnn_initialize failed (CPU not supported?)\n");
    return 1;
  }
  using namespace epctx;
  printf("epctx SGEMM (%s) vs XNNPACK fully_connected_nc_f32, 1 thread, %d rounds x %.0f ms\n",
         uk::IsaName(uk::BestIsa()), rounds, round_ms);
  printf("%-38s %8s %8s %8s %8s %8s %7s\n", "shape", "MFLOP", "epctx", "epctx^T", "xnnpack",
         "GF/s e", "e/x");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  double worst = 0;
  for (const Shape& s : kShapes) {
    std::vector<float> a(s.M * s.K), w(s.N * s.K), bias(s.N), c1(s.M * s.N), c2(s.M * s.N);
    for (float& v : a) v = dist(rng);
    for (float& v : w) v = dist(rng);
    for (float& v : bias) v = dist(rng);
    std::vector<float> ws(uk::SgemmWorkspaceFloats(s.M, s.N, s.K) + 16);
    uk::Gemm g;
    g.trans_b = true;
    g.M = s.M, g.N = s.N, g.K = s.K;
    g.A = a.data(), g.lda = s.K;
    g.B = w.data(), g.ldb = s.K;
    g.C = c1.data(), g.ldc = s.N;
    g.col_bias = bias.data();
    auto ours = [&] { uk::Sgemm(g, ws.data()); };
    // The orientation epctx's convolutions use: weights as A (read in
    // place), the activations packed as B: C^T[N x M] = W[N x K] * A^T.
    std::vector<float> c3(s.M * s.N);
    uk::Gemm g2;
    g2.trans_b = true;
    g2.M = s.N, g2.N = s.M, g2.K = s.K;
    g2.A = w.data(), g2.lda = s.K;
    g2.B = a.data(), g2.ldb = s.K;
    g2.C = c3.data(), g2.ldc = s.M;
    g2.row_bias = bias.data();
    std::vector<float> ws2(uk::SgemmWorkspaceFloats(s.N, s.M, s.K) + 16);
    auto ours_t = [&] { uk::Sgemm(g2, ws2.data()); };
    xnn_operator_t op = nullptr;
    if (xnn_create_fully_connected_nc_f32(s.K, s.N, s.K, s.N, w.data(), bias.data(), -INFINITY,
                                          INFINITY, 0, &op) != xnn_status_success ||
        xnn_setup_fully_connected_nc_f32(op, s.M, a.data(), c2.data(), nullptr) !=
            xnn_status_success) {
      fprintf(stderr, "xnnpack_sgemm: error: XNNPACK refused %s\n", s.what);
      return 1;
    }
    auto theirs = [&] { xnn_run_operator(op, nullptr); };
    std::vector<double> te, tt, tx;
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) {
        te.push_back(time_round(ours, round_ms));
        tt.push_back(time_round(ours_t, round_ms));
        tx.push_back(time_round(theirs, round_ms));
      } else {
        tx.push_back(time_round(theirs, round_ms));
        tt.push_back(time_round(ours_t, round_ms));
        te.push_back(time_round(ours, round_ms));
      }
    }
    double err = 0;
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j) {
        double x = c2[i * s.N + j];
        err = std::max(err, std::fabs(c1[i * s.N + j] - x) / (1.0 + std::fabs(x)));
        err = std::max(err, std::fabs(c3[j * s.M + i] - x) / (1.0 + std::fabs(x)));
      }
    worst = std::max(worst, err);
    double flop = 2.0 * s.M * s.N * s.K;
    double me = std::min(median(te), median(tt)), mx = median(tx);
    printf("%-38s %8.2f %8.3f %8.3f %8.3f %8.1f %7.2f\n", s.what, flop / 1e6, median(te) * 1e3,
           median(tt) * 1e3, mx * 1e3, flop / me / 1e9, me / mx);
    xnn_delete_operator(op);
  }
  printf("(ms, medians; epctx: W as packed B; epctx^T: W read in place as A, activations\n"
         " packed, as its convolutions run; GF/s and e/x from the faster of the two;\n"
         " e/x < 1: epctx faster; max relative difference %.2g)\n",
         worst);
  return worst < 1e-3 ? 0 : 1;
}
