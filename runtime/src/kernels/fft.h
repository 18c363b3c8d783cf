/* SPDX-License-Identifier: Apache-2.0 */
// Discrete Fourier transforms of any length for DFT and STFT (signal.cc).
//
// A plan is built once per kernel call for one length n and one direction,
// then transforms every signal of the call. Complex values are interleaved
// (re, im) doubles; float signals are widened so rounding stays far below
// the 1e-3 relative tolerance ORT's own float transform is held to.
//
//   n a power of two: iterative radix-2 (bit-reversal permutation, then
//   log2(n) butterfly passes over a table of n/2 twiddles).
//
//   any other n: Bluestein's chirp-z algorithm. With w_k = exp(-i*pi*k^2/n)
//   (conjugated for the inverse), X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}),
//   a convolution computed with radix-2 transforms of size m >= 2n - 1: the
//   transform of the conj(w) filter is part of the plan, so each signal costs
//   two size-m transforms. k^2 is kept modulo 2n incrementally, so the chirp
//   angles stay exact for any n.
//
// Memory and time are O(n) and O(n log n); nothing is quadratic in n.
#ifndef EPCTX_KERNELS_FFT_H
#define EPCTX_KERNELS_FFT_H

#include <cstdint>

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

struct FftPlan {
  int64_t n = 0;               // transform length
  int64_t m = 0;               // radix-2 size: n, or the Bluestein size >= 2n - 1
  bool inverse = false;        // exp(+2 pi i jk/n), not scaled by 1/n
  double* twiddles = nullptr;  // m/2 complex: exp(-2 pi i k/m)
  double* chirp = nullptr;     // Bluestein: n complex w_k
  double* filter = nullptr;    // Bluestein: m complex, transform of conj(w)
  double* work = nullptr;      // m complex
};

// Builds the plan in scratch memory. n >= 1.
Status MakeFftPlan(KernelContext& ctx, int64_t n, bool inverse, FftPlan* plan);

// Transforms plan.work[0, n) in place (complex). Entries past n are scratch.
void RunFft(const FftPlan& plan);

}  // namespace kern
}  // namespace epctx

#endif
