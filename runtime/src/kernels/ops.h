/* SPDX-License-Identifier: Apache-2.0 */
// Every CPU kernel, declared for the registry: one KernelFn (and PrepareFn
// where the row names one) per row of ops.inc (an op with several opset rows is declared more than
// once, which C++ allows). The file that defines a kernel is named for its family (conv.cc,
// pool.cc, ...).
#ifndef EPCTX_KERNELS_OPS_H
#define EPCTX_KERNELS_OPS_H

#include "kernels/kernel.h"

namespace epctx {
namespace kern {

#define EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn) Status fn(KernelContext& ctx);
#define EPCTX_CPU_OP_PREPARED(domain, op, min_opset, max_opset, fn, prepare) \
  Status fn(KernelContext& ctx);                                             \
  Status prepare(PrepareContext& ctx);
#include "kernels/ops.inc"
#undef EPCTX_CPU_OP
#undef EPCTX_CPU_OP_PREPARED

}  // namespace kern
}  // namespace epctx

#endif
