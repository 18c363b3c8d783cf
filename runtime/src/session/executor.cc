// SPDX-License-Identifier: Apache-2.0
// The executor (executor.h): RunPlan binds a graph's inputs, checking them
// against the graph's declarations, runs its steps in order and emits its
// outputs; run_subgraph is the control-flow kernels' way back in.
#include "session/executor.h"

namespace epctx {

using runmem::alloc_output;
using runmem::scratch;
using runmem::view_output;

Status node_error(const Step& s, const char* label, int code, const char* what) {
  return Status::Error(code, "%s: node '%.*s' (%.*s): %s", label, s.node->name.len(),
                       s.node->name.data, s.node->op_type.len(), s.node->op_type.data, what);
}

namespace {

// A declared scalar fed as a 1-element rank-1 tensor, which ONNX Runtime
// accepts (and many applications send): bound as the scalar it holds.
bool scalar_as_rank1(const onnx::ValueInfoView& info, const TensorRef& t) {
  return info.has_shape && info.rank == 0 && t.rank == 1 && t.dims[0] == 1;
}

bool shape_matches(const onnx::ValueInfoView& info, const TensorRef& t) {
  if (!info.has_shape || scalar_as_rank1(info, t)) return true;
  if (info.rank != t.rank) return false;
  for (uint32_t i = 0; i < t.rank; ++i)
    if (info.dims[i] >= 0 && info.dims[i] != t.dims[i]) return false;
  return true;
}

// A value given for graph input `info`: its declared element type, and for
// the main graph its declared shape (subgraph declarations are often stale
// or partial, and ORT does not hold loop bodies to them either).
Status check_input(const char* label, const onnx::ValueInfoView& info, const TensorRef& t,
                   bool check_shape) {
  if (info.is_tensor && info.dtype != 0 && info.dtype != t.dtype)
    return Status::Error(EPCTX_INVALID_ARGUMENT,
                         "%s: input '%.*s': expected element type %s, "
                         "found %s",
                         label, info.name.len(), info.name.data, dtype_name(info.dtype),
                         dtype_name(t.dtype));
  if (check_shape && t.dtype == EPCTX_DTYPE_BOOL) {
    // Kernels load bool elements as C++ bool: any byte but 0/1 is undefined.
    const int64_t bad = first_non_bool(t.data, t.bytes);
    if (bad >= 0)
      return Status::Error(EPCTX_INVALID_ARGUMENT,
                           "%s: input '%.*s': bool element %lld is byte %u, expected 0 or 1", label,
                           info.name.len(), info.name.data, static_cast<long long>(bad),
                           static_cast<const uint8_t*>(t.data)[bad]);
  }
  if (!check_shape || shape_matches(info, t)) return Status::Ok();
  char want[128], got[128];
  size_t a = 0, b = 0;
  for (uint32_t d = 0; d < info.rank; ++d)
    a += format(want + a, sizeof want - a, "%s%lld", d ? "," : "", (long long)info.dims[d]);
  for (uint32_t d = 0; d < t.rank; ++d)
    b += format(got + b, sizeof got - b, "%s%lld", d ? "," : "", (long long)t.dims[d]);
  want[a < sizeof want ? a : sizeof want - 1] = '\0';
  got[b < sizeof got ? b : sizeof got - 1] = '\0';
  return Status::Error(EPCTX_INVALID_ARGUMENT,
                       "%s: input '%.*s': expected shape [%s] (-1 = any), found [%s]", label,
                       info.name.len(), info.name.data, want, got);
}

Status run_subgraph(void* user, const onnx::AttributeView& attr, const TensorRef* const* inputs,
                    uint32_t num_inputs, ValueSink emit, void* emit_user);

// Runs the ordered steps of rs.plan; the graph inputs are bound already.
Status run_steps(RunState& rs) {
  const GraphPlan& p = *rs.plan;
  KernelHost host{&rs, alloc_output, view_output, scratch, run_subgraph};
  host.pool = rs.pool;
  const TensorRef* in_refs[64];
  for (uint32_t si = 0; si < p.num_steps; ++si) {
    const Step& s = p.steps[si];
    rs.step = &s;
    if (rs.control) EPCTX_RETURN_IF_ERROR(rs.control->Check(rs.label, si));
    if (s.num_inputs > 64 || s.num_outputs > 64)
      return node_error(s, rs.label, EPCTX_NOT_IMPLEMENTED, "more than 64 inputs or outputs");
    for (uint32_t i = 0; i < s.num_inputs; ++i) {
      uint32_t v = s.inputs[i];
      in_refs[i] = v == UINT32_MAX ? nullptr : &rs.slots[v].t;
      if (v != UINT32_MAX && !rs.slots[v].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH, "an input was never computed");
    }
    for (uint32_t i = 0; i < s.num_implicit; ++i)
      if (!rs.slots[s.implicit[i]].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH,
                          "a value its subgraphs read was never computed");
    if (s.kernel) {
      KernelContext kc(*s.node, s.opset, in_refs, s.num_inputs, host, s.kernel_state);
      Status ks = s.kernel(kc);
      Status as = kc.AttrStatus();  // a mistyped attribute explains any other failure
      if (!as.ok()) ks = as;
      if (!ks.ok()) {
        // A subgraph's scope goes in front while the message has room.
        if (!p.parent || ks.HasRoom()) ks.Prefix("%s", rs.label);
        return ks;
      }
    } else {
      EPCTX_RETURN_IF_ERROR(run_driver_step(rs, s, in_refs));
    }
    rs.FreeList(&rs.scratch);
    if (rs.mem) rs.mem->scratch_used = rs.scratch_mark;
    for (uint32_t o = 0; o < s.num_outputs; ++o)
      if (s.outputs[o] != UINT32_MAX && !rs.slots[s.outputs[o]].set)
        return node_error(s, rs.label, EPCTX_INVALID_GRAPH, "the kernel did not produce an output");
    for (uint32_t k = 0; k < s.num_inputs + s.num_implicit; ++k) {
      uint32_t v = k < s.num_inputs ? s.inputs[k] : s.implicit[k - s.num_inputs];
      if (v == UINT32_MAX) continue;
      Slot& slot = rs.slots[v];
      if (--slot.remaining == 0 && !p.values[v].graph_output) rs.Release(slot.buf);
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunPlan(const Allocator& alloc, const GraphPlan& p, const RunState* parent,
               const MainRun* main, const TensorRef* const* inputs, const uint32_t* outs,
               size_t num_outs, ValueSink emit, void* user) {
  const onnx::GraphView& g = *p.graph;
  RunState rs;
  rs.alloc = &alloc;
  rs.plan = &p;
  rs.parent = parent;
  rs.label = p.label;
  rs.step = nullptr;
  rs.mplan = main ? main->plan : nullptr;
  rs.arena = main ? main->arena : nullptr;
  rs.mem = main ? main->mem : parent ? parent->mem : nullptr;
  rs.scratch_mark = rs.mem ? rs.mem->scratch_used : 0;
  rs.seen = main ? main->seen : nullptr;
  rs.control = main ? main->control : parent ? parent->control : nullptr;
  rs.pool = main ? main->pool : parent ? parent->pool : nullptr;
  rs.Init();
  rs.slots = main ? main->mem->slots
                  : static_cast<Slot*>(alloc.Alloc(sizeof(Slot) * (p.num_values + 1), 16));
  if (!rs.slots) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for a run", p.label);
  // The main graph's slots outlive the run in its RunMemory: the constants
  // bound by its first run stay bound, later runs reset only the rest.
  const bool primed = main && main->mem->slots_primed;
  if (!primed)
    for (uint32_t v = 0; v <= p.num_values; ++v) rs.slots[v] = Slot{};
  else rs.slots[p.num_values] = Slot{};
  if (main) main->mem->slots_primed = true;
  Status st = [&]() -> Status {
    for (uint32_t v = 0; v < p.num_values; ++v) {
      const Value& val = p.values[v];
      Slot& slot = rs.slots[v];
      slot.remaining = val.consumers;
      if (val.constant >= 0) {
        if (!primed) {
          slot.t = p.constants[val.constant];
          slot.set = true;
        }
      } else if (primed) {
        slot.buf = nullptr;
        slot.bound = nullptr;
        slot.set = false;
      } else if (val.outer != UINT32_MAX && parent) {
        // A capture: the parent's value, owned (and freed) by the parent run.
        slot.t = parent->slots[val.outer].t;
        slot.set = parent->slots[val.outer].set;
      }
    }
    for (uint32_t k = 0; k < g.num_inputs; ++k) {
      if (p.input_ids[k] == UINT32_MAX) continue;
      if (!inputs[k])
        return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: input '%.*s' was not given", p.label,
                             g.inputs[k].name.len(), g.inputs[k].name.data);
      EPCTX_RETURN_IF_ERROR(check_input(p.label, g.inputs[k], *inputs[k], !p.parent));
      Slot& slot = rs.slots[p.input_ids[k]];
      slot.t = *inputs[k];
      if (!p.parent && scalar_as_rank1(g.inputs[k], slot.t)) slot.t.rank = 0;
      slot.set = true;
    }
    size_t n = outs ? num_outs : g.num_outputs;
    if (main && main->bound)
      for (size_t i = 0; i < n; ++i) {
        uint32_t v = p.output_ids[outs ? outs[i] : i];
        // Constants and inputs passed through are copied out by emit.
        if (main->bound[i] && p.values[v].constant < 0 && p.values[v].graph_input < 0)
          rs.slots[v].bound = main->bound[i];
      }
    EPCTX_RETURN_IF_ERROR(run_steps(rs));
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = p.output_ids[outs ? outs[i] : i];
      if (!rs.slots[v].set)
        return Status::Error(EPCTX_INVALID_GRAPH, "%s: output '%.*s' was not computed", p.label,
                             p.values[v].name.len(), p.values[v].name.data);
      EPCTX_RETURN_IF_ERROR(emit(user, i, rs.slots[v].t));
    }
    return Status::Ok();
  }();
  rs.FreeList(&rs.scratch);
  rs.FreeList(&rs.live);
  // A subgraph leaves the scratch mark where it is: what the calling kernel
  // took while receiving outputs (emit) lives until that kernel's step ends.
  if (!main) alloc.Free(rs.slots);
  return st;
}

namespace {

Status run_subgraph(void* user, const onnx::AttributeView& attr, const TensorRef* const* inputs,
                    uint32_t num_inputs, ValueSink emit, void* emit_user) {
  RunState* rs = static_cast<RunState*>(user);
  const Step& s = *rs->step;
  const GraphPlan* sub = nullptr;
  if (s.subgraphs && &attr >= s.node->attrs && &attr < s.node->attrs + s.node->num_attrs)
    sub = s.subgraphs[&attr - s.node->attrs];
  if (!sub)
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, "the attribute is not a planned graph");
  if (num_inputs != sub->graph->num_inputs) {
    char what[128];
    format(what, sizeof what, "subgraph '%.*s' has %u inputs, the kernel gives %u", attr.name.len(),
           attr.name.data, sub->graph->num_inputs, num_inputs);
    return node_error(s, rs->label, EPCTX_INVALID_GRAPH, what);
  }
  return RunPlan(*rs->alloc, *sub, rs, nullptr, inputs, nullptr, 0, emit, emit_user);
}

}  // namespace

}  // namespace epctx
