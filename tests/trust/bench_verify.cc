// SPDX-License-Identifier: Apache-2.0
// bench_verify: what verification costs at load time.
//   usage: bench_verify WORK_DIR [MB=64] [GRAPHS=8]
// Builds a package whose context file is MB MiB split into GRAPHS equal
// "graph payloads", signs it (64 KiB chunks), then times with the runtime's
// verifier: the manifest (read, parse, ECDSA P-256 verify), hashing the whole
// file (MB/s and ms per MiB), and the lazy path that hashes one graph's
// payload and skips the others. Prints lines for people and one JSON line.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <epctx/pal.h>
#include <manifest_format.h>
#include <onnx/onnx_pb.h>

#include "epctx_host/model_io.h"
#include "epctx_host/sign.h"
#include "session/options.h"
#include "session/trust_config.h"
#include "trust/verifier.h"

using namespace epctx;

namespace {

double Best(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }

void WriteCtxModel(const std::string& path, const std::string& bin) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("bench_verify");
  m.add_opset_import()->set_version(13);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("bench");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("EPContext");
  n->set_domain("com.microsoft");
  n->set_name("ctx0");
  n->add_input("x");
  n->add_output("y");
  auto attr_i = [&](const char* k, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  attr_i("embed_mode", 0);
  attr_i("main_context", 1);
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("ep_cache_context");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(bin);
  std::string bytes = m.SerializeAsString();
  host::WriteFileAtomic(path, bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_verify WORK_DIR [MB=64] [GRAPHS=8]\n");
    return 2;
  }
  std::string dir = argv[1];
  size_t mb = argc > 2 ? std::stoul(argv[2]) : 64;
  uint32_t graphs = argc > 3 ? static_cast<uint32_t>(std::stoul(argv[3])) : 8;
  std::string model = dir + "/bench_ctx.onnx", bin = dir + "/bench.bin";
  std::string key = dir + "/bench_key.pem", pub = dir + "/bench_pub.pem";
  std::remove(key.c_str());
  host::GenerateKeyPair(key, pub);
  std::vector<uint8_t> data(mb << 20);
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : data) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  host::WriteFileAtomic(bin, data.data(), data.size());
  WriteCtxModel(model, "bench.bin");
  host::SignOptions so;
  so.model_id = "bench";
  host::SignPackage(model, key, so);

  std::string pem = host::ReadFileBytes(pub);
  trust::Keyring keys;
  Options opts;
  if (!keys.AddKey(pem.data(), pem.size()).ok() ||
      !opts.Set("epctx.signature_policy", "required").ok())
    return 1;
  epctx_pal_region region{};
  char msg[256];
  if (epctx_pal_map_file(bin.c_str(), EPCTX_PAL_LOAD_MMAP, &region, msg, sizeof msg) != 0) {
    std::fprintf(stderr, "bench_verify: error: %s\n", msg);
    return 1;
  }
  Bytes file{region.data, static_cast<size_t>(region.size)};
  StrView name{"bench.bin", 9};
  std::vector<Bytes> others;  // every graph payload but the first
  size_t per = file.size / graphs;
  for (uint32_t i = 1; i < graphs; ++i)
    others.push_back(Bytes{file.data + i * per, i + 1 == graphs ? file.size - i * per : per});

  std::vector<double> t_manifest, t_full, t_lazy;
  uint64_t full_bytes = 0, lazy_bytes = 0;
  for (int rep = 0; rep < 5; ++rep) {
    Arena arena(Allocator::Default());
    trust::PackageVerifier v;
    uint64_t t0 = epctx_pal_now_ns();
    trust::VerifyConfig config;
    Status st = ResolveVerifyConfig(opts, model.c_str(), arena, "bench", &config);
    if (st.ok()) st = v.Begin(keys, config, arena, "bench");
    uint64_t t1 = epctx_pal_now_ns();
    if (st.ok()) st = v.VerifyFileExcept(EPCTX_MF_ROLE_CONTEXT, name, file, nullptr, 0);
    uint64_t t2 = epctx_pal_now_ns();
    full_bytes = v.bytes_hashed();
    if (st.ok())
      st = v.VerifyFileExcept(EPCTX_MF_ROLE_CONTEXT, name, file, others.data(),
                              static_cast<uint32_t>(others.size()));
    uint64_t t3 = epctx_pal_now_ns();
    lazy_bytes = v.bytes_hashed() - full_bytes;
    if (!st.ok()) {
      std::fprintf(stderr, "bench_verify: error: %s\n", st.message());
      return 1;
    }
    t_manifest.push_back((t1 - t0) / 1e6);
    t_full.push_back((t2 - t1) / 1e6);
    t_lazy.push_back((t3 - t2) / 1e6);
  }
  epctx_pal_unmap(&region);
  double mib = static_cast<double>(file.size) / (1 << 20);
  double full = Best(t_full), lazy = Best(t_lazy), man = Best(t_manifest);
  std::printf("context file: %.0f MiB in %u graphs, 64 KiB chunks, manifest %zu bytes\n", mib,
              graphs, host::ReadFileBytes(model + ".sig").size());
  std::printf("manifest read + parse + ECDSA P-256 verify: %.3f ms\n", man);
  std::printf("full file hash check: %.2f ms = %.3f ms/MiB (%.0f MiB/s)\n", full, full / mib,
              mib / (full / 1e3));
  std::printf("lazy, one graph of %u: %.2f ms (%.1f MiB hashed)\n", graphs, lazy,
              lazy_bytes / 1048576.0);
  std::printf("{\"mib\":%.0f,\"graphs\":%u,\"manifest_ms\":%.3f,\"full_ms\":%.3f,"
              "\"ms_per_mib\":%.4f,\"mib_per_s\":%.1f,\"lazy_ms\":%.3f,\"lazy_mib\":%.2f,"
              "\"full_mib\":%.2f}\n",
              mib, graphs, man, full, full / mib, mib / (full / 1e3), lazy, lazy_bytes / 1048576.0,
              full_bytes / 1048576.0);
  return 0;
}
