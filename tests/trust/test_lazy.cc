// SPDX-License-Identifier: Apache-2.0
// Graphs a session does not bind are never read (issue 5) and, in a signed
// package, never hashed (issue 6): a context binary holding two graphs (the
// two partitions of lazy_models.py's chain model) is loaded by models that
// each bind one of them, plain, signed, encrypted, and encrypted then
// signed.
//
// argv: epctx-compile epctx-sign PYTHON lazy_models.py WORK_DIR
//
// Per graph k (0, 1) of the binary, one<k>.onnx binds graph k only and
// one<k>.onnx.cpu.onnx is the same sub-graph for the CPU kernels. The
// payloads' offsets come from the runtime's own container parser.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>

#include "test_util.h"
#include "trust_util.h"
}

#include "container/container.h"

namespace {

struct Graph {
  std::string name;
  size_t off = 0, size = 0;  // payload inside the binary
};

struct World {
  const char* compile;
  const char* sign;
  const char* python;
  const char* script;
  std::string work, pristine, cases, key, pub, bin_name;
  std::string data_key;  // the data key of encrypted cases (key id "lazy")
  size_t bin_size = 0;
  Graph graphs[2];  // in container order
  int graph_of[2];  // one<k>.onnx binds graphs[graph_of[k]]
} g;

constexpr int kChunkLog2 = 12;
constexpr size_t kChunk = size_t(1) << kChunkLog2;
constexpr int kWidth = 256;

std::string Path(const std::string& dir, const std::string& name) { return dir + "/" + name; }

void Run(std::vector<const char*> argv) {
  argv.push_back(nullptr);
  tr_run_ok(argv.data(), g.work.c_str());
}

std::string ReadText(const std::string& path) {
  size_t n = 0;
  unsigned char* d = tu_read_file(path.c_str(), &n);
  if (!d) fail_msg("cannot read %s", path.c_str());
  std::string s(reinterpret_cast<char*>(d), n);
  free(d);
  return s;
}

// Copies the pristine package into a fresh case folder; returns the folder.
std::string Stage(const char* name) {
  std::string dir = Path(g.cases, name);
  assert_int_equal(tu_make_clean_dir(dir.c_str()), 0);
  for (const char* f :
       {"one0.onnx", "one1.onnx", "one0.onnx.cpu.onnx", "one1.onnx.cpu.onnx", "m_ctx.onnx"})
    tr_copy(Path(g.pristine, f).c_str(), Path(dir, f).c_str());
  tr_copy(Path(g.pristine, g.bin_name).c_str(), Path(dir, g.bin_name).c_str());
  return dir;
}

void Sign(const std::string& model) {
  tr_sign(g.sign, model.c_str(), g.key.c_str(), "1", "lazy", g.work.c_str());
}

void Xor(const std::string& dir, size_t off, unsigned char mask) {
  tr_xor_byte(Path(dir, g.bin_name).c_str(), off, mask);
}

// Flips every byte of graph i's payload.
void Trash(const std::string& dir, int i) {
  std::string bin = Path(dir, g.bin_name);
  size_t n = 0;
  unsigned char* d = tu_read_file(bin.c_str(), &n);
  assert_non_null(d);
  for (size_t k = 0; k < g.graphs[i].size; ++k) d[g.graphs[i].off + k] ^= 0xff;
  assert_int_equal(tu_write_file(bin.c_str(), d, n), 0);
  free(d);
}

struct Result {
  int code = -1;
  std::string msg;
  std::vector<float> y;
  double ms = 0;  // session create
};

// Creates a session of `model` (policy, optional group), runs it on a fixed
// input and returns the output.
Result Load(const std::string& model, const char* policy, epctx_env* env = nullptr,
            epctx_context_group* group = nullptr) {
  Result r;
  bool own = !env;
  if (own) {
    assert_null(epctx_env_create(nullptr, 0, &env));
    assert_null(epctx_env_register_builtin_drivers(env));
    size_t n = 0;
    unsigned char* key = tu_read_file(g.pub.c_str(), &n);
    assert_non_null(key);
    assert_null(epctx_env_add_trusted_key(env, key, n));
    free(key);
    unsigned char* dk = tu_read_file(g.data_key.c_str(), &n);
    assert_non_null(dk);
    assert_null(epctx_env_add_decryption_key(env, "lazy", dk, n));
    free(dk);
  }
  epctx_session_options* so = nullptr;
  assert_null(epctx_session_options_create(&so));
  if (policy) assert_null(epctx_session_options_set(so, "epctx.signature_policy", policy));
  if (group) assert_null(epctx_session_options_set_context_group(so, group));
  epctx_session* s = nullptr;
  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  epctx_status* st = epctx_session_create(env, model.c_str(), so, &s);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  r.ms = double(t1.tv_sec - t0.tv_sec) * 1e3 + double(t1.tv_nsec - t0.tv_nsec) / 1e6;
  r.code = epctx_status_code(st);
  r.msg = epctx_status_message(st);
  epctx_status_release(st);
  if (r.code == EPCTX_OK) {
    std::vector<float> x(kWidth);
    for (int i = 0; i < kWidth; ++i) x[i] = float(i % 17) / 17.0f - 0.4f;
    int64_t dims[2] = {1, kWidth};
    epctx_tensor *in = nullptr, *out = nullptr;
    assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, dims, 2, x.data(), x.size() * 4, &in));
    epctx_io_info info;
    assert_null(epctx_session_input_info(s, 0, &info));
    const char* name = info.name;
    epctx_status* rs = epctx_session_run(s, &name, &in, 1, nullptr, &out, 1);
    if (rs) fail_msg("%s: run: %s", model.c_str(), epctx_status_message(rs));
    const float* y = static_cast<const float*>(epctx_tensor_data(out));
    r.y.assign(y, y + epctx_tensor_bytes(out) / 4);
    epctx_tensor_release(in);
    epctx_tensor_release(out);
  }
  epctx_session_release(s);
  epctx_session_options_release(so);
  if (own) epctx_env_release(env);
  return r;
}

