// The vnpu "hardware": one loop nest per op of a validated command stream.
//
// Every index here stays inside the shapes that vnpu_validate.cc checked, so
// the loops need no bounds checks of their own except where a window reaches
// into padding. The hot loops (CONV2D, GEMM) work on 8 output channels / 8
// output columns at a time over weights packed for exactly that, so the
// innermost loop is 8 independent multiply-adds the compiler vectorises.
#include <cmath>
#include <cstring>

#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {
namespace {

using Act = fb::Activation;

inline float Apply(Act kind, float v, float alpha, float beta) {
  switch (kind) {
    case Act::NONE: return v;
    case Act::RELU: return v > 0.f ? v : 0.f;
    case Act::LEAKY_RELU: return v >= 0.f ? v : v * alpha;
    case Act::CLIP: return v < alpha ? alpha : (v > beta ? beta : v);
    case Act::SIGMOID: return 1.f / (1.f + expf(-v));
    case Act::HARD_SIGMOID: {
      float h = alpha * v + beta;
      return h < 0.f ? 0.f : (h > 1.f ? 1.f : h);
    }
    case Act::TANH: return tanhf(v);
  }
  return v;
}

int64_t Dim(const fb::Tensor* t, uint32_t d) { return t->shape()->Get(d); }

struct Runner {
  const Bindings& b;
  const fb::Graph* g;
  const fb::Tensor* T(uint32_t i) const { return g->tensors()->Get(i); }

  void Conv(const fb::Conv2D* c);
  void Gemm(const fb::Gemm* c);
  void Binary(const fb::Binary* c);
  void Pool(const fb::Pool* c);
  void Softmax(const fb::Softmax* c);
  void Transpose(const fb::Transpose* c);
  void Concat(const fb::Concat* c);
  void ScaleShift(const fb::ScaleShift* c);
};

void Runner::Conv(const fb::Conv2D* c) {
  const fb::Tensor* xt = T(c->input());
  const fb::Tensor* yt = T(c->output());
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const int64_t N = Dim(xt, 0), C = Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t CO = Dim(yt, 1), OH = Dim(yt, 2), OW = Dim(yt, 3);
  const int64_t G = c->groups(), cig = C / G, cog = CO / G, nb = (cog + 7) / 8;
  const int64_t KH = c->kernel_h(), KW = c->kernel_w(), sh = c->stride_h(), sw = c->stride_w();
  const int64_t dh = c->dilation_h(), dw = c->dilation_w(), pt = c->pad_top(), pl = c->pad_left();
  const Act act = c->activation();
  const float alpha = c->alpha(), beta = c->beta();
  const int64_t kstride = KH * KW * 8;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t ob = 0; ob < nb; ++ob) {
        const float* wb = w + (gi * nb + ob) * cig * kstride;
        const int64_t oc0 = gi * cog + ob * 8;
        const int64_t valid = cog - ob * 8 < 8 ? cog - ob * 8 : 8;
        float b8[8];
        for (int j = 0; j < 8; ++j) b8[j] = (bias && j < valid) ? bias[oc0 + j] : 0.f;
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ow += 4) {
            // Four output pixels of one row at once: 32 accumulators.
            const int64_t np = OW - ow < 4 ? OW - ow : 4;
            float acc[4][8];
            for (int p = 0; p < 4; ++p)
              for (int j = 0; j < 8; ++j) acc[p][j] = b8[j];
            for (int64_t ic = 0; ic < cig; ++ic) {
              const float* xc = x + ((n * C + gi * cig + ic) * H) * W;
              const float* wc = wb + ic * kstride;
              for (int64_t kh = 0; kh < KH; ++kh) {
                const int64_t ih = oh * sh - pt + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const float* row = xc + ih * W;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const float* wk = wc + (kh * KW + kw) * 8;
                  const int64_t iw0 = ow * sw - pl + kw * dw;
                  for (int64_t p = 0; p < np; ++p) {
                    const int64_t iw = iw0 + p * sw;
                    if (iw < 0 || iw >= W) continue;
                    const float v = row[iw];
                    for (int j = 0; j < 8; ++j) acc[p][j] += v * wk[j];
                  }
                }
              }
            }
            for (int64_t j = 0; j < valid; ++j) {
              float* yc = y + ((n * CO + oc0 + j) * OH + oh) * OW + ow;
              for (int64_t p = 0; p < np; ++p) yc[p] = Apply(act, acc[p][j], alpha, beta);
            }
          }
      }
}

