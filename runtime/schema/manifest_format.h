/* SPDX-License-Identifier: Apache-2.0 */
/* The epctx signed package manifest, format 1.0. Shared by the host signer
 * (host_tools/sign) and the device verifier (runtime/src/trust).
 *
 * File: "<model>.sig" beside the model ("m_ctx.onnx" -> "m_ctx.onnx.sig").
 * A model loaded from a buffer names it with session option
 * epctx.signature_path, or else "<ep.context_file_path>.sig".
 *
 * Layout, all integers little-endian, no padding anywhere:
 *
 *   header (32 bytes)
 *     off size field
 *     0   8    magic            "EPCTXSIG"
 *     8   2    format_major     1 (a reader accepts only its own major)
 *     10  2    format_minor     0 (a reader accepts minors <= its own)
 *     12  4    header_size      32
 *     16  4    protected_size   bytes [0, protected_size) are signed
 *     20  4    flags            0
 *     24  8    reserved         0
 *   protected TLVs, from header_size to protected_size, each
 *     u16 type, u16 reserved (0), u32 length, value[length]
 *   the signature TLV (type EPCTX_MF_TLV_SIGNATURE), the only TLV allowed
 *   after protected_size; it must end exactly at the end of the file.
 *
 * The signature is ECDSA P-256 over SHA-256 of bytes [0, protected_size),
 * DER-encoded (8..72 bytes). KEY_ID = SHA-256 of the signer's public key as
 * DER SubjectPublicKeyInfo; it selects the trusted key.
 *
 * Protected TLVs (each at most once unless said otherwise; a type not listed
 * here is rejected unless it has the EPCTX_MF_TLV_IGNORABLE bit, which a
 * later minor may use for optional fields):
 *   KEY_ID            32 bytes                               required
 *   MODEL_ID          1..255 bytes, no NUL                   required
 *   SECURITY_COUNTER  u64                                    required
 *   SDK_VERSION, HW_ARCH, MIN_DRIVER_VERSION, PRODUCER
 *                     0..255 bytes, no NUL                   optional
 *   FILE (one per file, >= 1, exactly one with role MODEL):
 *     off size
 *     0   1    role        0 model (_ctx.onnx), 1 context binary,
 *                          2 external data
 *     1   1    chunk_log2  12..24 (epctx-sign uses 16: 64 KiB chunks)
 *     2   2    name_len    1..255
 *     4   8    size        exact file size in bytes
 *     12  n    name        as the model references it (ep_cache_context,
 *                          external_data location); for the model, its
 *                          file name. Relative, no "..", no NUL.
 *     12+n     chunk hashes: ceil(size / 2^chunk_log2) x 32 bytes,
 *              SHA-256 of each chunk (the last one may be short)
 *     The TLV length must be exactly 12 + name_len + 32 * chunks.
 *
 * The chunk list makes a two-level hash tree whose root is the signed
 * manifest itself: a session hashes only the chunks of the byte ranges it
 * uses. Names must be unique per role. */
#ifndef EPCTX_MANIFEST_FORMAT_H
#define EPCTX_MANIFEST_FORMAT_H

#define EPCTX_MF_MAGIC "EPCTXSIG"
#define EPCTX_MF_MAGIC_SIZE 8
#define EPCTX_MF_FORMAT_MAJOR 1
#define EPCTX_MF_FORMAT_MINOR 0
#define EPCTX_MF_HEADER_SIZE 32
#define EPCTX_MF_TLV_HEADER_SIZE 8
#define EPCTX_MF_MAX_SIZE (16u * 1024u * 1024u)
#define EPCTX_MF_SIG_SUFFIX ".sig"

#define EPCTX_MF_TLV_KEY_ID 0x0001
#define EPCTX_MF_TLV_MODEL_ID 0x0002
#define EPCTX_MF_TLV_SECURITY_COUNTER 0x0003
#define EPCTX_MF_TLV_SDK_VERSION 0x0004
#define EPCTX_MF_TLV_HW_ARCH 0x0005
#define EPCTX_MF_TLV_MIN_DRIVER_VERSION 0x0006
#define EPCTX_MF_TLV_PRODUCER 0x0007
#define EPCTX_MF_TLV_FILE 0x0010
#define EPCTX_MF_TLV_SIGNATURE 0x7F01
#define EPCTX_MF_TLV_IGNORABLE 0x8000

#define EPCTX_MF_ROLE_MODEL 0
#define EPCTX_MF_ROLE_CONTEXT 1
#define EPCTX_MF_ROLE_DATA 2

#define EPCTX_MF_FILE_FIXED_SIZE 12
#define EPCTX_MF_HASH_SIZE 32
#define EPCTX_MF_MIN_CHUNK_LOG2 12
#define EPCTX_MF_MAX_CHUNK_LOG2 24
#define EPCTX_MF_DEFAULT_CHUNK_LOG2 16
#define EPCTX_MF_MAX_STRING 255
#define EPCTX_MF_MAX_SIGNATURE 72

#endif
