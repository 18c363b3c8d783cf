/* SPDX-License-Identifier: Apache-2.0 */
// Elementwise rows: the activations that follow convolutions and the binary
// ops of residual connections, chosen per instruction set like the SGEMM
// tile (AVX-512, AVX2, and the portable 4-float vectors: SSE2 on baseline
// x86-64, NEON on aarch64). Every width runs the same operations in the same
// order with no fused multiply-add, so results are bit-identical whichever
// instruction set runs them. y may equal an input (each lane is loaded
// before it is stored); re-entrant.
#ifndef EPCTX_UK_ELEMENTWISE_H
#define EPCTX_UK_ELEMENTWISE_H

#include <cstdint>

#include "epctx_uk/sgemm.h"

namespace epctx {
namespace uk {

enum class Act : uint32_t {
  kRelu = 0,         // x > 0 ? x : 0 (NaN becomes 0)
  kLeaky = 1,        // x >= 0 ? x : x * alpha
  kClip = 2,         // x < alpha ? alpha : (x > beta ? beta : x) (NaN stays NaN)
  kHardSwish = 3,    // x * min(max(x + 3, 0), 6) / 6, then * alpha + beta unless (1, 0)
  kLeakyMax = 4,     // l = x >= 0 ? x : x * alpha, then l > beta ? l : beta (NaN becomes beta)
  kSigmoid = 5,      // 1 / (1 + exp(-x)), exp by a polynomial (within 2 ulp of expf)
  kErf = 6,          // erf(x) by two polynomials (within 4 ulp of erf, or 2^-23 where |x| >= 0.92)
  kTanh = 7,         // tanh(x): x * P(x^2) below |x| = 0.625, else 1 - 2 / (exp(2|x|) + 1) (4 ulp)
  kHardSigmoid = 8,  // h = x * alpha + beta, then h < 0 ? 0 : (h > 1 ? 1 : h) (NaN stays NaN)
  kSwish = 9,        // x * sigmoid(x) (SiLU), the sigmoid as kSigmoid computes it
  kGelu = 10,  // (x * (erf(x * alpha) + 1)) * beta, erf as kErf (GELU: alpha 1/sqrt(2), beta 0.5)
};

// y[i] = act(x[i]) for i in [0, n).
void ActivateRow(Act k, const float* x, float* y, int64_t n, float alpha, float beta,
                 Isa isa = Isa::kAuto);

// In place on `rows` rows of n floats, ld apart (one dispatch for a block
// of a convolution's output). Every activation but kErf and kTanh, which no
// convolution fuses (left out to keep microcontroller images small); kGelu
// is a GEMM's epilogue in transformers.
void ActivateRows(Act k, float* y, int64_t rows, int64_t n, int64_t ld, float alpha, float beta,
                  Isa isa = Isa::kAuto);

// y = softmax(x) over n floats (n >= 1): the maximum m, e[i] = exp(x[i] -
// m) by the sigmoid's polynomial exp (exponents below -87 give about 1e-38,
// not 0), then e[i] * (1 / sum e). The sum runs as 16 partial sums of
// every 16th element (the rest added in order), whatever the width, so
// every instruction set gives the same bits. y may equal x.
void SoftmaxRow(const float* x, float* y, int64_t n, Isa isa = Isa::kAuto);

// c[r] = a . b[r * ldb ...] over k floats, for rows r in [0, n): a
// matrix-vector product with the matrix's rows contiguous (a recurrent
// step's H_{t-1} R^T). Each dot runs as 16 partial sums of every 16th
// product (the rest added in order), four rows sharing each load of a, so
// every instruction set gives the same bits.
void DotRows(const float* a, const float* b, int64_t ldb, int64_t n, int64_t k, float* c,
             Isa isa = Isa::kAuto);

enum class Bin : uint32_t { kAdd = 0, kSub, kMul, kDiv, kMax, kMin };

// y[i] = a[i * sa] op b[i * sb] for i in [0, n), where each of sa and sb is
// 0 (a held scalar) or 1 (contiguous). Max and min return a when a > b
// (resp. a < b), else b, as the scalar code does.
void BinaryRow(Bin k, const float* a, const float* b, float* y, int64_t n, int sa, int sb,
               Isa isa = Isa::kAuto);

}  // namespace uk
}  // namespace epctx

#endif
