// SPDX-License-Identifier: Apache-2.0
// Scan: runs the body once per element of a sequence, carrying N states and
// stacking K per-iteration outputs, through KernelContext::RunSubgraph.
//
// Scan-9..21: inputs (states..., scan inputs...); each scan input is sliced
// along scan_input_axes[j] (default 0), backwards when
// scan_input_directions[j] is 1; scan output k stacks along
// scan_output_axes[k] (default 0), backwards when scan_output_directions[k]
// is 1. Axes may be negative.
// Scan-8: inputs (sequence_lens?, states..., scan inputs...) with a batch
// axis 0 everywhere and the sequence axis 1 of scan inputs (`directions`
// per scan input); each batch row runs its own sequence_lens[b] iterations
// (default: all), and scan outputs past a row's length are zero.
// Slices along axis 0 are views; other axes are gathered into one scratch
// buffer per scan input, reused every iteration. After zero iterations a
// scan output is empty with the body's declared shape (unknown dims 0).
#include <new>

#include "kernels/control_flow.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

// One scan input within the current sequence.
struct ScanIn {
  const uint8_t* base = nullptr;  // the sequence's data
  int64_t outer = 1;              // product of the dims before the axis
  uint64_t inner = 0;             // bytes of one slice row after the axis
  int64_t len = 0;                // dim along the axis
  bool reverse = false;
  TensorRef slice;         // what the body gets
  uint8_t* buf = nullptr;  // gather buffer when outer > 1
};

struct ScanRun {
  KernelContext* ctx;
  uint32_t n, k;
  Carried* states = nullptr;
  const int64_t* out_axes;     // k entries or nullptr (Scan-9)
  const int64_t* out_dirs;     // k entries or nullptr
  TensorRef* first;            // k: shape of the first slice of scan output k
  TensorRef** outs = nullptr;  // k: the node outputs, once allocated
  bool batched;                // Scan-8
  bool zero_fill;              // Scan-8 rows shorter than len_max
  int64_t batch, num_batches;
  int64_t len_max;  // output sequence dim
  int64_t len;      // iterations of this sequence
  int64_t iter;
};

// The product of dims[0, split) and the bytes of dims[inner_from, rank): the
// rows and row size around an axis. The dims are those of a live tensor (or
// a slice of one), so neither product overflows.
void Split(const int64_t* dims, uint32_t rank, uint32_t split, uint32_t inner_from, size_t esize,
           int64_t* outer, uint64_t* inner) {
  int64_t o = 1, i = 1;
  Product(dims, 0, split, &o);
  Product(dims, inner_from, rank, &i);
  *outer = o;
  *inner = static_cast<uint64_t>(i) * esize;
}

Status AllocScanOutput(ScanRun& r, uint32_t k, const TensorRef& v, uint32_t* axis) {
  KernelContext& ctx = *r.ctx;
  uint32_t lead = r.batched ? 2 : 1;
  if (v.rank + lead > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "scan output %u would have rank %u", k, v.rank + lead);
  int64_t a = 0;
  if (r.out_axes)
    EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, r.out_axes[k], v.rank + 1, "scan_output_axes", &a));
  int64_t dims[kMaxRank];
  uint32_t d = 0;
  if (r.batched) dims[d++] = r.num_batches;
  for (uint32_t i = 0; i < static_cast<uint32_t>(a); ++i) dims[d++] = v.dims[i];
  dims[d++] = r.len_max;
  for (uint32_t i = static_cast<uint32_t>(a); i < v.rank; ++i) dims[d++] = v.dims[i];
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(r.n + k, v.dtype, d, dims, &r.outs[k]));
  if (r.zero_fill && r.outs[k]->bytes) memset(r.outs[k]->data, 0, r.outs[k]->bytes);
  r.first[k] = v;
  *axis = static_cast<uint32_t>(a);
  return Status::Ok();
}

