// SPDX-License-Identifier: Apache-2.0
// Hostile input: every truncation of a small model, and a deterministic
// mutation fuzz over the generated models. Nothing may crash (run under
// ASan/UBSan with EPCTX_SANITIZE=ON) and every failure carries a message.
#include "onnx_fuzz_check.h"
#include "onnx_test_util.h"

using namespace epctx;
using namespace epctx::onnx;

namespace {

void every_truncation_of_a_model_is_an_error(void**) {
  for (const char* name : {"small.onnx"}) {
    std::vector<uint8_t> full = ReadCase(name);
    assert_true(full.size() > 50);
    uint64_t sink = 0;
    assert_true(epctx_test::ParseAndTouch(full.data(), full.size(), &sink));
    for (size_t len = 0; len < full.size(); ++len) {
      // A fresh heap copy of exactly `len` bytes, so ASan flags any read past it.
      std::vector<uint8_t> prefix(full.begin(), full.begin() + len);
      Arena arena(Allocator::Default());
      ModelView m;
      Bytes b{prefix.empty() ? nullptr : prefix.data(), len};
      Status st = ParseModel(b, name, arena, &m);
      if (st.ok()) fprintf(stderr, "%s: prefix of %zu bytes parsed\n", name, len);
      assert_false(st.ok());
      assert_true(st.code() == EPCTX_INVALID_PROTOBUF);
      assert_true(strlen(st.message()) > strlen(name) + 2);
    }
  }
}

// xorshift64*: a fixed sequence on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

void Mutate(Rng& r, std::vector<uint8_t>& b) {
  int edits = 1 + static_cast<int>(r.below(4));
  for (int e = 0; e < edits; ++e) {
    size_t at = r.below(b.size());
    switch (r.below(6)) {
      case 0:  // bit flip
        if (!b.empty()) b[at] ^= static_cast<uint8_t>(1u << r.below(8));
        break;
      case 1:  // insert a byte
        b.insert(b.begin() + static_cast<long>(at), static_cast<uint8_t>(r.next()));
        break;
      case 2:  // delete a byte
        if (!b.empty()) b.erase(b.begin() + static_cast<long>(at));
        break;
      case 3:  // nudge a byte by one: length and count fields drift
        if (!b.empty()) b[at] = static_cast<uint8_t>(b[at] + (r.below(2) ? 1 : -1));
        break;
      case 4:  // make a byte a varint continuation or a large length
        if (!b.empty()) b[at] = r.below(2) ? 0xff : 0x80;
        break;
      default:  // overwrite with a random byte
        if (!b.empty()) b[at] = static_cast<uint8_t>(r.next());
        break;
    }
  }
}

void mutated_models_never_crash_and_errors_have_messages(void**) {
  std::vector<std::vector<uint8_t>> seeds;
  for (const char* name : {"basic.onnx", "small.onnx", "epctx_defaults.onnx",
                           "epctx_zero_input.onnx", "epctx_bad.onnx", "epctx_external.onnx"})
    seeds.push_back(ReadCase(name));
  Rng rng{0x9E3779B97F4A7C15ull};
  uint64_t sink = 0;
  int ok = 0, failed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b = seeds[static_cast<size_t>(i) % seeds.size()];
    Mutate(rng, b);
    std::vector<uint8_t> exact(b);  // exact-size heap block for ASan
    bool good =
        epctx_test::ParseAndTouch(exact.empty() ? nullptr : exact.data(), exact.size(), &sink);
    assert_true(good);
    Arena arena(Allocator::Default());
    ModelView m;
    Status st =
        ParseModel(Bytes{exact.empty() ? nullptr : exact.data(), exact.size()}, "f", arena, &m);
    if (st.ok()) ++ok;
    else ++failed;
  }
  printf("mutation fuzz: 20000 cases, %d parsed, %d rejected\n", ok, failed);
  assert_true(failed > 1000);
}

}  // namespace

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_truncation_of_a_model_is_an_error),
    cmocka_unit_test(mutated_models_never_crash_and_errors_have_messages),
};

EPCTX_TEST_MAIN(tests)
