// SPDX-License-Identifier: Apache-2.0
// AlignRawInitializers (epctx_host/raw_align.h): every raw_data lands at an
// aligned file offset, the model still means the same to protobuf, and the
// runtime's reader then uses each initializer in place.
#include <string>

#include <onnx/onnx_pb.h>

#include "core/memory.h"
#include "epctx_host/raw_align.h"
#include "onnx/model.h"

// cmocka last: its macros clash with the C++ headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

// A model whose initializers sit at varied offsets: names and sizes of
// every residue, some raw, one typed (left alone), one empty.
onnx::ModelProto OddModel(int variant) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name(std::string(static_cast<size_t>(variant), 'g'));
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("w0");
  n->add_output("y");
  for (int i = 0; i < 24; ++i) {
    auto* t = g->add_initializer();
    t->set_name("w" + std::to_string(i) + std::string(static_cast<size_t>(i % 7), 'x'));
    t->set_data_type(onnx::TensorProto::FLOAT);
    size_t count = (i % 3 == 0) ? 1 : (i % 3 == 1) ? 3 + i : 40 * i + 5;
    t->add_dims(static_cast<int64_t>(count));
    std::string raw(count * 4, '\0');
    for (size_t k = 0; k < raw.size(); ++k) raw[k] = static_cast<char>(k * 7 + i);
    t->set_raw_data(raw);
  }
  auto* typed = g->add_initializer();
  typed->set_name("typed");
  typed->set_data_type(onnx::TensorProto::FLOAT);
  typed->add_dims(2);
  typed->add_float_data(1.0f);
  typed->add_float_data(2.0f);
  auto* out = g->add_output();
  out->set_name("y");
  return m;
}

void raw_data_is_aligned_and_the_model_unchanged(void**) {
  for (int variant = 0; variant < 70; ++variant) {
    onnx::ModelProto m = OddModel(variant);
    const std::string before = m.SerializeAsString();
    size_t moved = 0;
    const std::string after = epctx::host::AlignRawInitializers(before, 64, 8, 64, &moved);
    // The same message to protobuf: parse and re-serialise gives the input.
    onnx::ModelProto back;
    assert_true(back.ParseFromString(after));
    assert_true(back.SerializeAsString() == before);
    assert_true(back.graph().initializer(24).float_data_size() == 2);
    // The runtime's reader finds every raw initializer aligned, in place.
    epctx::Arena arena(epctx::Allocator::Default());
    epctx::onnx::ModelView view;
    epctx::Bytes bytes{reinterpret_cast<const uint8_t*>(after.data()), after.size()};
    assert_true(epctx::onnx::ParseModel(bytes, "m.onnx", arena, &view).ok());
    assert_int_equal(view.graph.num_initializers, 25);
    for (uint32_t i = 0; i < 24; ++i) {
      const epctx::onnx::TensorView& t = view.graph.initializers[i];
      assert_false(t.copied);
      size_t off = static_cast<size_t>(static_cast<const uint8_t*>(t.data) - bytes.data);
      size_t size = t.bytes;
      assert_int_equal(off % (size >= 64 ? 64 : 8), 0);
    }
    assert_true(moved > 0);
  }
}

void bytes_that_are_not_a_model_come_back_unchanged(void**) {
  const std::string junk = "\x3a\xff\xff\xff\x0f not a model";
  assert_true(epctx::host::AlignRawInitializers(junk) == junk);
  const std::string empty;
  assert_true(epctx::host::AlignRawInitializers(empty).empty());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(raw_data_is_aligned_and_the_model_unchanged),
      cmocka_unit_test(bytes_that_are_not_a_model_come_back_unchanged),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
