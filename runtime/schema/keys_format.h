/* SPDX-License-Identifier: Apache-2.0 */
/* The epctx key-wrap file, format 1.0: the data key of encrypted assets
 * (sealed_format.h) wrapped for devices. Shared by the host writer
 * (host_tools/sign, epctx-sign wrap-key) and the device reader
 * (runtime/src/trust/key_wrap.cc).
 *
 * File: "<model>.keys" beside the model ("m_ctx.onnx" ->
 * "m_ctx.onnx.keys"). A model loaded from a buffer names it with session
 * option epctx.keys_path, or else "<ep.context_file_path>.keys". The file
 * is optional, and it is NOT part of a signed package: the manifest
 * (manifest_format.h) never lists it, so an entry can be added, replaced
 * or dropped for a device (re-keying) without signing the package again.
 * Each entry protects itself: its wrapped key is authenticated by its own
 * AEAD tag, over its own labels.
 *
 * Layout, integers little-endian, no padding:
 *
 *   header (32 bytes)
 *     off size field
 *     0   8    magic            "EPCTXKEY"
 *     8   2    format_major     1 (a reader accepts only its own major)
 *     10  2    format_minor     0 (a reader accepts minors <= its own)
 *     12  4    header_size      32
 *     16  4    entry_size       128
 *     20  4    entry_count      1..1024
 *     24  8    reserved         0
 *   entries, entry_count x entry_size bytes from header_size; entry i:
 *     off size field
 *     0   32   data_key_id      the key id sealed assets name (their
 *                               key_id): 1..32 bytes of [A-Za-z0-9._-],
 *                               NUL-padded
 *     32  32   wrap_key_id      the id of the device key that wraps it,
 *                               the same rule
 *     64  1    alg              1 ChaCha20-Poly1305, 2 AES-256-GCM (the
 *                               numbers of sealed_format.h)
 *     65  3    reserved         0
 *     68  12   nonce            random, fresh for every wrapping
 *     80  32   wrapped_key      the 32-byte data key, encrypted
 *     112 16   tag
 *   The file is exactly header_size + entry_count * entry_size bytes. No
 *   two entries have the same (data_key_id, wrap_key_id).
 *
 * Keys:
 *   wrap key = HKDF-SHA256(ikm = the 32-byte device key, no salt,
 *                          info = "epctx-keywrap-1.0")
 *   A device key never keys an AEAD itself: a 32-byte key the application
 *   also holds as a data key (both come through the same API) then keys
 *   nothing that a sealed asset's HKDF (other info, a salt) could produce.
 *   The random nonce under one wrap key stays unique with overwhelming
 *   probability for far more than the handful of entries one device key
 *   wraps (a device key should wrap fewer than 2^32 keys in its life).
 *   associated data = magic, LE16(format_major) and the entry's bytes
 *   [0, 68): both ids, alg and reserved (78 bytes). An entry therefore
 *   cannot be relabelled (another data key id or device key id, or
 *   another alg) nor read under another major format. The minor is left
 *   out so that a later minor can add to the header without wrapping every
 *   key again.
 *
 * One level only: a wrap key id names a key the application provides
 *   (epctx_env_add_decryption_key or the key provider), never another
 *   entry.
 *
 * A reader refuses with INVALID_CONTAINER, naming the file, the entry and
 * the field: a wrong magic or major, a newer minor, other header or entry
 * sizes, nonzero reserved bytes, entry_count out of range, a file size
 * other than the one the header implies (truncated or extended), a
 * malformed key id, two entries for one (data key id, wrap key id); an
 * unknown alg is UNSUPPORTED_ALGORITHM. When a data key is looked up it
 * is KEY_MISSING when the application holds none of the entries' device
 * keys, DECRYPTION_FAILED when an entry's tag does not verify (a wrong
 * device key, or a changed or relabelled entry). */
#ifndef EPCTX_KEYS_FORMAT_H
#define EPCTX_KEYS_FORMAT_H

#define EPCTX_KEYS_MAGIC "EPCTXKEY"
#define EPCTX_KEYS_MAGIC_SIZE 8
#define EPCTX_KEYS_FORMAT_MAJOR 1
#define EPCTX_KEYS_FORMAT_MINOR 0
#define EPCTX_KEYS_HEADER_SIZE 32
#define EPCTX_KEYS_ENTRY_SIZE 128
#define EPCTX_KEYS_MAX_ENTRIES 1024
#define EPCTX_KEYS_MAX_FILE_SIZE \
  (EPCTX_KEYS_HEADER_SIZE + EPCTX_KEYS_MAX_ENTRIES * EPCTX_KEYS_ENTRY_SIZE)
#define EPCTX_KEYS_KEY_ID_SIZE 32
#define EPCTX_KEYS_KEY_SIZE 32
#define EPCTX_KEYS_NONCE_SIZE 12
#define EPCTX_KEYS_TAG_SIZE 16
#define EPCTX_KEYS_INFO "epctx-keywrap-1.0"
#define EPCTX_KEYS_SUFFIX ".keys"

/* Field offsets in the header. */
#define EPCTX_KEYS_OFF_MAJOR 8
#define EPCTX_KEYS_OFF_MINOR 10
#define EPCTX_KEYS_OFF_HEADER_SIZE 12
#define EPCTX_KEYS_OFF_ENTRY_SIZE 16
#define EPCTX_KEYS_OFF_ENTRY_COUNT 20
#define EPCTX_KEYS_OFF_RESERVED 24

/* Field offsets in an entry. */
#define EPCTX_KEYS_ENTRY_OFF_DATA_KEY_ID 0
#define EPCTX_KEYS_ENTRY_OFF_WRAP_KEY_ID 32
#define EPCTX_KEYS_ENTRY_OFF_ALG 64
#define EPCTX_KEYS_ENTRY_OFF_RESERVED 65
#define EPCTX_KEYS_ENTRY_OFF_NONCE 68
#define EPCTX_KEYS_ENTRY_OFF_WRAPPED_KEY 80
#define EPCTX_KEYS_ENTRY_OFF_TAG 112

/* Associated data: magic, LE16 major, then the entry's first 68 bytes. */
#define EPCTX_KEYS_ENTRY_LABEL_SIZE 68
#define EPCTX_KEYS_AAD_SIZE (EPCTX_KEYS_MAGIC_SIZE + 2 + EPCTX_KEYS_ENTRY_LABEL_SIZE)

/* The associated data of `entry` (writer and reader share it). */
static inline void epctx_keys_aad(const unsigned char* entry,
                                  unsigned char aad[EPCTX_KEYS_AAD_SIZE]) {
  for (int k = 0; k < EPCTX_KEYS_MAGIC_SIZE; ++k) aad[k] = (unsigned char)EPCTX_KEYS_MAGIC[k];
  aad[EPCTX_KEYS_MAGIC_SIZE] = (unsigned char)(EPCTX_KEYS_FORMAT_MAJOR & 0xff);
  aad[EPCTX_KEYS_MAGIC_SIZE + 1] = (unsigned char)(EPCTX_KEYS_FORMAT_MAJOR >> 8);
  for (int k = 0; k < EPCTX_KEYS_ENTRY_LABEL_SIZE; ++k)
    aad[EPCTX_KEYS_MAGIC_SIZE + 2 + k] = entry[k];
}

#endif
