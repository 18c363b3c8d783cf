// SPDX-License-Identifier: Apache-2.0
// The radix-2 and Bluestein transforms described in fft.h.
#include "kernels/fft.h"

#include <cmath>
#include <cstring>

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {
namespace {

constexpr double kPi = 3.14159265358979323846;

// In-place radix-2 transform of m complex values (m a power of two) with the
// table tw[k] = exp(-2 pi i k/m); conjugated twiddles when inverse.
void Radix2(double* a, int64_t m, const double* tw, bool inverse) {
  for (int64_t i = 1, j = 0; i < m; ++i) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double t0 = a[2 * i], t1 = a[2 * i + 1];
      a[2 * i] = a[2 * j];
      a[2 * i + 1] = a[2 * j + 1];
      a[2 * j] = t0;
      a[2 * j + 1] = t1;
    }
  }
  const double sign = inverse ? -1.0 : 1.0;
  for (int64_t len = 2; len <= m; len <<= 1) {
    const int64_t half = len >> 1, step = m / len;
    for (int64_t i = 0; i < m; i += len) {
      for (int64_t k = 0; k < half; ++k) {
        const double wr = tw[2 * k * step], wi = sign * tw[2 * k * step + 1];
        double* u = a + 2 * (i + k);
        double* v = a + 2 * (i + k + half);
        const double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
        v[0] = u[0] - vr;
        v[1] = u[1] - vi;
        u[0] += vr;
        u[1] += vi;
      }
    }
  }
}

}  // namespace

Status MakeFftPlan(KernelContext& ctx, int64_t n, bool inverse, FftPlan* plan) {
  if (n < 1 || n > (int64_t{1} << 40))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "transform length %lld is out of range [1, 2^40]",
                    static_cast<long long>(n));
  plan->n = n;
  plan->inverse = inverse;
  const bool pow2 = (n & (n - 1)) == 0;
  int64_t m = 1;
  while (m < (pow2 ? n : 2 * n - 1)) m <<= 1;
  plan->m = m;
  const uint64_t half = static_cast<uint64_t>(m / 2 ? m / 2 : 1);
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 2 * half, &plan->twiddles));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 2 * static_cast<uint64_t>(m), &plan->work));
  for (int64_t k = 0; k < m / 2; ++k) {
    const double a = -2.0 * kPi * static_cast<double>(k) / static_cast<double>(m);
    plan->twiddles[2 * k] = cos(a);
    plan->twiddles[2 * k + 1] = sin(a);
  }
  if (pow2) return Status::Ok();

  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 2 * static_cast<uint64_t>(n), &plan->chirp));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 2 * static_cast<uint64_t>(m), &plan->filter));
  const double sign = inverse ? 1.0 : -1.0;
  const uint64_t two_n = 2 * static_cast<uint64_t>(n);
  uint64_t sq = 0;  // k^2 mod 2n
  for (int64_t k = 0; k < n; ++k) {
    const double a = sign * kPi * static_cast<double>(sq) / static_cast<double>(n);
    plan->chirp[2 * k] = cos(a);
    plan->chirp[2 * k + 1] = sin(a);
    sq = (sq + 2 * static_cast<uint64_t>(k) + 1) % two_n;
  }
  double* f = plan->filter;
  memset(f, 0, 2 * static_cast<size_t>(m) * sizeof(double));
  for (int64_t k = 0; k < n; ++k) {
    f[2 * k] = plan->chirp[2 * k];
    f[2 * k + 1] = -plan->chirp[2 * k + 1];
    if (k > 0) {
      f[2 * (m - k)] = f[2 * k];
      f[2 * (m - k) + 1] = f[2 * k + 1];
    }
  }
  Radix2(f, m, plan->twiddles, false);
  return Status::Ok();
}

void RunFft(const FftPlan& p) {
  double* a = p.work;
  if (!p.chirp) {
    Radix2(a, p.m, p.twiddles, p.inverse);
    return;
  }
  const double* w = p.chirp;
  for (int64_t k = 0; k < p.n; ++k) {
    const double re = a[2 * k], im = a[2 * k + 1];
    a[2 * k] = re * w[2 * k] - im * w[2 * k + 1];
    a[2 * k + 1] = re * w[2 * k + 1] + im * w[2 * k];
  }
  memset(a + 2 * p.n, 0, 2 * static_cast<size_t>(p.m - p.n) * sizeof(double));
  Radix2(a, p.m, p.twiddles, false);
  const double* f = p.filter;
  for (int64_t k = 0; k < p.m; ++k) {
    const double re = a[2 * k], im = a[2 * k + 1];
    a[2 * k] = re * f[2 * k] - im * f[2 * k + 1];
    a[2 * k + 1] = re * f[2 * k + 1] + im * f[2 * k];
  }
  Radix2(a, p.m, p.twiddles, true);
  const double scale = 1.0 / static_cast<double>(p.m);
  for (int64_t k = 0; k < p.n; ++k) {
    const double re = a[2 * k] * scale, im = a[2 * k + 1] * scale;
    a[2 * k] = re * w[2 * k] - im * w[2 * k + 1];
    a[2 * k + 1] = re * w[2 * k + 1] + im * w[2 * k];
  }
}

}  // namespace kern
}  // namespace epctx
