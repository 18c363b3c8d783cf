// SPDX-License-Identifier: Apache-2.0
// ReadRnnSetup: attributes and input shapes of RNN, GRU and LSTM.
#include "kernels/rnn_setup.h"

#include "kernels/kernel_util.h"

namespace epctx {
namespace kern {
namespace {

struct ActInfo {
  const char* name;
  Act kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;  // ORT's defaults when the lists run out
};

constexpr ActInfo kActs[] = {
    {"Relu", Act::kRelu, false, false, 0.0f, 0.0f},
    {"Tanh", Act::kTanh, false, false, 0.0f, 0.0f},
    {"Sigmoid", Act::kSigmoid, false, false, 0.0f, 0.0f},
    {"Affine", Act::kAffine, true, true, 0.0f, 0.0f},
    {"LeakyRelu", Act::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", Act::kThresholdedRelu, true, false, 0.0f, 0.0f},
    {"ScaledTanh", Act::kScaledTanh, true, true, 0.0f, 0.0f},
    {"HardSigmoid", Act::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", Act::kElu, true, false, 1.0f, 0.0f},
    {"Softsign", Act::kSoftsign, false, false, 0.0f, 0.0f},
    {"Softplus", Act::kSoftplus, false, false, 0.0f, 0.0f},
};

const char* const kDefaultActs[3][3] = {
    {"Tanh", nullptr, nullptr},    // RNN
    {"Sigmoid", "Tanh", nullptr},  // GRU
    {"Sigmoid", "Tanh", "Tanh"},   // LSTM
};

Status ReadActivations(KernelContext& ctx, RnnSetup* s) {
  const uint32_t per_dir = s->cell == Cell::kRnn ? 1 : s->cell == Cell::kGru ? 2 : 3;
  const uint32_t want = per_dir * static_cast<uint32_t>(s->dirs);
  const onnx::AttributeView* a = ctx.node().attr("activations");
  if (a && a->type != onnx::AttrType::kStrings)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "attribute 'activations' must be STRINGS, found %s",
                    onnx::attr_type_name(a->type));
  uint32_t count = a ? a->count : want;
  // The RNN schema's default is {"Tanh", "Tanh"}; ORT then uses the first
  // for a one-direction node, and so do we for an explicit pair.
  if (a && s->cell == Cell::kRnn && s->dirs == 1 && count == 2) count = 1;
  if (count != want)
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "attribute 'activations' has %u names, expected %u (%u per direction)",
                    a ? a->count : 0, want, per_dir);
  const float* alphas = nullptr;
  const float* betas = nullptr;
  uint32_t n_alpha = 0, n_beta = 0, next_alpha = 0, next_beta = 0;
  ctx.AttrFloats("activation_alpha", &alphas, &n_alpha);
  ctx.AttrFloats("activation_beta", &betas, &n_beta);
  const int ci = s->cell == Cell::kRnn ? 0 : s->cell == Cell::kGru ? 1 : 2;
  for (uint32_t i = 0; i < want; ++i) {
    StrView name;
    if (a) {
      name = a->strings[i];
    } else {
      name.data = kDefaultActs[ci][i % per_dir];
      name.size = cstr_len(name.data);
    }
    const ActInfo* info = nullptr;
    for (const ActInfo& k : kActs)
      if (name.ieq(k.name)) info = &k;
    if (!info)
      return ctx.Fail(EPCTX_INVALID_GRAPH,
                      "activations[%u] is '%.*s', expected one of Relu, Tanh, Sigmoid, Affine, "
                      "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, "
                      "Softplus",
                      i, name.len(), name.data);
    Activation& act = s->act[i / per_dir][i % per_dir];
    act.kind = info->kind;
    act.alpha = info->alpha;
    act.beta = info->beta;
    if (info->takes_alpha && next_alpha < n_alpha) act.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < n_beta) act.beta = betas[next_beta++];
  }
  return Status::Ok();
}

// INVALID_ARGUMENT unless t has exactly the shape dims[0..rank).
Status RequireShape(KernelContext& ctx, const TensorRef& t, const char* what, uint32_t rank,
                    const int64_t* dims) {
  bool ok = t.rank == rank;
  for (uint32_t i = 0; ok && i < rank; ++i) ok = t.dims[i] == dims[i];
  if (!ok)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s must have shape %s, found %s", what,
                    ShapeOf(rank, dims).s, ShapeOf(t).s);
  return Status::Ok();
}

Status SameType(KernelContext& ctx, const TensorRef* t, const char* what, int32_t dtype) {
  if (t && t->dtype != dtype)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "%s has dtype %s, expected %s like X", what,
                    dtype_name(t->dtype), dtype_name(dtype));
  return Status::Ok();
}