Status TakeScanOutput(void* user, size_t index, const TensorRef& v) {
  ScanRun& r = *static_cast<ScanRun*>(user);
  KernelContext& ctx = *r.ctx;
  if (index < r.n) return r.states[index].Set(ctx, v, "a scan state");
  uint32_t k = static_cast<uint32_t>(index - r.n);
  uint32_t axis = 0;
  if (!r.outs[k]) {
    EPCTX_RETURN_IF_ERROR(AllocScanOutput(r, k, v, &axis));
  } else {
    if (!SameShape(r.first[k], v))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scan output %u changed from %s %s to %s %s", k,
                      dtype_name(r.first[k].dtype), ShapeOf(r.first[k]).s, dtype_name(v.dtype),
                      ShapeOf(v).s);
    int64_t a = 0;
    if (r.out_axes)
      EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, r.out_axes[k], v.rank + 1, "scan_output_axes", &a));
    axis = static_cast<uint32_t>(a);
  }
  bool reverse = r.out_dirs && r.out_dirs[k] == 1;
  int64_t idx = reverse ? r.len - 1 - r.iter : r.iter;
  int64_t outer;
  uint64_t inner;
  Split(v.dims, v.rank, axis, axis, dtype_size(v.dtype), &outer, &inner);
  uint8_t* dst = static_cast<uint8_t*>(r.outs[k]->data) +
                 static_cast<uint64_t>(r.batch) * static_cast<uint64_t>(r.len_max) * v.bytes;
  const uint8_t* src = static_cast<const uint8_t*>(v.data);
  for (int64_t o = 0; o < outer && inner; ++o)
    memcpy(dst + (static_cast<uint64_t>(o) * r.len_max + idx) * inner, src + o * inner, inner);
  return Status::Ok();
}

// Prepares scan input `in` over a sequence of dims `dims` (rank) at `base`.
Status PrepareIn(KernelContext& ctx, ScanIn& in, const TensorRef& t, const uint8_t* base,
                 const int64_t* dims, uint32_t rank, uint32_t axis) {
  size_t esize = dtype_size(t.dtype);
  if (!esize) return UnsupportedDtype(ctx, "a scan input", t.dtype);
  in.base = base;
  in.len = dims[axis];
  Split(dims, rank, axis, axis + 1, esize, &in.outer, &in.inner);
  in.slice = TensorRef();
  in.slice.dtype = t.dtype;
  in.slice.rank = rank - 1;
  for (uint32_t i = 0, d = 0; i < rank; ++i)
    if (i != axis) in.slice.dims[d++] = dims[i];
  in.slice.bytes = static_cast<uint64_t>(in.outer) * in.inner;
  if (in.outer > 1 && !in.buf) {
    in.buf = static_cast<uint8_t*>(ctx.Scratch(in.slice.bytes, 64));
    if (!in.buf)
      return ctx.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for a %llu-byte scan slice",
                      static_cast<unsigned long long>(in.slice.bytes));
  }
  return Status::Ok();
}

void SliceAt(ScanIn& in, int64_t iter, int64_t len) {
  int64_t idx = in.reverse ? len - 1 - iter : iter;
  if (in.outer <= 1) {
    in.slice.data = const_cast<uint8_t*>(in.base) + static_cast<uint64_t>(idx) * in.inner;
    return;
  }
  in.slice.data = in.buf;
  for (int64_t o = 0; o < in.outer && in.inner; ++o)
    memcpy(in.buf + o * in.inner, in.base + (static_cast<uint64_t>(o) * in.len + idx) * in.inner,
           in.inner);
}

// Runs r.len iterations; ins holds the n states then the m slices.
Status RunSequence(ScanRun& r, ScanIn* scan_ins, uint32_t m, const TensorRef** ins) {
  for (r.iter = 0; r.iter < r.len; ++r.iter) {
    for (uint32_t i = 0; i < r.n; ++i) ins[i] = &r.states[i].t;
    for (uint32_t j = 0; j < m; ++j) {
      SliceAt(scan_ins[j], r.iter, r.len);
      ins[r.n + j] = &scan_ins[j].slice;
    }
    EPCTX_RETURN_IF_ERROR(r.ctx->RunSubgraph("body", ins, r.n + m, TakeScanOutput, &r));
  }
  return Status::Ok();
}

// An ints attribute that, when present, has `want` entries (directions: 0/1).
Status ListAttr(KernelContext& ctx, const char* name, uint32_t want, bool directions,
                const int64_t** out) {
  uint32_t count = 0;
  *out = nullptr;
  if (!ctx.AttrInts(name, out, &count)) return Status::Ok();
  if (count != want)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute '%s' has %u values, expected %u", name, count,
                    want);
  for (uint32_t i = 0; directions && i < count; ++i)
    if ((*out)[i] != 0 && (*out)[i] != 1)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute '%s'[%u] is %lld, expected 0 or 1", name, i,
                      static_cast<long long>((*out)[i]));
  return Status::Ok();
}

}  // namespace

