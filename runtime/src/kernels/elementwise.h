/* SPDX-License-Identifier: Apache-2.0 */
// The one mechanism behind the elementwise kernels: apply a function to
// every element (MapUnary), to two broadcast operands (MapBinary), or fold
// it over any number of broadcast operands (MapVariadic), for every dtype in
// dtype mask.
//
// The function is a generic lambda over computed values (Compute<T>: float
// for float16/bfloat16, else T itself), so one lambda serves every dtype;
// the result is rounded back with Store<O>. O is the input's type, or a fixed
// type (bool for predicates). Integer lambdas must not overflow a signed
// type: wrap through WrapAdd/WrapSub/WrapMul/WrapNeg.
//
// Code size: each (op, dtype) is one loop, so the options share loops where
// the bits allow it: Ints::kAsUnsigned runs signed integers as their
// unsigned twins (wrapping +, -, *, ==), Operands::kSwapped lets an op reuse
// another's instantiation with its operands exchanged (Greater = Less of B,
// A), and copies go by element size (BroadcastCopy, DispatchSize).
//
// Also here: ConvertElem, the per-element conversion Cast defines and Clip,
// Pow and Shrink reuse, and Get, which reads bools as bytes (a tensor from a
// file may hold 2 in a bool; reading that as a C++ bool is undefined).
#ifndef EPCTX_KERNELS_ELEMENTWISE_H
#define EPCTX_KERNELS_ELEMENTWISE_H

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/broadcast.h"
#include "kernels/elem.h"
#include "kernels/kernel_util.h"
#include "epctx_uk/elementwise.h"

namespace epctx {
namespace kern {

template <typename T>
inline Compute<T> Get(const T* p, int64_t i) {
  return Load(p[i]);
}
inline bool Get(const bool* p, int64_t i) { return reinterpret_cast<const uint8_t*>(p)[i] != 0; }

// Two's-complement arithmetic for any integer type, without signed overflow.
template <typename T>
inline T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
inline T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T>
inline T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename T>
inline T WrapNeg(T a) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
}

// A floating value into integer type T: NaN is 0, out of range saturates
// (C++ leaves both undefined). double(max) may round up to 2^N, hence >=.
template <typename T>
inline T Saturate(double v) {
  if (v != v) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// One element converted as Cast does: to bool is "!= 0" (NaN is true);
// floating to integer saturates; integer to integer wraps; double to
// float16/bfloat16 rounds through float, as ORT does.
template <typename To, typename From>
inline To ConvertElem(Compute<From> v) {
  if constexpr (std::is_same<To, bool>::value) {
    return v != 0;
  } else if constexpr (kIsFloatLike<To>) {
    return Store<To>(static_cast<Compute<To>>(v));
  } else if constexpr (kIsFloatLike<From>) {
    return Saturate<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Output element type selector: the input's type, or a fixed type.
struct SameType {};
template <typename Out, typename T>
using OutType = typename std::conditional<std::is_same<Out, SameType>::value, T, Out>::type;

// Y = f(X) elementwise, X = input 0 with a dtype in mask.
// With `row` set, float X runs through that micro-kernel activation
// (uk::ActivateRow: vector rows at the CPU's widest instruction set) instead
// of f; f then serves the other dtypes and must mean the same function.
// alpha and beta: the activation's parameters (uk::Act).
template <uint32_t kMask, typename Out = SameType, typename F>
Status MapUnary(KernelContext& ctx, F f, const uk::Act* row = nullptr, float alpha = 1.0f,
                float beta = 0.0f) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (row && x->dtype == EPCTX_DTYPE_FLOAT) {
    TensorRef* y = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, x->dtype, x->rank, x->dims, &y));
    const float* in = static_cast<const float*>(x->data);
    float* out = static_cast<float*>(y->data);
    const uk::Act k = *row;
    ctx.ParallelRange(static_cast<int64_t>(x->elements()), 16, [&](int64_t lo, int64_t hi) {
      uk::ActivateRow(k, in + lo, out + lo, hi - lo, alpha, beta);
    });
    return Status::Ok();
  }
  Status st;
  const bool ok = Dispatch<kMask>(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using O = OutType<Out, T>;
    TensorRef* y = nullptr;
    st = ctx.AllocOutput(0, DtypeOf<O>(), x->rank, x->dims, &y);
    if (!st.ok()) return;
    const T* in = static_cast<const T*>(x->data);
    O* out = static_cast<O*>(y->data);
    ctx.ParallelRange(static_cast<int64_t>(x->elements()), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = Store<O>(f(Get(in, i)));
    });
  });
  if (!ok) return UnsupportedDtype(ctx, "X", x->dtype);
  return st;
}

