/* SPDX-License-Identifier: Apache-2.0 */
// One fuzz iteration shared by the deterministic mutation test and the
// libFuzzer target: parse, and on success touch every view so that the
// sanitizers see any view that points outside the input or the arena.
#ifndef EPCTX_TESTS_ONNX_FUZZ_CHECK_H
#define EPCTX_TESTS_ONNX_FUZZ_CHECK_H

#include <cstddef>
#include <cstdint>

#include "core/memory.h"
#include "onnx/epcontext.h"
#include "onnx/model.h"

namespace epctx_test {

inline uint64_t Touch(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += b[i];
  return s;
}

inline uint64_t TouchTensor(const epctx::onnx::TensorView& t) {
  uint64_t s =
      Touch(t.name.data, t.name.size) + Touch(t.external_location.data, t.external_location.size);
  if (t.data) s += Touch(t.data, static_cast<size_t>(t.bytes));
  return s;
}

// Returns false when the parse failed without a message (a bug).
inline bool ParseAndTouch(const uint8_t* data, size_t size, uint64_t* sink) {
  using namespace epctx::onnx;
  epctx::Arena arena(epctx::Allocator::Default());
  ModelView m;
  epctx::Bytes b;
  b.data = data;
  b.size = size;
  epctx::Status st = ParseModel(b, "fuzz.onnx", arena, &m);
  if (!st.ok()) return st.message()[0] != '\0' && st.code() != EPCTX_OK;
  uint64_t s = 0;
  const GraphView& g = m.graph;
  for (uint32_t i = 0; i < g.num_initializers; ++i) s += TouchTensor(g.initializers[i]);
  for (uint32_t i = 0; i < g.num_nodes; ++i) {
    const NodeView& n = g.nodes[i];
    s += Touch(n.name.data, n.name.size) + Touch(n.op_type.data, n.op_type.size);
    for (uint32_t k = 0; k < n.num_inputs; ++k) s += Touch(n.inputs[k].data, n.inputs[k].size);
    for (uint32_t k = 0; k < n.num_outputs; ++k) s += Touch(n.outputs[k].data, n.outputs[k].size);
    for (uint32_t k = 0; k < n.num_attrs; ++k) {
      const AttributeView& a = n.attrs[k];
      s += Touch(a.s.data, a.s.size) + Touch(a.graph.data, a.graph.size);
      if (a.t) s += TouchTensor(*a.t);
      if (a.floats) s += Touch(a.floats, a.count * sizeof(float));
      if (a.ints) s += Touch(a.ints, a.count * sizeof(int64_t));
      if (a.strings)
        for (uint32_t j = 0; j < a.count; ++j) s += Touch(a.strings[j].data, a.strings[j].size);
    }
    EpContextNode ep;
    if (IsEpContextNode(n)) {
      epctx::Status es = ExtractEpContext(n, &ep);
      if (!es.ok() && es.message()[0] == '\0') return false;
    }
  }
  const ValueInfoView* lists[3] = {g.inputs, g.outputs, g.value_infos};
  uint32_t counts[3] = {g.num_inputs, g.num_outputs, g.num_value_infos};
  for (int l = 0; l < 3; ++l)
    for (uint32_t i = 0; i < counts[l]; ++i) {
      s += Touch(lists[l][i].name.data, lists[l][i].name.size);
      for (uint32_t d = 0; d < lists[l][i].rank; ++d)
        s += Touch(lists[l][i].dim_params[d].data, lists[l][i].dim_params[d].size);
    }
  for (uint32_t i = 0; i < m.num_metadata; ++i)
    s += Touch(m.metadata[i].value.data, m.metadata[i].value.size);
  *sink += s;
  return true;
}

}  // namespace epctx_test

#endif
