// SPDX-License-Identifier: Apache-2.0
// Einsum (opset 12): any equation of letters and one ellipsis per term,
// explicit ("ij,jk->ik") or implicit ("ij,jk": ellipsis axes, then the
// letters that occur once, in ASCII order). Repeated letters in a term take
// a diagonal; ellipsis axes broadcast (size 1) right-aligned as in numpy and
// are summed when the explicit output omits "...".
//
// The equation becomes a list of labels, each with a size and, per operand,
// a stride (the sum of the strides of that operand's axes carrying it, 0
// where it broadcasts). The kernel then walks the output labels and, for
// each output element, the contracted labels, multiplying one element of
// every operand: prod(output sizes) * prod(contracted sizes) steps, with no
// recursion and no intermediate tensors. Floats accumulate in double,
// integers wrap in uint64.
#include "kernels/elem.h"
#include "kernels/ops.h"

namespace epctx {
namespace kern {
namespace {

constexpr int kLetters = 52;
constexpr int kMaxLabels = kLetters + kMaxRank;
constexpr uint32_t kMaxOperands = 16;
constexpr int32_t kEllipsis = -1;

int LetterId(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}
// ASCII order of label ids (uppercase before lowercase) for implicit output.
int AsciiRank(int id) { return id < 26 ? 26 + id : id - 26; }

// One term: its letters and at most one ellipsis, as written.
struct Term {
  int32_t items[kMaxRank + 1];
  uint32_t n = 0;
  bool ellipsis = false;
};

// Parses s[*pos..end) up to ',' or the end into t.
Status ParseTerm(KernelContext& ctx, StrView s, size_t* pos, size_t end, Term* t) {
  while (*pos < end && s.data[*pos] != ',') {
    const char c = s.data[*pos];
    if (c == ' ') {
      ++*pos;
      continue;
    }
    if (t->n == kMaxRank + 1)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "equation term has more than %d axes", kMaxRank);
    if (c == '.') {
      if (t->ellipsis || *pos + 2 >= end || s.data[*pos + 1] != '.' || s.data[*pos + 2] != '.')
        return ctx.Fail(EPCTX_INVALID_GRAPH,
                        "equation '%.*s': malformed or repeated '...' at offset %zu", s.len(),
                        s.data, *pos);
      t->ellipsis = true;
      t->items[t->n++] = kEllipsis;
      *pos += 3;
      continue;
    }
    const int id = LetterId(c);
    if (id < 0)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "equation '%.*s': unexpected character '%c'", s.len(),
                      s.data, c);
    t->items[t->n++] = id;
    ++*pos;
  }
  return Status::Ok();
}

// Per-operand strides, kept in scratch rather than on the stack.
struct Plan {
  int64_t label[kMaxOperands][kMaxLabels];  // by label id
  int64_t out[kMaxOperands][kMaxLabels];    // by output axis
  int64_t sum[kMaxOperands][kMaxLabels];    // by contracted label
};

template <typename T>
void Contract(uint32_t nops, const TensorRef* const* ops, T* out, uint32_t no, const int64_t* odims,
              int64_t ost[][kMaxLabels], uint32_t nc, const int64_t* cdims,
              int64_t cst[][kMaxLabels], int64_t out_count, int64_t c_count) {
  using Acc = typename std::conditional<kIsFloatLike<T>, double, uint64_t>::type;
  const T* src[kMaxOperands];
  for (uint32_t k = 0; k < nops; ++k) src[k] = static_cast<const T*>(ops[k]->data);
  int64_t oidx[kMaxLabels] = {}, base[kMaxOperands] = {};
  for (int64_t o = 0; o < out_count; ++o) {
    Acc acc = 0;
    int64_t cidx[kMaxLabels] = {}, off[kMaxOperands];
    for (uint32_t k = 0; k < nops; ++k) off[k] = base[k];
    for (int64_t c = 0; c < c_count; ++c) {
      Acc p = 1;
      for (uint32_t k = 0; k < nops; ++k) {
        if constexpr (kIsFloatLike<T>) p *= static_cast<double>(Load(src[k][off[k]]));
        else p *= static_cast<uint64_t>(src[k][off[k]]);
      }
      acc += p;
      for (uint32_t l = nc; l-- > 0;) {
        for (uint32_t k = 0; k < nops; ++k) off[k] += cst[k][l];
        if (++cidx[l] < cdims[l]) break;
        for (uint32_t k = 0; k < nops; ++k) off[k] -= cst[k][l] * cidx[l];
        cidx[l] = 0;
      }
    }
    if constexpr (kIsFloatLike<T>) out[o] = Store<T>(static_cast<Compute<T>>(acc));
    else out[o] = static_cast<T>(acc);
    for (uint32_t l = no; l-- > 0;) {
      for (uint32_t k = 0; k < nops; ++k) base[k] += ost[k][l];
      if (++oidx[l] < odims[l]) break;
      for (uint32_t k = 0; k < nops; ++k) base[k] -= ost[k][l] * oidx[l];
      oidx[l] = 0;
    }
  }
}

}  // namespace

