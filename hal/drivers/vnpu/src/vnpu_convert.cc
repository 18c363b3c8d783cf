// SPDX-License-Identifier: Apache-2.0
// The vnpu CONVERT unit: float16 <-> float32 at a graph's edges (and the
// one-time widening of float16 weights, vnpu_internal.h). The vnpu
// computes in float32; a float16 model's inputs are widened on the way in
// and its outputs narrowed on the way out (IEEE 754 binary16, round to
// nearest even, overflow to infinity, NaN stays NaN).
#include <cstring>

#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

namespace {

uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf or NaN (NaN keeps a quiet payload bit)
    return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: infinity
  if (abs < 0x38800000u) {               // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t exp = abs >> 23, mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t h = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // may carry into the exponent
  return uint16_t(sign | h);
}

}  // namespace

void RunConvert(const Bindings& b, const fb::Convert* c) {
  const fb::Tensor* in = b.graph->stream->tensors()->Get(c->input());
  const fb::Tensor* out = b.graph->stream->tensors()->Get(c->output());
  const uint64_t n = Elements(out);
  void* src = b.ptr(c->input());
  void* dst = b.ptr(c->output());
  if (n == 0) return;
  const bool from16 = in->dtype() == fb::DType::FLOAT16, to16 = out->dtype() == fb::DType::FLOAT16;
  if (from16 == to16) {
    memmove(dst, src, n * ElementSize(out));
  } else if (from16) {
    const uint16_t* x = static_cast<const uint16_t*>(src);
    float* y = static_cast<float*>(dst);
    for (uint64_t i = 0; i < n; ++i) y[i] = HalfToFloat(x[i]);
  } else {
    const float* x = static_cast<const float*>(src);
    uint16_t* y = static_cast<uint16_t*>(dst);
    for (uint64_t i = 0; i < n; ++i) y[i] = FloatToHalf(x[i]);
  }
}

}  // namespace vnpu
}  // namespace epctx
