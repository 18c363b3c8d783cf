// SPDX-License-Identifier: Apache-2.0
// Random ops and Dropout: RandomUniform(Like), RandomNormal(Like),
// Bernoulli, Multinomial, and Dropout (identity in inference; random mask
// with training_mode true).
//
// Values come from splitmix64. With a `seed` attribute a node draws the same
// values on every Run (ORT instead advances one generator per session, so
// its successive runs differ; no value can match ORT's std::mt19937 stream
// anyway). Without a seed each Run draws from a new stream taken from a
// process-wide counter. Uniform values lie in [low, high): a draw that rounds
// up to high in the output type is redrawn. Normal values use the Marsaglia
// polar method (logf, sqrtf only), with a bounded number of rejections.
#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

std::atomic<uint32_t> g_stream{0};

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  // Standard normal (Marsaglia polar method).
  float Normal() {
    for (int tries = 0; tries < 64; ++tries) {
      const float u = static_cast<float>(2.0 * Unit() - 1.0);
      const float v = static_cast<float>(2.0 * Unit() - 1.0);
      const float s = u * u + v * v;
      if (s > 0.0f && s < 1.0f) return u * sqrtf(-2.0f * logf(s) / s);
    }
    return 0.0f;
  }

 private:
  uint64_t s_;
};

// The node's generator: from the float `seed` attribute when present, else
// a fresh stream.
Rng MakeRng(KernelContext& ctx, bool int_seed) {
  uint64_t seed;
  if (ctx.node().attr("seed")) {
    if (int_seed) {
      seed = static_cast<uint64_t>(ctx.AttrInt("seed", 0));
    } else {
      const float f = ctx.AttrFloat("seed", 0.0f);
      uint32_t bits;
      memcpy(&bits, &f, 4);
      seed = bits;
    }
    seed ^= 0x5eed000000000000ull;
  } else {
    seed = 0xa5a5000000000000ull ^ (static_cast<uint64_t>(g_stream.fetch_add(1)) << 20);
  }
  return Rng(seed);
}

constexpr uint32_t kRandomTypes = kFloats;

// Output dtype of a random op: the `dtype` attribute, else `def`.
int32_t OutDtype(KernelContext& ctx, int32_t def) {
  const int64_t d = ctx.AttrInt("dtype", def);
  return d >= 0 && d <= 31 ? static_cast<int32_t>(d) : 0;
}

// Fills output 0 (dtype, shape) with uniform or normal values.
Status Generate(KernelContext& ctx, int32_t dtype, uint32_t rank, const int64_t* dims,
                bool normal) {
  Rng rng = MakeRng(ctx, false);
  const float a = ctx.AttrFloat(normal ? "mean" : "low", 0.0f);
  const float b = ctx.AttrFloat(normal ? "scale" : "high", 1.0f);
  if (!normal && !(a < b))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute low %g must be below high %g",
                    static_cast<double>(a), static_cast<double>(b));
  Status st = Status::Ok();
  const bool ok = Dispatch<kRandomTypes>(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      st = CheckShape(ctx, rank, dims, sizeof(T), "output");
      if (!st.ok()) return;
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, dtype, rank, dims, &y);
      if (!st.ok()) return;
      T* out = static_cast<T*>(y->data);
      const uint64_t n = y->elements();
      for (uint64_t i = 0; i < n; ++i) {
        if (normal) {
          out[i] = Store<T>(static_cast<Compute<T>>(a + b * rng.Normal()));
          continue;
        }
        T v = Store<T>(static_cast<Compute<T>>(a));
        for (int tries = 0; tries < 16; ++tries) {
          const double u = a + (static_cast<double>(b) - a) * rng.Unit();
          const T t = Store<T>(static_cast<Compute<T>>(u));
          if (static_cast<double>(Load(t)) < b) {
            v = t;
            break;
          }
        }
        out[i] = v;
      }
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "dtype", dtype);
  return st;
}

