// SPDX-License-Identifier: Apache-2.0
// FindKernel: the table of CPU kernels by (domain, op_type, opset range),
// built from the one list in ops.inc.
//
// A selective build (CMake EPCTX_CPU_OPS=ops.txt, see runtime/cpu_ops.cmake)
// generates epctx_cpu_ops_selected.h naming the ops to keep. The kernels of
// the other ops are never named, so the linker (--gc-sections) drops them
// with everything only they use; their rows move to a table of names, so
// the session can still tell "left out of this build" from "no such kernel"
// when it refuses a model.
#include <cstddef>

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

// What remains of a row the build left out: enough to name it in errors.
struct DroppedRow {
  const char* domain;
  const char* op;
  int16_t min_opset;
  int16_t max_opset;
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

// Every row of ops.inc, used only at compile time: the choice between
// kern::fn and nullptr is made by the compiler, so a dropped kernel leaves no
// reference in this object, and the tables below keep only what the image
// needs.
#define EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn) \
  {domain, #op, min_opset, max_opset, Kept(domain, #op) ? kern::fn : nullptr},
#define EPCTX_CPU_OP_PREPARED(domain, op, min_opset, max_opset, fn, prepare) \
  EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn)
constexpr KernelRow kAllRows[] = {
#include "kernels/ops.inc"
};
#undef EPCTX_CPU_OP
#undef EPCTX_CPU_OP_PREPARED

// The few kernels with a prepare function, apart: rows stay 32 bytes.
struct PrepareRow {
  KernelFn fn;  // nullptr: left out of this build
  PrepareFn prepare;
};
#define EPCTX_CPU_OP(domain, op, min_opset, max_opset, fn)
#define EPCTX_CPU_OP_PREPARED(domain, op, min_opset, max_opset, fn, prepare) \
  {Kept(domain, #op) ? kern::fn : nullptr, Kept(domain, #op) ? kern::prepare : nullptr},
constexpr PrepareRow kPrepares[] = {
#include "kernels/ops.inc"
    {nullptr, nullptr}};
#undef EPCTX_CPU_OP
#undef EPCTX_CPU_OP_PREPARED

constexpr size_t kNumRows = sizeof kAllRows / sizeof kAllRows[0];

// By name, not by fn != nullptr: GCC does not fold a function's address
// compared with null under -fsanitize=undefined.
constexpr bool IsKept(const KernelRow& r) { return Kept(r.domain, r.op); }

constexpr size_t CountKept() {
  size_t n = 0;
  for (size_t i = 0; i < kNumRows; ++i) n += IsKept(kAllRows[i]) ? 1 : 0;
  return n;
}
constexpr size_t kNumKept = CountKept();

template <typename Row, size_t N>
struct Table {
  Row rows[N > 0 ? N : 1];
  size_t size;
};

constexpr Table<KernelRow, kNumKept> KeptRows() {
  Table<KernelRow, kNumKept> t{};
  for (size_t i = 0; i < kNumRows; ++i)
    if (IsKept(kAllRows[i])) t.rows[t.size++] = kAllRows[i];
  return t;
}

constexpr Table<DroppedRow, kNumRows - kNumKept> DroppedRows() {
  Table<DroppedRow, kNumRows - kNumKept> t{};
  for (size_t i = 0; i < kNumRows; ++i) {
    const KernelRow& r = kAllRows[i];
    if (!IsKept(r)) t.rows[t.size++] = DroppedRow{r.domain, r.op, r.min_opset, r.max_opset};
  }
  return t;
}

constexpr auto kKernels = KeptRows();
constexpr auto kDropped = DroppedRows();

bool IsDefaultDomain(StrView d) { return d.empty() || d.eq("ai.onnx"); }

// The first of rows[0..n) for (domain, op_type) whose opset range holds
// opset; nullptr when there is none.
template <typename Row>
const Row* FindRow(const Row* rows, size_t n, StrView domain, StrView op_type, int64_t opset) {
  const bool default_domain = IsDefaultDomain(domain);
  for (size_t i = 0; i < n; ++i) {
    const Row& row = rows[i];
    const bool row_default = row.domain[0] == '\0';
    if (row_default ? !default_domain : !domain.eq(row.domain)) continue;
    if (!op_type.eq(row.op)) continue;
    if (opset < row.min_opset || opset > row.max_opset) continue;
    return &row;
  }
  return nullptr;
}

}  // namespace

KernelFn FindKernel(StrView domain, StrView op_type, int64_t opset, PrepareFn* prepare) {
  const KernelRow* row = FindRow(kKernels.rows, kKernels.size, domain, op_type, opset);
  KernelFn fn = row ? row->fn : nullptr;
  if (prepare) {
    *prepare = nullptr;
    for (const PrepareRow& p : kPrepares)
      if (fn && p.fn == fn) *prepare = p.prepare;
  }
  return fn;
}

bool KernelLeftOutOfBuild(StrView domain, StrView op_type, int64_t opset) {
  return FindRow(kDropped.rows, kDropped.size, domain, op_type, opset) != nullptr;
}

// Row i of the kernel table this build keeps (false past its end), so the
// kernel fuzzer reaches every op without a second list to keep in step.
bool KernelTableRow(uint32_t i, const char** domain, const char** op, int64_t* min_opset,
                    int64_t* max_opset) {
  if (i >= kKernels.size) return false;
  *domain = kKernels.rows[i].domain;
  *op = kKernels.rows[i].op;
  *min_opset = kKernels.rows[i].min_opset;
  *max_opset = kKernels.rows[i].max_opset;
  return true;
}

}  // namespace epctx