Result Expect(int code, const std::string& model, const char* policy, const char* needle) {
  Result r = Load(model, policy);
  if (r.code != code || (needle && !strstr(r.msg.c_str(), needle)))
    fail_msg("%s: expected %s containing '%s', got %s: %s", model.c_str(), epctx_code_name(code),
             needle ? needle : "", epctx_code_name(r.code), r.msg.c_str());
  return r;
}

void SameAsCpu(const std::string& dir, int k, const Result& r) {
  Result cpu =
      Expect(EPCTX_OK, Path(dir, "one" + std::to_string(k) + ".onnx.cpu.onnx"), "off", nullptr);
  assert_int_equal(r.y.size(), cpu.y.size());
  double max = 0;
  for (size_t i = 0; i < r.y.size(); ++i) max = std::max(max, double(std::fabs(r.y[i] - cpu.y[i])));
  if (max > 1e-4) fail_msg("one%d: vnpu vs CPU max abs error %g", k, max);
}

int Setup(void**) {
  std::string src = Path(g.work, "src"), keys = Path(g.work, "keys");
  g.pristine = Path(g.work, "pristine");
  g.cases = Path(g.work, "cases");
  for (const std::string& d : {src, keys, g.pristine}) tu_make_clean_dir(d.c_str());
  g.key = Path(keys, "k.pem");
  g.pub = Path(keys, "pub.pem");
  Run({g.sign, "keygen", g.key.c_str(), g.pub.c_str()});
  g.data_key = Path(keys, "data.key");
  Run({g.sign, "keygen-data", g.data_key.c_str()});
  std::string chain = Path(src, "chain.onnx"), ctx = Path(g.pristine, "m_ctx.onnx");
  Run({g.python, g.script, "chain", chain.c_str()});
  Run({g.compile, chain.c_str(), "-o", ctx.c_str(), "--quiet", "--force"});
  for (int k = 0; k < 2; ++k) {
    std::string one = Path(g.pristine, "one" + std::to_string(k) + ".onnx");
    std::string idx = std::to_string(k);
    Run({g.python, g.script, "one", ctx.c_str(), idx.c_str(), one.c_str(), chain.c_str()});
  }
  // The binary: the one file of the package that is not a model.
  std::string ctx_text = ReadText(ctx);
  for (const char* cand : {"m_vnpu.bin", "model_vnpu.bin", "m_ctx_vnpu.bin", "chain_vnpu.bin"})
    if (tu_file_exists(Path(g.pristine, cand).c_str())) g.bin_name = cand;
  if (g.bin_name.empty()) fail_msg("no context binary beside %s", ctx.c_str());
  std::string bin = ReadText(Path(g.pristine, g.bin_name));
  epctx::Arena arena(epctx::Allocator::Default(), 4096);
  epctx::ContainerView c;
  epctx::Bytes blob{reinterpret_cast<const uint8_t*>(bin.data()), bin.size()};
  epctx::Status st = epctx::ParseContainer(blob, "lazy", arena, &c);
  if (!st.ok()) fail_msg("%s", st.message());
  assert_int_equal(c.num_graphs, 2);
  g.bin_size = bin.size();
  for (int i = 0; i < 2; ++i) {
    g.graphs[i].name = c.graphs[i].name;
    g.graphs[i].off = size_t(c.graphs[i].payload.data - blob.data);
    g.graphs[i].size = c.graphs[i].payload.size;
  }
  for (int k = 0; k < 2; ++k) {
    std::string name = ReadText(Path(g.pristine, "one" + std::to_string(k) + ".onnx.graph"));
    g.graph_of[k] = name == g.graphs[0].name ? 0 : name == g.graphs[1].name ? 1 : -1;
    if (g.graph_of[k] < 0) fail_msg("one%d binds '%s', not in the binary", k, name.c_str());
  }
  assert_int_not_equal(g.graph_of[0], g.graph_of[1]);
  printf("binary %s: %zu bytes; graph '%s' payload [%zu, +%zu), graph '%s' payload [%zu, +%zu)\n",
         g.bin_name.c_str(), bin.size(), g.graphs[0].name.c_str(), g.graphs[0].off,
         g.graphs[0].size, g.graphs[1].name.c_str(), g.graphs[1].off, g.graphs[1].size);
  // Each payload must hold whole 4 KiB chunks, or test (b) proves nothing.
  for (const Graph& gr : g.graphs) assert_true(gr.size >= 3 * kChunk);
  return 0;
}

