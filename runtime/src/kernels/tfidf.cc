// SPDX-License-Identifier: Apache-2.0
// TfIdfVectorizer (opset 9) for int32/int64 input with pool_int64s
// (pool_strings needs string tensors: NOT_IMPLEMENTED).
//
// Counting follows ORT: with min_gram_length 1 every 1-gram is counted once;
// then for each skip distance 1..max_skip_count+1 and each start position,
// the n-grams of that distance with n in [max(min, 2), max] are looked up.
// The pool's n-grams of the sizes in range are sorted (MergeSort) once per
// call and found by binary search; a duplicate n-gram is an INVALID_GRAPH,
// as in ORT. Output: counts (TF), 1/0 or weights (IDF), counts * weights
// (TFIDF), as float, shape [C'] or [B, C'] with C' = max(ngram_indexes)+1.
// Weights apply by output column, as in ORT (the spec says by pool n-gram).
#include <cstring>

#include "kernels/data_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

struct Gram {
  int64_t start;  // in the pool
  int64_t size;
  int64_t id;  // position among all n-grams of the pool
};

// Orders grams by size, then items.
struct GramOrder {
  const Gram* grams;
  const int64_t* pool;
  int Compare(int64_t a, int64_t b) const {
    const Gram& x = grams[a];
    const Gram& y = grams[b];
    if (x.size != y.size) return x.size < y.size ? -1 : 1;
    for (int64_t i = 0; i < x.size; ++i) {
      const int64_t u = pool[x.start + i], v = pool[y.start + i];
      if (u != v) return u < v ? -1 : 1;
    }
    return 0;
  }
};

