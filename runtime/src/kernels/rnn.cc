// SPDX-License-Identifier: Apache-2.0
// RNN, GRU and LSTM (float and double) for every attribute: forward, reverse
// and bidirectional; layout 0 and 1; sequence_lens; initial_h/initial_c;
// peepholes; clip; the activation list; linear_before_reset; input_forget;
// any subset of the outputs Y, Y_h, Y_c.
//
// Per direction: X times W^T for every time step and batch entry is one GEMM
// (the packed SGEMM for float) into `xw`. Each step then multiplies the
// previous hidden state of the whole batch by R^T (one GEMM; GRU without
// linear_before_reset needs a second one for (r . H) Rh^T; batches of up to
// 4 use dot products instead, see MatMulBt) and applies the gates row by row. A batch entry b takes
// sequence_lens[b] steps; reversed, it walks its own sequence from sequence_lens[b] - 1 down to 0.
// Steps past an entry's length leave its state alone and its Y zero.
//
// As ORT: the bias Wb + Rb, the peephole terms and then clip are applied to
// each gate's pre-activation; Y_h and Y_c of an entry with sequence length 0
// are zero (not initial_h/initial_c).
#include <cmath>
#include <cstring>

#include "epctx_uk/elementwise.h"
#include "kernels/float_math.h"
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/ops.h"
#include "kernels/rnn_setup.h"

namespace epctx {
namespace kern {
namespace {

template <typename T>
T Sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + Exp(-x));
  const T e = Exp(x);
  return e / (T(1) + e);
}

template <typename T>
T Activate(const Activation& a, T x) {
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
    case Act::kRelu: return x > 0 ? x : T(0);
    case Act::kTanh: return Tanh(x);
    case Act::kSigmoid: return Sigmoid(x);
    case Act::kAffine: return alpha * x + beta;
    case Act::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case Act::kThresholdedRelu: return x > alpha ? x : T(0);
    case Act::kScaledTanh: return alpha * Tanh(beta * x);
    case Act::kHardSigmoid: {
      const T v = alpha * x + beta;
      return v < 0 ? T(0) : (v > 1 ? T(1) : v);
    }
    case Act::kElu: return x >= 0 ? x : alpha * (Exp(x) - T(1));
    case Act::kSoftsign: return x / (T(1) + (x < 0 ? -x : x));
    case Act::kSoftplus: {
      // log(1 + e^x) without overflowing e^x.
      const T m = x > 0 ? x : T(0);
      return m + Log(Exp(x - m) + Exp(-m));
    }
  }
  return x;
}

template <typename T>
inline T Clip(T x, T bound) {
  if (bound <= 0) return x;
  return x > bound ? bound : (x < -bound ? -bound : x);
}

// C[M x N] = A[M x K] * B^T (B is N x K), row-major, no accumulation: the
// micro-kernels' SgemmBt for float (dot products for up to 4 rows).
void MatMulBt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc, float* ws) {
  uk::SgemmBt(M, N, K, A, lda, B, ldb, C, ldc, ws);
}
void MatMulBt(int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
              int64_t ldb, double* C, int64_t ldc, float*) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += A[m * lda + k] * B[n * ldb + k];
      C[m * ldc + n] = acc;
    }
}

bool Wanted(KernelContext& ctx, uint32_t i) {
  return i < ctx.num_outputs() && !ctx.node().outputs[i].empty();
}

template <typename T>
class Runner {
 public:
  Runner(KernelContext& ctx, const RnnSetup& s) : ctx_(ctx), s_(s) {}

  Status Run() {
    EPCTX_RETURN_IF_ERROR(AllocOutputs());
    EPCTX_RETURN_IF_ERROR(AllocScratch());
    for (int64_t d = 0; d < s_.dirs; ++d) Direction(d);
    return Status::Ok();
  }

 private:
  KernelContext& ctx_;
  const RnnSetup& s_;
  T *y_ = nullptr, *yh_ = nullptr, *yc_ = nullptr;
  T *xw_ = nullptr, *hr_ = nullptr, *h_ = nullptr, *c_ = nullptr, *tmp_ = nullptr;
  T *hh_ = nullptr, *bias_ = nullptr, *rbh_ = nullptr;
  int64_t* len_ = nullptr;
  int64_t max_len_ = 0;
  float* ws_ = nullptr;

