// SPDX-License-Identifier: Apache-2.0
// NarrowColumns (narrow.h): the body (narrow_body.h) compiled for AVX2 (ymm
// vectors, FMA), which AVX-512 CPUs run too; no other instruction set has
// one.
#include "epctx_uk/narrow.h"
#include "isa_target.h"

#if defined(__x86_64__)
EPCTX_ISA_BEGIN("avx2,fma")
#define EPCTX_NARROW_FN NarrowColumnsAvx2
#include "narrow_body.h"
#undef EPCTX_NARROW_FN
EPCTX_ISA_END()
#endif

namespace epctx {
namespace uk {

NarrowFn NarrowKernel(Isa isa) {
#if defined(__x86_64__)
  const Isa r = ResolveIsa(isa);
  if (r == Isa::kAvx2 || r == Isa::kAvx512) return detail::NarrowColumnsAvx2;
#else
  (void)isa;
#endif
  return nullptr;
}

}  // namespace uk
}  // namespace epctx