Status GenerateFromShapeAttr(KernelContext& ctx, bool normal) {
  int64_t dims[kMaxRank];
  uint32_t rank = 0;
  bool present = false;
  EPCTX_RETURN_IF_ERROR(ReadIntsAttr(ctx, "shape", dims, &rank, &present));
  if (!present) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute shape is missing");
  for (uint32_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute shape[%u] is %lld, expected >= 0", i,
                      static_cast<long long>(dims[i]));
  return Generate(ctx, OutDtype(ctx, EPCTX_DTYPE_FLOAT), rank, dims, normal);
}

Status GenerateLike(KernelContext& ctx, bool normal) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  return Generate(ctx, OutDtype(ctx, x->dtype), x->rank, x->dims, normal);
}

}  // namespace

Status RandomUniform(KernelContext& ctx) { return GenerateFromShapeAttr(ctx, false); }
Status RandomNormal(KernelContext& ctx) { return GenerateFromShapeAttr(ctx, true); }
Status RandomUniformLike(KernelContext& ctx) { return GenerateLike(ctx, false); }
Status RandomNormalLike(KernelContext& ctx) { return GenerateLike(ctx, true); }

Status Bernoulli(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  const int32_t dtype = OutDtype(ctx, x->dtype);
  Rng rng = MakeRng(ctx, false);
  Status st = Status::Ok();
  bool out_ok = true;
  const bool ok = Dispatch<kFloats>(x->dtype, [&](auto tag) {
    using P = decltype(tag);
    const P* p = static_cast<const P*>(x->data);
    out_ok = Dispatch<kAll>(dtype, [&](auto otag) {
      using T = decltype(otag);
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, dtype, x->rank, x->dims, &y);
      if (!st.ok()) return;
      T* out = static_cast<T*>(y->data);
      const T one = Store<T>(static_cast<Compute<T>>(1));
      const T zero = Store<T>(static_cast<Compute<T>>(0));
      const uint64_t n = x->elements();
      for (uint64_t i = 0; i < n; ++i)
        out[i] = rng.Unit() < static_cast<double>(Load(p[i])) ? one : zero;
    });
  });
  if (!ok) return UnsupportedDtype(ctx, "input", x->dtype);
  if (!out_ok) return UnsupportedDtype(ctx, "dtype", dtype);
  return st;
}

// Multinomial: input [batch, classes] of unnormalised log-probabilities;
// samples class indices by inverse CDF over exp(x - max).
Status Multinomial(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "input", &x));
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *x, "input", 2));
  const int64_t samples = ctx.AttrInt("sample_size", 1);
  if (samples < 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute sample_size is %lld, expected >= 1",
                    static_cast<long long>(samples));
  const int32_t dtype = OutDtype(ctx, EPCTX_DTYPE_INT32);
  if (dtype != EPCTX_DTYPE_INT32 && dtype != EPCTX_DTYPE_INT64)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute dtype is %s, expected int32 or int64",
                    dtype_name(dtype));
  const int64_t batch = x->dims[0], classes = x->dims[1];
  if (classes < 1 && batch > 0)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %s has no classes", ShapeOf(*x).s);
  const int64_t dims[2] = {batch, samples};
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, 2, dims, 8, "output"));
  double* cdf = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(classes), &cdf));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, dtype, 2, dims, &y));
  Rng rng = MakeRng(ctx, false);
  Status st = Status::Ok();
  const bool ok = Dispatch<kFloats>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x->data);
    for (int64_t b = 0; b < batch && st.ok(); ++b) {
      const T* row = in + b * classes;
      float mx = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) {
        const float v = static_cast<float>(Load(row[c]));
        if (v > mx) mx = v;
      }
      double total = 0.0;
      for (int64_t c = 0; c < classes; ++c) {
        total += static_cast<double>(expf(static_cast<float>(Load(row[c])) - mx));
        cdf[c] = total;
      }
      if (!(total > 0.0) || total > 1e300) {
        st = ctx.Fail(EPCTX_INVALID_ARGUMENT, "row %lld of input has no finite probability mass",
                      static_cast<long long>(b));
        return;
      }
      for (int64_t s = 0; s < samples; ++s) {
        const double r = rng.Unit() * total;
        int64_t lo = 0, hi = classes - 1;  // first c with cdf[c] > r
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (cdf[mid] > r) hi = mid;
          else lo = mid + 1;
        }
        if (dtype == EPCTX_DTYPE_INT64) static_cast<int64_t*>(y->data)[b * samples + s] = lo;
        else static_cast<int32_t*>(y->data)[b * samples + s] = static_cast<int32_t>(lo);
      }
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "input", x->dtype);
  return st;
}