  Status Output(uint32_t i, uint32_t rank, const int64_t* dims, T** out) {
    if (!Wanted(ctx_, i)) return Status::Ok();
    static const char* const kNames[3] = {"Y", "Y_h", "Y_c"};
    EPCTX_RETURN_IF_ERROR(CheckShape(ctx_, rank, dims, sizeof(T), kNames[i]));
    TensorRef* t = nullptr;
    EPCTX_RETURN_IF_ERROR(ctx_.AllocOutput(i, s_.dtype, rank, dims, &t));
    *out = static_cast<T*>(t->data);
    memset(*out, 0, t->elements() * sizeof(T));
    return Status::Ok();
  }

  Status AllocOutputs() {
    const int64_t S = s_.seq, B = s_.batch, D = s_.dirs, H = s_.hidden;
    const int64_t y0[4] = {S, D, B, H}, y1[4] = {B, S, D, H};
    const int64_t h0[3] = {D, B, H}, h1[3] = {B, D, H};
    EPCTX_RETURN_IF_ERROR(Output(0, 4, s_.batch_major ? y1 : y0, &y_));
    EPCTX_RETURN_IF_ERROR(Output(1, 3, s_.batch_major ? h1 : h0, &yh_));
    if (s_.cell == Cell::kLstm) EPCTX_RETURN_IF_ERROR(Output(2, 3, s_.batch_major ? h1 : h0, &yc_));
    return Status::Ok();
  }

