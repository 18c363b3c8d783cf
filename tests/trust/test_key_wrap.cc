// SPDX-License-Identifier: Apache-2.0
// Key-wrap files (runtime/schema/keys_format.h): the host writer
// (epctx_host/key_wrap.h) against the runtime's parser and data key lookup
// (trust/key_wrap.h). Both algorithms round-trip; the application's data
// key comes first, then any entry whose device key it holds; every header
// and entry byte changed, a truncated or extended file, a relabelled
// entry, duplicates and counts out of range are refused with their own
// code; no usable entry is KEY_MISSING naming the ids tried.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#include <keys_format.h>
#include <sealed_format.h>

#include "core/memory.h"
#include "epctx_host/diagnostics.h"
#include "epctx_host/key_wrap.h"
#include "epctx_host/seal.h"
#include "trust/key_wrap.h"
#include "trust/keyring.h"
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
  for (int i = 0; i < 32; ++i) k[size_t(i)] = char(seed * 37 + i * 11 + 1);
  return k;
}
const std::string kData = Key(1), kDevA = Key(2), kDevB = Key(3);

std::string Entry(const std::string& device_key, const char* device_id, int alg = 1,
                  const char* data_id = "v1", const std::string& data_key = kData) {
  host::WrapOptions o;
  o.data_key_id = data_id;
  o.device_key_id = device_id;
  o.alg = alg;
  return host::WrapDataKey(data_key, device_key, o);
}

// A key-wrap file of `entries`, written by the host writer.
std::string File(const std::vector<std::string>& entries) {
  std::string f;
  for (const std::string& e : entries) {
    bool replaced = false;
    f = host::PutKeyWrapEntry(f, e, "test.keys", &replaced);
    assert_false(replaced);
  }
  return f;
}

// A ring holding the given (id, key) pairs.
struct Ring {
  trust::Keyring ring;
  Ring(std::initializer_list<std::pair<const char*, std::string>> keys) {
    for (const auto& k : keys) assert_true(ring.AddDataKey(k.first, k.second.data(), 32).ok());
  }
};

char g_msg[Status::kMaxMessage];  // the last Lookup's message

// Parses `file` and looks up data key `id`; the code, the key in *key, the
// message in g_msg.
int Lookup(const std::string& file, const trust::Keyring& ring, std::string* key = nullptr,
           const char* id = "v1") {
  trust::KeyWrapFile f;
  Status st = trust::ParseKeyWrapFile(
      Bytes{reinterpret_cast<const uint8_t*>(file.data()), file.size()}, "test.keys", &f);
  uint8_t out[32];
  memset(out, 0xee, sizeof out);
  if (st.ok()) st = trust::DataKeyFor(ring, &f, id, "asset", out);
  if (!st.ok()) {
    // Nothing half-unwrapped stays behind.
    for (uint8_t b : out) assert_true(b == 0 || b == 0xee);
  }
  if (key) key->assign(reinterpret_cast<const char*>(out), st.ok() ? 32 : 0);
  snprintf(g_msg, sizeof g_msg, "%s", st.ok() ? "" : st.message());
  return st.code();
}

void both_algorithms_round_trip(void**) {
  for (int alg : kAlgs) {
    const std::string file = File({Entry(kDevA, "dev-a", alg)});
    assert_int_equal(file.size(), EPCTX_KEYS_HEADER_SIZE + EPCTX_KEYS_ENTRY_SIZE);
    Ring r{{"dev-a", kDevA}};
    std::string key;
    assert_int_equal(Lookup(file, r.ring, &key), EPCTX_OK);
    assert_true(key == kData);
    // The wrapped key shows nothing of the data key, and wrapping twice
    // gives another entry (a fresh nonce).
    assert_true(file.find(kData.substr(0, 8)) == std::string::npos);
    assert_true(Entry(kDevA, "dev-a", alg) != Entry(kDevA, "dev-a", alg));
  }
}

// Each device's key unwraps its own entry; the application's data key is
// used as it is, without a look at the entries.
void each_device_key_works_and_the_data_key_comes_first(void**) {
  const std::string file = File({Entry(kDevA, "dev-a"), Entry(kDevB, "dev-b", 2)});
  std::string key;
  Ring a{{"dev-a", kDevA}}, b{{"dev-b", kDevB}};
  assert_int_equal(Lookup(file, a.ring, &key), EPCTX_OK);
  assert_true(key == kData);
  assert_int_equal(Lookup(file, b.ring, &key), EPCTX_OK);
  assert_true(key == kData);
  // A wrong device key for dev-a is a failure, even though dev-b's entry
  // would work: a tag that does not verify is never skipped.
  Ring wrong_a{{"dev-a", kDevB}, {"dev-b", kDevB}};
  assert_int_equal(Lookup(file, wrong_a.ring, &key), EPCTX_DECRYPTION_FAILED);
  assert_non_null(strstr(g_msg, "test.keys: entry 0 (data key id 'v1', device key id 'dev-a') "
                                "does not verify"));
  const std::string other = Key(9);
  Ring direct{{"v1", other}, {"dev-a", kDevA}};
  assert_int_equal(Lookup(file, direct.ring, &key), EPCTX_OK);
  assert_true(key == other);
}