void Runner::Gemm(const fb::Gemm* c) {
  const float* a = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const uint64_t M = c->m(), K = c->k(), N = c->n();
  const Act act = c->activation();
  const float alpha = c->alpha(), beta = c->beta();
  for (uint64_t nb = 0; nb * 8 < N; ++nb) {
    const float* wb = w + nb * K * 8;
    const uint64_t valid = N - nb * 8 < 8 ? N - nb * 8 : 8;
    float b8[8];
    for (uint64_t j = 0; j < 8; ++j) b8[j] = (bias && j < valid) ? bias[nb * 8 + j] : 0.f;
    for (uint64_t m = 0; m < M; m += 4) {
      const uint64_t rows = M - m < 4 ? M - m : 4;
      float acc[4][8];
      for (int p = 0; p < 4; ++p)
        for (int j = 0; j < 8; ++j) acc[p][j] = b8[j];
      if (rows == 4) {
        const float* a0 = a + m * K;
        for (uint64_t k = 0; k < K; ++k) {
          const float* wk = wb + k * 8;
          const float v0 = a0[k], v1 = a0[K + k], v2 = a0[2 * K + k], v3 = a0[3 * K + k];
          for (int j = 0; j < 8; ++j) {
            acc[0][j] += v0 * wk[j];
            acc[1][j] += v1 * wk[j];
            acc[2][j] += v2 * wk[j];
            acc[3][j] += v3 * wk[j];
          }
        }
      } else {
        for (uint64_t p = 0; p < rows; ++p)
          for (uint64_t k = 0; k < K; ++k) {
            const float v = a[(m + p) * K + k];
            for (int j = 0; j < 8; ++j) acc[p][j] += v * wb[k * 8 + j];
          }
      }
      for (uint64_t p = 0; p < rows; ++p)
        for (uint64_t j = 0; j < valid; ++j)
          y[(m + p) * N + nb * 8 + j] = Apply(act, acc[p][j], alpha, beta);
    }
  }
}

inline float BinOp(fb::BinaryKind k, float a, float b) {
  switch (k) {
    case fb::BinaryKind::ADD: return a + b;
    case fb::BinaryKind::SUB: return a - b;
    case fb::BinaryKind::MUL: return a * b;
    case fb::BinaryKind::DIV: return a / b;
    case fb::BinaryKind::MAXIMUM: return a > b ? a : b;
    case fb::BinaryKind::MINIMUM: return a < b ? a : b;
  }
  return 0.f;
}

void Runner::Binary(const fb::Binary* c) {
  const fb::Tensor* yt = T(c->output());
  const float* pa = b.ptr(c->a());
  const float* pb = b.ptr(c->b());
  float* y = b.ptr(c->output());
  const uint64_t total = Elements(yt);
  if (total == 0) return;
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  const fb::BinaryKind kind = c->kind();
  if (r == 0) {
    y[0] = BinOp(kind, pa[0], pb[0]);
    return;
  }
  // Walk the output row by row (last dimension innermost), carrying the
  // offsets of a and b with an odometer over the outer dimensions.
  int64_t idx[8] = {0};
  const int64_t inner = Dim(yt, r - 1);
  const int64_t sa = c->a_strides()->Get(r - 1), sb = c->b_strides()->Get(r - 1);
  int64_t oa = 0, ob = 0;
  for (uint64_t done = 0; done < total; done += uint64_t(inner)) {
    float* yr = y + done;
    const float* ar = pa + oa;
    const float* br = pb + ob;
    if (sa == 1 && sb == 1)
      for (int64_t i = 0; i < inner; ++i) yr[i] = BinOp(kind, ar[i], br[i]);
    else if (sa == 1 && sb == 0)
      for (int64_t i = 0; i < inner; ++i) yr[i] = BinOp(kind, ar[i], br[0]);
    else
      for (int64_t i = 0; i < inner; ++i) yr[i] = BinOp(kind, ar[i * sa], br[i * sb]);
    for (int32_t d = int32_t(r) - 2; d >= 0; --d) {
      oa += c->a_strides()->Get(d);
      ob += c->b_strides()->Get(d);
      if (++idx[d] < Dim(yt, d)) break;
      oa -= c->a_strides()->Get(d) * idx[d];
      ob -= c->b_strides()->Get(d) * idx[d];
      idx[d] = 0;
    }
  }
}

