// SPDX-License-Identifier: Apache-2.0
// Sealed assets (schema/sealed_format.h) through mbedtls: HKDF-SHA256 for
// the asset key, ChaCha20-Poly1305 or AES-256-GCM per segment. A cipher
// the build's mbedtls lacks (a board's minimal config) is
// UNSUPPORTED_ALGORITHM, never a silent fallback.
#include "trust/sealed.h"

#include <cstring>

#include <manifest_format.h>
#include <sealed_format.h>

#include "trust/aead_mbedtls.h"
#include "trust/crypto.h"
#include "trust/key_wrap.h"

namespace epctx {
namespace trust {

bool AeadBuilt(uint8_t alg) {
#if defined(MBEDTLS_CHACHAPOLY_C) && defined(MBEDTLS_HKDF_C)
  if (alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305) return true;
#endif
#if defined(EPCTX_SEALED_HAVE_GCM) && defined(MBEDTLS_HKDF_C)
  if (alg == EPCTX_SEALED_ALG_AES_256_GCM) return true;
#endif
  (void)alg;
  return false;
}

const char* AeadName(uint8_t alg) {
  return alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305 ? "ChaCha20-Poly1305"
         : alg == EPCTX_SEALED_ALG_AES_256_GCM     ? "AES-256-GCM"
                                                   : "unknown";
}

const char* AeadsBuilt() {
  const bool c = AeadBuilt(EPCTX_SEALED_ALG_CHACHA20_POLY1305),
             g = AeadBuilt(EPCTX_SEALED_ALG_AES_256_GCM);
  return c && g ? "ChaCha20-Poly1305 AES-256-GCM"
         : c    ? "ChaCha20-Poly1305"
         : g    ? "AES-256-GCM"
                : "none";
}

namespace {

// The header at p (EPCTX_SEALED_HEADER_SIZE bytes, already known to be
// there) of a file of file_size bytes.
Status ParseHeaderAt(const uint8_t* p, uint64_t file_size, const char* what, SealedHeader* h) {
  *h = SealedHeader{};
  if (!LooksSealed(Bytes{p, EPCTX_SEALED_HEADER_SIZE}))
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset: expected a header starting with "
                         "\"" EPCTX_SEALED_MAGIC "\"",
                         what);
  const uint64_t major = load_le16(p + EPCTX_SEALED_OFF_MAJOR),
                 minor = load_le16(p + EPCTX_SEALED_OFF_MINOR);
  if (major != EPCTX_SEALED_FORMAT_MAJOR || minor > EPCTX_SEALED_FORMAT_MINOR)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset format %u.%u, this runtime reads %d.0 to %d.%d", what,
                         unsigned(major), unsigned(minor), EPCTX_SEALED_FORMAT_MAJOR,
                         EPCTX_SEALED_FORMAT_MAJOR, EPCTX_SEALED_FORMAT_MINOR);
  const uint64_t hsize = load_le32(p + EPCTX_SEALED_OFF_HEADER_SIZE);
  if (hsize != EPCTX_SEALED_HEADER_SIZE)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset header_size %llu, expected %d", what,
                         static_cast<unsigned long long>(hsize), EPCTX_SEALED_HEADER_SIZE);
  const uint64_t reserved = load_le16(p + EPCTX_SEALED_OFF_RESERVED),
                 flags = load_le32(p + EPCTX_SEALED_OFF_FLAGS);
  if (reserved || flags)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset reserved %llu and flags %llu, expected 0 and 0", what,
                         static_cast<unsigned long long>(reserved),
                         static_cast<unsigned long long>(flags));
  const uint8_t log2 = p[EPCTX_SEALED_OFF_SEGMENT_LOG2];
  if (log2 < EPCTX_SEALED_MIN_SEGMENT_LOG2 || log2 > EPCTX_SEALED_MAX_SEGMENT_LOG2)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset segment_log2 %u, expected %d..%d", what, log2,
                         EPCTX_SEALED_MIN_SEGMENT_LOG2, EPCTX_SEALED_MAX_SEGMENT_LOG2);
  const uint8_t* id = p + EPCTX_SEALED_OFF_KEY_ID;
  size_t id_len = 0;
  while (id_len < EPCTX_SEALED_KEY_ID_SIZE && id[id_len]) ++id_len;
  bool padded = true;
  for (size_t i = id_len; i < EPCTX_SEALED_KEY_ID_SIZE; ++i) padded = padded && id[i] == 0;
  if (!ValidKeyId(reinterpret_cast<const char*>(id), id_len) || !padded)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset key_id is not 1..32 characters of [A-Za-z0-9._-] "
                         "padded with NUL",
                         what);
  const uint64_t plain = load_le64(p + EPCTX_SEALED_OFF_PLAINTEXT_SIZE);
  const uint64_t seg = uint64_t(1) << log2;
  // Overflow-safe: plain <= file size bounds everything below.
  if (plain > file_size)
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset plaintext_size %llu, but the file has %llu bytes",
                         what, static_cast<unsigned long long>(plain),
                         static_cast<unsigned long long>(file_size));
  const uint64_t segments = plain == 0 ? 1 : (plain + seg - 1) / seg;
  const uint64_t want = EPCTX_SEALED_HEADER_SIZE + plain + segments * EPCTX_SEALED_TAG_SIZE;
  if (file_size != want)
    return Status::Error(
        EPCTX_INVALID_CONTAINER,
        "%s: encrypted asset of %llu plaintext bytes in %llu segments must be "
        "%llu bytes, the file has %llu (truncated or extended)",
        what, static_cast<unsigned long long>(plain), static_cast<unsigned long long>(segments),
        static_cast<unsigned long long>(want), static_cast<unsigned long long>(file_size));
  h->alg = p[EPCTX_SEALED_OFF_ALG];
  h->segment_size = uint32_t(seg);
  h->plaintext_size = plain;
  h->segments = segments;
  memcpy(h->key_id, id, id_len);
  if (!AeadBuilt(h->alg))
    return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM,
                         "%s: encrypted with alg %u (%s), which this runtime was not built with "
                         "(it has: %s)",
                         what, h->alg, AeadName(h->alg), AeadsBuilt());
  return Status::Ok();
}