int g_asked = 0;
int DeviceProvider(void*, const char* id, uint8_t key[32]) {
  ++g_asked;
  if (strcmp(id, "dev-b") != 0) return EPCTX_KEY_MISSING;
  memcpy(key, kDevB.data(), 32);
  return EPCTX_OK;
}
int FailingProvider(void*, const char*, uint8_t*) { return EPCTX_FAIL; }

void the_key_provider_serves_device_keys(void**) {
  const std::string file = File({Entry(kDevA, "dev-a"), Entry(kDevB, "dev-b")});
  trust::Keyring ring;
  ring.SetKeyProvider(DeviceProvider, nullptr);
  std::string key;
  assert_int_equal(Lookup(file, ring, &key), EPCTX_OK);
  assert_true(key == kData);
  assert_int_equal(g_asked, 3);  // v1, dev-a, dev-b
  ring.SetKeyProvider(FailingProvider, nullptr);
  assert_int_equal(Lookup(file, ring, &key), EPCTX_FAIL);
}

void no_usable_entry_is_key_missing_naming_the_ids(void**) {
  const std::string file =
      File({Entry(kDevA, "dev-a"), Entry(kDevB, "dev-b"), Entry(kDevA, "dev-a", 1, "v2")});
  Ring none{{"dev-c", Key(4)}};
  assert_int_equal(Lookup(file, none.ring), EPCTX_KEY_MISSING);
  assert_non_null(strstr(g_msg, "did not provide"));
  assert_non_null(strstr(g_msg, "(tried 'dev-a', 'dev-b')"));
  assert_int_equal(Lookup(file, none.ring, nullptr, "v3"), EPCTX_KEY_MISSING);
  assert_non_null(strstr(g_msg, "test.keys has no entry for it"));
  // One level only: a wrap key id that another entry could unwrap is not
  // looked up there.
  const std::string chain = File({Entry(kDevA, "mid"), Entry(kDevB, "dev-b", 1, "mid", kDevA)});
  Ring b{{"dev-b", kDevB}};
  assert_int_equal(Lookup(chain, b.ring), EPCTX_KEY_MISSING);
}

// The code a byte flipped (^ 0x01) at `at` of a one-entry file gets.
int Expected(const std::string& file, size_t at) {
  if (at < EPCTX_KEYS_HEADER_SIZE) return EPCTX_INVALID_CONTAINER;
  const size_t off = at - EPCTX_KEYS_HEADER_SIZE;
  if (off < EPCTX_KEYS_ENTRY_OFF_ALG) {
    // An id changed: another valid id has no entry or no key, anything
    // else is malformed (a NUL pad made 0x01, a character made ',' or '`').
    const char c = char(file[at] ^ 0x01);
    return file[at] && trust::ValidKeyId(&c, 1) ? EPCTX_KEY_MISSING : EPCTX_INVALID_CONTAINER;
  }
  if (off == EPCTX_KEYS_ENTRY_OFF_ALG) return EPCTX_UNSUPPORTED_ALGORITHM;  // 1 -> 0
  if (off < EPCTX_KEYS_ENTRY_OFF_NONCE) return EPCTX_INVALID_CONTAINER;     // reserved
  return EPCTX_DECRYPTION_FAILED;  // nonce, wrapped key, tag
}

void every_header_and_entry_byte_is_checked(void**) {
  const std::string file = File({Entry(kDevA, "dev-a")});
  Ring r{{"dev-a", kDevA}};
  for (size_t at = 0; at < file.size(); ++at) {
    std::string bad = file;
    bad[at] = char(bad[at] ^ 0x01);
    const int code = Lookup(bad, r.ring), want = Expected(file, at);
    if (code != want) print_error("byte %zu: code %d (%s), expected %d\n", at, code, g_msg, want);
    assert_int_equal(code, want);
    if (want == EPCTX_INVALID_CONTAINER || want == EPCTX_DECRYPTION_FAILED)
      assert_non_null(strstr(g_msg, "test.keys"));
    if (at >= EPCTX_KEYS_HEADER_SIZE && want == EPCTX_INVALID_CONTAINER)
      assert_non_null(strstr(g_msg, "entry 0 of 1: "));
  }
}

