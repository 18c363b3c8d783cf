/* SPDX-License-Identifier: Apache-2.0 */
/* mbedtls 2.28 config of the bare-metal image: what the runtime's trust code
 * needs (runtime/src/trust/crypto.cc) and nothing else: SHA-256, ECDSA P-256
 * verification, public keys in DER or PEM. No entropy, no file or network
 * I/O, no threads. Memory comes only from the callbacks the runtime installs
 * (mbedtls_platform_set_calloc_free -> the PAL allocator): with
 * MBEDTLS_PLATFORM_NO_STD_FUNCTIONS there is no default, so libc's malloc
 * never links in. */
#ifndef EPCTX_BOARD_MBEDTLS_CONFIG_H
#define EPCTX_BOARD_MBEDTLS_CONFIG_H

#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS

/* The Thumb-2 multiply-accumulate of bignum.h (UMAAL): ECDSA verify in a
 * fraction of the portable C's cycles. */
#define MBEDTLS_HAVE_ASM

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
/* Verification multiplies only public values: no blinding, so no RNG. */
#define MBEDTLS_ECP_NO_INTERNAL_RNG
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PK_WRITE_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C

/* Encrypted packages (runtime/schema/sealed_format.h): ChaCha20-Poly1305
 * and HKDF-SHA256 (AES-256-GCM is left out: table AES is not constant-time
 * and the board needs only one algorithm). */
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_HKDF_C
#include "mbedtls/check_config.h"

#endif
