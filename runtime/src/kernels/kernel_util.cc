// SPDX-License-Identifier: Apache-2.0
#include "kernels/kernel_util.h"

#include <cstring>

#include "core/status.h"

namespace epctx {
namespace kern {

ShapeText ShapeOf(uint32_t rank, const int64_t* dims) {
  ShapeText t;
  size_t n = 0;
  t.s[n++] = '[';
  for (uint32_t i = 0; i < rank && n < sizeof(t.s) - 24; ++i)
    n += format(t.s + n, sizeof(t.s) - n, i ? ",%lld" : "%lld", static_cast<long long>(dims[i]));
  format(t.s + n, sizeof(t.s) - n, "]");
  return t;
}

Status Input(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out) {
  const TensorRef* t = ctx.input(i);
  if (!t) return ctx.Fail(EPCTX_INVALID_GRAPH, "input %u (%s) is missing", i, what);
  *out = t;
  return Status::Ok();
}

Status UnsupportedDtype(KernelContext& ctx, const char* what, int32_t dtype) {
  return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "%s has dtype %s, which this kernel does not support",
                  what, dtype_name(dtype));
}

Status FloatInput(KernelContext& ctx, uint32_t i, const char* what, const TensorRef** out) {
  EPCTX_RETURN_IF_ERROR(Input(ctx, i, what, out));
  if ((*out)->dtype != EPCTX_DTYPE_FLOAT) return UnsupportedDtype(ctx, what, (*out)->dtype);
  return Status::Ok();
}

Status RequireRank(KernelContext& ctx, const TensorRef& t, const char* what, uint32_t rank) {
  if (t.rank != rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must have rank %u, found rank %u (shape %s)", what,
                    rank, t.rank, ShapeOf(t).s);
  return Status::Ok();
}

Status ReadInts(KernelContext& ctx, const TensorRef& t, const char* what, int64_t* out,
                uint32_t cap, uint32_t* count) {
  if (t.dtype != EPCTX_DTYPE_INT64 && t.dtype != EPCTX_DTYPE_INT32)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be int64 or int32, found %s", what,
                    dtype_name(t.dtype));
  if (t.rank > 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be 1-D, found shape %s", what, ShapeOf(t).s);
  uint64_t n = t.elements();
  if (n > cap)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has %llu elements, expected at most %u", what,
                    static_cast<unsigned long long>(n), cap);
  size_t es = t.dtype == EPCTX_DTYPE_INT64 ? 8 : 4;
  if (n > 0 && (!t.data || t.bytes < n * es))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has no data for %llu elements", what,
                    static_cast<unsigned long long>(n));
  for (uint64_t i = 0; i < n; ++i) {
    if (es == 8) {
      out[i] = static_cast<const int64_t*>(t.data)[i];
    } else {
      out[i] = static_cast<const int32_t*>(t.data)[i];
    }
  }
  *count = static_cast<uint32_t>(n);
  return Status::Ok();
}

Status ReadIntsAttr(KernelContext& ctx, const char* name, int64_t* out, uint32_t* count,
                    bool* present) {
  *count = 0;
  *present = false;
  const int64_t* v = nullptr;
  uint32_t n = 0;
  if (!ctx.AttrInts(name, &v, &n)) return Status::Ok();
  if (n > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute %s has %u values, at most %d allowed", name, n,
                    kMaxRank);
  for (uint32_t i = 0; i < n; ++i) out[i] = v[i];
  *count = n;
  *present = true;
  return Status::Ok();
}

Status ReadAxes(KernelContext& ctx, int64_t input_from, int64_t* axes, uint32_t* count,
                bool* present) {
  if (ctx.opset() < input_from) return ReadIntsAttr(ctx, "axes", axes, count, present);
  *count = 0;
  *present = false;
  if (const TensorRef* t = ctx.input(1)) {
    EPCTX_RETURN_IF_ERROR(ReadInts(ctx, *t, "axes", axes, kMaxRank, count));
    *present = true;
  }
  return Status::Ok();
}

Status ReadScalarFloat(KernelContext& ctx, const TensorRef& t, const char* what, float* out) {
  if (t.elements() != 1 || !t.data)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be a scalar, found shape %s", what,
                    ShapeOf(t).s);
  switch (t.dtype) {
    case EPCTX_DTYPE_FLOAT: *out = *static_cast<const float*>(t.data); break;
    case EPCTX_DTYPE_DOUBLE: *out = static_cast<float>(*static_cast<const double*>(t.data)); break;
    case EPCTX_DTYPE_INT32: *out = static_cast<float>(*static_cast<const int32_t*>(t.data)); break;
    case EPCTX_DTYPE_INT64: *out = static_cast<float>(*static_cast<const int64_t*>(t.data)); break;
    default: return UnsupportedDtype(ctx, what, t.dtype);
  }
  return Status::Ok();
}

Status NormalizeAxis(KernelContext& ctx, int64_t axis, int64_t rank, const char* what,
                     int64_t* out) {
  if (axis < -rank || axis >= rank)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "%s %lld is out of range: expected [%lld, %lld] for rank %lld", what,
                    static_cast<long long>(axis), static_cast<long long>(-rank),
                    static_cast<long long>(rank - 1), static_cast<long long>(rank));
  *out = axis < 0 ? axis + rank : axis;
  return Status::Ok();
}

void Strides(uint32_t rank, const int64_t* dims, int64_t* strides) {
  // An empty tensor addresses nothing, and the products of the huge dims a
  // zero may sit beside overflow: its strides are all 0.
  bool empty = false;
  for (uint32_t i = 0; i < rank; ++i) empty |= dims[i] == 0;
  int64_t s = 1;
  for (uint32_t i = rank; i-- > 0;) {
    strides[i] = empty ? 0 : s;
    if (!empty) s *= dims[i];
  }
}

bool Product(const int64_t* dims, uint32_t begin, uint32_t end, int64_t* out) {
  // A zero dim makes the product 0 whatever the others: multiplied in order,
  // [3, 2^62, 0] would overflow before it reached the 0.
  for (uint32_t i = begin; i < end; ++i)
    if (dims[i] == 0) {
      *out = 0;
      return true;
    }
  int64_t p = 1;
  for (uint32_t i = begin; i < end; ++i)
    if (dims[i] < 0 || !MulOk(p, dims[i], &p)) {
      // Only an empty tensor's dims can do this (a tensor's element count
      // fits in int64): a caller that loops over the product does nothing.
      *out = 0;
      return false;
    }
  *out = p;
  return true;
}

Status CheckShape(KernelContext& ctx, uint32_t rank, const int64_t* dims, size_t bytes_per_element,
                  const char* what) {
  int64_t n = 0;
  int64_t bytes = 0;
  if (rank > static_cast<uint32_t>(kMaxRank) || !Product(dims, 0, rank, &n) ||
      !MulOk(n, static_cast<int64_t>(bytes_per_element ? bytes_per_element : 1), &bytes))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s shape %s is invalid or too large", what,
                    ShapeOf(rank > static_cast<uint32_t>(kMaxRank) ? 0 : rank, dims).s);
  return Status::Ok();
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      man &= 0x3ffu;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into exp: correct
  return static_cast<uint16_t>(half);
}

}  // namespace kern
}  // namespace epctx