// (a) Unsigned: the other graph's payload is garbage; the driver never
// reads it, so the session loads and computes what the CPU computes. The
// full model, which binds both graphs, is rejected naming the broken one.
void unbound_graph_corrupted_unsigned(void**) {
  for (int k = 0; k < 2; ++k) {
    std::string dir = Stage(k ? "a1" : "a0");
    std::string model = Path(dir, "one" + std::to_string(k) + ".onnx");
    Result clean = Expect(EPCTX_OK, model, "off", nullptr);
    SameAsCpu(dir, k, clean);
    int other = 1 - g.graph_of[k];
    Trash(dir, other);
    Result r = Expect(EPCTX_OK, model, "off", nullptr);
    assert_true(r.y == clean.y);
    std::string needle = "graph '" + g.graphs[other].name + "'";
    Expect(EPCTX_INVALID_GRAPH, Path(dir, "m_ctx.onnx"), "off", needle.c_str());
  }
}

// (d) Encrypted in 4 KiB segments (epctx-sign encrypt): a session decrypts
// only the graph it binds. Every segment wholly inside the other graph's
// payload is garbage, and the session still loads and computes the clean
// result; a model binding the garbled graph is DECRYPTION_FAILED.
void encrypted_unbound_graph_is_never_decrypted(void**) {
  constexpr size_t kSeg = 4096, kTag = 16, kHeader = 96;
  for (int k = 0; k < 2; ++k) {
    std::string dir = Stage(k ? "d1" : "d0");
    std::string model = Path(dir, "one" + std::to_string(k) + ".onnx");
    Result clean = Expect(EPCTX_OK, model, "off", nullptr);
    Run({g.sign, "encrypt", "--data-key", g.data_key.c_str(), "--key-id", "lazy", "--segment-log2",
         "12", model.c_str()});
    Result enc = Expect(EPCTX_OK, model, "off", nullptr);
    assert_true(enc.y == clean.y);
    const Graph& other = g.graphs[1 - g.graph_of[k]];
    const size_t first = (other.off + kSeg - 1) / kSeg, end = (other.off + other.size) / kSeg;
    assert_true(end >= first + 2);
    std::string bin = Path(dir, g.bin_name);
    size_t n = 0;
    unsigned char* d = tu_read_file(bin.c_str(), &n);
    assert_non_null(d);
    for (size_t i = first; i < end; ++i)
      for (size_t b = 0; b < kSeg + kTag; ++b) d[kHeader + i * (kSeg + kTag) + b] ^= 0xff;
    assert_int_equal(tu_write_file(bin.c_str(), d, n), 0);
    free(d);
    Result r = Expect(EPCTX_OK, model, "off", nullptr);
    assert_true(r.y == clean.y);
    Expect(EPCTX_DECRYPTION_FAILED, Path(dir, "one" + std::to_string(1 - k) + ".onnx"), "off",
           "does not verify");
    Expect(EPCTX_DECRYPTION_FAILED, Path(dir, "m_ctx.onnx"), "off", "does not verify");
  }
}

