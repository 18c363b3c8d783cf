// SPDX-License-Identifier: Apache-2.0
// Key-wrap files (schema/keys_format.h) through mbedtls: the strict parser,
// HKDF-SHA256 for the wrap key, one AEAD open per entry, and the data key
// lookup of trust/key_wrap.h.
#include "trust/key_wrap.h"

#include <cstring>

#include <keys_format.h>
#include <sealed_format.h>

#include "trust/aead_mbedtls.h"
#include "trust/sealed.h"

namespace epctx {
namespace trust {
namespace {

static_assert(EPCTX_KEYS_KEY_SIZE == EPCTX_SEALED_KEY_SIZE, "a wrapped key is a data key");
static_assert(EPCTX_KEYS_ENTRY_OFF_TAG + EPCTX_KEYS_TAG_SIZE == EPCTX_KEYS_ENTRY_SIZE,
              "an entry ends with its tag");

// Where a NUL-padded key id field goes wrong: the index of the first byte
// that breaks the rule (1..32 bytes of [A-Za-z0-9._-], then NULs only), or
// -1 when it is well formed. *len receives the id's length.
int IdProblem(const uint8_t* field, size_t* len) {
  size_t n = 0;
  while (n < EPCTX_KEYS_KEY_ID_SIZE && field[n]) ++n;
  *len = n;
  if (n == 0) return 0;
  for (size_t i = 0; i < n; ++i)
    if (!ValidKeyId(reinterpret_cast<const char*>(field + i), 1)) return int(i);
  for (size_t i = n; i < EPCTX_KEYS_KEY_ID_SIZE; ++i)
    if (field[i]) return int(i);
  return -1;
}

const char* FieldOfId(size_t off) {
  return off == EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID ? "data_key_id" : "wrap_key_id";
}

// Decrypts n bytes and checks the tag in one go; mbedtls's code (0: ok).
int AeadOpen(uint8_t alg, const uint8_t key[32], const uint8_t* nonce, const uint8_t* aad,
             size_t aad_len, const uint8_t* in, size_t n, const uint8_t* tag, uint8_t* out) {
  int rc = -1;
#if defined(MBEDTLS_CHACHAPOLY_C)
  if (alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305) {
    mbedtls_chachapoly_context c;
    mbedtls_chachapoly_init(&c);
    rc = mbedtls_chachapoly_setkey(&c, key);
    if (!rc) rc = mbedtls_chachapoly_auth_decrypt(&c, n, nonce, aad, aad_len, tag, in, out);
    mbedtls_chachapoly_free(&c);
  }
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
  if (alg == EPCTX_SEALED_ALG_AES_256_GCM) {
    mbedtls_gcm_context g;
    mbedtls_gcm_init(&g);
    rc = mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, key, 256);
    if (!rc)
      rc = mbedtls_gcm_auth_decrypt(&g, n, nonce, EPCTX_KEYS_NONCE_SIZE, aad, aad_len, tag,
                                    EPCTX_KEYS_TAG_SIZE, in, out);
    mbedtls_gcm_free(&g);
  }
#endif
#if !defined(MBEDTLS_CHACHAPOLY_C) && !defined(EPCTX_SEALED_HAVE_GCM)
  (void)alg, (void)key, (void)nonce, (void)aad, (void)aad_len, (void)in, (void)n, (void)tag;
  (void)out;
#endif
  return rc;
}

}  // namespace

Status ParseKeyWrapFile(Bytes file, const char* what, KeyWrapFile* out) {
  *out = KeyWrapFile{};
  const uint8_t* p = file.data;
  if (file.size < EPCTX_KEYS_HEADER_SIZE || memcmp(p, EPCTX_KEYS_MAGIC, EPCTX_KEYS_MAGIC_SIZE) != 0)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: key-wrap file: %zu bytes, expected a %d-byte header starting with "
                         "\"" EPCTX_KEYS_MAGIC "\"",
                         what, file.size, EPCTX_KEYS_HEADER_SIZE);
  const unsigned major = load_le16(p + EPCTX_KEYS_OFF_MAJOR),
                 minor = load_le16(p + EPCTX_KEYS_OFF_MINOR);
  if (major != EPCTX_KEYS_FORMAT_MAJOR || minor > EPCTX_KEYS_FORMAT_MINOR)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: key-wrap file format %u.%u, this runtime reads %d.0 to %d.%d", what,
                         major, minor, EPCTX_KEYS_FORMAT_MAJOR, EPCTX_KEYS_FORMAT_MAJOR,
                         EPCTX_KEYS_FORMAT_MINOR);
  const uint32_t hsize = load_le32(p + EPCTX_KEYS_OFF_HEADER_SIZE),
                 esize = load_le32(p + EPCTX_KEYS_OFF_ENTRY_SIZE);
  if (hsize != EPCTX_KEYS_HEADER_SIZE || esize != EPCTX_KEYS_ENTRY_SIZE)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: key-wrap file header_size %u and entry_size %u, expected %d and %d",
                         what, hsize, esize, EPCTX_KEYS_HEADER_SIZE, EPCTX_KEYS_ENTRY_SIZE);
  const uint64_t reserved = load_le64(p + EPCTX_KEYS_OFF_RESERVED);
  if (reserved)
    return Status::Error(EPCTX_INVALID_CONTAINER, "%s: key-wrap file reserved 0x%llx, expected 0",
                         what, static_cast<unsigned long long>(reserved));
  const uint32_t count = load_le32(p + EPCTX_KEYS_OFF_ENTRY_COUNT);
  if (count == 0 || count > EPCTX_KEYS_MAX_ENTRIES)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: key-wrap file entry_count %u, expected 1..%d", what, count,
                         EPCTX_KEYS_MAX_ENTRIES);
  // count <= 1024: no overflow.
  const uint64_t want = EPCTX_KEYS_HEADER_SIZE + uint64_t(count) * EPCTX_KEYS_ENTRY_SIZE;
  if (file.size != want)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: key-wrap file of %u entries must be %llu bytes, the file has %zu "
                         "(truncated or extended)",
                         what, count, static_cast<unsigned long long>(want), file.size);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = p + EPCTX_KEYS_HEADER_SIZE + size_t(i) * EPCTX_KEYS_ENTRY_SIZE;
    static const size_t kIdFields[] = {EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID,
                                       EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID};
    for (size_t off : kIdFields) {
      size_t len = 0;
      const int bad = IdProblem(e + off, &len);
      if (bad >= 0)
        return Status::Error(EPCTX_INVALID_CONTAINER,
                             "%s: entry %u of %u: %s byte %d is 0x%02x, expected 1..32 "
                             "characters of [A-Za-z0-9._-] padded with NUL",
                             what, i, count, FieldOfId(off), bad, e[off + size_t(bad)]);
    }
    const unsigned r = e[EPCTX_KEYS_ENTRY_OFF_RESERVED] | e[EPCTX_KEYS_ENTRY_OFF_RESERVED + 1] |
                       e[EPCTX_KEYS_ENTRY_OFF_RESERVED + 2];
    if (r)
      return Status::Error(
          EPCTX_INVALID_CONTAINER, "%s: entry %u of %u: reserved bytes 0x%02x%02x%02x, expected 0",
          what, i, count, e[EPCTX_KEYS_ENTRY_OFF_RESERVED], e[EPCTX_KEYS_ENTRY_OFF_RESERVED + 1],
          e[EPCTX_KEYS_ENTRY_OFF_RESERVED + 2]);
    const uint8_t alg = e[EPCTX_KEYS_ENTRY_OFF_ALG];
    if (alg != EPCTX_SEALED_ALG_CHACHA20_POLY1305 && alg != EPCTX_SEALED_ALG_AES_256_GCM)
      return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM,
                           "%s: entry %u of %u: alg %u, expected %d (ChaCha20-Poly1305) or %d "
                           "(AES-256-GCM)",
                           what, i, count, alg, EPCTX_SEALED_ALG_CHACHA20_POLY1305,
                           EPCTX_SEALED_ALG_AES_256_GCM);
    // Pairwise: at most 1024 * 1023 / 2 comparisons of 64 bytes.
    for (uint32_t j = 0; j < i; ++j) {
      const uint8_t* o = p + EPCTX_KEYS_HEADER_SIZE + size_t(j) * EPCTX_KEYS_ENTRY_SIZE;
      if (memcmp(o, e, 2 * EPCTX_KEYS_KEY_ID_SIZE) != 0) continue;
      return Status::Error(EPCTX_INVALID_CONTAINER,
                           "%s: entries %u and %u both wrap data key id '%.*s' under device key "
                           "id '%.*s', expected one entry per pair",
                           what, j, i, EPCTX_KEYS_KEY_ID_SIZE, reinterpret_cast<const char*>(e),
                           EPCTX_KEYS_KEY_ID_SIZE,
                           reinterpret_cast<const char*>(e + EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID));
    }
  }
  out->file = file;
  out->count = count;
  out->what = what;
  return Status::Ok();
}

