// SPDX-License-Identifier: Apache-2.0
// Planning a graph and its subgraphs (plan.h): the value table, constants,
// steps bound to kernels, captures of outer values, and the run order.
//
// PlanGraph works top-down. A graph first enters its own names (initializers,
// inputs, node outputs), so every name it defines is known before any of its
// subgraphs is planned; then its nodes are bound, and the GRAPH attributes of
// a node are planned as children right there. A name neither the graph nor
// an ancestor defines is INVALID_GRAPH naming the node and the name.
// Recursion is bounded by kMaxGraphDepth (the parser enforces it too).
#include "session/plan.h"

#include <new>

#include "onnx/epcontext.h"
#include "session/execution_plan.h"

namespace epctx {
namespace {

uint32_t hash_name(StrView s) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < s.size; ++i) h = (h ^ static_cast<uint8_t>(s.data[i])) * 16777619u;
  return h;
}

// Adds `name` (or finds it); *added tells which. The table never fills: its
// capacity is at least twice max_values and callers stay within max_values.
Status AddValue(GraphPlan* p, StrView name, uint32_t* id, bool* added) {
  uint32_t h = hash_name(name) & p->table_mask;
  for (;; h = (h + 1) & p->table_mask) {
    uint32_t slot = p->table[h];
    if (slot == 0) break;
    if (p->values[slot - 1].name.eq(name)) {
      *id = slot - 1;
      if (added) *added = false;
      return Status::Ok();
    }
  }
  if (p->num_values >= p->max_values)
    return Status::Error(EPCTX_INVALID_GRAPH, "%s: more values than the graph declares", p->label);
  uint32_t v = p->num_values++;
  p->values[v] = Value{};
  p->values[v].name = name;
  p->table[h] = v + 1;
  *id = v;
  if (added) *added = true;
  return Status::Ok();
}

// Names the graph and its subgraphs may reference from outside: a bound on
// the captures of a subgraph plan.
uint64_t CountRefs(const onnx::GraphView& g) {
  uint64_t n = g.num_outputs;
  for (uint32_t i = 0; i < g.num_nodes; ++i) {
    const onnx::NodeView& node = g.nodes[i];
    n += node.num_inputs;
    for (uint32_t a = 0; a < node.num_attrs; ++a)
      if (node.attrs[a].g) n += CountRefs(*node.attrs[a].g);
  }
  return n;
}

bool HasSubgraph(const onnx::NodeView& node) {
  for (uint32_t a = 0; a < node.num_attrs; ++a)
    if (node.attrs[a].g) return true;
  return false;
}

}  // namespace

uint32_t GraphPlan::Find(StrView name) const {
  for (uint32_t h = hash_name(name) & table_mask;; h = (h + 1) & table_mask) {
    uint32_t slot = table[h];
    if (slot == 0) return UINT32_MAX;
    if (values[slot - 1].name.eq(name)) return slot - 1;
  }
}

uint64_t CountInitializers(const onnx::GraphView& g) {
  uint64_t n = g.num_initializers;
  for (uint32_t i = 0; i < g.num_nodes; ++i)
    for (uint32_t a = 0; a < g.nodes[i].num_attrs; ++a)
      if (g.nodes[i].attrs[a].g) n += CountInitializers(*g.nodes[i].attrs[a].g);
  return n;
}

Status ExecutionPlan::Resolve(GraphPlan* p, StrView name, uint32_t* id) {
  *id = p->Find(name);
  if (*id != UINT32_MAX || !p->parent) return Status::Ok();
  uint32_t outer;
  EPCTX_RETURN_IF_ERROR(Resolve(p->parent, name, &outer));
  if (outer == UINT32_MAX) return Status::Ok();
  EPCTX_RETURN_IF_ERROR(AddValue(p, name, id, nullptr));
  p->values[*id].outer = outer;
  return Status::Ok();
}

