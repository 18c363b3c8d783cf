/* SPDX-License-Identifier: Apache-2.0 */
// The plan of one graph: its value table and its steps in run order. A
// session plans its main graph and, once at creation, every subgraph (the
// GRAPH attributes of If, Loop, Scan ...) into a tree of GraphPlans; one run
// loop (executor.cc) executes any of them.
//
// Scopes: a subgraph sees every value of its enclosing graphs. A name the
// subgraph does not define is resolved outward at planning time and becomes
// a capture: a value of the subgraph whose `outer` is the id of the same
// value in the parent plan (which may itself be a capture of its parent).
// The node owning the subgraph lists the parent ids of its subgraphs'
// captures as implicit inputs, so it is ordered after their producers and
// keeps them alive while its subgraphs run. A run of a subgraph binds its
// captures to the parent run's slots; it never owns or frees them.
//
// Everything here lives in the session's metadata arena and is read-only
// after creation, so any number of runs share it.
#ifndef EPCTX_SESSION_PLAN_H
#define EPCTX_SESSION_PLAN_H

#include <epctx/hal.h>

#include "core/types.h"
#include "kernels/kernel.h"
#include "onnx/model.h"

namespace epctx {

struct DriverEntry;  // session/env.h
struct GraphPlan;

struct Value {
  StrView name;
  uint32_t consumers = 0;  // node inputs (explicit or implicit) reading it
  bool graph_output = false;
  int32_t constant = -1;        // index into the plan's constants, or -1
  int32_t graph_input = -1;     // index into the graph's inputs, or -1
  uint32_t outer = UINT32_MAX;  // a capture: the value's id in the parent plan
};

struct Step {
  const onnx::NodeView* node = nullptr;
  uint32_t* inputs = nullptr;  // value ids; UINT32_MAX for an omitted input
  uint32_t num_inputs = 0;
  uint32_t* outputs = nullptr;  // value ids; UINT32_MAX for an omitted output
  uint32_t num_outputs = 0;
  // Values of this graph its subgraphs read (the captures' parent ids).
  uint32_t* implicit = nullptr;
  uint32_t num_implicit = 0;
  // Per node attribute: the plan of a GRAPH attribute, nullptr otherwise
  // (nullptr as a whole when the node has no GRAPH attribute).
  const GraphPlan* const* subgraphs = nullptr;
  // CPU step
  KernelFn kernel = nullptr;
  int64_t opset = 0;
  // What the kernel's prepare function left at create (read-only, lives
  // with the session), or nullptr.
  const void* kernel_state = nullptr;
  // Driver step (EPContext node)
  const DriverEntry* driver = nullptr;
  epctx_hal_graph* graph = nullptr;
  epctx_hal_graph_info graph_info{};
  bool prepared = false;  // prepare_graph succeeded: unprepare before release
};

struct GraphPlan {
  const onnx::GraphView* graph = nullptr;
  GraphPlan* parent = nullptr;  // nullptr for the main graph (filled while planning)
  // Names this graph in run-time messages: the model's label for the main
  // graph, "attribute 'body' of Loop node 'l'" for a subgraph.
  const char* label = "";

  Value* values = nullptr;
  uint32_t num_values = 0;
  uint32_t max_values = 0;    // capacity, captures included
  uint32_t* table = nullptr;  // open-addressing hash: value id + 1, 0 = empty
  uint32_t table_mask = 0;

  TensorRef* constants = nullptr;  // per initializer of this graph
  Step* steps = nullptr;           // in run order once planned
  uint32_t num_steps = 0;
  uint32_t* input_ids = nullptr;   // per graph input (UINT32_MAX: initializer-backed)
  uint32_t* output_ids = nullptr;  // per graph output

  // The id of `name` in this plan's own table, or UINT32_MAX.
  uint32_t Find(StrView name) const;
};

// Initializers of g and of all its subgraphs.
uint64_t CountInitializers(const onnx::GraphView& g);

}  // namespace epctx

#endif