KeyWrapEntry KeyWrapEntryAt(const KeyWrapFile& f, uint32_t i) {
  KeyWrapEntry r;
  if (i >= f.count) return r;
  r.bytes = f.file.data + EPCTX_KEYS_HEADER_SIZE + size_t(i) * EPCTX_KEYS_ENTRY_SIZE;
  memcpy(r.data_key_id, r.bytes + EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID, EPCTX_KEYS_KEY_ID_SIZE);
  memcpy(r.wrap_key_id, r.bytes + EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID, EPCTX_KEYS_KEY_ID_SIZE);
  r.alg = r.bytes[EPCTX_KEYS_ENTRY_OFF_ALG];
  return r;
}

Status UnwrapKey(const KeyWrapFile& f, uint32_t i, const uint8_t device_key[32], uint8_t out[32]) {
  memset(out, 0, EPCTX_KEYS_KEY_SIZE);
  const KeyWrapEntry e = KeyWrapEntryAt(f, i);
  if (!e.bytes)
    return Status::Error(EPCTX_INVALID_ARGUMENT, "%s: entry %u of %u does not exist", f.what, i,
                         f.count);
  if (!AeadBuilt(e.alg))
    return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM,
                         "%s: entry %u (data key id '%s', device key id '%s'): alg %u (%s), which "
                         "this runtime was not built with (it has: %s)",
                         f.what, i, e.data_key_id, e.wrap_key_id, e.alg, AeadName(e.alg),
                         AeadsBuilt());
  int rc = -1;