void truncated_and_extended_files_are_refused(void**) {
  const std::string file = File({Entry(kDevA, "dev-a"), Entry(kDevB, "dev-b")});
  Ring r{{"dev-a", kDevA}};
  const std::string cases[] = {file.substr(0, file.size() - 1), file + std::string(1, '\0'),
                               file.substr(0, file.size() - EPCTX_KEYS_ENTRY_SIZE),
                               file + file.substr(EPCTX_KEYS_HEADER_SIZE, EPCTX_KEYS_ENTRY_SIZE)};
  for (const std::string& c : cases) {
    assert_int_equal(Lookup(c, r.ring), EPCTX_INVALID_CONTAINER);
    assert_non_null(strstr(g_msg, "truncated or extended"));
  }
  assert_int_equal(Lookup(file.substr(0, EPCTX_KEYS_HEADER_SIZE - 1), r.ring),
                   EPCTX_INVALID_CONTAINER);
  assert_int_equal(Lookup(std::string(), r.ring), EPCTX_INVALID_CONTAINER);
}

void counts_duplicates_and_sizes_are_bounded(void**) {
  Ring r{{"dev-a", kDevA}};
  const std::string e = Entry(kDevA, "dev-a");
  std::string file = File({e});
  // The same pair twice: the second entry is a duplicate.
  std::string dup = file + e;
  dup[EPCTX_KEYS_OFF_ENTRY_COUNT] = 2;
  assert_int_equal(Lookup(dup, r.ring), EPCTX_INVALID_CONTAINER);
  assert_non_null(strstr(g_msg, "entries 0 and 1 both wrap data key id 'v1' under device key id "
                                "'dev-a'"));
  std::string zero = file.substr(0, EPCTX_KEYS_HEADER_SIZE);
  zero[EPCTX_KEYS_OFF_ENTRY_COUNT] = 0;
  assert_int_equal(Lookup(zero, r.ring), EPCTX_INVALID_CONTAINER);
  assert_non_null(strstr(g_msg, "entry_count 0, expected 1..1024"));
  // The most a file may hold parses; one more is refused by its count.
  std::string full = file;
  for (int i = 1; i < EPCTX_KEYS_MAX_ENTRIES; ++i) {
    std::string other = e;
    char id[EPCTX_KEYS_KEY_ID_SIZE] = {0};
    snprintf(id, sizeof id, "d%d", i);
    other.replace(EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID, sizeof id, id, sizeof id);
    full += other;
  }
  full[EPCTX_KEYS_OFF_ENTRY_COUNT] = char(EPCTX_KEYS_MAX_ENTRIES & 0xff);
  full[EPCTX_KEYS_OFF_ENTRY_COUNT + 1] = char(EPCTX_KEYS_MAX_ENTRIES >> 8);
  assert_int_equal(Lookup(full, r.ring), EPCTX_OK);
  bool replaced = false;
  try {
    (void)host::PutKeyWrapEntry(full, Entry(kDevB, "dev-b"), "full.keys", &replaced);
    fail_msg("a full file took another entry");
  } catch (const host::ToolError& err) {
    assert_non_null(strstr(err.what(), "already holds 1024 entries"));
  }
  full += e;
  full[EPCTX_KEYS_OFF_ENTRY_COUNT] = char((EPCTX_KEYS_MAX_ENTRIES + 1) & 0xff);
  assert_int_equal(Lookup(full, r.ring), EPCTX_INVALID_CONTAINER);
  assert_non_null(strstr(g_msg, "entry_count 1025, expected 1..1024"));
}

// An entry's labels are authenticated: giving it another device key id,
// another data key id or another alg makes its tag fail; swapping its two
// ids leaves no entry for the data key id.
void relabelled_entries_are_refused(void**) {
  const std::string file = File({Entry(kDevA, "dev-a")});
  const size_t e = EPCTX_KEYS_HEADER_SIZE;
  Ring holds_b{{"dev-b", kDevB}};
  std::string bad = file;
  bad.replace(e + EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID, 5, "dev-b");
  assert_int_equal(Lookup(bad, holds_b.ring), EPCTX_DECRYPTION_FAILED);
  Ring holds_a{{"dev-a", kDevA}};
  bad = file;
  bad[e + EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID + 1] = '2';  // v1 -> v2
  assert_int_equal(Lookup(bad, holds_a.ring, nullptr, "v2"), EPCTX_DECRYPTION_FAILED);
  bad = file;
  bad[e + EPCTX_KEYS_ENTRY_OFF_ALG] = char(EPCTX_SEALED_ALG_AES_256_GCM);
  assert_int_equal(Lookup(bad, holds_a.ring), EPCTX_DECRYPTION_FAILED);
  bad = file;
  bad.replace(e, 32, file, e + 32, 32);
  bad.replace(e + 32, 32, file, e, 32);
  Ring both{{"dev-a", kDevA}, {"v0", Key(7)}};
  assert_int_equal(Lookup(bad, both.ring), EPCTX_KEY_MISSING);
  assert_non_null(strstr(g_msg, "has no entry for it"));
  // The entry of another file (another data key under the same ids)
  // unwraps that file's key, never this one's: sealed decryption fails.
  const std::string theirs = File({Entry(kDevA, "dev-a", 1, "v1", Key(8))});
  std::string key;
  assert_int_equal(Lookup(theirs, holds_a.ring, &key), EPCTX_OK);
  assert_true(key == Key(8));
}

