/* SPDX-License-Identifier: Apache-2.0 */
// The mbedtls headers of the AEADs and HKDF that sealed assets and
// key-wrap files use, as far as the build's mbedtls config has them (a
// board's minimal config may leave AES-256-GCM out). Private to the .cc
// files of trust/ that call mbedtls; callers elsewhere ask AeadBuilt.
#ifndef EPCTX_TRUST_AEAD_MBEDTLS_H
#define EPCTX_TRUST_AEAD_MBEDTLS_H

#if !defined(MBEDTLS_CONFIG_FILE)
#include <mbedtls/config.h>
#else
#include MBEDTLS_CONFIG_FILE
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
#include <mbedtls/chachapoly.h>
#endif
#if defined(MBEDTLS_GCM_C) && defined(MBEDTLS_AES_C)
#include <mbedtls/gcm.h>
#define EPCTX_SEALED_HAVE_GCM 1
#endif
#if defined(MBEDTLS_HKDF_C)
#include <mbedtls/hkdf.h>
#include <mbedtls/md.h>
#endif

#endif