#if defined(MBEDTLS_HKDF_C)
  uint8_t aad[EPCTX_KEYS_AAD_SIZE];
  epctx_keys_aad(e.bytes, aad);
  uint8_t wrap_key[EPCTX_KEYS_KEY_SIZE];
  static const char kInfo[] = EPCTX_KEYS_INFO;
  rc = mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), nullptr, 0, device_key,
                    EPCTX_KEYS_KEY_SIZE, reinterpret_cast<const uint8_t*>(kInfo), sizeof kInfo - 1,
                    wrap_key, sizeof wrap_key);
  if (rc == 0)
    rc = AeadOpen(e.alg, wrap_key, e.bytes + EPCTX_KEYS_ENTRY_OFF_NONCE, aad, sizeof aad,
                  e.bytes + EPCTX_KEYS_ENTRY_OFF_WRAPPED_KEY, EPCTX_KEYS_KEY_SIZE,
                  e.bytes + EPCTX_KEYS_ENTRY_OFF_TAG, out);
  Wipe(wrap_key, sizeof wrap_key);
#else
  (void)device_key;
#endif
  if (rc == 0) return Status::Ok();
  Wipe(out, EPCTX_KEYS_KEY_SIZE);
  return Status::Error(EPCTX_DECRYPTION_FAILED,
                       "%s: entry %u (data key id '%s', device key id '%s') does not verify: a "
                       "wrong device key, or the entry was changed",
                       f.what, i, e.data_key_id, e.wrap_key_id);
}