Status Einsum(KernelContext& ctx) {
  const StrView eq = ctx.AttrString("equation", "");
  if (eq.empty()) return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute equation is missing");
  const uint32_t nops = ctx.num_inputs();
  if (nops == 0 || nops > kMaxOperands)
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "%u operands, expected 1 to %u", nops, kMaxOperands);
  const TensorRef* ops[kMaxOperands];
  for (uint32_t k = 0; k < nops; ++k) {
    EPCTX_RETURN_IF_ERROR(Input(ctx, k, "Inputs", &ops[k]));
    if (ops[k]->dtype != ops[0]->dtype)
      return ctx.Fail(EPCTX_INVALID_ARGUMENT, "input %u is %s, expected %s like input 0", k,
                      dtype_name(ops[k]->dtype), dtype_name(ops[0]->dtype));
  }
  // Split at "->" and parse the terms.
  size_t arrow = eq.size;
  for (size_t i = 0; i + 1 < eq.size; ++i)
    if (eq.data[i] == '-' && eq.data[i + 1] == '>') {
      arrow = i;
      break;
    }
  Term terms[kMaxOperands];
  uint32_t nterms = 0;
  size_t pos = 0;
  for (;;) {
    if (nterms == nops)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "equation '%.*s' has more terms than the %u inputs",
                      eq.len(), eq.data, nops);
    EPCTX_RETURN_IF_ERROR(ParseTerm(ctx, eq, &pos, arrow, &terms[nterms++]));
    if (pos >= arrow) break;
    ++pos;  // ','
  }
  if (nterms != nops)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "equation '%.*s' has %u terms for %u inputs", eq.len(),
                    eq.data, nterms, nops);
  // Ellipsis widths and label sizes.
  uint32_t ell[kMaxOperands], E = 0;
  for (uint32_t k = 0; k < nops; ++k) {
    const uint32_t letters = terms[k].n - (terms[k].ellipsis ? 1 : 0);
    const uint32_t r = ops[k]->rank;
    if (r < letters || (!terms[k].ellipsis && r != letters))
      return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                      "input %u has shape %s but its equation term has %u letters%s", k,
                      ShapeOf(*ops[k]).s, letters, terms[k].ellipsis ? " and '...'" : "");
    ell[k] = r - letters;
    if (ell[k] > E) E = ell[k];
  }
  int64_t size[kMaxLabels];
  uint32_t uses[kMaxLabels] = {};
  for (int l = 0; l < kMaxLabels; ++l) size[l] = -1;
  // axis_label[k][a]: the label of axis a of operand k.
  int32_t axis_label[kMaxOperands][kMaxRank];
  for (uint32_t k = 0; k < nops; ++k) {
    uint32_t a = 0;
    for (uint32_t i = 0; i < terms[k].n; ++i) {
      if (terms[k].items[i] == kEllipsis) {
        for (uint32_t e = 0; e < ell[k]; ++e)
          axis_label[k][a++] = static_cast<int32_t>(kLetters + (E - ell[k]) + e);
      } else {
        axis_label[k][a++] = terms[k].items[i];
      }
    }
    for (uint32_t a2 = 0; a2 < ops[k]->rank; ++a2) {
      const int32_t l = axis_label[k][a2];
      const int64_t d = ops[k]->dims[a2];
      ++uses[l];
      const bool broadcast = l >= kLetters;
      if (size[l] < 0 || (broadcast && size[l] == 1)) {
        size[l] = d;
      } else if (d != size[l] && !(broadcast && d == 1)) {
        return ctx.Fail(EPCTX_INVALID_ARGUMENT,
                        "input %u axis %u has size %lld but its label has size %lld elsewhere", k,
                        a2, static_cast<long long>(d), static_cast<long long>(size[l]));
      }
    }
  }
  // Output labels.
  int32_t out_labels[kMaxLabels];
  uint32_t no = 0;
  bool in_out[kMaxLabels] = {};
  if (arrow < eq.size) {
    Term t;
    size_t p = arrow + 2;
    EPCTX_RETURN_IF_ERROR(ParseTerm(ctx, eq, &p, eq.size, &t));
    if (p < eq.size)
      return ctx.Fail(EPCTX_INVALID_GRAPH, "equation '%.*s' has ',' after '->'", eq.len(), eq.data);
    for (uint32_t i = 0; i < t.n; ++i) {
      if (t.items[i] == kEllipsis) {
        for (uint32_t e = 0; e < E; ++e) out_labels[no++] = static_cast<int32_t>(kLetters + e);
        continue;
      }
      const int32_t l = t.items[i];
      if (!uses[l] || in_out[l])
        return ctx.Fail(EPCTX_INVALID_GRAPH, "equation '%.*s': output letter '%c' is %s", eq.len(),
                        eq.data, l < 26 ? 'a' + l : 'A' + (l - 26),
                        uses[l] ? "repeated" : "not in any input");
      out_labels[no++] = l;
      in_out[l] = true;
    }
    for (uint32_t i = 0; i < no; ++i) in_out[out_labels[i]] = true;
  } else {
    for (uint32_t e = 0; e < E; ++e) out_labels[no++] = static_cast<int32_t>(kLetters + e);
    for (int r = 0; r < kLetters; ++r)
      for (int l = 0; l < kLetters; ++l)
        if (AsciiRank(l) == r && uses[l] == 1) out_labels[no++] = l;
    for (uint32_t i = 0; i < no; ++i) in_out[out_labels[i]] = true;
  }
  if (no > static_cast<uint32_t>(kMaxRank))
    return ctx.Fail(EPCTX_NOT_IMPLEMENTED, "output rank %u exceeds %d", no, kMaxRank);
  // Strides per operand and label.
  Plan* plan = nullptr;
  EPCTX_RETURN_IF_ERROR(ScratchArray(ctx, 1, &plan));
  int64_t(*lst)[kMaxLabels] = plan->label;
  int64_t(*ost)[kMaxLabels] = plan->out;
  int64_t(*cst)[kMaxLabels] = plan->sum;
  for (uint32_t k = 0; k < nops; ++k)
    for (int l = 0; l < kMaxLabels; ++l) lst[k][l] = 0;
  for (uint32_t k = 0; k < nops; ++k) {
    int64_t st[kMaxRank];
    Strides(ops[k]->rank, ops[k]->dims, st);
    for (uint32_t a = 0; a < ops[k]->rank; ++a) {
      const int32_t l = axis_label[k][a];
      if (ops[k]->dims[a] == size[l]) lst[k][l] += st[a];  // else size 1, broadcast
    }
  }
  int64_t odims[kMaxLabels], cdims[kMaxLabels];
  uint32_t nc = 0;
  for (uint32_t i = 0; i < no; ++i) {
    odims[i] = size[out_labels[i]];
    for (uint32_t k = 0; k < nops; ++k) ost[k][i] = lst[k][out_labels[i]];
  }
  for (int l = 0; l < kMaxLabels; ++l) {
    if (!uses[l] || in_out[l]) continue;
    cdims[nc] = size[l];
    for (uint32_t k = 0; k < nops; ++k) cst[k][nc] = lst[k][l];
    ++nc;
  }
  int64_t out_count = 0, c_count = 0, work = 0;
  if (!Product(odims, 0, no, &out_count) || !Product(cdims, 0, nc, &c_count) ||
      !MulOk(out_count, c_count, &work))
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "equation '%.*s' on these inputs is too large",
                    eq.len(), eq.data);
  Status st = Status::Ok();
  constexpr uint32_t kTypes = kFloats | kInts;
  const bool ok = Dispatch<kTypes>(ops[0]->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same<T, bool>::value) {
      TensorRef* y = nullptr;
      st = ctx.AllocOutput(0, ops[0]->dtype, no, odims, &y);
      if (!st.ok()) return;
      Contract<T>(nops, ops, static_cast<T*>(y->data), no, odims, ost, nc, cdims, cst, out_count,
                  c_count);
    }
  });
  if (!ok) return UnsupportedDtype(ctx, "Inputs", ops[0]->dtype);
  return st;
}

}  // namespace kern
}  // namespace epctx
