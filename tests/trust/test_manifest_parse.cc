// SPDX-License-Identifier: Apache-2.0
// The manifest parser on hand-built bytes: each malformed layout of the
// bad-input list (security_anchors.md §7) is SIGNATURE_INVALID naming the
// field, and a well-formed one parses. No signature is checked here.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <manifest_format.h>

#include "trust/manifest.h"

// Last: cmocka 1.1.5 has no extern "C", and its macros collide with libstdc++.
extern "C" {
#include <cmocka.h>
}

using namespace epctx;

namespace {

void Put16(std::string& s, uint16_t v) { s += char(v & 255), s += char(v >> 8); }
void Put32(std::string& s, uint32_t v) { Put16(s, v & 0xffff), Put16(s, v >> 16); }
void Put64(std::string& s, uint64_t v) { Put32(s, uint32_t(v)), Put32(s, uint32_t(v >> 32)); }
std::string Tlv(uint16_t type, const std::string& v) {
  std::string s;
  Put16(s, type), Put16(s, 0), Put32(s, uint32_t(v.size()));
  return s + v;
}
std::string FileValue(uint8_t role, const std::string& name, uint64_t size, int chunks) {
  std::string v;
  v += char(role), v += char(16);
  Put16(v, uint16_t(name.size())), Put64(v, size);
  return v + name + std::string(32 * chunks, 'h');
}
std::string Body() {
  std::string c;
  Put64(c, 3);
  return Tlv(EPCTX_MF_TLV_KEY_ID, std::string(32, 'k')) + Tlv(EPCTX_MF_TLV_MODEL_ID, "m") +
         Tlv(EPCTX_MF_TLV_SECURITY_COUNTER, c) +
         Tlv(EPCTX_MF_TLV_FILE, FileValue(0, "m_ctx.onnx", 100, 1)) +
         Tlv(EPCTX_MF_TLV_FILE, FileValue(1, "m.bin", 70000, 2));
}
std::string Build(const std::string& body, const std::string& sig_tlv) {
  std::string m(EPCTX_MF_MAGIC, 8);
  Put16(m, 1), Put16(m, 0), Put32(m, 32), Put32(m, uint32_t(32 + body.size())), Put32(m, 0);
  Put64(m, 0);
  return m + body + sig_tlv;
}
std::string Sig() { return Tlv(EPCTX_MF_TLV_SIGNATURE, std::string(70, 's')); }

int Parse(const std::string& bytes, std::string* msg = nullptr) {
  Arena arena(Allocator::Default());
  trust::Manifest m;
  Status st = trust::ParseManifest(
      Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "t.sig", arena, &m);
  if (msg) *msg = st.message();
  return st.code();
}

void Expect(const std::string& bytes, const char* needle) {
  std::string msg;
  int c = Parse(bytes, &msg);
  if (c != EPCTX_SIGNATURE_INVALID || msg.find(needle) == std::string::npos)
    fail_msg("expected SIGNATURE_INVALID with '%s', got %s: %s", needle, epctx_code_name(c),
             msg.c_str());
}

void well_formed_parses(void**) {
  std::string good = Build(Body(), Sig());
  Arena arena(Allocator::Default());
  trust::Manifest m;
  Status st = trust::ParseManifest(
      Bytes{reinterpret_cast<const uint8_t*>(good.data()), good.size()}, "t.sig", arena, &m);
  assert_true(st.ok());
  assert_int_equal(m.num_files, 2);
  assert_int_equal(m.security_counter, 3);
  assert_int_equal(m.files[1].num_chunks, 2);
  assert_int_equal(m.signature.size, 70);
  // an unknown ignorable TLV is skipped
  assert_int_equal(Parse(Build(Body() + Tlv(0x8123, "x"), Sig())), EPCTX_OK);
}

void header_errors(void**) {
  std::string good = Build(Body(), Sig());
  Expect("", "shorter than");
  std::string b = good;
  b[0] = 'X';
  Expect(b, "bad magic");
  b = good, b[8] = 2;
  Expect(b, "format 2.0");
  b = good, b[10] = 1;
  Expect(b, "format 1.1");
  b = good, b[12] = 16;
  Expect(b, "header_size 16");
  b = good, b[16] = char(0xff), b[17] = char(0xff);
  Expect(b, "protected_size");
  b = good, b[20] = 1;
  Expect(b, "flags");
  Expect(std::string(EPCTX_MF_MAX_SIZE + 1, 'x'), "exceed the limit");
}

void tlv_errors(void**) {
  std::string body = Body();
  // length running past the protected area by one byte, and 0xFFFF
  std::string b = body + Tlv(0x8001, "abc");
  b[b.size() - 3 - 4] = 4;
  Expect(Build(b, Sig()), "runs past the protected area");
  b = body + Tlv(0x8001, "abc");
  b[b.size() - 3 - 4] = char(0xff), b[b.size() - 3 - 3] = char(0xff);
  Expect(Build(b, Sig()), "runs past the protected area");
  Expect(Build(body + "\x01\x00\x00", Sig()), "straddles");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_MODEL_ID, "again"), Sig()), "appears twice");
  Expect(Build(body + Tlv(0x0042, "?"), Sig()), "unknown critical TLV type 0x42");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(1, "m.bin", 1, 1)), Sig()), "listed twice");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(2, "../x", 1, 1)), Sig()),
         "not a plain relative path");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(2, "/etc/x", 1, 1)), Sig()),
         "not a plain relative path");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(2, "x", 70000, 1)), Sig()),
         "needs 2 chunks");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(2, "x", ~0ull, 0)), Sig()), "chunks");
  Expect(Build(Tlv(EPCTX_MF_TLV_MODEL_ID, "m"), Sig()), "no KEY_ID");
}