Status ExecutionPlan::PlanGraph(const onnx::GraphView& g, GraphPlan* parent, uint32_t depth,
                                const char* label, GraphPlan* p) {
  if (depth > onnx::kMaxGraphDepth)
    return Status::Error(EPCTX_INVALID_GRAPH, "%s: subgraph nesting deeper than the limit of %u",
                         label, onnx::kMaxGraphDepth);
  p->graph = &g;
  p->parent = parent;
  p->label = label;
  EPCTX_RETURN_IF_ERROR(BuildValues(p));
  EPCTX_RETURN_IF_ERROR(LoadConstants(p));
  EPCTX_RETURN_IF_ERROR(BuildSteps(p, depth));
  for (uint32_t i = 0; i < g.num_outputs; ++i) {
    uint32_t v;
    EPCTX_RETURN_IF_ERROR(Resolve(p, g.outputs[i].name, &v));
    if (v == UINT32_MAX)
      return Status::Error(EPCTX_INVALID_GRAPH, "%s: graph output '%.*s' is never produced", label,
                           g.outputs[i].name.len(), g.outputs[i].name.data);
    p->values[v].graph_output = true;
    p->output_ids[i] = v;
  }
  // The main graph is ordered after its EPContext steps are bound (Load).
  return parent ? OrderSteps(p) : Status::Ok();
}

Status ExecutionPlan::BuildValues(GraphPlan* p) {
  const onnx::GraphView& g = *p->graph;
  uint64_t max_values = static_cast<uint64_t>(g.num_inputs) + g.num_initializers;
  for (uint32_t i = 0; i < g.num_nodes; ++i) max_values += g.nodes[i].num_outputs;
  if (p->parent) max_values += CountRefs(g);
  if (max_values > (1u << 24))
    return Status::Error(EPCTX_NOT_IMPLEMENTED, "%s: %llu values exceed the limit of 16M", p->label,
                         (unsigned long long)max_values);
  uint32_t cap = 16;
  while (cap < 2 * max_values) cap <<= 1;
  p->max_values = static_cast<uint32_t>(max_values);
  p->values = m_.meta().AllocArray<Value>(max_values ? max_values : 1);
  p->table = m_.meta().AllocArray<uint32_t>(cap);
  p->input_ids = m_.meta().AllocArray<uint32_t>(g.num_inputs + 1);
  p->output_ids = m_.meta().AllocArray<uint32_t>(g.num_outputs + 1);
  if (!p->values || !p->table || !p->input_ids || !p->output_ids)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for the value table", p->label);
  p->table_mask = cap - 1;
  uint32_t id;
  for (uint32_t i = 0; i < g.num_initializers; ++i) {
    EPCTX_RETURN_IF_ERROR(AddValue(p, g.initializers[i].name, &id, nullptr));
    p->values[id].constant = static_cast<int32_t>(i);
  }
  for (uint32_t i = 0; i < g.num_inputs; ++i) {
    EPCTX_RETURN_IF_ERROR(AddValue(p, g.inputs[i].name, &id, nullptr));
    // An input that is also an initializer keeps the initializer's value.
    p->input_ids[i] = p->values[id].constant >= 0 ? UINT32_MAX : id;
    if (p->values[id].constant < 0) p->values[id].graph_input = static_cast<int32_t>(i);
  }
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const onnx::NodeView& node = g.nodes[n];
    for (uint32_t o = 0; o < node.num_outputs; ++o) {
      if (node.outputs[o].empty()) continue;
      bool added;
      EPCTX_RETURN_IF_ERROR(AddValue(p, node.outputs[o], &id, &added));
      if (!added)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) output '%.*s' is already produced elsewhere",
                             p->label, node.name.len(), node.name.data, node.op_type.len(),
                             node.op_type.data, node.outputs[o].len(), node.outputs[o].data);
    }
  }
  return Status::Ok();
}