Status ReadLengths(KernelContext& ctx, const RnnSetup& s) {
  const TensorRef& t = *s.lens;
  if (t.dtype != EPCTX_DTYPE_INT32 && t.dtype != EPCTX_DTYPE_INT64)
    return ctx.Fail(EPCTX_INVALID_ARGUMENT, "sequence_lens must be int32, found %s",
                    dtype_name(t.dtype));
  const int64_t dims[1] = {s.batch};
  EPCTX_RETURN_IF_ERROR(RequireShape(ctx, t, "sequence_lens", 1, dims));
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t v = t.dtype == EPCTX_DTYPE_INT32 ? static_cast<const int32_t*>(t.data)[b]
                                                   : static_cast<const int64_t*>(t.data)[b];
    if (v < 0 || v > s.seq)
      return ctx.Fail(
          EPCTX_INVALID_ARGUMENT, "sequence_lens[%lld] is %lld, expected a value in [0, %lld]",
          static_cast<long long>(b), static_cast<long long>(v), static_cast<long long>(s.seq));
  }
  return Status::Ok();
}

}  // namespace

Status ReadRnnSetup(KernelContext& ctx, Cell cell, RnnSetup* s) {
  s->cell = cell;
  s->gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;

  StrView dir = ctx.AttrString("direction", "forward");
  if (dir.eq("forward")) {
    s->dirs = 1;
  } else if (dir.eq("reverse")) {
    s->dirs = 1;
    s->reverse = true;
  } else if (dir.eq("bidirectional")) {
    s->dirs = 2;
  } else {
    return ctx.Fail(EPCTX_INVALID_GRAPH,
                    "direction is '%.*s', expected forward, reverse or bidirectional", dir.len(),
                    dir.data);
  }
  const int64_t layout = ctx.AttrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.Fail(EPCTX_INVALID_GRAPH, "layout is %lld, expected 0 or 1",
                    static_cast<long long>(layout));
  s->batch_major = layout == 1;
  const onnx::AttributeView* clip = ctx.node().attr("clip");
  if (clip && clip->type == onnx::AttrType::kFloat) {
    if (!(clip->f > 0.0f))
      return ctx.Fail(EPCTX_INVALID_GRAPH, "clip is %f, expected a positive threshold",
                      static_cast<double>(clip->f));
    s->clip = clip->f;
  } else {
    ctx.AttrFloat("clip", 0.0f);  // records a mistyped attribute
  }
  if (cell == Cell::kGru) s->linear_before_reset = ctx.AttrInt("linear_before_reset", 0) != 0;
  if (cell == Cell::kLstm) s->input_forget = ctx.AttrInt("input_forget", 0) != 0;
  EPCTX_RETURN_IF_ERROR(ReadActivations(ctx, s));

  EPCTX_RETURN_IF_ERROR(Input(ctx, 0, "X", &s->x));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 1, "W", &s->w));
  EPCTX_RETURN_IF_ERROR(Input(ctx, 2, "R", &s->r));
  s->dtype = s->x->dtype;
  if (s->dtype != EPCTX_DTYPE_FLOAT && s->dtype != EPCTX_DTYPE_DOUBLE)
    return UnsupportedDtype(ctx, "X", s->dtype);
  s->b = ctx.input(3);
  s->lens = ctx.input(4);
  s->h0 = ctx.input(5);
  if (cell == Cell::kLstm) {
    s->c0 = ctx.input(6);
    s->p = ctx.input(7);
  }
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->w, "W", s->dtype));
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->r, "R", s->dtype));
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->b, "B", s->dtype));
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->h0, "initial_h", s->dtype));
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->c0, "initial_c", s->dtype));
  EPCTX_RETURN_IF_ERROR(SameType(ctx, s->p, "P", s->dtype));

  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *s->x, "X", 3));
  s->seq = s->x->dims[s->batch_major ? 1 : 0];
  s->batch = s->x->dims[s->batch_major ? 0 : 1];
  s->input = s->x->dims[2];
  EPCTX_RETURN_IF_ERROR(RequireRank(ctx, *s->r, "R", 3));
  // hidden_size is optional in the spec: R's last dimension when absent.
  s->hidden = ctx.AttrInt("hidden_size", s->r->dims[2]);
  int64_t gh = 0;
  if (s->hidden <= 0 || !MulOk(s->gates, s->hidden, &gh))
    return ctx.Fail(EPCTX_INVALID_GRAPH, "hidden_size is %lld, expected a positive size",
                    static_cast<long long>(s->hidden));
  const int64_t w_dims[3] = {s->dirs, gh, s->input};
  EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->w, "W", 3, w_dims));
  const int64_t r_dims[3] = {s->dirs, gh, s->hidden};
  EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->r, "R", 3, r_dims));
  if (s->b) {
    const int64_t b_dims[2] = {s->dirs, 2 * gh};  // gh <= R's elements: no overflow
    EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->b, "B", 2, b_dims));
  }
  const int64_t state_dims[3] = {s->batch_major ? s->batch : s->dirs,
                                 s->batch_major ? s->dirs : s->batch, s->hidden};
  if (s->h0) EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->h0, "initial_h", 3, state_dims));
  if (s->c0) EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->c0, "initial_c", 3, state_dims));
  if (s->p) {
    const int64_t p_dims[2] = {s->dirs, 3 * s->hidden};
    EPCTX_RETURN_IF_ERROR(RequireShape(ctx, *s->p, "P", 2, p_dims));
  }
  if (s->lens) EPCTX_RETURN_IF_ERROR(ReadLengths(ctx, *s));
  return Status::Ok();
}

}  // namespace kern
}  // namespace epctx