Status DataKeyFor(const Keyring& keys, const KeyWrapFile* wraps, const char* id, const char* what,
                  uint8_t out[32]) {
  Status st = keys.DataKeyFor(id, what, out);
  if (st.code() != EPCTX_KEY_MISSING || !wraps) return st;
  // The application has no key of that id: a device key may unwrap it.
  char tried[200];
  size_t used = 0;
  tried[0] = '\0';
  bool any = false;
  for (uint32_t i = 0; i < wraps->count; ++i) {
    const KeyWrapEntry e = KeyWrapEntryAt(*wraps, i);
    if (!cstr_eq(e.data_key_id, id)) continue;
    any = true;
    uint8_t device_key[EPCTX_KEYS_KEY_SIZE];
    Status ds = keys.DataKeyFor(e.wrap_key_id, what, device_key);
    if (ds.code() == EPCTX_KEY_MISSING) {
      if (used < sizeof tried)
        used +=
            format(tried + used, sizeof tried - used, "%s'%s'", used ? ", " : "", e.wrap_key_id);
      continue;
    }
    if (!ds.ok()) return ds;
    Status us = UnwrapKey(*wraps, i, device_key, out);
    Wipe(device_key, sizeof device_key);
    if (!us.ok()) return us.Prefix("%s", what);
    return Status::Ok();
  }
  if (!any)
    return Status::Error(EPCTX_KEY_MISSING,
                         "%s: encrypted with key id '%s', which the application did not provide "
                         "(epctx_env_add_decryption_key or a key provider), and %s has no entry "
                         "for it",
                         what, id, wraps->what);
  return Status::Error(EPCTX_KEY_MISSING,
                       "%s: encrypted with key id '%s', which the application did not provide, "
                       "nor a device key %s wraps it under (tried %s)",
                       what, id, wraps->what, tried);
}

Status KeyWraps::Get(const char* label, const KeyWrapFile** out) {
  *out = nullptr;
  if (loaded_) {
    *out = &file_;
    return Status::Ok();
  }
  if (!path_) return Status::Ok();
  char msg[Status::kMaxMessage];
  // Private memory, the size limit applied before anything is read.
  const int rc = epctx_pal_read_file(path_, EPCTX_KEYS_MAX_FILE_SIZE, &region_, msg, sizeof msg);
  if (rc == EPCTX_NO_SUCHFILE) {
    if (!required_) return Status::Ok();
    return Status::Error(rc, "%s: key-wrap file (session option 'epctx.keys_path'): %s", label,
                         msg);
  }
  if (rc == EPCTX_INVALID_ARGUMENT)  // over the limit
    return Status::Error(EPCTX_INVALID_CONTAINER, "%s: key-wrap file: %s (at most %d entries)",
                         label, msg, EPCTX_KEYS_MAX_ENTRIES);
  if (rc != EPCTX_OK) return Status::Error(rc, "%s: key-wrap file: %s", label, msg);
  EPCTX_RETURN_IF_ERROR(
      ParseKeyWrapFile(Bytes{region_.data, static_cast<size_t>(region_.size)}, path_, &file_));
  loaded_ = true;
  *out = &file_;
  return Status::Ok();
}

void KeyWraps::Release() {
  epctx_pal_unmap(&region_);
  region_ = epctx_pal_region{};
  file_ = KeyWrapFile{};
  loaded_ = false;
  path_ = nullptr;
}

}  // namespace trust
}  // namespace epctx