Status ExecutionPlan::BuildSteps(GraphPlan* p, uint32_t depth) {
  const onnx::GraphView& g = *p->graph;
  p->num_steps = g.num_nodes;
  p->steps = m_.meta().AllocArray<Step>(g.num_nodes + 1);
  // Marks the implicit inputs of one node while they are gathered.
  uint8_t* marked = m_.meta().AllocArray<uint8_t>(p->max_values + 1);
  if (!p->steps || !marked)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for steps", p->label);
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const onnx::NodeView& node = g.nodes[n];
    Step& s = p->steps[n];
    s = Step{};
    s.node = &node;
    s.num_inputs = node.num_inputs;
    s.num_outputs = node.num_outputs;
    s.inputs = m_.meta().AllocArray<uint32_t>(node.num_inputs + 1);
    s.outputs = m_.meta().AllocArray<uint32_t>(node.num_outputs + 1);
    if (!s.inputs || !s.outputs)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for steps", p->label);
    for (uint32_t i = 0; i < node.num_inputs; ++i) {
      s.inputs[i] = UINT32_MAX;
      if (node.inputs[i].empty()) continue;
      uint32_t v;
      EPCTX_RETURN_IF_ERROR(Resolve(p, node.inputs[i], &v));
      if (v == UINT32_MAX)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) input '%.*s' is not a graph input, an "
                             "initializer or any node's output%s",
                             p->label, node.name.len(), node.name.data, node.op_type.len(),
                             node.op_type.data, node.inputs[i].len(), node.inputs[i].data,
                             p->parent ? " in this graph or an enclosing one" : "");
      s.inputs[i] = v;
      p->values[v].consumers++;
    }
    for (uint32_t o = 0; o < node.num_outputs; ++o)
      s.outputs[o] = node.outputs[o].empty() ? UINT32_MAX : p->Find(node.outputs[o]);
    if (HasSubgraph(node)) EPCTX_RETURN_IF_ERROR(PlanSubgraphs(p, depth, marked, &s));
    // Bound by the context binder (ContextBinder::Bind), at any depth.
    if (onnx::IsEpContextNode(node)) continue;
    s.opset = m_.view().opset(node.domain);
    PrepareFn prepare = nullptr;
    s.kernel = FindKernel(node.domain, node.op_type, s.opset, &prepare);
    if (!s.kernel && KernelLeftOutOfBuild(node.domain, node.op_type, s.opset))
      return Status::Error(EPCTX_MODEL_REQUIRES_COMPILATION,
                           "%s: node '%.*s': op %.*s%s%.*s (opset %lld) has a CPU kernel that this "
                           "runtime was built without (EPCTX_CPU_OPS); list the op and rebuild "
                           "(epctx-compile --emit-op-list writes the list a model needs)",
                           p->label, node.name.len(), node.name.data, node.domain.len(),
                           node.domain.data, node.domain.empty() ? "" : ".", node.op_type.len(),
                           node.op_type.data, (long long)s.opset);
    if (!s.kernel)
      return Status::Error(
          EPCTX_MODEL_REQUIRES_COMPILATION,
          "%s: node '%.*s': op %.*s%s%.*s (opset %lld) is not an EPContext node and "
          "has no CPU kernel; compile the model with epctx-compile",
          p->label, node.name.len(), node.name.data, node.domain.len(), node.domain.data,
          node.domain.empty() ? "" : ".", node.op_type.len(), node.op_type.data,
          (long long)s.opset);
    if (prepare && prepack_) EPCTX_RETURN_IF_ERROR(PrepareStep(p, prepare, &s));
  }
  return Status::Ok();
}

void* ExecutionPlan::PreparedAlloc(void* user, uint64_t bytes, uint32_t alignment) {
  ExecutionPlan* plan = static_cast<ExecutionPlan*>(user);
  if (bytes > SIZE_MAX) return nullptr;
  void* mem = plan->prepared_.Alloc(static_cast<size_t>(bytes), alignment);
  if (mem) plan->prepared_bytes_ += bytes;
  return mem;
}