  Status AllocScratch() {
    const int64_t B = s_.batch, H = s_.hidden, GH = s_.gates * H;
    int64_t rows = 0, xw = 0, bgh = 0, bh = 0;
    if (!MulOk(s_.seq, B, &rows) || !MulOk(rows, GH, &xw) || !MulOk(B, GH, &bgh) ||
        !MulOk(B, H, &bh))
      return ctx_.Fail(EPCTX_INVALID_ARGUMENT, "X %s with hidden_size %lld is too large",
                       ShapeOf(*s_.x).s, static_cast<long long>(H));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(xw), &xw_));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(bgh), &hr_));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(bh), &h_));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(GH), &bias_));
    EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(B), &len_));
    if (s_.cell == Cell::kLstm)
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(bh), &c_));
    if (s_.cell == Cell::kGru) {
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(bh), &tmp_));
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(bh), &hh_));
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, static_cast<uint64_t>(H), &rbh_));
      memset(tmp_, 0, static_cast<size_t>(bh) * sizeof(T));
    }
    if (sizeof(T) == sizeof(float)) {
      uint64_t n = SgemmWorkspaceFloats(rows, GH, s_.input);
      const uint64_t n2 = SgemmWorkspaceFloats(B, GH, H);
      if (n2 > n) n = n2;
      EPCTX_RETURN_IF_ERROR(ScratchArray(ctx_, n, &ws_));
    }
    max_len_ = 0;
    for (int64_t b = 0; b < B; ++b) {
      int64_t v = s_.seq;
      if (s_.lens)
        v = s_.lens->dtype == EPCTX_DTYPE_INT32 ? static_cast<const int32_t*>(s_.lens->data)[b]
                                                : static_cast<const int64_t*>(s_.lens->data)[b];
      len_[b] = v;
      if (v > max_len_) max_len_ = v;
    }
    return Status::Ok();
  }

  // Wb + Rb per gate into bias_; GRU with linear_before_reset keeps Rbh apart
  // (it is added before the reset gate multiplies).
  void LoadBias(int64_t d) {
    const int64_t GH = s_.gates * s_.hidden, H = s_.hidden;
    if (!s_.b) {
      memset(bias_, 0, static_cast<size_t>(GH) * sizeof(T));
      if (rbh_) memset(rbh_, 0, static_cast<size_t>(H) * sizeof(T));
      return;
    }
    const T* wb = static_cast<const T*>(s_.b->data) + d * 2 * GH;
    const T* rb = wb + GH;
    for (int64_t i = 0; i < GH; ++i) bias_[i] = wb[i] + rb[i];
    if (s_.cell == Cell::kGru && s_.linear_before_reset)
      for (int64_t i = 0; i < H; ++i) {
        bias_[2 * H + i] = wb[2 * H + i];
        rbh_[i] = rb[2 * H + i];
      }
  }

  void LoadState(int64_t d, const TensorRef* init, T* state) {
    const int64_t H = s_.hidden;
    for (int64_t b = 0; b < s_.batch; ++b) {
      T* dst = state + b * H;
      if (init) {
        memcpy(dst, static_cast<const T*>(init->data) + StateOffset(s_, d, b),
               static_cast<size_t>(H) * sizeof(T));
      } else {
        memset(dst, 0, static_cast<size_t>(H) * sizeof(T));
      }
    }
  }

  void StoreState(int64_t d, const T* state, T* out) {
    if (!out) return;
    const int64_t H = s_.hidden;
    for (int64_t b = 0; b < s_.batch; ++b) {
      T* dst = out + StateOffset(s_, d, b);
      if (len_[b] == 0) {
        memset(dst, 0, static_cast<size_t>(H) * sizeof(T));
      } else {
        memcpy(dst, state + b * H, static_cast<size_t>(H) * sizeof(T));
      }
    }
  }

  void Direction(int64_t d) {
    const int64_t B = s_.batch, H = s_.hidden, G = s_.gates, GH = G * H;
    const bool rev = s_.reverse || d == 1;
    const T* W = static_cast<const T*>(s_.w->data) + d * GH * s_.input;
    const T* R = static_cast<const T*>(s_.r->data) + d * GH * H;
    const T* P = s_.p ? static_cast<const T*>(s_.p->data) + d * 3 * H : nullptr;
    const Activation* act = s_.act[d];
    const T clip = static_cast<T>(s_.clip);
    LoadBias(d);
    LoadState(d, s_.h0, h_);
    if (c_) LoadState(d, s_.c0, c_);
    MatMulBt(s_.seq * B, GH, s_.input, static_cast<const T*>(s_.x->data), s_.input, W, s_.input,
             xw_, GH, ws_);
    const bool gru_late = s_.cell == Cell::kGru && !s_.linear_before_reset;

    for (int64_t step = 0; step < max_len_; ++step) {
      // H_{t-1} R^T for the whole batch (GRU without linear_before_reset:
      // only the z and r rows here; Rh multiplies r . H_{t-1} below).
      MatMulBt(B, gru_late ? 2 * H : GH, H, h_, H, R, H, hr_, GH, ws_);
      for (int64_t b = 0; b < B; ++b) {
        if (step >= len_[b]) continue;
        const int64_t t = rev ? len_[b] - 1 - step : step;
        T* pre = hr_ + b * GH;  // becomes the gate pre-activations
        const T* xw = xw_ + XRow(s_, t, b) * GH;
        T* h = h_ + b * H;
        if (s_.cell == Cell::kRnn) {
          for (int64_t j = 0; j < H; ++j) h[j] = pre[j] + xw[j] + bias_[j];
          ActRow(act[0], clip, h, H);
        } else if (s_.cell == Cell::kLstm) {
          LstmRow(act, P, clip, xw, pre, c_ + b * H, h);
        } else {
          GruGates(act, clip, xw, pre, h, tmp_ + b * H);
          continue;  // Y waits for the second half of the GRU step
        }
        if (y_) memcpy(y_ + YOffset(s_, t, d, b), h, static_cast<size_t>(H) * sizeof(T));
      }
      if (s_.cell != Cell::kGru) continue;
      if (gru_late) MatMulBt(B, H, H, tmp_, H, R + 2 * H * H, H, hh_, H, ws_);
      for (int64_t b = 0; b < B; ++b) {
        if (step >= len_[b]) continue;
        const int64_t t = rev ? len_[b] - 1 - step : step;
        const T* xw = xw_ + XRow(s_, t, b) * GH;
        T* cand = gru_late ? hh_ + b * H : tmp_ + b * H;  // r . (...) until here
        const T* z = hr_ + b * GH;
        T* h = h_ + b * H;
        for (int64_t j = 0; j < H; ++j) cand[j] = xw[2 * H + j] + cand[j] + bias_[2 * H + j];
        ActRow(act[1], clip, cand, H);
        for (int64_t j = 0; j < H; ++j) h[j] = (T(1) - z[j]) * cand[j] + z[j] * h[j];
        if (y_) memcpy(y_ + YOffset(s_, t, d, b), h, static_cast<size_t>(H) * sizeof(T));
      }
    }
    StoreState(d, h_, yh_);
    if (c_) StoreState(d, c_, yc_);
  }

  // x[j] = act(clip(x[j])) for j < n, in place: float sigmoid and tanh
  // through the micro-kernel rows (vector code), the rest element by element.
  static void ActRow(const Activation& a, T clip, T* x, int64_t n) {
    if constexpr (sizeof(T) == sizeof(float)) {
      if (a.kind == Act::kSigmoid || a.kind == Act::kTanh) {
        if (clip > 0)
          for (int64_t j = 0; j < n; ++j) x[j] = Clip(x[j], clip);
        uk::ActivateRow(a.kind == Act::kSigmoid ? uk::Act::kSigmoid : uk::Act::kTanh, x, x, n, 1.0f,
                        0.0f);
        return;
      }
    }
    for (int64_t j = 0; j < n; ++j) x[j] = Activate(a, Clip(x[j], clip));
  }

  // Gates i, o, f, c (that order in W, R, B; P holds i, o, f), computed in
  // place in pre, a row of each gate at a time.
  void LstmRow(const Activation* act, const T* P, T clip, const T* xw, T* pre, T* c, T* h) {
    const int64_t H = s_.hidden;
    T *gi = pre, *go = pre + H, *gf = pre + 2 * H, *gc = pre + 3 * H;
    for (int64_t j = 0; j < 4 * H; ++j) pre[j] = pre[j] + xw[j] + bias_[j];
    if (P)
      for (int64_t j = 0; j < H; ++j) {
        gi[j] += P[j] * c[j];
        gf[j] += P[2 * H + j] * c[j];
      }
    ActRow(act[0], clip, gi, H);
    if (!s_.input_forget) ActRow(act[0], clip, gf, H);
    ActRow(act[1], clip, gc, H);
    for (int64_t j = 0; j < H; ++j) {
      const T f = s_.input_forget ? T(1) - gi[j] : gf[j];
      c[j] = f * c[j] + gi[j] * gc[j];
    }
    if (P)
      for (int64_t j = 0; j < H; ++j) go[j] += P[H + j] * c[j];
    ActRow(act[0], clip, go, H);
    for (int64_t j = 0; j < H; ++j) gc[j] = c[j];
    ActRow(act[2], T(0), gc, H);  // the cell's activation is not clipped
    for (int64_t j = 0; j < H; ++j) h[j] = go[j] * gc[j];
  }

  // GRU gates z and r; z stays in pre[0, H) for the second half, and rh gets
  // r . H_{t-1} (or, with linear_before_reset, r . (H_{t-1} Rh^T + Rbh)).
  void GruGates(const Activation* act, T clip, const T* xw, T* pre, const T* h, T* rh) {
    const int64_t H = s_.hidden;
    for (int64_t j = 0; j < 2 * H; ++j) pre[j] = pre[j] + xw[j] + bias_[j];
    ActRow(act[0], clip, pre, 2 * H);
    for (int64_t j = 0; j < H; ++j)
      rh[j] = s_.linear_before_reset ? pre[H + j] * (pre[2 * H + j] + rbh_[j]) : pre[H + j] * h[j];
  }
};

Status RunCell(KernelContext& ctx, Cell cell) {
  RnnSetup s;
  EPCTX_RETURN_IF_ERROR(ReadRnnSetup(ctx, cell, &s));
  if (s.dtype == EPCTX_DTYPE_DOUBLE) return Runner<double>(ctx, s).Run();
  return Runner<float>(ctx, s).Run();
}

}  // namespace

Status RNN(KernelContext& ctx) { return RunCell(ctx, Cell::kRnn); }
Status GRU(KernelContext& ctx) { return RunCell(ctx, Cell::kGru); }
Status LSTM(KernelContext& ctx) { return RunCell(ctx, Cell::kLstm); }

}  // namespace kern
}  // namespace epctx