Status Scan(KernelContext& ctx) {
  const onnx::GraphView* body = ctx.AttrGraph("body");
  if (!body) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute 'body' (a graph) is missing");
  const bool batched = ctx.opset() < 9;
  const uint32_t first = batched ? 1 : 0;  // Scan-8: sequence_lens comes first
  int64_t m64 = ctx.AttrInt("num_scan_inputs", -1);
  if (m64 < 1 || m64 > static_cast<int64_t>(ctx.num_inputs()) - first)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute 'num_scan_inputs' is %lld, expected 1..%u",
                    static_cast<long long>(m64), ctx.num_inputs() - first);
  const uint32_t m = static_cast<uint32_t>(m64);
  const uint32_t n = ctx.num_inputs() - first - m;
  if (ctx.num_outputs() < n || body->num_inputs != n + m || body->num_outputs != ctx.num_outputs())
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "%u states, %u scan inputs and %u outputs need a body of "
                    "%u inputs and %u outputs, found %u and %u",
                    n, m, ctx.num_outputs(), n + m, ctx.num_outputs(), body->num_inputs,
                    body->num_outputs);
  const uint32_t k = ctx.num_outputs() - n;
  const int64_t *in_axes, *in_dirs, *out_axes = nullptr, *out_dirs = nullptr;
  if (batched) {
    in_axes = nullptr;
    EPCTX_RETURN_IF_ERROR(ListAttr(ctx, "directions", m, true, &in_dirs));
  } else {
    EPCTX_RETURN_IF_ERROR(ListAttr(ctx, "scan_input_axes", m, false, &in_axes));
    EPCTX_RETURN_IF_ERROR(ListAttr(ctx, "scan_input_directions", m, true, &in_dirs));
    EPCTX_RETURN_IF_ERROR(ListAttr(ctx, "scan_output_axes", k, false, &out_axes));
    EPCTX_RETURN_IF_ERROR(ListAttr(ctx, "scan_output_directions", k, true, &out_dirs));
  }
  ScanIn* scan_ins = nullptr;
  uint32_t* axes = nullptr;
  Carried* states = nullptr;
  TensorRef* first_out = nullptr;
  TensorRef** outs = nullptr;
  const TensorRef** ins = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, m, &scan_ins));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, m, &axes));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &states));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, k, &first_out));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, k, &outs));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n + m, &ins));
  for (uint32_t i = 0; i < n; ++i) new (&states[i]) Carried();
  for (uint32_t q = 0; q < k; ++q) outs[q] = nullptr;

  // The batch (Scan-8) and the sequence length, which every scan input shares.
  int64_t num_batches = 1, len = -1;
  for (uint32_t j = 0; j < m; ++j) {
    new (&scan_ins[j]) ScanIn();
    const TensorRef* t = ctx.input(first + n + j);
    if (!t) return ctx.Fail(EPCTX_INVALID_GRAPH, "scan input %u is empty", j);
    int64_t axis = 1;
    if (batched) {
      if (t->rank < 2)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "scan input %u has shape %s; Scan-8 needs "
                        "[batch, sequence, ...]",
                        j, ShapeOf(*t).s);
      if (j > 0 && t->dims[0] != num_batches)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "scan input %u has batch %lld, expected %lld", j,
                        static_cast<long long>(t->dims[0]), static_cast<long long>(num_batches));
      num_batches = t->dims[0];
    } else {
      EPCTX_RETURN_IF_ERROR(
          NormalizeAxis(ctx, in_axes ? in_axes[j] : 0, t->rank, "scan_input_axes", &axis));
    }
    axes[j] = static_cast<uint32_t>(axis);
    if (len >= 0 && t->dims[axis] != len)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "scan input %u has %lld elements along its axis, "
                      "scan input 0 has %lld",
                      j, static_cast<long long>(t->dims[axis]), static_cast<long long>(len));
    len = t->dims[axis];
    scan_ins[j].reverse = in_dirs && in_dirs[j] == 1;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const TensorRef* t = ctx.input(first + i);
    if (!t) return ctx.Fail(EPCTX_INVALID_GRAPH, "state input %u is empty", i);
    if (batched && (t->rank < 1 || t->dims[0] != num_batches))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "state %u has shape %s, expected batch %lld first", i,
                      ShapeOf(*t).s, static_cast<long long>(num_batches));
  }
  const int64_t* lens = nullptr;
  bool zero_fill = false;
  if (batched && ctx.input(0)) {
    const TensorRef& sl = *ctx.input(0);
    if (sl.dtype != EPCTX_DTYPE_INT64 || sl.rank != 1 || sl.dims[0] != num_batches)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sequence_lens must be int64 [%lld], found %s %s",
                      static_cast<long long>(num_batches), dtype_name(sl.dtype), ShapeOf(sl).s);
    lens = static_cast<const int64_t*>(sl.data);
    for (int64_t b = 0; b < num_batches; ++b) {
      if (lens[b] < 0 || lens[b] > len)
        return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sequence_lens[%lld] is %lld, expected 0..%lld",
                        static_cast<long long>(b), static_cast<long long>(lens[b]),
                        static_cast<long long>(len));
      zero_fill = zero_fill || lens[b] != len;
    }
  }

  ScanRun r{&ctx,    n,         k, states,      out_axes, out_dirs, first_out, outs,
            batched, zero_fill, 0, num_batches, len,      len,      0};
  TensorRef** state_outs = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &state_outs));
  for (int64_t b = 0; b < num_batches; ++b) {
    r.batch = b;
    r.len = lens ? lens[b] : len;
    for (uint32_t i = 0; i < n; ++i) {
      // A batch row of the initial state (Scan-8) or the whole of it.
      const TensorRef& t = *ctx.input(first + i);
      TensorRef init = t;
      if (batched) {
        init.rank = t.rank - 1;
        for (uint32_t d = 0; d < init.rank; ++d) init.dims[d] = t.dims[d + 1];
        init.bytes = t.bytes / static_cast<uint64_t>(num_batches);
        init.data = static_cast<uint8_t*>(t.data) + static_cast<uint64_t>(b) * init.bytes;
      }
      states[i].t = init;
      states[i].cur = -1;
    }
    for (uint32_t j = 0; j < m; ++j) {
      const TensorRef& t = *ctx.input(first + n + j);
      const uint8_t* base = static_cast<const uint8_t*>(t.data);
      if (batched)
        EPCTX_RETURN_IF_ERROR(PrepareIn(ctx, scan_ins[j], t,
                                        base + static_cast<uint64_t>(b) * (t.bytes / num_batches),
                                        t.dims + 1, t.rank - 1, 0));
      else EPCTX_RETURN_IF_ERROR(PrepareIn(ctx, scan_ins[j], t, base, t.dims, t.rank, axes[j]));
    }
    EPCTX_RETURN_IF_ERROR(RunSequence(r, scan_ins, m, ins));
    for (uint32_t i = 0; i < n; ++i) {
      const TensorRef& v = states[i].t;
      if (!batched) {
        EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, i, v));
        continue;
      }
      if (b == 0) {
        if (v.rank + 1 > static_cast<uint32_t>(kMaxRank))
          return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "state output %u would have rank %u", i,
                          v.rank + 1);
        int64_t dims[kMaxRank];
        dims[0] = num_batches;
        for (uint32_t d = 0; d < v.rank; ++d) dims[d + 1] = v.dims[d];
        EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(i, v.dtype, v.rank + 1, dims, &state_outs[i]));
      } else {
        const TensorRef& o = *state_outs[i];
        bool same = o.dtype == v.dtype && o.rank == v.rank + 1;
        for (uint32_t d = 0; same && d < v.rank; ++d) same = o.dims[d + 1] == v.dims[d];
        if (!same)
          return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                          "state output %u of batch row %lld has shape "
                          "%s, row 0 had %s",
                          i, static_cast<long long>(b), ShapeOf(v).s,
                          ShapeOf(o.rank - 1, o.dims + 1).s);
      }
      if (v.bytes)
        memcpy(static_cast<uint8_t*>(state_outs[i]->data) + static_cast<uint64_t>(b) * v.bytes,
               v.data, v.bytes);
    }
  }
  // Outputs no iteration produced: empty (or, for Scan-8, zero) values.
  const int64_t lead[2] = {num_batches, len};
  for (uint32_t i = 0; batched && num_batches == 0 && i < n; ++i)
    EPCTX_RETURN_IF_ERROR(AllocEmptyScanOutput(ctx, i, body->outputs[i], lead, 1, 0));
  for (uint32_t q = 0; q < k; ++q) {
    if (outs[q]) continue;
    int64_t axis = 0;
    const onnx::ValueInfoView& decl = body->outputs[n + q];
    if (out_axes)
      EPCTX_RETURN_IF_ERROR(NormalizeAxis(ctx, out_axes[q], (decl.has_shape ? decl.rank : 0) + 1,
                                          "scan_output_axes", &axis));
    EPCTX_RETURN_IF_ERROR(AllocEmptyScanOutput(ctx, n + q, decl, batched ? lead : lead + 1,
                                               batched ? 2 : 1, static_cast<uint32_t>(axis)));
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