// A file's chunks checked against the signed manifest as its bytes go by,
// in order: each chunk hashed from the pieces fed, compared when complete.
class ChunkCheck {
 public:
  ChunkCheck(const ManifestFile* f, uint64_t file_size, const char* what)
      : f_(f), size_(file_size), what_(what) {}
  // Starts at the chunk holding file offset `at`; returns that chunk's
  // first byte, from where Feed goes on.
  uint64_t Start(uint64_t at) {
    k_ = at >> f_->chunk_log2;
    pos_ = k_ << f_->chunk_log2;
    end_ = ChunkEnd(pos_);
    sha_.Restart();
    return pos_;
  }
  // The next n bytes of the file.
  Status Feed(const uint8_t* d, uint64_t n) {
    while (n) {
      const uint64_t take = end_ - pos_ < n ? end_ - pos_ : n;
      sha_.Update(d, size_t(take));
      pos_ += take;
      d += take;
      n -= take;
      if (pos_ == end_) EPCTX_RETURN_IF_ERROR(Compare());
    }
    return Status::Ok();
  }
  // Feeds the rest of the chunk in progress from the file itself (bytes
  // around the ones used: hashed, never used).
  Status FinishFrom(const uint8_t* file) {
    if (pos_ == (k_ << f_->chunk_log2)) return Status::Ok();  // on a boundary
    return Feed(file + pos_, end_ - pos_);
  }

