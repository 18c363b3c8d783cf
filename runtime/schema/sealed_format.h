/* SPDX-License-Identifier: Apache-2.0 */
/* The epctx encrypted ("sealed") asset, format 1.0. Shared by the host
 * sealer (host_tools/sign, epctx-compile --encrypt-key, epctx-sign encrypt)
 * and the device reader (runtime/src/trust/sealed.cc).
 *
 * A sealed asset is a file of a package (a context binary, an external-
 * data file, or the model itself, whose name is then its file name) whose
 * bytes are encrypted in fixed-size segments with an AEAD, so that any
 * byte range can be decrypted without reading the rest, and nothing
 * decrypted is used before its segment's tag verifies.
 *
 * Layout, integers little-endian, no padding:
 *
 *   header (96 bytes)
 *     off size field
 *     0   8    magic            "EPCTXENC"
 *     8   2    format_major     1 (a reader accepts only its own major)
 *     10  2    format_minor     0 (a reader accepts minors <= its own)
 *     12  4    header_size      96
 *     16  1    alg              1 ChaCha20-Poly1305, 2 AES-256-GCM
 *     17  1    segment_log2     12..24: plaintext bytes per segment
 *                               (2^segment_log2; epctx uses 16, 64 KiB)
 *     18  2    reserved         0
 *     20  4    flags            0
 *     24  8    plaintext_size   bytes of the plaintext (0 allowed)
 *     32  32   key_id           1..32 bytes of [A-Za-z0-9._-], NUL-padded:
 *                               names the data key the application holds
 *     64  32   salt             random, fresh for every sealing
 *   segments, one after the other from header_size: segment i holds
 *     plaintext bytes [i * S, min((i + 1) * S, plaintext_size)) encrypted,
 *     then the 16-byte tag. There are max(1, ceil(plaintext_size / S))
 *     segments (an empty plaintext has one empty segment), so the file is
 *     exactly header_size + plaintext_size + 16 * segments bytes.
 *
 * Keys and nonces:
 *   asset key = HKDF-SHA256(ikm = the 32-byte data key, salt = salt,
 *                           info = "epctx-sealed-1.0" NUL asset_name)
 *   where asset_name is the name the model references the file by
 *   (ep_cache_context), so an asset moved under another name fails;
 *   nonce of segment i = 7 zero bytes, BE32(i), 1 if i is the last
 *   segment else 0 (12 bytes); the fresh salt makes the asset key unique,
 *   so the counter nonce never repeats under one key;
 *   associated data = the 96 header bytes, so every header field is
 *   authenticated by every segment.
 *
 * A reader refuses: a wrong magic or major, an unknown alg
 * (UNSUPPORTED_ALGORITHM), segment_log2 out of range, nonzero reserved or
 * flags, a malformed key_id, a file size other than the one the header
 * implies (truncated or extended), a key id it has no key for
 * (KEY_MISSING), and any segment whose tag does not verify
 * (DECRYPTION_FAILED: a wrong key, a changed byte, a segment reordered,
 * dropped or taken from another asset).
 *
 * Encrypt, then sign: a signed manifest (manifest_format.h) lists the
 * sealed file's own bytes (ciphertext and header). */
#ifndef EPCTX_SEALED_FORMAT_H
#define EPCTX_SEALED_FORMAT_H

#define EPCTX_SEALED_MAGIC "EPCTXENC"
#define EPCTX_SEALED_MAGIC_SIZE 8
#define EPCTX_SEALED_FORMAT_MAJOR 1
#define EPCTX_SEALED_FORMAT_MINOR 0
#define EPCTX_SEALED_HEADER_SIZE 96
#define EPCTX_SEALED_TAG_SIZE 16
#define EPCTX_SEALED_KEY_SIZE 32
#define EPCTX_SEALED_KEY_ID_SIZE 32
#define EPCTX_SEALED_SALT_SIZE 32
#define EPCTX_SEALED_NONCE_SIZE 12
#define EPCTX_SEALED_MIN_SEGMENT_LOG2 12
#define EPCTX_SEALED_MAX_SEGMENT_LOG2 24
#define EPCTX_SEALED_DEFAULT_SEGMENT_LOG2 16
#define EPCTX_SEALED_INFO "epctx-sealed-1.0"

/* The nonce of segment i of `segments` (writer and reader share it). */
static inline void epctx_sealed_nonce(unsigned long long i, unsigned long long segments,
                                      unsigned char nonce[EPCTX_SEALED_NONCE_SIZE]) {
  for (int k = 0; k < 7; ++k) nonce[k] = 0;
  nonce[7] = (unsigned char)(i >> 24);
  nonce[8] = (unsigned char)(i >> 16);
  nonce[9] = (unsigned char)(i >> 8);
  nonce[10] = (unsigned char)i;
  nonce[11] = i + 1 == segments ? 1 : 0;
}

#define EPCTX_SEALED_ALG_CHACHA20_POLY1305 1
#define EPCTX_SEALED_ALG_AES_256_GCM 2

/* Field offsets in the header. */
#define EPCTX_SEALED_OFF_MAJOR 8
#define EPCTX_SEALED_OFF_MINOR 10
#define EPCTX_SEALED_OFF_HEADER_SIZE 12
#define EPCTX_SEALED_OFF_ALG 16
#define EPCTX_SEALED_OFF_SEGMENT_LOG2 17
#define EPCTX_SEALED_OFF_RESERVED 18
#define EPCTX_SEALED_OFF_FLAGS 20
#define EPCTX_SEALED_OFF_PLAINTEXT_SIZE 24
#define EPCTX_SEALED_OFF_KEY_ID 32
#define EPCTX_SEALED_OFF_SALT 64

#endif