// (e) Encrypted, then signed (4 KiB segments and chunks): a session hashes
// only the ciphertext it decrypts. Garbage in every chunk wholly inside the
// other graph's segments loads under "required" with the clean result; the
// model binding both graphs is HASH_MISMATCH naming a chunk.
void encrypted_signed_package_hashes_bound_graphs_only(void**) {
  constexpr size_t kSeg = 4096, kStride = kSeg + 16, kHeader = 96;
  for (int k = 0; k < 2; ++k) {
    std::string dir = Stage(k ? "e1" : "e0");
    std::string one = Path(dir, "one" + std::to_string(k) + ".onnx");
    Result clean = Expect(EPCTX_OK, one, "off", nullptr);
    Run({g.sign, "encrypt", "--data-key", g.data_key.c_str(), "--key-id", "lazy", "--segment-log2",
         "12", one.c_str()});
    Sign(one);
    Sign(Path(dir, "m_ctx.onnx"));
    Expect(EPCTX_OK, Path(dir, "m_ctx.onnx"), "required", nullptr);
    const Graph& other = g.graphs[1 - g.graph_of[k]];
    const size_t first = (other.off + kSeg - 1) / kSeg, end = (other.off + other.size) / kSeg;
    const size_t c0 = (kHeader + first * kStride + kChunk - 1) / kChunk,
                 c1 = (kHeader + end * kStride) / kChunk;
    assert_true(c1 >= c0 + 1);
    std::string bin = Path(dir, g.bin_name);
    size_t n = 0;
    unsigned char* d = tu_read_file(bin.c_str(), &n);
    assert_non_null(d);
    for (size_t b = c0 * kChunk; b < c1 * kChunk; ++b) d[b] ^= 0xff;
    assert_int_equal(tu_write_file(bin.c_str(), d, n), 0);
    free(d);
    Result r = Expect(EPCTX_OK, one, "required", nullptr);
    assert_true(r.y == clean.y);
    char needle[64];
    snprintf(needle, sizeof needle, "chunk %zu of", c0);
    Expect(EPCTX_HASH_MISMATCH, Path(dir, "m_ctx.onnx"), "required", needle);
  }
}

// (b) Signed with 4 KiB chunks, then tampered. A chunk wholly inside the
// unbound payload is never hashed, so a flip there loads under "required";
// a flip in the unbound payload's last chunk is HASH_MISMATCH when that
// chunk also holds padding (epctx-compile aligns segments to 4 KiB, so
// payloads start on a chunk boundary but end inside one), OK when it is the
// file's short last chunk; a flip in the bound graph's payload is
// HASH_MISMATCH naming the file and the chunk.
void signed_package_verifies_bound_graphs_only(void**) {
  bool tested_shared_tail = false;
  for (int k = 0; k < 2; ++k) {
    int bound = g.graph_of[k], other = 1 - bound;
    const Graph& o = g.graphs[other];
    const Graph& b = g.graphs[bound];
    std::string one = "one" + std::to_string(k) + ".onnx";
    // Inside: the middle of the first chunk that starts inside the payload.
    size_t inside = (o.off + kChunk - 1) / kChunk * kChunk + kChunk / 2;
    assert_true(inside + kChunk / 2 <= o.off + o.size);
    std::string dir = Stage(k ? "b1" : "b0");
    char needle[160];
    Sign(Path(dir, one));
    Result clean = Expect(EPCTX_OK, Path(dir, one), "required", nullptr);
    // The compiled model binds both graphs (a primary and a main_context=0
    // node): signed, it loads; with the flip below, it will not.
    Sign(Path(dir, "m_ctx.onnx"));
    Expect(EPCTX_OK, Path(dir, "m_ctx.onnx"), "required", nullptr);
    Xor(dir, inside, 0x10);
    Result r = Expect(EPCTX_OK, Path(dir, one), "required", nullptr);
    assert_true(r.y == clean.y);
    SameAsCpu(dir, k, r);
    snprintf(needle, sizeof needle, "'%s' chunk %zu of", g.bin_name.c_str(), inside / kChunk);
    Expect(EPCTX_HASH_MISMATCH, Path(dir, "m_ctx.onnx"), "required", needle);

    // The unbound payload's last byte. Its chunk is skipped only if it holds
    // nothing but payload bytes: at the end of the file (the last chunk is
    // short) it does; otherwise it runs on into the padding before the next
    // segment, which is verified, so the chunk is hashed and the flip caught.
    size_t last = o.off + o.size - 1;
    size_t chunk_end = std::min((last / kChunk + 1) * kChunk, g.bin_size);
    bool skipped = chunk_end <= o.off + o.size;
    dir = Stage(k ? "c1" : "c0");
    Sign(Path(dir, one));
    Xor(dir, last, 0x10);
    snprintf(needle, sizeof needle, "'%s' chunk %zu of", g.bin_name.c_str(), last / kChunk);
    printf("one%d: flip in the last byte of unbound '%s' (chunk %zu): expect %s\n", k,
           o.name.c_str(), last / kChunk, skipped ? "OK (chunk wholly inside)" : "HASH_MISMATCH");
    if (skipped) Expect(EPCTX_OK, Path(dir, one), "required", nullptr);
    else Expect(EPCTX_HASH_MISMATCH, Path(dir, one), "required", needle);
    tested_shared_tail |= !skipped;

    // The bound payload, in its middle.
    dir = Stage(k ? "d1" : "d0");
    Sign(Path(dir, one));
    size_t mid = b.off + b.size / 2;
    Xor(dir, mid, 0x10);
    snprintf(needle, sizeof needle, "'%s' chunk %zu of", g.bin_name.c_str(), mid / kChunk);
    Expect(EPCTX_HASH_MISMATCH, Path(dir, one), "required", needle);
  }
  // The first graph's payload is followed by padding: one case above was a
  // flip in a shared chunk.
  assert_true(tested_shared_tail);
}