 private:
  uint64_t ChunkEnd(uint64_t start) const {
    const uint64_t c = uint64_t(1) << f_->chunk_log2;
    return size_ - start < c ? size_ : start + c;
  }
  Status Compare() {
    uint8_t h[32];
    sha_.Finish(h);
    const uint64_t start = k_ << f_->chunk_log2;
    if (k_ >= f_->num_chunks ||
        memcmp(h, f_->chunk_hashes + k_ * EPCTX_MF_HASH_SIZE, EPCTX_MF_HASH_SIZE) != 0)
      return Status::Error(EPCTX_HASH_MISMATCH,
                           "%s: chunk %llu of %llu (bytes %llu..%llu) does not match the signed "
                           "manifest",
                           what_, static_cast<unsigned long long>(k_),
                           static_cast<unsigned long long>(f_->num_chunks),
                           static_cast<unsigned long long>(start),
                           static_cast<unsigned long long>(end_ - 1));
    ++k_;
    end_ = ChunkEnd(pos_);
    sha_.Restart();
    return Status::Ok();
  }

  const ManifestFile* f_;
  uint64_t size_;
  const char* what_;
  uint64_t k_ = 0, pos_ = 0, end_ = 0;
  Sha256Stream sha_;
};

}  // namespace

Status ParseSealedHeader(Bytes file, const char* what, SealedHeader* h) {
  *h = SealedHeader{};
  if (file.size < EPCTX_SEALED_HEADER_SIZE || !LooksSealed(file))
    return Status::Error(EPCTX_INVALID_CONTAINER,
                         "%s: encrypted asset: %zu bytes, expected a %d-byte header starting "
                         "with \"" EPCTX_SEALED_MAGIC "\"",
                         what, file.size, EPCTX_SEALED_HEADER_SIZE);
  return ParseHeaderAt(file.data, file.size, what, h);
}

struct SealedAsset::State {
  uint8_t header[EPCTX_SEALED_HEADER_SIZE];  // private copy: the AAD
#if defined(MBEDTLS_CHACHAPOLY_C)
  mbedtls_chachapoly_context chachapoly;
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
  mbedtls_gcm_context gcm;
#endif
  uint8_t* staging = nullptr;  // one segment's ciphertext and tag
  uint8_t* done = nullptr;     // a bit per segment decrypted
};

SealedAsset::~SealedAsset() {
  if (!st_) return;
#if defined(MBEDTLS_CHACHAPOLY_C)
  mbedtls_chachapoly_free(&st_->chachapoly);
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
  mbedtls_gcm_free(&st_->gcm);
#endif
  if (st_->staging) Wipe(st_->staging, size_t(h_.segment_size) + EPCTX_SEALED_TAG_SIZE);
  alloc_.Free(st_->staging);
  alloc_.Free(st_->done);
  Wipe(st_, sizeof *st_);
  alloc_.Free(st_);
}

