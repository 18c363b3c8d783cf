// SPDX-License-Identifier: Apache-2.0
// If and Loop: kernels that run subgraphs through the session's run loop
// (KernelContext::RunSubgraph); Scan is in scan.cc.
//
// If (1-21): runs then_branch or else_branch by the single element of `cond`
// and copies the branch's outputs (their shapes may differ per branch).
// Loop (1-21), tensors only: M (max trip count) and cond are optional; the
// body gets (iteration_num, cond, carried...) and returns (cond, carried...,
// scan outputs...). As in ORT, the body's cond output is read even when the
// node's cond input is omitted, and iteration_num/cond are fed with the rank
// the body declares for them (0 or 1). Scan outputs are stacked along a new
// axis 0 and must keep one shape; after zero iterations they are empty with
// the body's declared shape (unknown dims 0). A Loop without M and cond runs
// until the body's cond turns false (or memory runs out), as the spec says.
#include "kernels/control_flow.h"

#include <new>

#include "kernels/kernel_util.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {

Status AllocEmptyScanOutput(KernelContext& ctx, uint32_t index, const onnx::ValueInfoView& decl,
                            const int64_t* lead, uint32_t num_lead, uint32_t axis) {
  if (!decl.is_tensor || !dtype_size(decl.dtype))
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "output %u is empty, and the subgraph does not declare "
                    "the element type of its output '%.*s'",
                    index, decl.name.len(), decl.name.data);
  uint32_t rank = decl.has_shape ? decl.rank : 0;
  if (rank + num_lead > static_cast<uint32_t>(kMaxRank) || axis > rank)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "empty output %u would have rank %u", index,
                    rank + num_lead);
  int64_t dims[kMaxRank];
  uint32_t r = 0;
  for (uint32_t i = 0; i < axis; ++i) dims[r++] = decl.dims[i] < 0 ? 0 : decl.dims[i];
  for (uint32_t i = 0; i < num_lead; ++i) dims[r++] = lead[i];
  for (uint32_t i = axis; i < rank; ++i) dims[r++] = decl.dims[i] < 0 ? 0 : decl.dims[i];
  TensorRef* out = nullptr;
  EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(index, decl.dtype, r, dims, &out));
  if (out->bytes) memset(out->data, 0, out->bytes);
  return Status::Ok();
}

namespace {

// Reads the single element of a bool or int64 scalar input.
Status ScalarInput(KernelContext& ctx, const TensorRef& t, const char* what, int32_t dtype,
                   int64_t* out) {
  if (t.dtype != dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must be %s, found %s", what, dtype_name(dtype),
                    dtype_name(t.dtype));
  if (t.elements() != 1)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must hold one element, found shape %s", what,
                    ShapeOf(t).s);
  *out = dtype == EPCTX_DTYPE_BOOL ? (*static_cast<const uint8_t*>(t.data) != 0)
                                   : *static_cast<const int64_t*>(t.data);
  return Status::Ok();
}

Status CopyBranchOutput(void* user, size_t index, const TensorRef& v) {
  return CopyToOutput(*static_cast<KernelContext*>(user), static_cast<uint32_t>(index), v);
}

// ---- Loop ----

// A scan output of Loop: the per-iteration values, stacked as they come.
struct Stacked {
  TensorRef first;  // dtype and shape of iteration 0
  uint8_t* data = nullptr;
  uint64_t cap = 0;
  uint64_t count = 0;

  Status Append(KernelContext& ctx, const TensorRef& v, uint32_t k) {
    if (count == 0) first = v;
    else if (!SameShape(first, v))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "scan output %u changed from %s %s to %s %s in "
                      "iteration %llu",
                      k, dtype_name(first.dtype), ShapeOf(first).s, dtype_name(v.dtype),
                      ShapeOf(v).s, static_cast<unsigned long long>(count));
    uint64_t used = count * v.bytes;
    if (v.bytes > cap - used) {
      uint64_t want = cap > UINT64_MAX / 4 ? 0 : 2 * cap;
      if (want < used + v.bytes) want = used + v.bytes;
      uint8_t* p = static_cast<uint8_t*>(ctx.Scratch(want, 64));
      if (!p)
        return ctx.Fail(EPCTX_OUT_OF_MEMORY, "out of memory for %llu iterations of scan output %u",
                        static_cast<unsigned long long>(count + 1), k);
      if (used) memcpy(p, data, used);
      data = p;
      cap = want;
    }
    if (v.bytes) memcpy(data + used, v.data, v.bytes);
    ++count;
    return Status::Ok();
  }
};

struct LoopRun {
  KernelContext* ctx;
  uint32_t num_carried;
  Carried* carried = nullptr;
  Stacked* stacked = nullptr;
  bool cond;
};

Status TakeLoopOutput(void* user, size_t index, const TensorRef& v) {
  LoopRun& r = *static_cast<LoopRun*>(user);
  KernelContext& ctx = *r.ctx;
  if (index == 0) {
    int64_t c = 0;
    EPCTX_RETURN_IF_ERROR(ScalarInput(ctx, v, "the body's cond output", EPCTX_DTYPE_BOOL, &c));
    r.cond = c != 0;
    return Status::Ok();
  }
  if (index <= r.num_carried) return r.carried[index - 1].Set(ctx, v, "a loop-carried value");
  uint32_t k = static_cast<uint32_t>(index - 1 - r.num_carried);
  return r.stacked[k].Append(ctx, v, k);
}