// out = f(a, b) over output elements [e0, e1) of the broadcast iteration
// space bc (RunRows: all of them). out may alias a
// (the in-place variadic fold). Two loops per (op, type), not four: rows
// where both operands advance, and rows where one repeats (step 0) — the
// scalar-operand loops would double the code for little gain unvectorized.
template <typename TA, typename TB, typename TO, typename F>
void RunRowsSpan(const Broadcast& bc, int64_t e0, int64_t e1, const TA* a, const TB* b, TO* out,
                 F f) {
  ForEachRowSpan(bc, e0, e1,
                 [&](int64_t oa, int64_t ob, int64_t oo, int64_t n, int64_t da, int64_t db) {
                   const TA* pa = a + oa;
                   const TB* pb = b + ob;
                   TO* po = out + oo;
                   if (da == 1 && db == 1) {
                     for (int64_t i = 0; i < n; ++i) po[i] = Store<TO>(f(Get(pa, i), Get(pb, i)));
                   } else {
                     for (int64_t i = 0; i < n; ++i)
                       po[i] = Store<TO>(f(Get(pa, i * da), Get(pb, i * db)));
                   }
                 });
}

// RunRowsSpan for float through uk::BinaryRow's vector rows: each element is
// the one IEEE operation the scalar loop does, so the bits are the same.
// Short rows (a broadcast over a small last axis) stay scalar.
template <typename F>
void RunFloatRowsSpan(const Broadcast& bc, int64_t e0, int64_t e1, const float* a, const float* b,
                      float* out, uk::Bin k, F f) {
  ForEachRowSpan(bc, e0, e1,
                 [&](int64_t oa, int64_t ob, int64_t oo, int64_t n, int64_t da, int64_t db) {
                   const float* pa = a + oa;
                   const float* pb = b + ob;
                   float* po = out + oo;
                   if (n >= 16) {
                     uk::BinaryRow(k, pa, pb, po, n, static_cast<int>(da), static_cast<int>(db));
                   } else {
                     for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i * da], pb[i * db]);
                   }
                 });
}

template <typename TA, typename TB, typename TO, typename F>
void RunRows(const Broadcast& bc, const TA* a, const TB* b, TO* out, F f) {
  int64_t total = 1;
  for (uint32_t i = 0; i < bc.rank; ++i) total *= bc.dims[i];
  RunRowsSpan(bc, 0, total, a, b, out, f);
}

// dst = src broadcast over bc (dst as operand a, src as b), copying raw
// elements of elem_size bytes: one instantiation per size, not per dtype.
inline void BroadcastCopy(const Broadcast& bc, const void* src, void* dst, size_t elem_size) {
  DispatchSize(elem_size, [&](auto tag) {
    using U = decltype(tag);
    U* d = static_cast<U*>(dst);
    RunRows(bc, d, static_cast<const U*>(src), d, [](U, U v) { return v; });
  });
}

// INVALID_ARGUMENT when an integer divisor tensor holds a zero.
template <typename T>
Status CheckNoZero(KernelContext& ctx, const TensorRef& t, const char* what) {
  if constexpr (!kIsFloatLike<T>) {
    const T* p = static_cast<const T*>(t.data);
    const uint64_t n = t.elements();
    for (uint64_t i = 0; i < n; ++i)
      if (Get(p, static_cast<int64_t>(i)) == 0)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "integer division by zero (divisor %s %s, element %llu)", what,
                        ShapeOf(t).s, static_cast<unsigned long long>(i));
  }
  return Status::Ok();
}

// INVALID_ARGUMENT unless inputs a and b have the same dtype.
inline Status SameDtype(KernelContext& ctx, const TensorRef& a, const char* an, const TensorRef& b,
                        const char* bn) {
  if (a.dtype != b.dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s is %s but %s is %s; expected one type", an,
                    dtype_name(a.dtype), bn, dtype_name(b.dtype));
  return Status::Ok();
}

enum class Divisor { kAny, kNonZeroInt };

// How a binary op treats signed integers: as themselves, or as their
// unsigned twins when the op's bits do not depend on the sign (wrapping +,
// -, *, ==), which halves the integer instantiations.
enum class Ints { kSigned, kAsUnsigned };

// Which input is f's first operand: kSwapped computes f(B, A), so an op
// that is another with its operands exchanged (Greater is Less of B and A)
// shares that op's code.
enum class Operands { kInOrder, kSwapped };