Status SealedAsset::Open(Bytes file, StrView name, const Keyring& keys, const char* what,
                         const ManifestFile* listed, const KeyWrapFile* wraps) {
  format(what_, sizeof what_, "%s", what);
  if (file.size < EPCTX_SEALED_HEADER_SIZE) return ParseSealedHeader(file, what_, &h_);
  file_ = file;
  listed_ = listed;
  void* mem = alloc_.Alloc(sizeof(State), 16);
  if (!mem) return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", what_);
  memset(mem, 0, sizeof(State));
  st_ = static_cast<State*>(mem);
  // The header is read once, into private memory: hashed there (signed),
  // parsed there, and the AAD of every segment from there.
  memcpy(st_->header, file.data, EPCTX_SEALED_HEADER_SIZE);
  if (listed_) {
    ChunkCheck cc(listed_, file.size, what_);
    cc.Start(0);
    EPCTX_RETURN_IF_ERROR(cc.Feed(st_->header, EPCTX_SEALED_HEADER_SIZE));
    EPCTX_RETURN_IF_ERROR(cc.FinishFrom(file.data));
  }
  EPCTX_RETURN_IF_ERROR(ParseHeaderAt(st_->header, file.size, what_, &h_));
  st_->staging =
      static_cast<uint8_t*>(alloc_.Alloc(size_t(h_.segment_size) + EPCTX_SEALED_TAG_SIZE, 16));
  st_->done = static_cast<uint8_t*>(alloc_.Alloc(size_t((h_.segments + 7) / 8), 16));
  if (!st_->staging || !st_->done)
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", what_);
  memset(st_->done, 0, size_t((h_.segments + 7) / 8));
#if defined(MBEDTLS_CHACHAPOLY_C)
  mbedtls_chachapoly_init(&st_->chachapoly);
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
  mbedtls_gcm_init(&st_->gcm);
#endif
#if defined(MBEDTLS_HKDF_C)
  uint8_t data_key[EPCTX_SEALED_KEY_SIZE], asset_key[EPCTX_SEALED_KEY_SIZE];
  EPCTX_RETURN_IF_ERROR(DataKeyFor(keys, wraps, h_.key_id, what_, data_key));
  // info = "epctx-sealed-1.0" NUL name; names are bounded by the model.
  const size_t prefix = sizeof EPCTX_SEALED_INFO;  // with its NUL
  uint8_t* info = static_cast<uint8_t*>(alloc_.Alloc(prefix + name.size, 16));
  if (!info) {
    Wipe(data_key, sizeof data_key);
    return Status::Error(EPCTX_OUT_OF_MEMORY, "%s: out of memory", what_);
  }
  memcpy(info, EPCTX_SEALED_INFO, prefix);
  if (name.size) memcpy(info + prefix, name.data, name.size);
  const int rc =
      mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256),
                   st_->header + EPCTX_SEALED_OFF_SALT, EPCTX_SEALED_SALT_SIZE, data_key,
                   sizeof data_key, info, prefix + name.size, asset_key, sizeof asset_key);
  alloc_.Free(info);
  Wipe(data_key, sizeof data_key);
  int set = rc;
#if defined(MBEDTLS_CHACHAPOLY_C)
  if (!set && h_.alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305)
    set = mbedtls_chachapoly_setkey(&st_->chachapoly, asset_key);
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
  if (!set && h_.alg == EPCTX_SEALED_ALG_AES_256_GCM)
    set = mbedtls_gcm_setkey(&st_->gcm, MBEDTLS_CIPHER_ID_AES, asset_key, 256);
#endif
  Wipe(asset_key, sizeof asset_key);
  if (set)
    return Status::Error(EPCTX_FAIL, "%s: deriving the asset key failed (mbedtls -0x%04x)", what_,
                         unsigned(-set));
  return Status::Ok();
#else
  (void)name;
  (void)keys;
  (void)wraps;
  return Status::Error(EPCTX_UNSUPPORTED_ALGORITHM, "%s: this runtime was built without HKDF",
                       what_);
#endif
}

Status SealedAsset::Decrypt(uint64_t begin, uint64_t end, uint8_t* out) {
  if (!st_ || end <= begin) return Status::Ok();
  if (end > h_.plaintext_size) end = h_.plaintext_size;
  const uint64_t seg = h_.segment_size;
  const uint64_t first = begin / seg;
  const uint64_t last = h_.plaintext_size == 0 ? 0 : (end - 1) / seg;
  auto done = [&](uint64_t i) { return (st_->done[i / 8] & (1u << (i % 8))) != 0; };
  for (uint64_t i = first; i <= last && i < h_.segments;) {
    if (done(i)) {
      ++i;
      continue;
    }
    uint64_t j = i;
    while (j < last && j + 1 < h_.segments && !done(j + 1)) ++j;
    EPCTX_RETURN_IF_ERROR(DecryptRun(i, j, out));
    i = j + 1;
  }
  return Status::Ok();
}

Status SealedAsset::CheckChunks(uint64_t from, uint64_t to) const {
  ChunkCheck cc(listed_, file_.size, what_);
  const uint64_t at = cc.Start(from);
  EPCTX_RETURN_IF_ERROR(cc.Feed(file_.data + at, to - at));
  return cc.FinishFrom(file_.data);
}