// Index into grams of the n-gram equal to items[0..n), or -1.
int64_t Find(const Gram* grams, const int64_t* order, int64_t count, const int64_t* pool,
             const int64_t* items, int64_t n) {
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const Gram& g = grams[order[mid]];
    int c = g.size < n ? -1 : (g.size > n ? 1 : 0);
    for (int64_t i = 0; c == 0 && i < n; ++i)
      if (pool[g.start + i] != items[i]) c = pool[g.start + i] < items[i] ? -1 : 1;
    if (c == 0) return order[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

}  // namespace

Status TfIdfVectorizer(KernelContext& ctx) {
  const TensorRef* x;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &x));
  if (x->dtype != EPCTX_DTYPE_INT32 && x->dtype != EPCTX_DTYPE_INT64)
    return UnsupportedDtype(ctx, "X", x->dtype);
  if (x->rank > 2 || (x->rank == 2 && x->dims[0] < 1))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                    "X must have shape [C] or [B, C] with B > 0, "
                    "found %s",
                    ShapeOf(*x).s);
  const StrView ms = ctx.AttrString("mode", "");
  const int mode = ms.eq("TF") ? 1 : ms.eq("IDF") ? 2 : ms.eq("TFIDF") ? 3 : 0;
  if (!mode)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute mode is '%.*s', expected TF, IDF or TFIDF",
                    ms.len(), ms.data);
  const int64_t min_n = ctx.AttrInt("min_gram_length", 0);
  const int64_t max_n = ctx.AttrInt("max_gram_length", 0);
  const int64_t max_skip = ctx.AttrInt("max_skip_count", -1);
  const int64_t *counts = nullptr, *indexes = nullptr, *pool = nullptr;
  const float* weights = nullptr;
  uint32_t nc = 0, ni = 0, np = 0, nw = 0;
  ctx.AttrInts("ngram_counts", &counts, &nc);
  ctx.AttrInts("ngram_indexes", &indexes, &ni);
  const bool has_weights = ctx.AttrFloats("weights", &weights, &nw);
  if (ctx.node().attr("pool_strings"))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "pool_strings (string n-grams) is not supported");
  ctx.AttrInts("pool_int64s", &pool, &np);
  if (min_n < 1 || max_n < min_n || max_skip < 0 || nc == 0 || ni == 0 || np == 0 ||
      max_n > static_cast<int64_t>(nc) || (has_weights && nw != ni))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attributes must satisfy 1 <= min_gram_length (%lld) <= max_gram_length "
                    "(%lld) <= len(ngram_counts) (%u), max_skip_count (%lld) >= 0, non-empty "
                    "ngram_indexes (%u) and pool_int64s (%u), weights (%u) as long as "
                    "ngram_indexes",
                    static_cast<long long>(min_n), static_cast<long long>(max_n), nc,
                    static_cast<long long>(max_skip), ni, np, has_weights ? nw : ni);
  int64_t out_size = 0;
  for (uint32_t i = 0; i < ni; ++i) {
    if (indexes[i] < 0 || indexes[i] == INT64_MAX)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "ngram_indexes[%u] is %lld, expected >= 0", i,
                      static_cast<long long>(indexes[i]));
    if (indexes[i] + 1 > out_size) out_size = indexes[i] + 1;
  }
  // ORT weighs output column i by weights[i].
  if (has_weights && out_size > static_cast<int64_t>(nw))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "weights has %u values for %lld output columns", nw,
                    static_cast<long long>(out_size));
  // The pool's n-grams of sizes in [min_n, max_n].
  Gram* grams = nullptr;
  int64_t *order = nullptr, *tmp = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, np, &grams));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, np, &order));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, np, &tmp));
  int64_t ng = 0, id = 0;
  for (uint32_t i = 0; i < nc; ++i) {
    const int64_t size = i + 1;
    const int64_t start = counts[i];
    const int64_t end = i + 1 < nc ? counts[i + 1] : static_cast<int64_t>(np);
    if (start < 0 || end < start || end > static_cast<int64_t>(np) || (end - start) % size)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "ngram_counts[%u] = %lld: the %lld-grams [%lld, %lld) of pool_int64s "
                      "(%u items) are out of bounds or not whole",
                      i, static_cast<long long>(start), static_cast<long long>(size),
                      static_cast<long long>(start), static_cast<long long>(end), np);
    for (int64_t s = start; s < end; s += size, ++id) {
      if (size < min_n || size > max_n) continue;
      if (id >= static_cast<int64_t>(ni))
        return ctx.Fail(EPCTX_INVALID_GRAPH, "pool_int64s has more n-grams than ngram_indexes (%u)",
                        ni);
      grams[ng] = Gram{s, size, id};
      order[ng] = ng;
      ++ng;
    }
  }
  const GramOrder cmp{grams, pool};
  MergeSort(order, tmp, ng, cmp);
  for (int64_t i = 1; i < ng; ++i)
    if (cmp.Compare(order[i - 1], order[i]) == 0)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "pool_int64s holds a duplicate %lld-gram",
                      static_cast<long long>(grams[order[i]].size));
  const int64_t rows = x->rank == 2 ? x->dims[0] : 1;
  const int64_t cols = x->rank == 0 ? 1 : x->dims[x->rank - 1];
  int64_t dims[2] = {rows, out_size};
  const uint32_t out_rank = x->rank == 2 ? 2 : 1;
  if (out_rank == 1) dims[0] = out_size;
  EPCTX_RETURN_IF_ERROR(CheckShape(ctx, out_rank, dims, 4, "output"));
  TensorRef* y = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(0, EPCTX_DTYPE_FLOAT, out_rank, dims, &y));
  float* out = static_cast<float*>(y->data);
  const uint64_t total = y->elements();
  for (uint64_t i = 0; i < total; ++i) out[i] = 0.0f;
  int64_t* sample = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, static_cast<uint64_t>(max_n), &sample));
  // out holds the counts until the weighting below.
  for (int64_t r = 0; r < rows; ++r) {
    float* freq = out + r * out_size;
    const int64_t base = r * cols;
    auto hit = [&](int64_t n) {
      const int64_t g = Find(grams, order, ng, pool, sample, n);
      if (g >= 0) freq[indexes[grams[g].id]] += 1.0f;
    };
    int64_t first_n = min_n;
    if (first_n == 1) {
      for (int64_t c = 0; c < cols; ++c) {
        sample[0] = IndexAt(*x, static_cast<uint64_t>(base + c));
        hit(1);
      }
      if (++first_n > max_n) continue;
    }
    // Distances past the row cannot fit a 2-gram: cap them.
    const int64_t max_dist = max_skip + 1 < cols ? max_skip + 1 : cols;
    for (int64_t dist = 1; dist <= max_dist; ++dist) {
      for (int64_t c = 0; c < cols; ++c) {
        if ((first_n - 1) > (cols - 1 - c) / dist) break;  // first_n items do not fit
        int64_t n = 0;
        for (int64_t p = c; n < max_n && p < cols; p += dist) {
          sample[n++] = IndexAt(*x, static_cast<uint64_t>(base + p));
          if (n >= first_n) hit(n);
        }
      }
    }
  }
  for (uint64_t i = 0; i < total; ++i) {
    const float f = out[i];
    const float w = has_weights ? weights[i % static_cast<uint64_t>(out_size)] : 1.0f;
    if (mode == 2) out[i] = f > 0.0f ? w : 0.0f;
    else if (mode == 3) out[i] = f * w;
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