void Runner::Pool(const fb::Pool* c) {
  const fb::Tensor* xt = T(c->input());
  const fb::Tensor* yt = T(c->output());
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const int64_t NC = Dim(xt, 0) * Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t OH = Dim(yt, 2), OW = Dim(yt, 3);
  if (c->kind() == fb::PoolKind::GLOBAL_AVG) {
    for (int64_t i = 0; i < NC; ++i) {
      float s = 0.f;
      for (int64_t j = 0; j < H * W; ++j) s += x[i * H * W + j];
      y[i] = H * W > 0 ? s / float(H * W) : 0.f;
    }
    return;
  }
  const bool is_max = c->kind() == fb::PoolKind::MAX_POOL;
  const int64_t KH = c->kernel_h(), KW = c->kernel_w(), sh = c->stride_h(), sw = c->stride_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  const int64_t hlim = H + c->pad_bottom(), wlim = W + c->pad_right();
  for (int64_t i = 0; i < NC; ++i) {
    const float* xc = x + i * H * W;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * sh - pt, w0 = ow * sw - pl;
        int64_t h1 = h0 + KH < hlim ? h0 + KH : hlim, w1 = w0 + KW < wlim ? w0 + KW : wlim;
        const int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = h0 < 0 ? 0 : h0;
        w0 = w0 < 0 ? 0 : w0;
        h1 = h1 > H ? H : h1;
        w1 = w1 > W ? W : w1;
        float acc = is_max ? -INFINITY : 0.f;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) {
            const float v = xc[ih * W + iw];
            acc = is_max ? (v > acc ? v : acc) : acc + v;
          }
        if (!is_max) {
          const int64_t cnt = c->count_include_pad() ? padded : (h1 - h0) * (w1 - w0);
          acc = cnt > 0 ? acc / float(cnt) : 0.f;
        }
        y[(i * OH + oh) * OW + ow] = acc;
      }
  }
}

void Runner::Softmax(const fb::Softmax* c) {
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const uint64_t outer = c->outer(), n = c->axis(), inner = c->inner();
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = 0; i < inner; ++i) {
      const float* xs = x + o * n * inner + i;
      float* ys = y + o * n * inner + i;
      float mx = -INFINITY;
      for (uint64_t k = 0; k < n; ++k) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
      float sum = 0.f;
      for (uint64_t k = 0; k < n; ++k) {
        const float e = expf(xs[k * inner] - mx);
        ys[k * inner] = e;
        sum += e;
      }
      for (uint64_t k = 0; k < n; ++k) ys[k * inner] /= sum;
    }
}

