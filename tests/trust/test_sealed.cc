// SPDX-License-Identifier: Apache-2.0
// Encrypted assets (runtime/schema/sealed_format.h): the host sealer
// (epctx_host/seal.h) against the runtime's reader (trust/sealed.h).
// Round trips for both algorithms at segment boundaries and random ranges;
// every header field changed, every segment changed, truncated, extended,
// reordered or taken from another asset, a wrong key, a missing key and an
// unknown algorithm are refused with their own code, and the plaintext of
// a refused segment is not left in the output. Signed, each segment is
// hashed on the copy it is decrypted from, chunk by chunk.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sealed_format.h>

#include "core/memory.h"
#include "epctx_host/seal.h"
#include "trust/crypto.h"
#include "trust/keyring.h"
#include "trust/manifest.h"
#include "trust/sealed.h"

// Last: cmocka 1.1.5 has no extern "C", and its macros collide with libstdc++.
extern "C" {
#include <cmocka.h>
}

using namespace epctx;

namespace {

const int kAlgs[] = {EPCTX_SEALED_ALG_CHACHA20_POLY1305, EPCTX_SEALED_ALG_AES_256_GCM};

std::string Key(uint8_t seed) {
  std::string k(32, '\0');
  for (int i = 0; i < 32; ++i) k[size_t(i)] = char(seed * 31 + i * 7);
  return k;
}

std::string Plain(size_t n) {
  std::string p(n, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    p[i] = char(x >> 16);
  }
  return p;
}

std::string Seal(const std::string& plain, int alg, int log2 = 12,
                 const std::string& name = "m.bin", const std::string& id = "k1",
                 uint8_t seed = 1) {
  host::SealOptions o;
  o.key_id = id;
  o.alg = alg;
  o.segment_log2 = log2;
  return host::SealBytes(plain, Key(seed), name, o);
}

struct Ring {
  trust::Keyring ring;
  explicit Ring(uint8_t seed = 1, const char* id = "k1") {
    const std::string k = Key(seed);
    assert_true(ring.AddDataKey(id, k.data(), k.size()).ok());
  }
};

char g_msg[Status::kMaxMessage];  // the last Open's message

// Opens `file` as asset `name` and decrypts [begin, end); the status code,
// the plaintext buffer in *out, the message in g_msg.
int Open(const std::string& file, const trust::Keyring& ring, std::vector<uint8_t>* out,
         uint64_t begin = 0, uint64_t end = UINT64_MAX, const std::string& name = "m.bin") {
  trust::SealedAsset sa(Allocator::Default());
  Bytes b{reinterpret_cast<const uint8_t*>(file.data()), file.size()};
  Status st = sa.Open(b, StrView{name.data(), name.size()}, ring, "test.bin");
  if (st.ok()) {
    out->assign(size_t(sa.header().plaintext_size), 0);
    st = sa.Decrypt(begin, end == UINT64_MAX ? sa.header().plaintext_size : end, out->data());
  }
  snprintf(g_msg, sizeof g_msg, "%s", st.ok() ? "" : st.message());
  return st.code();
}

void round_trips_at_segment_boundaries(void**) {
  Ring r;
  for (int alg : kAlgs)
    for (size_t n :
         {size_t(0), size_t(1), size_t(4095), size_t(4096), size_t(4097), size_t(3 * 4096 + 17)}) {
      const std::string plain = Plain(n), file = Seal(plain, alg);
      const size_t segs = n == 0 ? 1 : (n + 4095) / 4096;
      assert_int_equal(file.size(), EPCTX_SEALED_HEADER_SIZE + n + 16 * segs);
      std::vector<uint8_t> out;
      assert_int_equal(Open(file, r.ring, &out), EPCTX_OK);
      assert_int_equal(out.size(), n);
      assert_true(n == 0 || memcmp(out.data(), plain.data(), n) == 0);
    }
}

// A range decrypts the segments it touches and leaves the others alone.
void a_range_decrypts_only_its_segments(void**) {
  Ring r;
  for (int alg : kAlgs) {
    const std::string plain = Plain(5 * 4096), file = Seal(plain, alg);
    std::vector<uint8_t> out;
    assert_int_equal(Open(file, r.ring, &out, 4096 + 10, 2 * 4096 + 1), EPCTX_OK);
    for (size_t i = 0; i < out.size(); ++i) {
      const bool in = i >= 4096 && i < 3 * 4096;
      assert_int_equal(out[i], in ? uint8_t(plain[i]) : 0);
    }
  }
}

// Sealing twice gives different files (a fresh salt), and no 16-byte run of
// the plaintext appears in the file.
void ciphertext_shows_no_plaintext(void**) {
  const std::string plain = Plain(3 * 4096);
  for (int alg : kAlgs) {
    const std::string a = Seal(plain, alg), b = Seal(plain, alg);
    assert_true(a != b);
    for (size_t i = 0; i + 16 <= plain.size(); i += 16)
      assert_true(a.find(plain.substr(i, 16)) == std::string::npos);
  }
}

void every_header_byte_is_checked(void**) {
  Ring r;
  const std::string file = Seal(Plain(2 * 4096 + 5), EPCTX_SEALED_ALG_CHACHA20_POLY1305);
  for (size_t at = 0; at < EPCTX_SEALED_HEADER_SIZE; ++at) {
    std::string bad = file;
    bad[at] = char(bad[at] ^ 0x01);
    std::vector<uint8_t> out;
    const int code = Open(bad, r.ring, &out);
    int want = EPCTX_DECRYPTION_FAILED;  // the salt: authenticated, and it keys the asset
    if (at < EPCTX_SEALED_OFF_ALG || at == EPCTX_SEALED_OFF_SEGMENT_LOG2 ||
        (at >= EPCTX_SEALED_OFF_RESERVED && at < EPCTX_SEALED_OFF_KEY_ID))
      want = EPCTX_INVALID_CONTAINER;  // magic, versions, sizes, reserved, flags
    if (at == EPCTX_SEALED_OFF_ALG) want = EPCTX_UNSUPPORTED_ALGORITHM;  // 1 -> 0
    if (at == EPCTX_SEALED_OFF_MINOR) want = EPCTX_INVALID_CONTAINER;
    if (at >= EPCTX_SEALED_OFF_KEY_ID && at < EPCTX_SEALED_OFF_SALT) {
      // "k1" -> "j1" / "k0", or a NUL pad -> \1: another key id or malformed
      const size_t i = at - EPCTX_SEALED_OFF_KEY_ID;
      want = i < 2 ? EPCTX_KEY_MISSING : EPCTX_INVALID_CONTAINER;
    }
    if (code != want) print_error("header byte %zu: code %d, expected %d\n", at, code, want);
    assert_int_equal(code, want);
  }
}

void changed_segments_are_refused_and_wiped(void**) {
  Ring r;
  for (int alg : kAlgs) {
    const std::string plain = Plain(3 * 4096 + 100), file = Seal(plain, alg);
    const size_t step = 4096 + EPCTX_SEALED_TAG_SIZE;
    for (size_t seg = 0; seg < 4; ++seg)
      for (size_t off : {size_t(0), size_t(77), size_t(4096 + 3)}) {
        const size_t at = EPCTX_SEALED_HEADER_SIZE + seg * step + off;
        if (at >= file.size()) continue;
        std::string bad = file;
        bad[at] = char(bad[at] ^ 0x80);
        std::vector<uint8_t> out;
        assert_int_equal(Open(bad, r.ring, &out), EPCTX_DECRYPTION_FAILED);
        assert_non_null(strstr(g_msg, "does not verify"));
        // Segments before the bad one decrypted; the bad one left zero.
        const size_t from = seg * 4096, to = std::min(out.size(), from + 4096);
        for (size_t i = from; i < to; ++i) assert_int_equal(out[i], 0);
      }
    // Two whole segments swapped.
    std::string swapped = file;
    swapped.replace(EPCTX_SEALED_HEADER_SIZE, step, file, EPCTX_SEALED_HEADER_SIZE + step, step);
    swapped.replace(EPCTX_SEALED_HEADER_SIZE + step, step, file, EPCTX_SEALED_HEADER_SIZE, step);
    std::vector<uint8_t> out;
    assert_int_equal(Open(swapped, r.ring, &out), EPCTX_DECRYPTION_FAILED);
  }
}

void truncated_and_extended_files_are_refused(void**) {
  Ring r;
  const std::string file = Seal(Plain(2 * 4096), EPCTX_SEALED_ALG_CHACHA20_POLY1305);
  std::vector<uint8_t> out;
  assert_int_equal(Open(file.substr(0, file.size() - 1), r.ring, &out), EPCTX_INVALID_CONTAINER);
  assert_non_null(strstr(g_msg, "truncated or extended"));
  assert_int_equal(Open(file.substr(0, file.size() - 4096 - 16), r.ring, &out),
                   EPCTX_INVALID_CONTAINER);
  assert_int_equal(Open(file + std::string(1, '\0'), r.ring, &out), EPCTX_INVALID_CONTAINER);
  assert_int_equal(Open(file.substr(0, 50), r.ring, &out), EPCTX_INVALID_CONTAINER);
  // Dropping the last segment and saying so in the header: the header is
  // authenticated by every segment, so the first one fails.
  std::string shorter = file.substr(0, EPCTX_SEALED_HEADER_SIZE + 4096 + 16);
  shorter[EPCTX_SEALED_OFF_PLAINTEXT_SIZE + 1] = char(0x10);  // 4096
  assert_int_equal(Open(shorter, r.ring, &out), EPCTX_DECRYPTION_FAILED);
}

void wrong_name_key_or_id_are_refused(void**) {
  for (int alg : kAlgs) {
    const std::string file = Seal(Plain(5000), alg);
    std::vector<uint8_t> out;
    Ring right, wrong(2);
    assert_int_equal(Open(file, wrong.ring, &out), EPCTX_DECRYPTION_FAILED);
    assert_int_equal(Open(file, right.ring, &out, 0, UINT64_MAX, "other.bin"),
                     EPCTX_DECRYPTION_FAILED);
    Ring other_id(1, "k2");
    assert_int_equal(Open(file, other_id.ring, &out), EPCTX_KEY_MISSING);
  }
}

int g_provided = 0;
int Provider(void* user, const char* id, uint8_t key[32]) {
  ++g_provided;
  if (strcmp(id, static_cast<const char*>(user)) != 0) return EPCTX_KEY_MISSING;
  memcpy(key, Key(1).data(), 32);
  return EPCTX_OK;
}
int FailingProvider(void*, const char*, uint8_t*) { return EPCTX_FAIL; }

void a_key_provider_serves_ids_the_ring_lacks(void**) {
  const std::string file = Seal(Plain(100), EPCTX_SEALED_ALG_CHACHA20_POLY1305);
  trust::Keyring ring;
  std::vector<uint8_t> out;
  char id[] = "k1";
  ring.SetKeyProvider(Provider, id);
  assert_int_equal(Open(file, ring, &out), EPCTX_OK);
  assert_int_equal(g_provided, 1);
  char other[] = "zz";
  ring.SetKeyProvider(Provider, other);
  assert_int_equal(Open(file, ring, &out), EPCTX_KEY_MISSING);
  ring.SetKeyProvider(FailingProvider, nullptr);
  assert_int_equal(Open(file, ring, &out), EPCTX_FAIL);
}

void data_keys_are_checked_when_added(void**) {
  trust::Keyring ring;
  const std::string k = Key(1), k2 = Key(2);
  assert_int_equal(ring.AddDataKey("", k.data(), 32).code(), EPCTX_INVALID_ARGUMENT);
  assert_int_equal(ring.AddDataKey("has space", k.data(), 32).code(), EPCTX_INVALID_ARGUMENT);
  assert_int_equal(ring.AddDataKey("123456789012345678901234567890123", k.data(), 32).code(),
                   EPCTX_INVALID_ARGUMENT);
  assert_int_equal(ring.AddDataKey("k", k.data(), 31).code(), EPCTX_INVALID_ARGUMENT);
  assert_true(ring.AddDataKey("k", k.data(), 32).ok());
  assert_true(ring.AddDataKey("k", k.data(), 32).ok());  // the same again
  assert_int_equal(ring.AddDataKey("k", k2.data(), 32).code(), EPCTX_INVALID_ARGUMENT);
  for (int i = 1; i < trust::Keyring::kMaxDataKeys; ++i) {
    char id[16];
    snprintf(id, sizeof id, "r%d", i);
    assert_true(ring.AddDataKey(id, k.data(), 32).ok());
  }
  assert_int_equal(ring.AddDataKey("full", k.data(), 32).code(), EPCTX_INVALID_ARGUMENT);
}

// The signed manifest's entry for `file`: 2^log2-byte chunk hashes.
struct Listed {
  std::vector<uint8_t> hashes;
  trust::ManifestFile f;
  Listed(const std::string& file, int log2) {
    const size_t c = size_t(1) << log2, n = (file.size() + c - 1) / c;
    hashes.resize(n * 32);
    for (size_t k = 0; k < n; ++k)
      trust::Sha256(file.data() + k * c, std::min(c, file.size() - k * c), hashes.data() + k * 32);
    f.role = 1;
    f.chunk_log2 = uint8_t(log2);
    f.size = file.size();
    f.num_chunks = n;
    f.chunk_hashes = hashes.data();
  }
};

int OpenListed(const std::string& file, const trust::Keyring& ring, const Listed& l,
               std::vector<uint8_t>* out, uint64_t begin, uint64_t end) {
  trust::SealedAsset sa(Allocator::Default());
  Bytes b{reinterpret_cast<const uint8_t*>(file.data()), file.size()};
  Status st = sa.Open(b, StrView{"m.bin", 5}, ring, "test.bin", &l.f);
  out->assign(sa.header().plaintext_size, 0xAA);
  if (st.ok()) st = sa.Decrypt(begin, end, out->data());
  snprintf(g_msg, sizeof g_msg, "%s", st.ok() ? "" : st.message());
  return st.code();
}

// Signed: the header is hashed before it is parsed, a segment on the copy
// it is decrypted from, and only the chunks a range touches. A change the
// manifest sees is HASH_MISMATCH naming the chunk (its plaintext wiped); a
// wrong key under a matching manifest stays DECRYPTION_FAILED.
void signed_segments_are_hashed_on_their_copy(void**) {
  Ring r, wrong(2);
  const size_t kSeg = 4096, kStride = kSeg + 16;
  const std::string plain = Plain(5 * kSeg + 100);
  for (int alg : kAlgs)
    for (int log2 : {12, 13, 16}) {
      const std::string file = Seal(plain, alg);
      const Listed l(file, log2);
      std::vector<uint8_t> out;
      assert_int_equal(OpenListed(file, r.ring, l, &out, 0, plain.size()), EPCTX_OK);
      assert_memory_equal(out.data(), plain.data(), plain.size());
      assert_int_equal(OpenListed(file, wrong.ring, l, &out, 0, 1), EPCTX_DECRYPTION_FAILED);
      // A header field changed: the manifest's finding, before the parser's.
      std::string bad = file;
      bad[EPCTX_SEALED_OFF_FLAGS] ^= 1;
      assert_int_equal(OpenListed(bad, r.ring, l, &out, 0, 1), EPCTX_HASH_MISMATCH);
      assert_non_null(strstr(g_msg, "chunk 0 of"));
      // A byte in segment 4: segment 1 (other chunks when they are 4 KiB)
      // still decrypts, segment 4 is refused and left zero.
      const size_t at = EPCTX_SEALED_HEADER_SIZE + 4 * kStride + 100;
      bad = file;
      bad[at] ^= 0x40;
      const int want1 = (at >> log2) == ((EPCTX_SEALED_HEADER_SIZE + 2 * kStride - 1) >> log2)
                            ? EPCTX_HASH_MISMATCH
                            : EPCTX_OK;
      assert_int_equal(OpenListed(bad, r.ring, l, &out, kSeg, 2 * kSeg), want1);
      assert_int_equal(OpenListed(bad, r.ring, l, &out, 3 * kSeg, 5 * kSeg), EPCTX_HASH_MISMATCH);
      char needle[64];
      snprintf(needle, sizeof needle, "chunk %zu of", at >> log2);
      assert_non_null(strstr(g_msg, needle));
      // Wiped; or never written when the change is in the header's chunk
      // (one 64 KiB chunk holds the whole file), refused by Open.
      const uint8_t left = (at >> log2) == 0 ? 0xAA : 0;
      for (size_t i = 3 * kSeg; i < 5 * kSeg; ++i) assert_int_equal(out[i], left);
      // The tag of the last segment: a change there is seen too.
      bad = file;
      bad[file.size() - 1] ^= 1;
      assert_int_equal(OpenListed(bad, r.ring, l, &out, 5 * kSeg, plain.size()),
                       EPCTX_HASH_MISMATCH);
    }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips_at_segment_boundaries),
      cmocka_unit_test(a_range_decrypts_only_its_segments),
      cmocka_unit_test(ciphertext_shows_no_plaintext),
      cmocka_unit_test(every_header_byte_is_checked),
      cmocka_unit_test(changed_segments_are_refused_and_wiped),
      cmocka_unit_test(truncated_and_extended_files_are_refused),
      cmocka_unit_test(wrong_name_key_or_id_are_refused),
      cmocka_unit_test(a_key_provider_serves_ids_the_ring_lacks),
      cmocka_unit_test(data_keys_are_checked_when_added),
      cmocka_unit_test(signed_segments_are_hashed_on_their_copy),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