// Dropout: opsets 7-11 are inference-only (the output is the input);
// from 12 the optional ratio and training_mode inputs apply. The mask is
// bool from opset 10 (the input's type before) and all true unless
// training.
Status Dropout(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data", &x));
  if (!Dispatch<kFloats>(x->dtype, [](auto) {})) return UnsupportedDtype(ctx, "data", x->dtype);
  bool training = false;
  float ratio = ctx.opset() < 12 ? ctx.AttrFloat("ratio", 0.5f) : 0.5f;
  if (ctx.opset() >= 12) {
    if (const TensorRef* r = ctx.input(1)) {
      if (!Dispatch<kFloats>(r->dtype, [](auto) {}))
        return UnsupportedDtype(ctx, "ratio", r->dtype);
      if (r->rank > 1 || r->elements() != 1)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "ratio must be a scalar, found shape %s",
                        ShapeOf(*r).s);
      Dispatch<kFloats>(r->dtype, [&](auto tag) {
        using T = decltype(tag);
        ratio = static_cast<float>(Load(*static_cast<const T*>(r->data)));
      });
    }
    if (const TensorRef* t = ctx.input(2)) {
      if (t->dtype != EPCTX_DTYPE_BOOL || t->elements() != 1 || t->rank > 1)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "training_mode must be a bool scalar, found %s %s",
                        dtype_name(t->dtype), ShapeOf(*t).s);
      training = *static_cast<const bool*>(t->data);
    }
  }
  if (training && !(ratio >= 0.0f && ratio < 1.0f))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "ratio %g must be in [0, 1)",
                    static_cast<double>(ratio));
  const bool want_mask = ctx.num_outputs() > 1;
  const int32_t mask_dtype = ctx.opset() >= 10 ? int32_t{EPCTX_DTYPE_BOOL} : x->dtype;
  TensorRef* mask = nullptr;
  if (want_mask) EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(1, mask_dtype, x->rank, x->dims, &mask));
  const uint64_t n = x->elements();
  if (!training || ratio == 0.0f) {
    if (mask)
      Dispatch<kAll>(mask_dtype, [&](auto tag) {
        using T = decltype(tag);
        const T one = Store<T>(static_cast<Compute<T>>(1));
        FillBytes(mask->data, n, sizeof(T), &one);
      });
    return ctx.ViewOutput(0, x->dtype, x->rank, x->dims, x->data);
  }
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
  Rng rng = MakeRng(ctx, true);
  const float scale = 1.0f / (1.0f - ratio);
  Dispatch<kFloats>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatLike<T>) {
      const T* in = static_cast<const T*>(x->data);
      T* out = static_cast<T*>(y->data);
      for (uint64_t i = 0; i < n; ++i) {
        const bool keep = rng.Unit() >= static_cast<double>(ratio);
        out[i] = keep ? Store<T>(static_cast<Compute<T>>(Load(in[i]) * scale))
                      : Store<T>(static_cast<Compute<T>>(0));
        if (mask) {
          if (mask_dtype == EPCTX_DTYPE_BOOL) static_cast<bool*>(mask->data)[i] = keep;
          else static_cast<T*>(mask->data)[i] = Store<T>(static_cast<Compute<T>>(keep ? 1 : 0));
        }
      }
    }
  });
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
