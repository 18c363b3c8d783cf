// SPDX-License-Identifier: Apache-2.0
// The vnpu CONV_TRANSPOSE2D unit (ONNX ConvTranspose), scatter form: each
// input pixel adds weight x value into the Cout_g x KH x KW outputs it
// reaches. Rows of the kernel are clipped to the output once per input row,
// so the inner loop over kernel columns has no per-element bounds check
// beyond the column test. Weights [groups][Cin_g][Cout_g][KH][KW] are ONNX's
// own layout; the output starts at the bias and gets the fused activation
// per output plane at the end.
#include "vnpu_internal.h"

namespace epctx {
namespace vnpu {

void RunConvTranspose(const Bindings& b, const fb::ConvTranspose2D* c) {
  const fb::Graph* g = b.graph->stream;
  const fb::Tensor* xt = g->tensors()->Get(c->input());
  const fb::Tensor* yt = g->tensors()->Get(c->output());
  const float* x = b.ptr(c->input());
  const float* w = b.ptr(c->weights());
  const float* bias = c->has_bias() ? b.ptr(c->bias()) : nullptr;
  float* y = b.ptr(c->output());
  const int64_t N = Dim(xt, 0), C = Dim(xt, 1), H = Dim(xt, 2), W = Dim(xt, 3);
  const int64_t CO = Dim(yt, 1), OH = Dim(yt, 2), OW = Dim(yt, 3), G = c->groups();
  const int64_t cig = C / G, cog = CO / G, KH = c->kernel_h(), KW = c->kernel_w();
  const int64_t sh = c->stride_h(), sw = c->stride_w(), dh = c->dilation_h(), dw = c->dilation_w();
  const int64_t pt = c->pad_top(), pl = c->pad_left();
  const int64_t plane = OH * OW;
  for (int64_t n = 0; n < N; ++n) {
    float* yn = y + n * CO * plane;
    for (int64_t o = 0; o < CO; ++o) {
      const float v = bias ? bias[o] : 0.f;
      for (int64_t i = 0; i < plane; ++i) yn[o * plane + i] = v;
    }
    for (int64_t gi = 0; gi < G; ++gi)
      for (int64_t ic = 0; ic < cig; ++ic) {
        const int64_t ci = gi * cig + ic;
        const float* xc = x + (n * C + ci) * H * W;
        const float* wc = w + ci * cog * KH * KW;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t oh = ih * sh - pt + kh * dh;
            if (oh < 0 || oh >= OH) continue;
            for (int64_t oc = 0; oc < cog; ++oc) {
              float* yrow = yn + ((gi * cog + oc) * OH + oh) * OW;
              const float* wk = wc + (oc * KH + kh) * KW;
              for (int64_t iw = 0; iw < W; ++iw) {
                const float xv = xc[ih * W + iw];
                const int64_t base = iw * sw - pl;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ow = base + kw * dw;
                  if (ow >= 0 && ow < OW) yrow[ow] += xv * wk[kw];
                }
              }
            }
          }
      }
    if (c->activation() != fb::Activation::NONE)
      ActivateRow(c->activation(), yn, yn, uint64_t(CO * plane), c->alpha(), c->beta());
  }
}

}  // namespace vnpu
}  // namespace epctx
