// SPDX-License-Identifier: Apache-2.0
// Micro benchmark of the CPU kernels (not a test): GFLOP/s of SGEMM 256^3
// and of a 3x3 Conv 64->64 on 56x56, then one JSON line for scripts.
#include <chrono>
#include <cstdio>
#include <vector>

#include "harness.h"
#include "kernels/gemm.h"

namespace {

template <typename F>
double BestSeconds(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

}  // namespace

int main() {
  const int64_t n = 256;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  std::vector<float> ws(epctx::kern::SgemmWorkspaceFloats(n, n, n));
  const double gemm_s = BestSeconds(20, [&] {
    epctx::kern::Sgemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n,
                       ws.data());
  });
  const double gemm_gflops = 2.0 * n * n * n / gemm_s / 1e9;

  kt::Host host;
  kt::TensorRef* x = host.Random({1, 64, 56, 56}, 1);
  kt::TensorRef* w = host.Random({64, 64, 3, 3}, 2);
  kt::TensorRef* bias = host.Random({64}, 3);
  kt::Node node("Conv", "bench");
  node.Ints("pads", {1, 1, 1, 1});
  bool ok = true;
  const double conv_s = BestSeconds(10, [&] {
    epctx::Status st = host.Run(node, 11, {x, w, bias});
    if (!st.ok()) {
      fprintf(stderr, "conv failed: %s\n", st.message());
      ok = false;
    }
    host.ResetScratch();
  });
  if (!ok) return 1;
  const double conv_gflops = 2.0 * 64 * 64 * 9 * 56 * 56 / conv_s / 1e9;

  printf("sgemm 256x256x256: %.3f ms, %.2f GFLOP/s\n", gemm_s * 1e3, gemm_gflops);
  printf("conv 3x3 64->64 56x56: %.3f ms, %.2f GFLOP/s\n", conv_s * 1e3, conv_gflops);
  printf("{\"bench\":\"kernels\",\"sgemm256_gflops\":%.3f,\"sgemm256_ms\":%.4f,"
         "\"conv3x3_64_56_gflops\":%.3f,\"conv3x3_64_56_ms\":%.4f}\n",
         gemm_gflops, gemm_s * 1e3, conv_gflops, conv_s * 1e3);
  return 0;
}
