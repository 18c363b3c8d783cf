// Cast between float, double, float16, int8, uint8, int32, int64 and bool.
// Integer-to-integer casts go through int64 and wrap like C++ conversions
// to a narrower two's-complement type; casts from floating point go through
// double and saturate at the target's range (NaN becomes 0), because an
// out-of-range float-to-int conversion is undefined behaviour in C++.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

bool Supported(int32_t t) {
  switch (t) {
    case EPCTX_DTYPE_FLOAT: case EPCTX_DTYPE_DOUBLE: case EPCTX_DTYPE_FLOAT16:
    case EPCTX_DTYPE_INT8: case EPCTX_DTYPE_UINT8: case EPCTX_DTYPE_INT32:
    case EPCTX_DTYPE_INT64: case EPCTX_DTYPE_BOOL:
      return true;
    default:
      return false;
  }
}

bool IsFloating(int32_t t) {
  return t == EPCTX_DTYPE_FLOAT || t == EPCTX_DTYPE_DOUBLE || t == EPCTX_DTYPE_FLOAT16;
}

double LoadF(int32_t t, const void* p, uint64_t i) {
  switch (t) {
    case EPCTX_DTYPE_FLOAT: return static_cast<const float*>(p)[i];
    case EPCTX_DTYPE_DOUBLE: return static_cast<const double*>(p)[i];
    default: return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
  }
}

int64_t LoadI(int32_t t, const void* p, uint64_t i) {
  switch (t) {
    case EPCTX_DTYPE_INT8: return static_cast<const int8_t*>(p)[i];
    case EPCTX_DTYPE_UINT8: return static_cast<const uint8_t*>(p)[i];
    case EPCTX_DTYPE_INT32: return static_cast<const int32_t*>(p)[i];
    case EPCTX_DTYPE_BOOL: return static_cast<const uint8_t*>(p)[i] != 0;
    default: return static_cast<const int64_t*>(p)[i];
  }
}

template <typename T>
T Saturate(double v) {
  if (v != v) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

void StoreF(int32_t t, void* p, uint64_t i, double v) {
  switch (t) {
    case EPCTX_DTYPE_FLOAT: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case EPCTX_DTYPE_DOUBLE: static_cast<double*>(p)[i] = v; break;
    case EPCTX_DTYPE_FLOAT16:
      static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case EPCTX_DTYPE_INT8: static_cast<int8_t*>(p)[i] = Saturate<int8_t>(v); break;
    case EPCTX_DTYPE_UINT8: static_cast<uint8_t*>(p)[i] = Saturate<uint8_t>(v); break;
    case EPCTX_DTYPE_INT32: static_cast<int32_t*>(p)[i] = Saturate<int32_t>(v); break;
    case EPCTX_DTYPE_BOOL: static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0; break;
    default: {
      // 2^63 is exactly representable; anything >= it saturates.
      int64_t r;
      if (v != v) r = 0;
      else if (v >= 9223372036854775808.0) r = std::numeric_limits<int64_t>::max();
      else if (v <= -9223372036854775808.0) r = std::numeric_limits<int64_t>::lowest();
      else r = static_cast<int64_t>(v);
      static_cast<int64_t*>(p)[i] = r;
    }
  }
}

void StoreI(int32_t t, void* p, uint64_t i, int64_t v) {
  switch (t) {
    case EPCTX_DTYPE_FLOAT: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case EPCTX_DTYPE_DOUBLE: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case EPCTX_DTYPE_FLOAT16:
      static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case EPCTX_DTYPE_INT8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case EPCTX_DTYPE_UINT8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case EPCTX_DTYPE_INT32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case EPCTX_DTYPE_BOOL: static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0; break;
    default: static_cast<int64_t*>(p)[i] = v; break;
  }
}

}  // namespace

Status Cast(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  const onnx::AttributeView* to_attr = ctx.node().attr("to");
  if (!to_attr || to_attr->type != onnx::AttrType::kInt)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute to is missing");
  const int64_t to64 = to_attr->i;
  if (to64 < 0 || to64 > 64 || !Supported(static_cast<int32_t>(to64)))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "cast to %s (%lld) is not supported",
                    dtype_name(static_cast<int32_t>(to64 < 0 || to64 > 64 ? 0 : to64)),
                    static_cast<long long>(to64));
  const int32_t to = static_cast<int32_t>(to64);
  if (!Supported(x->dtype)) return UnsupportedDtype(ctx, "input", x->dtype);
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, to, x->rank, x->dims, &y));
  const uint64_t n = x->elements();
  if (to == x->dtype) {
    if (n) memcpy(y->data, x->data, n * dtype_size(to));
    return Status::Ok();
  }
  if (IsFloating(x->dtype)) {
    for (uint64_t i = 0; i < n; ++i) StoreF(to, y->data, i, LoadF(x->dtype, x->data, i));
  } else {
    for (uint64_t i = 0; i < n; ++i) StoreI(to, y->data, i, LoadI(x->dtype, x->data, i));
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
