/* SPDX-License-Identifier: Apache-2.0 */
// Element types for kernels: the C++ type behind each epctx dtype, the type
// a kernel computes in, and dispatch from a runtime dtype to a template.
//
// float16 and bfloat16 are stored as 16-bit patterns (Half, BFloat16) and
// computed in float: a kernel templated on T reads with Load(p[i]), computes
// in Compute<T>, and writes with Store<T>(value), which rounds to nearest
// even as ORT does. Every other type computes in itself.
//
// Dispatch, the one way kernels go from a runtime dtype to a template:
// `Dispatch<kMask>(dtype, f)` calls f(T{}) (a generic lambda) for the C++
// type of dtype when dtype is in kMask, and returns false otherwise, so the
// caller reports UnsupportedDtype naming the input:
//
//   bool ok = Dispatch<kNumeric>(x->dtype, [&](auto tag) {
//     using T = decltype(tag);
//     ...
//   });
//   if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
//
// f is instantiated only for the dtypes in kMask: a kernel costs code only
// for the types it takes, and its lambda may use operations (<<, %, libm)
// that other types lack. Code that only moves or compares bits dispatches
// on the element size instead (DispatchSize): one instantiation serves
// every dtype of that size.
#ifndef EPCTX_KERNELS_ELEM_H
#define EPCTX_KERNELS_ELEM_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// bfloat16 is the top half of a float32; rounding to nearest even, NaN kept
// quiet.
inline float BF16ToFloat(uint16_t h) {
  const uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
inline uint16_t FloatToBF16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x40u);
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(b >> 16);
}

template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Half> {
  using type = float;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

template <typename T>
inline Compute<T> Load(T v) {
  return v;
}
inline float Load(Half v) { return HalfToFloat(v.bits); }
inline float Load(BFloat16 v) { return BF16ToFloat(v.bits); }

template <typename T>
inline T Store(Compute<T> v) {
  return static_cast<T>(v);
}
template <>
inline Half Store<Half>(float v) {
  return Half{FloatToHalf(v)};
}
template <>
inline BFloat16 Store<BFloat16>(float v) {
  return BFloat16{FloatToBF16(v)};
}

template <typename T>
constexpr bool kIsFloatLike = std::is_floating_point<T>::value || std::is_same<T, Half>::value ||
                              std::is_same<T, BFloat16>::value;

// The dtype of a C++ element type.
template <typename T>
constexpr int32_t DtypeOf();
template <>
constexpr int32_t DtypeOf<float>() {
  return EPCTX_DTYPE_FLOAT;
}
template <>
constexpr int32_t DtypeOf<double>() {
  return EPCTX_DTYPE_DOUBLE;
}
template <>
constexpr int32_t DtypeOf<Half>() {
  return EPCTX_DTYPE_FLOAT16;
}
template <>
constexpr int32_t DtypeOf<BFloat16>() {
  return EPCTX_DTYPE_BFLOAT16;
}
template <>
constexpr int32_t DtypeOf<int8_t>() {
  return EPCTX_DTYPE_INT8;
}
template <>
constexpr int32_t DtypeOf<int16_t>() {
  return EPCTX_DTYPE_INT16;
}
template <>
constexpr int32_t DtypeOf<int32_t>() {
  return EPCTX_DTYPE_INT32;
}
template <>
constexpr int32_t DtypeOf<int64_t>() {
  return EPCTX_DTYPE_INT64;
}
template <>
constexpr int32_t DtypeOf<uint8_t>() {
  return EPCTX_DTYPE_UINT8;
}
template <>
constexpr int32_t DtypeOf<uint16_t>() {
  return EPCTX_DTYPE_UINT16;
}
template <>
constexpr int32_t DtypeOf<uint32_t>() {
  return EPCTX_DTYPE_UINT32;
}
template <>
constexpr int32_t DtypeOf<uint64_t>() {
  return EPCTX_DTYPE_UINT64;
}
template <>
constexpr int32_t DtypeOf<bool>() {
  return EPCTX_DTYPE_BOOL;
}

// Sets of dtypes for Dispatch, as bit masks over the dtype numbers.
constexpr uint32_t Bit(int32_t dtype) { return 1u << dtype; }
constexpr uint32_t kFloat32 = Bit(EPCTX_DTYPE_FLOAT);
constexpr uint32_t kFloats = Bit(EPCTX_DTYPE_FLOAT) | Bit(EPCTX_DTYPE_DOUBLE) |
                             Bit(EPCTX_DTYPE_FLOAT16) | Bit(EPCTX_DTYPE_BFLOAT16);
constexpr uint32_t kSignedInts = Bit(EPCTX_DTYPE_INT8) | Bit(EPCTX_DTYPE_INT16) |
                                 Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64);
