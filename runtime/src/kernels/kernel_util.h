/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the kernel families: input checks, reading small int
// tensors (axes, shapes), axis normalisation, overflow-checked shape
// arithmetic, and shape text for error messages. Everything here returns a
// Status from ctx.Fail so each message names the node.
#ifndef EPCTX_KERNELS_KERNEL_UTIL_H
#define EPCTX_KERNELS_KERNEL_UTIL_H

#include <cstdint>

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

// "[1,3,224,224]" in a buffer that lives as long as the temporary, for use
// as a "%s" argument inside one ctx.Fail call.
struct ShapeText {
  char s[160];
};
ShapeText ShapeOf(uint32_t rank, const int64_t* dims);
inline ShapeText ShapeOf(const TensorRef& t) { return ShapeOf(t.rank, t.dims); }

// Input i, which must be present (else INVALID_GRAPH naming `what`).
Status Input(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out);
// Input i with dtype float (else NOT_IMPLEMENTED naming the dtype).
Status FloatInput(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out);
// NOT_IMPLEMENTED "<what> has dtype <name>, which this kernel does not support".
Status UnsupportedDtype(KernelContext& ctx, const char* what, int32_t dtype);
// INVALID_ARGUMENT unless t has that rank.
Status RequireRank(KernelContext& ctx, const TensorRef& t, const char* what, uint32_t rank);

// Reads an int32/int64 tensor of rank 0 or 1 with at most `cap` elements.
Status ReadInts(KernelContext& ctx, const TensorRef& t, const char* what, int64_t* out,
                uint32_t cap, uint32_t* count);
// Copies the ints attribute `name` into out[0..*count) and sets *present;
// *count = 0 and *present = false when absent. INVALID_GRAPH when it has more
// than kMaxRank values (out must hold kMaxRank).
Status ReadIntsAttr(KernelContext& ctx, const char* name, int64_t* out, uint32_t* count,
                    bool* present);
// Axes (at most kMaxRank) from the `axes` attribute below opset
// `input_from`, or from the optional input 1 from that opset on.
Status ReadAxes(KernelContext& ctx, int64_t input_from, int64_t* axes, uint32_t* count,
                bool* present);
// Reads a float/double/int scalar (rank 0 or one element) as float.
Status ReadScalarFloat(KernelContext& ctx, const TensorRef& t, const char* what, float* out);

// axis in [-rank, rank) into [0, rank); INVALID_ARGUMENT otherwise.
Status NormalizeAxis(KernelContext& ctx, int64_t axis, int64_t rank, const char* what,
                     int64_t* out);

// Row-major strides of dims (in elements); all 0 when a dim is 0, so that no
// stride of an empty tensor overflows (its other dims may be huge).
void Strides(uint32_t rank, const int64_t* dims, int64_t* strides);

// Steps the odometer idx[0..n) over dims (last index fastest) and keeps
// *off == sum(idx[i] * strides[i]) for each stride set given (b may be
// nullptr). n may be 0 (a rank-0 or rank-1 walk has no outer index): callers
// pass `rank ? rank - 1 : 0`, never `rank - 1` unguarded.
inline void NextIndex(uint32_t n, const int64_t* dims, int64_t* idx, const int64_t* sa, int64_t* oa,
                      const int64_t* sb = nullptr, int64_t* ob = nullptr) {
  for (uint32_t i = n; i-- > 0;) {
    if (sa) *oa += sa[i];
    if (sb) *ob += sb[i];
    if (++idx[i] < dims[i]) return;
    if (sa) *oa -= sa[i] * idx[i];
    if (sb) *ob -= sb[i] * idx[i];
    idx[i] = 0;
  }
}
// The number of outer indices NextIndex walks for a rank-r tensor.
inline uint32_t OuterRank(uint32_t r) { return r ? r - 1 : 0; }

// Product of dims[begin, end); 0 dims allowed (any 0 makes it 0, however
// large the others). False on overflow, with *out set to 0.
bool Product(const int64_t* dims, uint32_t begin, uint32_t end, int64_t* out);

// a * b for non-negative values; false on overflow.
inline bool MulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// INVALID_ARGUMENT when the element count of a shape overflows int64 or
// exceeds what `bytes_per_element` bytes each can address.
Status CheckShape(KernelContext& ctx, uint32_t rank, const int64_t* dims, size_t bytes_per_element,
                  const char* what);

// Scratch memory of n elements of T, OUT_OF_MEMORY naming the kernel (T
// may be a pointer type, hence the NOLINT).
// NOLINTBEGIN(bugprone-sizeof-expression)
template <typename T>
Status ScratchArray(KernelContext& ctx, uint64_t n, T** out) {
  if (n > UINT64_MAX / sizeof(T) / 2)
    return ctx.Fail(EPCTX_OUT_OF_MEMORY, "scratch of %llu elements overflows",
                    static_cast<unsigned long long>(n));
  void* p = ctx.Scratch(n * sizeof(T) + 1, 64);
  if (!p)
    return ctx.Fail(EPCTX_OUT_OF_MEMORY, "cannot get %llu bytes of scratch",
                    static_cast<unsigned long long>(n * sizeof(T)));
  *out = static_cast<T*>(p);
  return Status::Ok();
}
// NOLINTEND(bugprone-sizeof-expression)

// Float <-> IEEE half conversions (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace kern
}  // namespace epctx

#endif
