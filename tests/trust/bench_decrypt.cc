// SPDX-License-Identifier: Apache-2.0
// bench_decrypt: what encrypted packages cost.
//   usage: bench_decrypt WORK_DIR [MB=64] [PACKAGE_ctx.onnx]
// 1. Decryption throughput of the runtime's reader (trust/sealed.h) per
//    algorithm on MB MiB sealed in 64 KiB segments, against memcpy of the
//    same bytes on this machine (best of 3 each); and signed, each segment
//    hashed on its copy against 64 KiB manifest chunks (one pass), against
//    SHA-256 of the file alone.
// 2. With a package (a vnpu _ctx.onnx and its context binary, e.g. from
//    tests/bench/peer-work): session create, plain and encrypted with each
//    algorithm (copied into WORK_DIR, epctx-sign encrypt's code), best of 5,
//    and the application allocator's live bytes after create (the private
//    plaintext an encrypted session holds).
// Prints lines for people and one JSON line.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <epctx/epctx.h>
#include <sealed_format.h>

#include "core/memory.h"
#include "epctx_host/model_io.h"
#include "epctx_host/seal.h"
#include "epctx_host/sign.h"
#include "trust/crypto.h"
#include "trust/keyring.h"
#include "trust/manifest.h"
#include "trust/sealed.h"

using namespace epctx;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Counts the live bytes the runtime holds.
std::atomic<long long> g_live{0};
// The header sits `align` bytes before the block; every block here is
// aligned to at least 16 and the header is found by the stored alignment.
struct Block {
  size_t size, align;
};
void* CountAlloc(void*, size_t size, size_t align) {
  if (align < 16) align = 16;
  void* p = nullptr;
  if (posix_memalign(&p, align, size + align)) return nullptr;
  char* user = static_cast<char*>(p) + align;
  Block b{size, align};
  memcpy(user - sizeof b, &b, sizeof b);
  g_live += static_cast<long long>(size);
  return user;
}
void CountFree(void*, void* p) {
  if (!p) return;
  Block b;
  memcpy(&b, static_cast<char*>(p) - sizeof b, sizeof b);
  g_live -= static_cast<long long>(b.size);
  free(static_cast<char*>(p) - b.align);
}

std::string Key() {
  std::string k(32, '\0');
  for (int i = 0; i < 32; ++i) k[size_t(i)] = char(i * 13 + 7);
  return k;
}

struct Create {
  double ms = 0;
  long long live = 0;
  int code = 0;
};

Create CreateSession(const std::string& model, bool with_key) {
  Create best{1e30, 0, 0};
  for (int rep = 0; rep < 5; ++rep) {
    epctx_allocator a{nullptr, CountAlloc, CountFree};
    epctx_env* env = nullptr;
    if (epctx_env_create(&a, 0, &env) || epctx_env_register_builtin_drivers(env)) abort();
    const std::string k = Key();
    if (with_key && epctx_env_add_decryption_key(env, "bench", k.data(), k.size())) abort();
    const long long before = g_live.load();
    epctx_session* s = nullptr;
    const auto t0 = Clock::now();
    epctx_status* st = epctx_session_create(env, model.c_str(), nullptr, &s);
    const double ms = Ms(t0, Clock::now());
    const long long live = g_live.load() - before;
    best.code = epctx_status_code(st);
    if (st) {
      fprintf(stderr, "bench_decrypt: %s: %s\n", model.c_str(), epctx_status_message(st));
      epctx_status_release(st);
      epctx_env_release(env);
      return best;
    }
    epctx_session_release(s);
    epctx_env_release(env);
    if (ms < best.ms) best.ms = ms, best.live = live;
  }
  return best;
}