constexpr uint32_t kUnsignedInts = Bit(EPCTX_DTYPE_UINT8) | Bit(EPCTX_DTYPE_UINT16) |
                                   Bit(EPCTX_DTYPE_UINT32) | Bit(EPCTX_DTYPE_UINT64);
constexpr uint32_t kInts = kSignedInts | kUnsignedInts;
constexpr uint32_t kNumeric = kFloats | kInts;
constexpr uint32_t kAll = kNumeric | Bit(EPCTX_DTYPE_BOOL);
constexpr uint32_t kIndexInts = Bit(EPCTX_DTYPE_INT32) | Bit(EPCTX_DTYPE_INT64);

// True when dtype is in mask (any int32: dtypes come from files).
inline bool InMask(int32_t dtype, uint32_t mask) {
  return dtype >= 0 && dtype <= 31 && (mask & Bit(dtype)) != 0;
}

template <uint32_t kMask, typename T, typename F>
inline bool TryType(int32_t dtype, F& f) {
  if constexpr ((kMask & Bit(DtypeOf<T>())) != 0) {
    if (dtype == DtypeOf<T>()) {
      f(T{});
      return true;
    }
  }
  return false;
}

// Calls f(T{}) for dtype's C++ type when dtype is in kMask; false otherwise.
template <uint32_t kMask, typename F>
bool Dispatch(int32_t dtype, F&& f) {
  static_assert((kMask & ~kAll) == 0, "Dispatch: a dtype without a C++ element type");
  return TryType<kMask, float>(dtype, f) || TryType<kMask, double>(dtype, f) ||
         TryType<kMask, Half>(dtype, f) || TryType<kMask, BFloat16>(dtype, f) ||
         TryType<kMask, int8_t>(dtype, f) || TryType<kMask, int16_t>(dtype, f) ||
         TryType<kMask, int32_t>(dtype, f) || TryType<kMask, int64_t>(dtype, f) ||
         TryType<kMask, uint8_t>(dtype, f) || TryType<kMask, uint16_t>(dtype, f) ||
         TryType<kMask, uint32_t>(dtype, f) || TryType<kMask, uint64_t>(dtype, f) ||
         TryType<kMask, bool>(dtype, f);
}

// For ops whose integer result does not depend on signedness (wrapping +,
// -, *, equality, conversion to an integer): the unsigned twin of a signed
// integer dtype, so one instantiation serves int32 and uint32.
inline int32_t UnsignedTwin(int32_t dtype) {
  switch (dtype) {
    case EPCTX_DTYPE_INT8: return EPCTX_DTYPE_UINT8;
    case EPCTX_DTYPE_INT16: return EPCTX_DTYPE_UINT16;
    case EPCTX_DTYPE_INT32: return EPCTX_DTYPE_UINT32;
    case EPCTX_DTYPE_INT64: return EPCTX_DTYPE_UINT64;
    default: return dtype;
  }
}
// mask with its signed integers replaced by their unsigned twins.
constexpr uint32_t UnsignedTwins(uint32_t mask) {
  return (mask & ~kSignedInts) | ((mask & Bit(EPCTX_DTYPE_INT8)) ? Bit(EPCTX_DTYPE_UINT8) : 0) |
         ((mask & Bit(EPCTX_DTYPE_INT16)) ? Bit(EPCTX_DTYPE_UINT16) : 0) |
         ((mask & Bit(EPCTX_DTYPE_INT32)) ? Bit(EPCTX_DTYPE_UINT32) : 0) |
         ((mask & Bit(EPCTX_DTYPE_INT64)) ? Bit(EPCTX_DTYPE_UINT64) : 0);
}

// Calls f(U{}) with the unsigned integer type of element size es (1, 2, 4
// or 8 bytes), so code that moves or compares bits is written and compiled
// once for every dtype of that size.
template <typename F>
void DispatchSize(size_t es, F&& f) {
  switch (es) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

}  // namespace kern
}  // namespace epctx

#endif