Status ExecutionPlan::PrepareStep(const GraphPlan* p, PrepareFn prepare, Step* s) {
  // The run loop refuses nodes with more inputs; nothing to prepare there.
  constexpr uint32_t kMaxInputs = 64;
  if (s->num_inputs > kMaxInputs) return Status::Ok();
  const TensorRef* constants[kMaxInputs] = {};
  for (uint32_t i = 0; i < s->num_inputs; ++i) {
    // An initializer of this graph or, through captures, of an enclosing one.
    const GraphPlan* q = p;
    for (uint32_t v = s->inputs[i]; v != UINT32_MAX && q;) {
      const Value& val = q->values[v];
      if (val.constant >= 0) {
        constants[i] = &q->constants[val.constant];
        break;
      }
      v = val.outer;
      q = q->parent;
    }
  }
  PrepareHost host{this, PreparedAlloc};
  PrepareContext ctx(*s->node, s->opset, constants, s->num_inputs, host);
  Status st = prepare(ctx);
  if (!st.ok()) {
    st.Prefix("%s", p->label);
    return st;
  }
  s->kernel_state = ctx.prepared();
  return Status::Ok();
}

Status ExecutionPlan::PlanSubgraphs(GraphPlan* p, uint32_t depth, uint8_t* marked, Step* s) {
  const onnx::NodeView& node = *s->node;
  const GraphPlan** subs = m_.meta().AllocArray<const GraphPlan*>(node.num_attrs);
  if (!subs) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for subgraphs", p->label);
  uint64_t captures = 0;
  for (uint32_t a = 0; a < node.num_attrs; ++a) {
    const onnx::AttributeView& attr = node.attrs[a];
    if (!attr.g) continue;
    void* mem = m_.meta().Alloc(sizeof(GraphPlan), alignof(GraphPlan));
    char label[160];
    format(label, sizeof label, "attribute '%.*s' of %.*s node '%.*s'", attr.name.len(),
           attr.name.data, node.op_type.len(), node.op_type.data, node.name.len(), node.name.data);
    const char* kept = m_.meta().Strdup(label, cstr_len(label));
    if (!mem || !kept)
      return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for subgraphs", p->label);
    GraphPlan* child = new (mem) GraphPlan();
    Status st = PlanGraph(*attr.g, p, depth + 1, kept, child);
    // The outer scope goes in front while the message has room.
    if (!st.ok() && (!p->parent || st.HasRoom())) st.Prefix("%s", p->label);
    EPCTX_RETURN_IF_ERROR(st);
    subs[a] = child;
    for (uint32_t v = 0; v < child->num_values; ++v)
      captures += child->values[v].outer != UINT32_MAX;
  }
  s->subgraphs = subs;
  // The implicit inputs: each outer value the subgraphs read, once.
  s->implicit = m_.meta().AllocArray<uint32_t>(captures + 1);
  if (!s->implicit)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for subgraphs", p->label);
  for (uint32_t a = 0; a < node.num_attrs; ++a) {
    if (!subs[a]) continue;
    for (uint32_t v = 0; v < subs[a]->num_values; ++v) {
      uint32_t outer = subs[a]->values[v].outer;
      if (outer == UINT32_MAX || marked[outer]) continue;
      marked[outer] = 1;
      s->implicit[s->num_implicit++] = outer;
      p->values[outer].consumers++;
    }
  }
  for (uint32_t i = 0; i < s->num_implicit; ++i) marked[s->implicit[i]] = 0;
  return Status::Ok();
}