// A sealed asset opened with only a device key and the key-wrap file.
void a_sealed_asset_opens_with_a_device_key(void**) {
  host::SealOptions so;
  so.key_id = "v1";
  so.segment_log2 = 12;
  std::string plain(5000, '\0');
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = char(i * 7);
  const std::string sealed = host::SealBytes(plain, kData, "m.bin", so);
  const std::string file = File({Entry(kDevA, "dev-a")});
  trust::KeyWrapFile f;
  assert_true(trust::ParseKeyWrapFile(
                  Bytes{reinterpret_cast<const uint8_t*>(file.data()), file.size()}, "t.keys", &f)
                  .ok());
  const trust::KeyWrapFile* const kWraps[] = {&f, nullptr};
  for (const trust::KeyWrapFile* wraps : kWraps) {
    Ring r{{"dev-a", kDevA}};
    trust::SealedAsset sa(Allocator::Default());
    Status st = sa.Open(Bytes{reinterpret_cast<const uint8_t*>(sealed.data()), sealed.size()},
                        StrView{"m.bin", 5}, r.ring, "m.bin", nullptr, wraps);
    if (!wraps) {
      assert_int_equal(st.code(), EPCTX_KEY_MISSING);
      continue;
    }
    assert_true(st.ok());
    std::vector<uint8_t> out(plain.size());
    assert_true(sa.Decrypt(0, plain.size(), out.data()).ok());
    assert_memory_equal(out.data(), plain.data(), plain.size());
  }
}

void the_writer_checks_ids_and_existing_files(void**) {
  const struct {
    const char* data_id;
    const char* device_id;
    int alg;
    const char* needle;
  } bad[] = {{"v1", "v1", 1, "is the data key id"},
             {"v1", "has space", 1, "key id 'has space'"},
             {"", "dev", 1, "key id ''"},
             {"v1", "dev", 3, "unknown encryption algorithm 3"}};
  for (const auto& b : bad) {
    try {
      (void)Entry(kDevA, b.device_id, b.alg, b.data_id);
      fail_msg("%s/%s accepted", b.data_id, b.device_id);
    } catch (const host::ToolError& e) {
      if (!strstr(e.what(), b.needle)) fail_msg("'%s' lacks '%s'", e.what(), b.needle);
    }
  }
  try {
    (void)Entry(kData, "dev-a");
    fail_msg("the data key wrapped under itself");
  } catch (const host::ToolError& e) {
    assert_non_null(strstr(e.what(), "the device key is the data key"));
  }
  // Replacing an entry keeps the count; a malformed file is not rewritten.
  std::string file = File({Entry(kDevA, "dev-a"), Entry(kDevB, "dev-b")});
  bool replaced = false;
  const std::string again = host::PutKeyWrapEntry(file, Entry(kDevA, "dev-a", 2), "t", &replaced);
  assert_true(replaced);
  assert_int_equal(again.size(), file.size());
  Ring r{{"dev-a", kDevA}};
  std::string key;
  assert_int_equal(Lookup(again, r.ring, &key), EPCTX_OK);
  assert_true(key == kData);
  file[EPCTX_KEYS_OFF_RESERVED] = 1;
  try {
    (void)host::PutKeyWrapEntry(file, Entry(kDevA, "dev-c"), "t.keys", &replaced);
    fail_msg("a malformed file was rewritten");
  } catch (const host::ToolError& e) {
    assert_non_null(strstr(e.what(), "reserved"));
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(both_algorithms_round_trip),
      cmocka_unit_test(each_device_key_works_and_the_data_key_comes_first),
      cmocka_unit_test(the_key_provider_serves_device_keys),
      cmocka_unit_test(no_usable_entry_is_key_missing_naming_the_ids),
      cmocka_unit_test(every_header_and_entry_byte_is_checked),
      cmocka_unit_test(truncated_and_extended_files_are_refused),
      cmocka_unit_test(counts_duplicates_and_sizes_are_bounded),
      cmocka_unit_test(relabelled_entries_are_refused),
      cmocka_unit_test(a_sealed_asset_opens_with_a_device_key),
      cmocka_unit_test(the_writer_checks_ids_and_existing_files),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