Status SealedAsset::DecryptRun(uint64_t first, uint64_t last, uint8_t* out) {
  const uint64_t seg = h_.segment_size, stride = seg + EPCTX_SEALED_TAG_SIZE;
  const uint64_t run_begin = first * seg;
  const uint64_t run_end =
      (last + 1) * seg < h_.plaintext_size ? (last + 1) * seg : h_.plaintext_size;
  // Signed: the chunks the run's ciphertext touches are hashed as it is
  // copied, their bytes outside the run straight from the file.
  ChunkCheck cc(listed_, file_.size, what_);  // used only when listed
  Status st;
  if (listed_) {
    const uint64_t c0 = EPCTX_SEALED_HEADER_SIZE + first * stride;
    const uint64_t from = cc.Start(c0);
    st = cc.Feed(file_.data + from, c0 - from);
  }
  for (uint64_t i = first; st.ok() && i <= last; ++i) {
    const uint64_t at = i * seg;
    const uint64_t n = h_.plaintext_size - at < seg ? h_.plaintext_size - at : seg;
    const uint64_t c = EPCTX_SEALED_HEADER_SIZE + i * stride;
    // Private copy first: the hash and the tag are checked on exactly the
    // bytes decrypted.
    memcpy(st_->staging, file_.data + c, size_t(n) + EPCTX_SEALED_TAG_SIZE);
    if (listed_) {
      st = cc.Feed(st_->staging, n + EPCTX_SEALED_TAG_SIZE);
      if (!st.ok()) break;
    }
    uint8_t nonce[EPCTX_SEALED_NONCE_SIZE];
    epctx_sealed_nonce(i, h_.segments, nonce);
    (void)nonce;  // a build with neither AEAD (Open refused the file)
    int rc = -1;
#if defined(MBEDTLS_CHACHAPOLY_C)
    if (h_.alg == EPCTX_SEALED_ALG_CHACHA20_POLY1305)
      rc = mbedtls_chachapoly_auth_decrypt(&st_->chachapoly, size_t(n), nonce, st_->header,
                                           EPCTX_SEALED_HEADER_SIZE, st_->staging + n, st_->staging,
                                           out + at);
#endif
#if defined(EPCTX_SEALED_HAVE_GCM)
    if (h_.alg == EPCTX_SEALED_ALG_AES_256_GCM)
      rc = mbedtls_gcm_auth_decrypt(&st_->gcm, size_t(n), nonce, sizeof nonce, st_->header,
                                    EPCTX_SEALED_HEADER_SIZE, st_->staging + n,
                                    EPCTX_SEALED_TAG_SIZE, st_->staging, out + at);
#endif
    if (rc != 0) {
      // A signed file: a changed byte is the manifest's finding; a segment
      // that hashes right and fails its tag has the wrong key.
      if (listed_) st = CheckChunks(c, c + n + EPCTX_SEALED_TAG_SIZE);
      if (st.ok())
        st = Status::Error(EPCTX_DECRYPTION_FAILED,
                           "%s: segment %llu of %llu (plaintext bytes %llu..%llu) does not "
                           "verify: a wrong key for key id '%s', or the file was changed",
                           what_, static_cast<unsigned long long>(i),
                           static_cast<unsigned long long>(h_.segments),
                           static_cast<unsigned long long>(at),
                           static_cast<unsigned long long>(at + n), h_.key_id);
    }
  }
  if (st.ok() && listed_) st = cc.FinishFrom(file_.data);
  if (!st.ok()) {
    Wipe(out + run_begin, size_t(run_end - run_begin));  // nothing unchecked stays
    return st;
  }
  for (uint64_t i = first; i <= last; ++i) st_->done[i / 8] |= uint8_t(1u << (i % 8));
  return Status::Ok();
}

}  // namespace trust
}  // namespace epctx
