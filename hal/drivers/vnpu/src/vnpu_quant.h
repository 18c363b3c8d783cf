/* SPDX-License-Identifier: Apache-2.0 */
// The int8 level's rounding and requantisation (README "int8 level"), shared
// by the reference units (vnpu_int8.cc) and the panel strategies
// (vnpu_qpanel.cc), so both write the same bytes.
#ifndef EPCTX_VNPU_QUANT_H
#define EPCTX_VNPU_QUANT_H

#include <cstdint>

#include "epctx_uk/qgemm.h"
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {

// clamp(round_half_even(v) + zp, lo, hi); NaN gives lo (as ORT's kernels):
// the micro-kernels' one rounding, so both paths write the same bytes.
inline int32_t Requantize(float v, int32_t zp, int32_t lo, int32_t hi) {
  return uk::QRequantizeOne(v, zp, lo, hi);
}

inline int32_t QMin(fb::DType d) { return d == fb::DType::INT8 ? -128 : 0; }
inline int32_t QMax(fb::DType d) { return d == fb::DType::INT8 ? 127 : 255; }

inline void StoreQ(void* p, fb::DType d, uint64_t i, int32_t v) {
  if (d == fb::DType::INT8) static_cast<int8_t*>(p)[i] = int8_t(v);
  else static_cast<uint8_t*>(p)[i] = uint8_t(v);
}

// Writes channel c's accumulator to y[i]: int32 as is, else requantised.
struct Epilogue {
  fb::DType dtype;
  const int32_t* bias;  // or nullptr
  const float* mult;    // requantising outputs only
  int32_t zp, lo, hi;
  void operator()(void* y, uint64_t i, uint64_t c, int32_t acc) const {
    const int64_t v = int64_t(acc) + (bias ? bias[c] : 0);
    if (dtype == fb::DType::INT32) {
      // Wraps as a hardware int32 adder would (acc + bias beyond int32 is
      // not representable in the output either way).
      static_cast<int32_t*>(y)[i] = int32_t(uint32_t(uint64_t(v)));
      return;
    }
    StoreQ(y, dtype, i, Requantize(float(v) * mult[c], zp, lo, hi));
  }
};

// The raw sums to the accumulator: raw - xz * wsum[c] - wz * colsum + K xz wz,
// wrapping (qgemm.h), then the epilogue.
struct QFinish {
  Epilogue ep;
  const int32_t* wsum;  // the op's weight-row sums
  uint32_t xz, wz, kzz;
  void operator()(void* y, uint64_t i, int64_t c, int32_t raw, int32_t colsum) const {
    const uint32_t acc = uint32_t(raw) - xz * uint32_t(wsum[c]) - wz * uint32_t(colsum) + kzz;
    ep(y, i, uint64_t(c), int32_t(acc));
  }
  // Row c's constant terms plus its bias (QRequant::rowc).
  int32_t RowConstant(int64_t c) const {
    return int32_t(kzz - xz * uint32_t(wsum[c]) + uint32_t(ep.bias ? ep.bias[c] : 0));
  }
};

}  // namespace vnpu
}  // namespace epctx

#endif