// Kahn's algorithm over value producers, keeping the file's order among
// ready nodes (ONNX requires files to be sorted; we do not trust that).
Status ExecutionPlan::OrderSteps(GraphPlan* p) {
  // Kahn's algorithm with a min-heap on the file position: O((V + E) log V)
  // for any node order (a hostile reverse-ordered file included), and a
  // file that is already sorted keeps its order exactly.
  uint32_t n = p->num_steps;
  if (n == 0) return Status::Ok();
  const uint32_t nv = p->num_values;
  uint8_t* done_value = m_.meta().AllocArray<uint8_t>(nv + 1);
  Step* sorted = m_.meta().AllocArray<Step>(n);
  uint32_t* pending = m_.meta().AllocArray<uint32_t>(n);
  uint32_t* first = m_.meta().AllocArray<uint32_t>(nv + 2);  // CSR: consumers of each value
  uint32_t* heap = m_.meta().AllocArray<uint32_t>(n);
  if (!done_value || !sorted || !pending || !first || !heap)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory ordering nodes", p->label);
  for (uint32_t v = 0; v < nv; ++v) {
    const Value& val = p->values[v];
    done_value[v] = val.constant >= 0 || val.graph_input >= 0 || val.outer != UINT32_MAX;
  }
  // Every input slot of a step that waits on a value, counted, then listed.
  auto each_wait = [&](auto fn) {
    for (uint32_t s = 0; s < n; ++s) {
      const Step& st = p->steps[s];
      for (uint32_t i = 0; i < st.num_inputs; ++i)
        if (st.inputs[i] != UINT32_MAX && !done_value[st.inputs[i]]) fn(s, st.inputs[i]);
      for (uint32_t i = 0; i < st.num_implicit; ++i)
        if (st.implicit[i] != UINT32_MAX && !done_value[st.implicit[i]]) fn(s, st.implicit[i]);
    }
  };
  uint64_t edges = 0;
  each_wait([&](uint32_t s, uint32_t v) {
    ++pending[s];
    ++first[v + 1];
    ++edges;
  });
  for (uint32_t v = 0; v < nv; ++v) first[v + 1] += first[v];
  uint32_t* consumer = m_.meta().AllocArray<uint32_t>(edges ? edges : 1);
  uint32_t* fill = m_.meta().AllocArray<uint32_t>(nv + 1);
  if (!consumer || !fill)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory ordering nodes", p->label);
  each_wait([&](uint32_t s, uint32_t v) { consumer[first[v] + fill[v]++] = s; });

  uint32_t size = 0;
  auto push = [&](uint32_t s) {
    uint32_t i = size++;
    heap[i] = s;
    while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
      uint32_t t = heap[i];
      heap[i] = heap[(i - 1) / 2];
      heap[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
  };
  auto pop = [&]() {
    uint32_t top = heap[0];
    heap[0] = heap[--size];
    for (uint32_t i = 0;;) {
      uint32_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < size && heap[l] < heap[m]) m = l;
      if (r < size && heap[r] < heap[m]) m = r;
      if (m == i) break;
      uint32_t t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
    return top;
  };
  for (uint32_t s = 0; s < n; ++s)
    if (pending[s] == 0) push(s);
  uint32_t count = 0;
  while (size > 0) {
    const uint32_t s = pop();
    const Step& st = p->steps[s];
    sorted[count++] = st;
    for (uint32_t o = 0; o < st.num_outputs; ++o) {
      const uint32_t v = st.outputs[o];
      if (v == UINT32_MAX || done_value[v]) continue;
      done_value[v] = 1;
      for (uint32_t k = first[v]; k < first[v + 1]; ++k)
        if (--pending[consumer[k]] == 0) push(consumer[k]);
    }
  }
  if (count < n) {
    for (uint32_t s = 0; s < n; ++s)
      if (pending[s] != 0)
        return Status::Error(EPCTX_INVALID_GRAPH,
                             "%s: node '%.*s' (%.*s) is part of a cycle or depends on one",
                             p->label, p->steps[s].node->name.len(), p->steps[s].node->name.data,
                             p->steps[s].node->op_type.len(), p->steps[s].node->op_type.data);
  }
  p->steps = sorted;
  return Status::Ok();
}

ExecutionPlan::~ExecutionPlan() {
  ThreadPool::Destroy(intra_pool_);
  FreeRunMemory();
  for (uint32_t i = 0; i < main_.num_steps; ++i) {
    Step& st = main_.steps[i];
    if (st.prepared && st.driver->fns.unprepare_graph)
      st.driver->fns.unprepare_graph(st.driver->driver, st.graph);
  }
}

Status ExecutionPlan::Build(bool prepack) {
  prepack_ = prepack;
  EPCTX_RETURN_IF_ERROR(PlanGraph(m_.view().graph, nullptr, 0, m_.label(), &main_));
  return BuildNames();
}

Status ExecutionPlan::Order(const BindResult& bound) {
  driver_steps_ = bound.driver_steps;
  all_driver_steps_ = bound.all_driver_steps;
  threaded_driver_steps_ = bound.threaded;
  EPCTX_RETURN_IF_ERROR(OrderSteps(&main_));
  return BuildPlan();
}

Status ExecutionPlan::LoadConstants(GraphPlan* p) {
  const onnx::GraphView& g = *p->graph;
  p->constants = m_.meta().AllocArray<TensorRef>(g.num_initializers + 1);
  if (!p->constants)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for initializers", p->label);
  for (uint32_t i = 0; i < g.num_initializers; ++i)
    EPCTX_RETURN_IF_ERROR(m_.InitializerData(g.initializers[i], p->label, &p->constants[i]));
  return Status::Ok();
}

Status ExecutionPlan::BuildNames() {
  const onnx::GraphView& g = m_.view().graph;
  public_inputs_ = m_.meta().AllocArray<uint32_t>(g.num_inputs + 1);
  input_names_ = m_.meta().AllocArray<const char*>(g.num_inputs + 1);
  output_names_ = m_.meta().AllocArray<const char*>(g.num_outputs + 1);
  if (!public_inputs_ || !input_names_ || !output_names_)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory for the value table", m_.label());
  for (uint32_t i = 0; i < g.num_inputs; ++i) {
    input_names_[i] = m_.meta().Strdup(g.inputs[i].name.data, g.inputs[i].name.size);
    if (!input_names_[i]) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
    if (main_.input_ids[i] != UINT32_MAX) public_inputs_[num_public_inputs_++] = i;
  }
  for (uint32_t i = 0; i < g.num_outputs; ++i) {
    output_names_[i] = m_.meta().Strdup(g.outputs[i].name.data, g.outputs[i].name.size);
    if (!output_names_[i]) return Status::Error(EPCTX_OUT_OF_MEMORY, "out of memory");
  }
  return Status::Ok();
}

bool ExecutionPlan::DeviceIo(const char* name, const DriverEntry** driver, epctx_hal_graph** graph,
                             const epctx_hal_tensor_desc** desc) const {
  const onnx::GraphView& g = m_.view().graph;
  if (!name) return false;
  for (int output = 0; output < 2; ++output) {
    const uint32_t n = output ? g.num_outputs : g.num_inputs;
    for (uint32_t i = 0; i < n; ++i) {
      const char* nm = output ? output_names_[i] : input_names_[i];
      if (!cstr_eq(name, nm)) continue;
      const uint32_t id = output ? main_.output_ids[i] : main_.input_ids[i];
      if (id == UINT32_MAX) continue;
      for (uint32_t k = 0; k < main_.num_steps; ++k) {
        const Step& st = main_.steps[k];
        if (!st.driver || !st.graph || !st.driver->fns.alloc_io) continue;
        const uint32_t m = output ? st.num_outputs : st.num_inputs;
        const uint32_t* ids = output ? st.outputs : st.inputs;
        const uint32_t nd = output ? st.graph_info.num_outputs : st.graph_info.num_inputs;
        for (uint32_t j = 0; j < m && j < nd; ++j)
          if (ids[j] == id) {
            *driver = st.driver;
            *graph = st.graph;
            *desc = output ? &st.graph_info.outputs[j] : &st.graph_info.inputs[j];
            return true;
          }
      }
    }
  }
  return false;
}

// Without the key, EPCTX_DEFAULT_INTRA_OP_THREADS (0: the cores the process
// may use; cross builds tested under qemu-user set 1, see runtime/CMakeLists).
#ifndef EPCTX_DEFAULT_INTRA_OP_THREADS
#define EPCTX_DEFAULT_INTRA_OP_THREADS 0
#endif

void ExecutionPlan::StartThreads(const Options& options) {
  uint32_t threads = EPCTX_DEFAULT_INTRA_OP_THREADS;
  const char* v = options.Get(kOptIntraOpThreads);
  if (v && !ParseThreadCount(v, &threads)) threads = 1;  // Set refused it already
  if (threads == 0) threads = epctx_pal_cpu_count();
  // CPU kernels and drivers with execute_parallel split their work; a pool
  // would idle beside other drivers.
  if (threads > 1 && (cpu_steps() > 0 || threaded_driver_steps_))
    intra_pool_ = ThreadPool::Create(m_.env()->alloc, threads);
}

}  // namespace epctx