// Issue 14 finding 3: the duplicate check runs before the signature is
// checked, on any .sig beside a model; pairwise it took 104 s for 200,000
// entries. Sorted, the whole manifest (4.4 MB) parses at once; a duplicate
// placed last is still found, and Find looks entries up by name.
void two_hundred_thousand_entries_parse_and_duplicates_are_found(void**) {
  std::string body = Body();
  char name[32];
  for (int i = 0; i < 200000; ++i) {
    snprintf(name, sizeof name, "d/%07d.bin", (i * 7919) % 200000);
    body += Tlv(EPCTX_MF_TLV_FILE, FileValue(2, name, 0, 0));
  }
  std::string good = Build(body, Sig());
  assert_true(good.size() < EPCTX_MF_MAX_SIZE);
  Arena arena(Allocator::Default());
  trust::Manifest m;
  Status st = trust::ParseManifest(
      Bytes{reinterpret_cast<const uint8_t*>(good.data()), good.size()}, "t.sig", arena, &m);
  assert_true(st.ok());
  assert_int_equal(m.num_files, 200002);
  const trust::ManifestFile* f = m.Find(2, StrView{"d/0123456.bin", 13});
  assert_non_null(f);
  assert_true(f->name.eq("d/0123456.bin"));
  assert_null(m.Find(2, StrView{"d/0200000.bin", 13}));
  assert_non_null(m.Find(1, StrView{"m.bin", 5}));
  assert_true(m.Model() && m.Model()->name.eq("m_ctx.onnx"));
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(2, "d/0000042.bin", 0, 0)), Sig()),
         "'d/0000042.bin' (role 2) is listed twice");
  Expect(Build(body + Tlv(EPCTX_MF_TLV_FILE, FileValue(0, "other.onnx", 0, 0)), Sig()),
         "a second MODEL entry");
}

void unprotected_area_errors(void**) {
  std::string body = Body();
  Expect(Build(body, ""), "no signature TLV");
  // a non-signature TLV after the protected area (CVE-2024-32883 class)
  Expect(Build(body, Tlv(EPCTX_MF_TLV_MODEL_ID, "evil") + Sig()), "only the signature");
  Expect(Build(body, Sig() + "x"), "1 trailing bytes");
  Expect(Build(body, Sig() + Sig()), "trailing bytes");
  Expect(Build(body, Tlv(EPCTX_MF_TLV_SIGNATURE, std::string(73, 's'))), "73 bytes");
  std::string s = Sig();
  s[4] = 71;
  Expect(Build(body, s), "runs past the end");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(well_formed_parses),
      cmocka_unit_test(header_errors),
      cmocka_unit_test(tlv_errors),
      cmocka_unit_test(unprotected_area_errors),
      cmocka_unit_test(two_hundred_thousand_entries_parse_and_duplicates_are_found),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
