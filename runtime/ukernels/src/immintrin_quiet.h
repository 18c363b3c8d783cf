/* SPDX-License-Identifier: Apache-2.0 */
// <immintrin.h> for the AVX-512 micro-kernels (x86-64 only). GCC 12's
// avx512fintrin.h builds "undefined" vectors from a self-initialised
// variable (_mm512_undefined_ps), which -Wmaybe-uninitialized reports at
// every inlined max, min and cast, and -Wuninitialized at -Os (the size
// presets) in _mm512_insertf64x4: a false alarm in the header, not in the
// kernels, so both are off for the files that include this.
#ifndef EPCTX_UK_IMMINTRIN_QUIET_H
#define EPCTX_UK_IMMINTRIN_QUIET_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#endif
