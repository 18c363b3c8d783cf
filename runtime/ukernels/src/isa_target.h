/* SPDX-License-Identifier: Apache-2.0 */
// Compiles a stretch of a file for a wider x86 ISA (the AVX2 and AVX-512
// copies of elementwise.cc and rows.cc): GCC's target pragma, or for clang
// (the fuzz preset), which has no such pragma, the same target attribute on
// every function declared in between.
#ifndef EPCTX_UK_ISA_TARGET_H
#define EPCTX_UK_ISA_TARGET_H

#define EPCTX_ISA_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define EPCTX_ISA_BEGIN(isa) \
  EPCTX_ISA_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define EPCTX_ISA_END() _Pragma("clang attribute pop")
#else
#define EPCTX_ISA_BEGIN(isa) _Pragma("GCC push_options") EPCTX_ISA_PRAGMA(GCC target(isa))
#define EPCTX_ISA_END() _Pragma("GCC pop_options")
#endif

#endif
