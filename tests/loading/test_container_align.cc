// SPDX-License-Identifier: Apache-2.0
// A container at any address: flatbuffers needs its metadata 8-aligned, so
// ParseContainer parses an aligned copy of the metadata when the blob sits at
// an odd offset (an embedded ep_cache_context written by another tool) while
// weight and payload views still point into the blob itself.
// argv[1]: the loading test models folder (gen_loading_models.py output).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "container/container.h"
#include "core/memory.h"
#include "test_io.h"

// cmocka last: its macros clash with C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

static const char* g_dir;

static std::vector<uint8_t> ReadFile(const char* path) {
  size_t size = 0;
  unsigned char* data = tu_read_file(path, &size);
  std::vector<uint8_t> out;
  if (data) out.assign(data, data + size);
  free(data);
  return out;
}

static void container_parses_in_place_at_every_offset(void**) {
  char path[4096];
  snprintf(path, sizeof path, "%s/m/cx_shared.bin", g_dir);
  std::vector<uint8_t> file = ReadFile(path);
  assert_true(file.size() > 64);
  std::vector<uint64_t> storage(file.size() / 8 + 4);
  uint8_t* base = reinterpret_cast<uint8_t*>(storage.data());
  for (size_t shift = 0; shift < 8; ++shift) {
    memcpy(base + shift, file.data(), file.size());
    epctx::Bytes blob{base + shift, file.size()};
    epctx::Arena arena(epctx::Allocator::Default());
    epctx::ContainerView c;
    epctx::Status st = epctx::ParseContainer(blob, "cx_shared.bin", arena, &c);
    if (!st.ok()) fail_msg("shift %zu: %s", shift, st.message());
    assert_string_equal(c.source, "QNN");
    assert_string_equal(c.hardware_architecture, "tq-1.2");
    assert_int_equal(c.num_graphs, 1);
    assert_string_equal(c.graphs[0].name, "cx");
    // Segments are views into the blob, never copies.
    assert_true(c.weights.data >= blob.data && c.weights.data < blob.data + blob.size);
    assert_true(c.graphs[0].payload.data >= blob.data &&
                c.graphs[0].payload.data < blob.data + blob.size);
    assert_memory_equal(c.weights.data, "WWWW", 4);
    // Metadata is read in place when aligned, from the aligned copy when not.
    const uint8_t* src = reinterpret_cast<const uint8_t*>(c.source);
    bool in_blob = src >= blob.data && src < blob.data + blob.size;
    assert_int_equal(in_blob, shift == 0);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(container_parses_in_place_at_every_offset),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