// A context group: the first session loads the binary and binds graph A;
// a second session joining the group binds graph B and hashes B's payload
// itself (AcquireShared), so a tampered B is caught for it only.
void group_session_verifies_its_own_graphs(void**) {
  std::string dir = Stage("g");
  int ka = 0, kb = 1;  // one0 binds graph_of[0], one1 graph_of[1]
  std::string ma = Path(dir, "one0.onnx"), mb = Path(dir, "one1.onnx");
  Sign(ma);
  Sign(mb);
  const Graph& gb = g.graphs[g.graph_of[kb]];
  Xor(dir, (gb.off + kChunk - 1) / kChunk * kChunk + kChunk / 2, 0x10);
  (void)ka;
  epctx_env* env = nullptr;
  epctx_context_group* group = nullptr;
  assert_null(epctx_env_create(nullptr, 0, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  size_t n = 0;
  unsigned char* key = tu_read_file(g.pub.c_str(), &n);
  assert_null(epctx_env_add_trusted_key(env, key, n));
  free(key);
  assert_null(epctx_context_group_create(env, &group));
  // Session A stays alive (the group keeps the context) while B joins.
  epctx_session_options* so = nullptr;
  assert_null(epctx_session_options_create(&so));
  assert_null(epctx_session_options_set(so, "epctx.signature_policy", "required"));
  assert_null(epctx_session_options_set_context_group(so, group));
  epctx_session* a = nullptr;
  epctx_status* st = epctx_session_create(env, ma.c_str(), so, &a);
  if (st) fail_msg("session A: %s", epctx_status_message(st));
  assert_int_equal(epctx_context_group_loaded_count(group), 1);
  Result rb = Load(mb, "required", env, group);
  if (rb.code != EPCTX_HASH_MISMATCH || !strstr(rb.msg.c_str(), g.bin_name.c_str()))
    fail_msg("session B: expected HASH_MISMATCH, got %s: %s", epctx_code_name(rb.code),
             rb.msg.c_str());
  // A second session binding A's graph shares the context and loads.
  Result ra = Load(ma, "required", env, group);
  assert_int_equal(ra.code, EPCTX_OK);
  assert_int_equal(epctx_context_group_loaded_count(group), 1);
  epctx_session_release(a);
  epctx_session_options_release(so);
  epctx_context_group_release(group);
  epctx_env_release(env);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s epctx-compile epctx-sign PYTHON lazy_models.py WORK\n", argv[0]);
    return 2;
  }
  g.compile = argv[1];
  g.sign = argv[2];
  g.python = argv[3];
  g.script = argv[4];
  g.work = argv[5];
  tu_make_clean_dir(g.work.c_str());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unbound_graph_corrupted_unsigned),
      cmocka_unit_test(signed_package_verifies_bound_graphs_only),
      cmocka_unit_test(group_session_verifies_its_own_graphs),
      cmocka_unit_test(encrypted_unbound_graph_is_never_decrypted),
      cmocka_unit_test(encrypted_signed_package_hashes_bound_graphs_only),
  };
  return cmocka_run_group_tests(tests, Setup, nullptr);
}