// C = f(A, B) with numpy broadcasting; A and B share a dtype in mask. With
// Divisor::kNonZeroInt an integer B holding 0 is INVALID_ARGUMENT. an and bn
// name inputs 0 and 1.
template <uint32_t kMask, typename Out = SameType, Ints kIntMode = Ints::kSigned, typename F>
// With `row` set, float operands run through that micro-kernel op
// (RunFloatRowsSpan); f must compute the same IEEE operation.
Status MapBinary(KernelContext& ctx, F f, Divisor divisor = Divisor::kAny, const char* an = "A",
                 const char* bn = "B", Operands order = Operands::kInOrder,
                 const uk::Bin* row = nullptr) {
  const TensorRef *a, *b;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, an, &a));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, bn, &b));
  EPCTX_RETURN_IF_ERROR(SameDtype(ctx, *a, an, *b, bn));
  Broadcast bc;
  EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, a->rank, a->dims, b->rank, b->dims, &bc));
  if (!InMask(a->dtype, kMask)) return UnsupportedDtype(ctx, an, a->dtype);
  // Errors above name the inputs in order; from here on f sees B first.
  if (order == Operands::kSwapped) {
    const TensorRef* t = a;
    a = b;
    b = t;
    bn = an;
    EPCTX_RETURN_IF_ERROR(MakeBroadcast(ctx, a->rank, a->dims, b->rank, b->dims, &bc));
  }
  constexpr bool kTwin = kIntMode == Ints::kAsUnsigned;
  Status st;
  Dispatch<kTwin ? UnsignedTwins(kMask) : kMask>(
      kTwin ? UnsignedTwin(a->dtype) : a->dtype, [&](auto tag) {
        using T = decltype(tag);
        using O = OutType<Out, T>;
        if (divisor == Divisor::kNonZeroInt) {
          st = CheckNoZero<T>(ctx, *b, bn);
          if (!st.ok()) return;
        }
        TensorRef* y = nullptr;
        const int32_t out_dtype = std::is_same<Out, SameType>::value ? a->dtype : DtypeOf<O>();
        st = ctx.AllocOutput(0, out_dtype, bc.out_rank, bc.out_dims, &y);
        if (!st.ok() || y->elements() == 0) return;
        // Each thread takes a run of output elements: no element depends on
        // another, so the split never changes a result.
        if constexpr (std::is_same<T, float>::value && std::is_same<O, float>::value) {
          if (row) {
            const uk::Bin k = *row;
            ctx.ParallelRange(static_cast<int64_t>(y->elements()), 1, [&](int64_t e0, int64_t e1) {
              RunFloatRowsSpan(bc, e0, e1, static_cast<const float*>(a->data),
                               static_cast<const float*>(b->data), static_cast<float*>(y->data), k,
                               f);
            });
            return;
          }
        }
        ctx.ParallelRange(static_cast<int64_t>(y->elements()), 1, [&](int64_t e0, int64_t e1) {
          RunRowsSpan(bc, e0, e1, static_cast<const T*>(a->data), static_cast<const T*>(b->data),
                      static_cast<O*>(y->data), f);
        });
      });
  return st;
}

// Y = f(...f(f(x0, x1), x2)..., xn) with numpy broadcasting over every input
// (all of one dtype in mask); with `mean`, Y is then divided by the count.
template <uint32_t kMask, Ints kIntMode = Ints::kSigned, typename F>
Status MapVariadic(KernelContext& ctx, F f, bool mean = false) {
  if (ctx.num_inputs() == 0)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "expected at least one input, found none");
  const TensorRef* first;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "data_0", &first));
  uint32_t rank = first->rank;
  int64_t dims[kMaxRank];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = first->dims[d];
  for (uint32_t i = 1; i < ctx.num_inputs(); ++i) {
    const TensorRef* in;
    EPCTX_RETURN_IF_ERROR(Input(ctx, i, "data_i", &in));
    if (in->dtype != first->dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %u is %s, expected %s like input 0", i,
                      dtype_name(in->dtype), dtype_name(first->dtype));
    int64_t next[kMaxRank];
    EPCTX_RETURN_IF_ERROR(BroadcastShape(ctx, rank, dims, in->rank, in->dims, &rank, next));
    for (uint32_t d = 0; d < rank; ++d) dims[d] = next[d];
  }
  if (!InMask(first->dtype, kMask)) return UnsupportedDtype(ctx, "data_0", first->dtype);
  constexpr bool kTwin = kIntMode == Ints::kAsUnsigned;
  Status st;
  Dispatch<kTwin ? UnsignedTwins(kMask) : kMask>(
      kTwin ? UnsignedTwin(first->dtype) : first->dtype, [&](auto tag) {
        using T = decltype(tag);
        TensorRef* y = nullptr;
        st = ctx.AllocOutput(0, first->dtype, rank, dims, &y);
        if (!st.ok() || y->elements() == 0) return;
        T* out = static_cast<T*>(y->data);
        for (uint32_t i = 0; i < ctx.num_inputs(); ++i) {
          const TensorRef* in = ctx.input(i);
          Broadcast bc;
          st = MakeBroadcast(ctx, rank, dims, in->rank, in->dims, &bc);
          if (!st.ok()) return;
          if (i == 0) {
            BroadcastCopy(bc, in->data, out, sizeof(T));
          } else {
            // Element runs per thread; each element still folds in input order.
            ctx.ParallelRange(static_cast<int64_t>(y->elements()), 1, [&](int64_t e0, int64_t e1) {
              RunRowsSpan(bc, e0, e1, out, static_cast<const T*>(in->data), out, f);
            });
          }
        }
        if constexpr (kIsFloatLike<T>) {
          if (mean) {
            const Compute<T> count = static_cast<Compute<T>>(ctx.num_inputs());
            ctx.ParallelRange(static_cast<int64_t>(y->elements()), 1, [&](int64_t j0, int64_t j1) {
              for (int64_t j = j0; j < j1; ++j) out[j] = Store<T>(Load(out[j]) / count);
            });
          }
        }
      });
  return st;
}

}  // namespace kern
}  // namespace epctx

#endif