// A scalar fed to the body with the rank its input declares (0 or [1]).
TensorRef BodyScalar(const onnx::ValueInfoView& decl, int32_t dtype, void* data) {
  TensorRef t;
  t.dtype = dtype;
  t.rank = decl.has_shape && decl.rank == 1 ? 1 : 0;
  t.dims[0] = 1;
  t.data = data;
  t.bytes = dtype_size(dtype);
  return t;
}

}  // namespace

Status If(KernelContext& ctx) {
  const TensorRef* cond;
  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "cond", &cond));
  int64_t c = 0;
  EPCTX_RETURN_IF_ERROR(ScalarInput(ctx, *cond, "input 'cond'", EPCTX_DTYPE_BOOL, &c));
  const char* branch = c ? "then_branch" : "else_branch";
  const onnx::GraphView* g = ctx.AttrGraph(branch);
  if (!g) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute '%s' (a graph) is missing", branch);
  if (g->num_outputs != ctx.num_outputs())
    return ctx.Fail(EPCTX_INVALID_GRAPH, "%s has %u outputs, the node %u", branch, g->num_outputs,
                    ctx.num_outputs());
  return ctx.RunSubgraph(branch, nullptr, 0, CopyBranchOutput, &ctx);
}

Status Loop(KernelContext& ctx) {
  const onnx::GraphView* body = ctx.AttrGraph("body");
  if (!body) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute 'body' (a graph) is missing");
  if (ctx.num_inputs() < 2)
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "needs inputs M and cond (each may be empty), found %u "
                    "inputs",
                    ctx.num_inputs());
  const uint32_t n = ctx.num_inputs() - 2;  // loop-carried values
  if (ctx.num_outputs() < n || body->num_inputs != n + 2 ||
      body->num_outputs != 1 + ctx.num_outputs())
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "%u loop-carried inputs and %u outputs need a body of "
                    "%u inputs and %u outputs, found %u and %u",
                    n, ctx.num_outputs(), n + 2, 1 + ctx.num_outputs(), body->num_inputs,
                    body->num_outputs);
  const uint32_t k_out = ctx.num_outputs() - n;  // scan outputs
  int64_t max_trips = INT64_MAX, cond = 1;
  if (ctx.input(0))
    EPCTX_RETURN_IF_ERROR(
        ScalarInput(ctx, *ctx.input(0), "input 'M'", EPCTX_DTYPE_INT64, &max_trips));
  if (ctx.input(1))
    EPCTX_RETURN_IF_ERROR(ScalarInput(ctx, *ctx.input(1), "input 'cond'", EPCTX_DTYPE_BOOL, &cond));
  Carried* carried = nullptr;
  Stacked* stacked = nullptr;
  const TensorRef** ins = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n, &carried));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, k_out, &stacked));
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, n + 2, &ins));
  for (uint32_t i = 0; i < n; ++i) {
    new (&carried[i]) Carried();
    const TensorRef* v = ctx.input(2 + i);
    if (!v) return ctx.Fail(EPCTX_INVALID_GRAPH, "loop-carried input %u is empty", 2 + i);
    carried[i].t = *v;
  }
  for (uint32_t k = 0; k < k_out; ++k) new (&stacked[k]) Stacked();
  int64_t iter = 0;
  uint8_t cond_in = 0;
  TensorRef iter_t = BodyScalar(body->inputs[0], EPCTX_DTYPE_INT64, &iter);
  TensorRef cond_t = BodyScalar(body->inputs[1], EPCTX_DTYPE_BOOL, &cond_in);
  LoopRun run{&ctx, n, carried, stacked, cond != 0};
  for (; iter < max_trips && run.cond; ++iter) {
    cond_in = 1;
    ins[0] = &iter_t;
    ins[1] = &cond_t;
    for (uint32_t i = 0; i < n; ++i) ins[2 + i] = &carried[i].t;
    EPCTX_RETURN_IF_ERROR(ctx.RunSubgraph("body", ins, n + 2, TakeLoopOutput, &run));
  }
  for (uint32_t i = 0; i < n; ++i) EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, i, carried[i].t));
  for (uint32_t k = 0; k < k_out; ++k) {
    const Stacked& s = stacked[k];
    const int64_t zero = 0;
    if (s.count == 0) {
      EPCTX_RETURN_IF_ERROR(
          AllocEmptyScanOutput(ctx, n + k, body->outputs[1 + n + k], &zero, 1, 0));
      continue;
    }
    if (s.first.rank + 1 > static_cast<uint32_t>(kMaxRank))
      return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "scan output %u would have rank %u", k,
                      s.first.rank + 1);
    int64_t dims[kMaxRank];
    dims[0] = static_cast<int64_t>(s.count);
    for (uint32_t d = 0; d < s.first.rank; ++d) dims[1 + d] = s.first.dims[d];
    TensorRef* out = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx.AllocOutput(n + k, s.first.dtype, s.first.rank + 1, dims, &out));
    if (out->bytes) memcpy(out->data, s.data, out->bytes);
  }
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
