// FindKernel: the table of CPU kernels by (domain, op_type, opset range),
// built from the one list in ops.inc.
//
// A selective build (CMake EPCTX_CPU_OPS=ops.txt, see runtime/cpu_ops.cmake)
// generates epctx_cpu_ops_selected.h naming the ops to keep. Rows of the
// other ops stay in the table with a null KernelFn: the kernel is never
// named, so the linker (--gc-sections) drops it with everything only it
// uses, and the session can still tell "left out of this build" from "no
// such kernel" when it refuses a model.
#include "epctx_cpu_ops_selected.h"
#include "kernels/kernel.h"
#include "kernels/ops.h"

namespace epctx {
namespace {

struct KernelRow {
  const char* domain;  // "" is the default ONNX domain
  const char* op;
  int16_t min_opset;  // 16 bits: a row is 32 bytes, not 40, in every image
  int16_t max_opset;
  KernelFn fn;  // nullptr: left out of this build
};

constexpr int16_t kLatest = 21;

// The generated list holds "Op" for the default domain and "domain:Op" for
// the others, each followed by a comma.
constexpr const char* kKeptOps[] = {EPCTX_CPU_OPS_LIST nullptr};

constexpr bool NamesOp(const char* entry, const char* domain, const char* op) {
  if (*domain) {
    while (*domain && *entry == *domain) ++entry, ++domain;
    if (*domain || *entry != ':') return false;
    ++entry;
  }
  while (*op && *entry == *op) ++entry, ++op;
  return *entry == *op;
}

constexpr bool Kept(const char* domain, const char* op) {
  if (EPCTX_CPU_OPS_ALL) return true;
  for (const char* entry : kKeptOps)
    if (entry && NamesOp(entry, domain, op)) return true;
  return false;
}

// constexpr: the choice between kern::fn and nullptr is made by the
// compiler, so a dropped kernel leaves no reference in this object.
#define EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn) \
  {domain, #op, min_opset, max_opset, Kept(domain, #op) ? kern::fn : nullptr},
constexpr KernelRow kKernels[] = {
#include "kernels/ops.inc"
};
#undef EPCTX_CPU_OP

bool IsDefaultDomain(StrView d) { return d.empty() || d.eq("ai.onnx"); }

// The first row for (domain, op_type) whose opset range holds opset, kept
// or not; nullptr when there is none.
const KernelRow* FindRow(StrView domain, StrView op_type, int64_t opset) {
  const bool default_domain = IsDefaultDomain(domain);
  for (const KernelRow& row : kKernels) {
    const bool row_default = row.domain[0] == '\0';
    if (row_default ? !default_domain : !domain.eq(row.domain)) continue;
    if (!op_type.eq(row.op)) continue;
    if (opset < row.min_opset || opset > row.max_opset) continue;
    return &row;
  }
  return nullptr;
}

}  // namespace

KernelFn FindKernel(StrView domain, StrView op_type, int64_t opset) {
  const KernelRow* row = FindRow(domain, op_type, opset);
  return row ? row->fn : nullptr;
}

bool KernelLeftOutOfBuild(StrView domain, StrView op_type, int64_t opset) {
  const KernelRow* row = FindRow(domain, op_type, opset);
  return row && !row->fn;
}

}  // namespace epctx