void Runner::Transpose(const fb::Transpose* c) {
  const fb::Tensor* xt = T(c->input());
  const fb::Tensor* yt = T(c->output());
  const float* x = b.ptr(c->input());
  float* y = b.ptr(c->output());
  const uint64_t total = Elements(yt);
  const uint32_t r = yt->shape() ? yt->shape()->size() : 0;
  if (total == 0) return;
  int64_t in_stride[8], stride[8], idx[8] = {0};
  int64_t s = 1;
  for (int32_t d = int32_t(r) - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= Dim(xt, uint32_t(d));
  }
  for (uint32_t d = 0; d < r; ++d) stride[d] = in_stride[c->perm()->Get(d)];
  int64_t off = 0;
  for (uint64_t i = 0; i < total; ++i) {
    y[i] = x[off];
    for (int32_t d = int32_t(r) - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < Dim(yt, uint32_t(d))) break;
      off -= stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

void Runner::Concat(const fb::Concat* c) {
  const fb::Tensor* yt = T(c->output());
  float* y = b.ptr(c->output());
  const uint32_t r = yt->shape()->size(), axis = c->axis();
  uint64_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < axis; ++d) outer *= uint64_t(Dim(yt, d));
  for (uint32_t d = axis + 1; d < r; ++d) inner *= uint64_t(Dim(yt, d));
  const uint64_t out_row = uint64_t(Dim(yt, axis)) * inner;
  uint64_t col = 0;
  for (uint32_t i = 0; i < c->inputs()->size(); ++i) {
    const uint32_t t = c->inputs()->Get(i);
    const float* x = b.ptr(t);
    const uint64_t row = uint64_t(Dim(T(t), axis)) * inner;
    for (uint64_t o = 0; o < outer && row > 0; ++o) memmove(y + o * out_row + col, x + o * row, row * 4);
    col += row;
  }
}

void Runner::ScaleShift(const fb::ScaleShift* c) {
  const float* x = b.ptr(c->input());
  const float* sc = b.ptr(c->scale());
  const float* sh = b.ptr(c->shift());
  float* y = b.ptr(c->output());
  const uint64_t outer = c->outer(), C = c->channels(), inner = c->inner();
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t ch = 0; ch < C; ++ch) {
      const uint64_t base = (o * C + ch) * inner;
      for (uint64_t i = 0; i < inner; ++i) y[base + i] = x[base + i] * sc[ch] + sh[ch];
    }
}

}  // namespace

float* Bindings::ptr(uint32_t t) const {
  const fb::Tensor* ten = graph->stream->tensors()->Get(t);
  switch (ten->location()) {
    case fb::Location::INPUT:
      return static_cast<float*>(inputs[ten->index()].data);
    case fb::Location::OUTPUT:
      return static_cast<float*>(outputs[ten->index()].data);
    case fb::Location::ARENA:
      return reinterpret_cast<float*>(scratch + ten->offset());
    case fb::Location::WEIGHT:
      // Read-only by validation: no op writes a WEIGHT tensor.
      return const_cast<float*>(reinterpret_cast<const float*>(ctx->weights + ten->offset()));
  }
  return nullptr;
}

int RunGraph(const Bindings& b, Msg& msg) {
  const fb::Graph* g = b.graph->stream;
  if (!g->ops()) return EPCTX_OK;
  Runner r{b, g};
  for (uint32_t i = 0; i < g->ops()->size(); ++i) {
    const fb::Op* o = g->ops()->Get(i);
    switch (o->params_type()) {
      case fb::OpParams::Conv2D: r.Conv(o->params_as_Conv2D()); break;
      case fb::OpParams::Gemm: r.Gemm(o->params_as_Gemm()); break;
      case fb::OpParams::Binary: r.Binary(o->params_as_Binary()); break;
      case fb::OpParams::Unary: {
        const fb::Unary* c = o->params_as_Unary();
        const float* x = b.ptr(c->input());
        float* y = b.ptr(c->output());
        const uint64_t n = Elements(r.T(c->input()));
        for (uint64_t k = 0; k < n; ++k) y[k] = Apply(c->kind(), x[k], c->alpha(), c->beta());
        break;
      }
      case fb::OpParams::Pool: r.Pool(o->params_as_Pool()); break;
      case fb::OpParams::Softmax: r.Softmax(o->params_as_Softmax()); break;
      case fb::OpParams::Transpose: r.Transpose(o->params_as_Transpose()); break;
      case fb::OpParams::Concat: r.Concat(o->params_as_Concat()); break;
      case fb::OpParams::Copy: {
        const fb::Copy* c = o->params_as_Copy();
        const uint64_t n = Elements(r.T(c->input()));
        if (n > 0) memmove(b.ptr(c->output()), b.ptr(c->input()), n * 4);
        break;
      }
      case fb::OpParams::ScaleShift: r.ScaleShift(o->params_as_ScaleShift()); break;
      default:
        msg.s("vnpu: graph '").s(b.graph->name).s("' op ").u(i).s(": unknown op type");
        return EPCTX_EP_FAIL;
    }
  }
  return EPCTX_OK;
}

}  // namespace vnpu
}  // namespace epctx
