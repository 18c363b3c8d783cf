/* SPDX-License-Identifier: Apache-2.0 */
// What the AVX-512 micro-kernels (x86-64 only) share: EPCTX_AVX512, the
// target attribute of every function that uses the instructions (BestIsa()
// picks them only when cpuid and xgetbv say the CPU and the OS run them),
// and <immintrin.h>. GCC 12's avx512fintrin.h builds "undefined" vectors
// from a self-initialised variable (_mm512_undefined_ps), which
// -Wmaybe-uninitialized reports at every inlined max, min and cast, and
// -Wuninitialized at -Os (the size presets) in _mm512_insertf64x4: a false
// alarm in the header, not in the kernels, so both are off here.
#ifndef EPCTX_UK_AVX512_H
#define EPCTX_UK_AVX512_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#define EPCTX_AVX512 __attribute__((target("avx2,fma,avx512f,avx512vl")))

#endif
