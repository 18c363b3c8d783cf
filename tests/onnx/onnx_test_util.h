/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the ONNX reader tests (ordinary hosted C++).
#ifndef EPCTX_TESTS_ONNX_TEST_UTIL_H
#define EPCTX_TESTS_ONNX_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka needs the four headers above first; 1.1.5 has no extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/memory.h"
#include "core/types.h"
#include "onnx/model.h"
#include "test_io.h"

// The directory gen_onnx_cases.py wrote to (argv[1] of every test program).
extern const char* g_cases_dir;

// The bytes of <cases dir>/<name>; empty (and a line on stderr) when the file
// cannot be read.
inline std::vector<uint8_t> ReadCase(const char* name) {
  std::string path = std::string(g_cases_dir) + "/" + name;
  size_t size = 0;
  unsigned char* data = tu_read_file(path.c_str(), &size);
  if (!data) {
    fprintf(stderr, "cannot open %s\n", path.c_str());
    return {};
  }
  std::vector<uint8_t> out(data, data + size);
  free(data);
  return out;
}

inline epctx::Bytes AsBytes(const std::vector<uint8_t>& v) {
  epctx::Bytes b;
  b.data = v.data();
  b.size = v.size();
  return b;
}

// A case parsed in place: the views in `model` point into `buf` and `arena`,
// valid as long as this object lives (it is neither copied nor moved).
struct Parsed {
  std::vector<uint8_t> buf;
  epctx::Arena arena{epctx::Allocator::Default()};
  epctx::onnx::ModelView model;
};

// Reads and parses a case; the file must be non-empty and parse.
inline void ParseCase(const char* name, Parsed* p) {
  p->buf = ReadCase(name);
  assert_true(p->buf.size() > 0);
  epctx::Status st = epctx::onnx::ParseModel(AsBytes(p->buf), name, p->arena, &p->model);
  if (!st.ok()) fprintf(stderr, "%s\n", st.message());
  assert_true(st.ok());
}

inline std::string Str(epctx::StrView s) { return std::string(s.data ? s.data : "", s.size); }

inline const epctx::onnx::TensorView* FindInit(const epctx::onnx::GraphView& g, const char* name) {
  for (uint32_t i = 0; i < g.num_initializers; ++i)
    if (g.initializers[i].name.eq(name)) return &g.initializers[i];
  return nullptr;
}

inline const epctx::onnx::NodeView* FindNode(const epctx::onnx::GraphView& g, const char* name) {
  for (uint32_t i = 0; i < g.num_nodes; ++i)
    if (g.nodes[i].name.eq(name)) return &g.nodes[i];
  return nullptr;
}

// Whether p lies inside the buffer v (zero-copy views must).
inline bool Inside(const void* p, size_t n, const std::vector<uint8_t>& v) {
  auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(v.data());
  return a >= b && a + n <= b + v.size();
}

// Protobuf encoding helpers for hand-made messages.
inline void PutVarint(std::vector<uint8_t>& o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<uint8_t>(v));
}
inline void PutTag(std::vector<uint8_t>& o, uint32_t field, uint32_t wt) {
  PutVarint(o, (uint64_t(field) << 3) | wt);
}
inline void PutLen(std::vector<uint8_t>& o, uint32_t field, const std::vector<uint8_t>& payload) {
  PutTag(o, field, 2);
  PutVarint(o, payload.size());
  o.insert(o.end(), payload.begin(), payload.end());
}
inline void PutStr(std::vector<uint8_t>& o, uint32_t field, const char* s) {
  PutLen(o, field, std::vector<uint8_t>(s, s + strlen(s)));
}
inline void PutInt(std::vector<uint8_t>& o, uint32_t field, uint64_t v) {
  PutTag(o, field, 0);
  PutVarint(o, v);
}

#define EPCTX_TEST_MAIN(tests)                              \
  const char* g_cases_dir = ".";                            \
  int main(int argc, char** argv) {                         \
    if (argc > 1) g_cases_dir = argv[1];                    \
    return cmocka_run_group_tests(tests, nullptr, nullptr); \
  }

#endif
