/* SPDX-License-Identifier: Apache-2.0 */
// Compile-time knowledge of values that make control flow static:
// `--input-value name:v1,v2,...` turns a graph input the user fixes into an
// initializer (the compiled model no longer has that input), and an `If`
// whose condition is then a constant, directly or after folding, is
// replaced by the branch it takes.
#ifndef EPCTX_HOST_KNOWN_INPUTS_H
#define EPCTX_HOST_KNOWN_INPUTS_H

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace epctx {
namespace host {

struct InputValue {
  std::string name;
  std::vector<std::string> values;  // as written; parsed by the input's dtype
};

// Parses "name:v1,v2,...". Throws std::invalid_argument (a usage error).
InputValue ParseInputValue(const std::string& text);

// Replaces each named graph input by an initializer of its declared element
// type holding the values: shape the declared one when it is static and
// holds that many elements, else a scalar for one value of a rank-0 (or
// shapeless) input, else 1-D. Unknown names, non-tensor or string inputs,
// unparsable or out-of-range values and mismatched counts throw ToolError
// naming the input.
void ApplyInputValues(onnx::GraphProto& graph, const std::vector<InputValue>& values,
                      const std::string& file);

// Replaces every If of `graph` (top level) whose condition is a one-element
// initializer by its taken branch: the branch's nodes go where the If was,
// its values that clash with names of the enclosing graph are renamed, the
// values it outputs are renamed to the If's outputs (an Identity when the
// branch outputs an outer value or an initializer), its initializers join
// the graph's. Outer-scope names the branch reads need nothing: they are
// the graph's own names. Returns the number of Ifs replaced.
size_t InlineKnownIfs(onnx::GraphProto& graph);

}  // namespace host
}  // namespace epctx

#endif