void Copy(const std::string& from, const std::string& to) {
  const std::string b = host::ReadFileBytes(from);
  host::WriteFileAtomic(to, b.data(), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: bench_decrypt WORK_DIR [MB=64] [PACKAGE_ctx.onnx]\n");
    return 2;
  }
  const std::string work = argv[1];
  const size_t mb = argc > 2 ? size_t(atol(argv[2])) : 64;
  const std::string package = argc > 3 ? argv[3] : "";
  std::string plain(mb << 20, '\0');
  uint32_t x = 1;
  for (char& c : plain) c = char((x = x * 1664525u + 1013904223u) >> 24);
  std::vector<uint8_t> out(plain.size());
  double memcpy_ms = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    memcpy(out.data(), plain.data(), plain.size());
    memcpy_ms = std::min(memcpy_ms, Ms(t0, Clock::now()));
  }
  const double mib = double(mb);
  printf("memcpy: %.0f MiB/s (%zu MiB)\n", mib / memcpy_ms * 1e3, mb);
  const char* names[] = {"chacha20-poly1305", "aes-256-gcm"};
  double dec_ms[2] = {0, 0}, signed_ms[2] = {0, 0};
  trust::Keyring ring;
  const std::string key = Key();
  if (!ring.AddDataKey("bench", key.data(), key.size()).ok()) return 1;
  for (int a = 0; a < 2; ++a) {
    host::SealOptions o;
    o.key_id = "bench";
    o.alg = host::ParseSealAlg(names[a]);
    const std::string sealed = host::SealBytes(plain, key, "bench.bin", o);
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      trust::SealedAsset sa(Allocator::Default());
      const auto t0 = Clock::now();
      Status st = sa.Open(Bytes{reinterpret_cast<const uint8_t*>(sealed.data()), sealed.size()},
                          StrView{"bench.bin", 9}, ring, "bench.bin");
      if (st.ok()) st = sa.Decrypt(0, plain.size(), out.data());
      best = std::min(best, Ms(t0, Clock::now()));
      if (!st.ok()) {
        fprintf(stderr, "bench_decrypt: %s\n", st.message());
        return 1;
      }
    }
    if (memcmp(out.data(), plain.data(), plain.size()) != 0) return 1;
    dec_ms[a] = best;
    printf("decrypt %-18s %.0f MiB/s, %.2f ms per MiB (%.1fx memcpy's time)\n", names[a],
           mib / best * 1e3, best / mib, best / memcpy_ms);
    // Signed: the manifest's 64 KiB chunk hashes of the sealed file.
    const size_t chunk = size_t(1) << 16, chunks = (sealed.size() + chunk - 1) / chunk;
    std::vector<uint8_t> hashes(chunks * 32);
    double sha_ms = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = Clock::now();
      for (size_t k = 0; k < chunks; ++k)
        trust::Sha256(sealed.data() + k * chunk, std::min(chunk, sealed.size() - k * chunk),
                      hashes.data() + k * 32);
      sha_ms = std::min(sha_ms, Ms(t0, Clock::now()));
    }
    trust::ManifestFile listed;
    listed.role = 1;
    listed.chunk_log2 = 16;
    listed.size = sealed.size();
    listed.num_chunks = chunks;
    listed.chunk_hashes = hashes.data();
    best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      trust::SealedAsset sa(Allocator::Default());
      const auto t0 = Clock::now();
      Status st = sa.Open(Bytes{reinterpret_cast<const uint8_t*>(sealed.data()), sealed.size()},
                          StrView{"bench.bin", 9}, ring, "bench.bin", &listed);
      if (st.ok()) st = sa.Decrypt(0, plain.size(), out.data());
      best = std::min(best, Ms(t0, Clock::now()));
      if (!st.ok()) {
        fprintf(stderr, "bench_decrypt: signed: %s\n", st.message());
        return 1;
      }
    }
    signed_ms[a] = best;
    printf("  signed, hashed on the copy: %.0f MiB/s (SHA-256 alone %.0f MiB/s; hash then "
           "decrypt would be %.0f MiB/s)\n",
           mib / best * 1e3, mib / sha_ms * 1e3, mib / (sha_ms + dec_ms[a]) * 1e3);
  }
  Create plain_c, enc_c[2];
  long long bin_bytes = 0;
  if (!package.empty()) {
    for (const host::PackageFile& f : host::ListPackageFiles(package))
      if (f.role == 1) bin_bytes = static_cast<long long>(host::ReadFileBytes(f.path).size());
    plain_c = CreateSession(package, false);
    printf("session create, plain: %.2f ms, %lld bytes live\n", plain_c.ms, plain_c.live);
    for (int a = 0; a < 2; ++a) {
      const std::string sub = work + "/" + names[a];
      std::string cmd = "mkdir -p '" + sub + "'";
      if (system(cmd.c_str())) return 1;
      std::string model;
      for (const host::PackageFile& f : host::ListPackageFiles(package)) {
        Copy(f.path, sub + "/" + f.name);
        if (f.role == 0) model = sub + "/" + f.name;
      }
      host::SealOptions o;
      o.key_id = "bench";
      o.alg = host::ParseSealAlg(names[a]);
      host::EncryptPackage(model, key, o);
      enc_c[a] = CreateSession(model, true);
      printf("session create, %s: %.2f ms (+%.2f), %lld bytes live (+%lld; context file %lld)\n",
             names[a], enc_c[a].ms, enc_c[a].ms - plain_c.ms, enc_c[a].live,
             enc_c[a].live - plain_c.live, bin_bytes);
    }
  }
  printf("{\"mib\": %zu, \"memcpy_mib_s\": %.0f, \"chacha20_poly1305_mib_s\": %.0f, "
         "\"aes_256_gcm_mib_s\": %.0f, \"signed_chacha_mib_s\": %.0f, "
         "\"signed_gcm_mib_s\": %.0f, \"package\": \"%s\", \"context_bytes\": %lld, "
         "\"create_plain_ms\": %.2f, \"create_chacha_ms\": %.2f, \"create_gcm_ms\": %.2f, "
         "\"live_plain\": %lld, \"live_chacha\": %lld}\n",
         mb, mib / memcpy_ms * 1e3, mib / dec_ms[0] * 1e3, mib / dec_ms[1] * 1e3,
         mib / signed_ms[0] * 1e3, mib / signed_ms[1] * 1e3, package.c_str(), bin_bytes, plain_c.ms,
         enc_c[0].ms, enc_c[1].ms, plain_c.live, enc_c[0].live);
  return 0;
}
