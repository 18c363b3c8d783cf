// SPDX-License-Identifier: Apache-2.0
// RNN, GRU, LSTM, DFT, STFT, the window functions and MelWeightMatrix:
// what the ONNX node tests leave out (directions with sequence lengths,
// batch-major layout, clip, activation parameters, peepholes with
// input_forget, linear_before_reset, double, Bluestein lengths, float16 and
// bfloat16 outputs) and every refusal with its code and message.
#include <cmath>
#include <cstring>
#include <random>

#include "kernels/elem.h"
#include "test_util.h"

namespace {

using kt::Dims;

TensorRef* D(kt::Host& h, const Dims& dims, const std::vector<double>& v) {
  TensorRef* t = h.Make(EPCTX_DTYPE_DOUBLE, dims, nullptr);
  if (v.size() != t->elements()) fail_msg("double tensor size mismatch");
  memcpy(t->data, v.data(), t->bytes);
  return t;
}

double Dbl(const TensorRef* t, size_t i) { return static_cast<const double*>(t->data)[i]; }
double Sig(double x) { return 1.0 / (1.0 + exp(-x)); }

// h_t = relu(x_t + h_{t-1}): Y holds running sums, easy to read per direction.
void rnn_bidirectional_batch_major_walks_each_sequence_length(void**) {
  kt::Host host;
  kt::Node node("RNN", "rnn");
  node.Int("hidden_size", 1).Str("direction", "bidirectional").Int("layout", 1);
  node.Strs("activations", {"Relu", "Relu"}).Outputs({"Y", "Y_h"});
  TensorRef* x = host.F({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  TensorRef* w = host.F({2, 1, 1}, {1, 1});
  EXPECT_OK(host.Run(node, 14, {x, w, w, nullptr, host.I32({2}, {3, 2})}));
  EXPECT_SHAPE(host.out(0), 2, 3, 2, 1);
  // [batch][time][forward, reverse]; batch 1 stops after 2 steps.
  EXPECT_FLOATS(host.out(0), 1, 6, 3, 5, 6, 3, 4, 9, 9, 5, 0, 0);
  EXPECT_SHAPE(host.out(1), 2, 2, 1);
  EXPECT_FLOATS(host.out(1), 6, 6, 9, 9);
}

void rnn_zero_length_sequence_has_zero_state_not_initial_h(void**) {
  kt::Host host;
  kt::Node node("RNN", "rnn");
  node.Int("hidden_size", 1).Strs("activations", {"Relu"}).Outputs({"Y", "Y_h"});
  TensorRef* x = host.F({2, 2, 1}, {1, 2, 3, 4});
  TensorRef* w = host.F({1, 1, 1}, {1});
  TensorRef* h0 = host.F({1, 2, 1}, {7, 7});
  EXPECT_OK(host.Run(node, 14, {x, w, w, nullptr, host.I32({2}, {0, 2}), h0}));
  EXPECT_FLOATS(host.out(0), 0, 9, 0, 13);
  EXPECT_FLOATS(host.out(1), 0, 13);
}

void rnn_clip_bounds_the_gate_input(void**) {
  kt::Host host;
  kt::Node node("RNN", "rnn");
  node.Int("hidden_size", 1).Float("clip", 2.5f).Strs("activations", {"Relu"});
  TensorRef* w = host.F({1, 1, 1}, {1});
  EXPECT_OK(host.Run(node, 14, {host.F({3, 1, 1}, {1, 2, 3}), w, w}));
  EXPECT_FLOATS(host.out(0), 1, 2.5f, 2.5f);
}

void activation_alpha_beta_are_consumed_in_function_order(void**) {
  kt::Host host;
  kt::Node node("RNN", "rnn");
  node.Int("hidden_size", 1).Str("direction", "bidirectional");
  node.Strs("activations", {"Affine", "LeakyRelu"}).Floats("activation_alpha", {2.0f, 0.5f});
  node.Floats("activation_beta", {1.0f}).Outputs({"", "Y_h"});
  TensorRef* x = host.F({1, 1, 1}, {-2});
  TensorRef* w = host.F({2, 1, 1}, {1, 1});
  TensorRef* r = host.F({2, 1, 1}, {0, 0});
  EXPECT_OK(host.Run(node, 14, {x, w, r}));
  EXPECT_FLOATS(host.out(1), 2 * -2.0f + 1, 0.5f * -2.0f);
  kt::Node dflt("RNN", "rnn_default");
  dflt.Int("hidden_size", 1).Strs("activations", {"leakyrelu"}).Outputs({"", "Y_h"});
  EXPECT_OK(host.Run(dflt, 14, {x, host.F({1, 1, 1}, {1}), host.F({1, 1, 1}, {0})}));
  EXPECT_FLOATS(host.out(1), -0.02f);  // LeakyRelu's own default alpha
}

// Two steps of a one-unit LSTM with W = R = 0, so only bias, peepholes and
// the cell state drive the gates.
void lstm_peepholes_and_input_forget_in_double(void**) {
  for (int coupled = 0; coupled < 2; ++coupled) {
    kt::Host host;
    kt::Node node("LSTM", "lstm");
    node.Int("hidden_size", 1).Int("input_forget", coupled).Outputs({"", "Y_h", "Y_c"});
    TensorRef* zero = D(host, {1, 4, 1}, {0, 0, 0, 0});
    TensorRef* b = D(host, {1, 8}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8});
    TensorRef* p = D(host, {1, 3}, {0.5, -0.25, 2.0});
    EXPECT_OK(host.Run(node, 14,
                       {D(host, {2, 1, 1}, {3, -3}), zero, zero, b, nullptr,
                        D(host, {1, 1, 1}, {0.9}), D(host, {1, 1, 1}, {0.3}), p}));
    double c = 0.3, h = 0.0;
    for (int t = 0; t < 2; ++t) {
      const double i = Sig(0.6 + 0.5 * c);
      const double f = coupled ? 1.0 - i : Sig(1.0 + 2.0 * c);
      c = f * c + i * tanh(1.2);
      h = Sig(0.8 - 0.25 * c) * tanh(c);
    }
    assert_int_equal(host.out(1)->dtype, EPCTX_DTYPE_DOUBLE);
    assert_true(fabs(Dbl(host.out(1), 0) - h) < 1e-12);
    assert_true(fabs(Dbl(host.out(2), 0) - c) < 1e-12);
  }
}

void gru_linear_before_reset_resets_after_the_recurrence(void**) {
  const float hp = 0.6f, xv = 0.8f;
  const double z = Sig(0.5 * xv + 0.3 * hp + 0.15), r = Sig(-0.5 * xv + 0.2 * hp + 0.1);
  const double late = tanh(xv - 0.7 * (r * hp) + 0.7);
  const double early = tanh(xv + r * (-0.7 * hp + 0.4) + 0.3);
  for (int lbr = 0; lbr < 2; ++lbr) {
    kt::Host host;
    kt::Node node("GRU", "gru");
    node.Int("hidden_size", 1).Int("linear_before_reset", lbr).Outputs({"", "Y_h"});
    EXPECT_OK(host.Run(node, 14,
                       {host.F({1, 1, 1}, {xv}), host.F({1, 3, 1}, {0.5f, -0.5f, 1.0f}),
                        host.F({1, 3, 1}, {0.3f, 0.2f, -0.7f}),
                        host.F({1, 6}, {0.1f, 0.2f, 0.3f, 0.05f, -0.1f, 0.4f}), nullptr,
                        host.F({1, 1, 1}, {hp})}));
    const double cand = lbr ? early : late;
    EXPECT_FLOATS(host.out(1), static_cast<float>((1 - z) * cand + z * hp));
  }
}

void recurrent_nodes_refuse_bad_attributes_and_shapes(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 1, 2}, 1);
  TensorRef* w = host.Random({1, 4, 2}, 2);
  TensorRef* r = host.Random({1, 4, 1}, 3);
  struct Case {
    const char* op;
    void (*setup)(kt::Node&);
    int code;
    const char* msg;
  };
  const Case cases[] = {
      {"LSTM", [](kt::Node& n) { n.Str("direction", "sideways"); }, EPCTX_INVALID_GRAPH,
       "direction is 'sideways', expected forward, reverse or bidirectional"},
      {"LSTM", [](kt::Node& n) { n.Int("layout", 2); }, EPCTX_INVALID_GRAPH,
       "layout is 2, expected 0 or 1"},
      {"LSTM",
       [](kt::Node& n) {
         n.Strs("activations", {"Sigmoid", "Tanh", "Gelu"});
       },
       EPCTX_INVALID_GRAPH, "activations[2] is 'Gelu'"},
      {"LSTM",
       [](kt::Node& n) {
         n.Strs("activations", {"Sigmoid", "Tanh"});
       },
       EPCTX_INVALID_GRAPH, "'activations' has 2 names, expected 3"},
      {"LSTM", [](kt::Node& n) { n.Float("clip", 0.0f); }, EPCTX_INVALID_GRAPH,
       "clip is 0.000000, expected a positive threshold"},
      {"LSTM", [](kt::Node& n) { n.Int("hidden_size", int64_t{1} << 62); }, EPCTX_INVALID_GRAPH,
       "hidden_size is 4611686018427387904"},
      {"LSTM", [](kt::Node& n) { n.Int("hidden_size", 2); }, EPCTX_INVALID_ARGUMENT,
       "W must have shape [1,8,2], found [1,4,2]"},
      {"GRU", [](kt::Node&) {}, EPCTX_INVALID_ARGUMENT, "W must have shape [1,3,2], found [1,4,2]"},
  };
  for (const Case& c : cases) {
    kt::Node node(c.op, "bad");
    c.setup(node);
    EXPECT_FAIL(host.Run(node, 14, {x, w, r}), c.code, c.msg);
  }
  kt::Node lstm("LSTM", "bad_inputs");
  EXPECT_FAIL(host.Run(lstm, 14, {x, w, r, nullptr, host.I32({1}, {3})}), EPCTX_INVALID_ARGUMENT,
              "sequence_lens[0] is 3, expected a value in [0, 2]");
  EXPECT_FAIL(host.Run(lstm, 14, {x, w, r, D(host, {1, 8}, std::vector<double>(8))}),
              EPCTX_INVALID_ARGUMENT, "B has dtype double, expected float like X");
  EXPECT_FAIL(host.Run(lstm, 14, {host.F({}, {1}), w, r}), EPCTX_INVALID_ARGUMENT,
              "X must have rank 3, found rank 0");
  EXPECT_FAIL(host.Run(lstm, 14, {host.Make(EPCTX_DTYPE_FLOAT16, {2, 1, 2}), w, r}),
              EPCTX_NOT_IMPLEMENTED, "X has dtype float16");
  EXPECT_FAIL(host.Run(lstm, 14, {x, w}), EPCTX_INVALID_GRAPH, "input 2 (R) is missing");
}

void recurrent_and_signal_kernels_are_registered_from_their_first_opset(void**) {
  epctx::StrView dom;
  const char* ops[] = {"RNN", "GRU", "LSTM"};
  for (const char* op : ops) {
    epctx::StrView v{op, strlen(op)};
    assert_null(epctx::FindKernel(dom, v, 6));
    assert_non_null(epctx::FindKernel(dom, v, 7));
    assert_non_null(epctx::FindKernel(dom, v, 21));
  }
  const char* sig[] = {"DFT",           "STFT",           "HannWindow",
                       "HammingWindow", "BlackmanWindow", "MelWeightMatrix"};
  for (const char* op : sig) {
    epctx::StrView v{op, strlen(op)};
    assert_null(epctx::FindKernel(dom, v, 16));
    assert_non_null(epctx::FindKernel(dom, v, 17));
  }
}

void dft_of_length_three_uses_the_chirp_transform(void**) {
  kt::Host host;
  kt::Node node("DFT", "dft");
  EXPECT_OK(host.Run(node, 17, {host.F({1, 3, 1}, {1, 2, 3})}));
  EXPECT_SHAPE(host.out(0), 1, 3, 2);
  EXPECT_FLOATS(host.out(0), 6, 0, -1.5f, 0.8660254f, -1.5f, -0.8660254f);
  kt::Node one("DFT", "onesided");
  one.Int("onesided", 1);
  EXPECT_OK(host.Run(one, 17, {host.F({1, 3, 1}, {1, 2, 3})}));
  EXPECT_FLOATS(host.out(0), 6, 0, -1.5f, 0.8660254f);
}

void dft_inverse_undoes_the_forward_transform(void**) {
  kt::Host host;
  TensorRef* x = host.Random({2, 6, 2}, 5);
  kt::Node fwd("DFT", "fwd");
  EXPECT_OK(host.Run(fwd, 17, {x}));
  TensorRef* spec = host.F({2, 6, 2}, kt::ToVec(host.out(0)));
  kt::Node inv("DFT", "inv");
  inv.Int("inverse", 1);
  EXPECT_OK(host.Run(inv, 17, {spec}));
  assert_true(kt::MaxRelErr(static_cast<float*>(host.out(0)->data), static_cast<float*>(x->data),
                            24) < 1e-5f);
}

// A prime length against the direct sum, and a scratch bound linear in n.
void dft_prime_length_matches_the_direct_sum(void**) {
  const int n = 1009;
  kt::Host host;
  TensorRef* x = host.Random({1, n, 1}, 9);
  kt::Node node("DFT", "prime");
  EXPECT_OK(host.Run(node, 17, {x}));
  const float* in = static_cast<float*>(x->data);
  const float* out = static_cast<float*>(host.out(0)->data);
  double worst = 0.0;
  for (int k = 0; k < n; k += 37) {
    double re = 0.0, im = 0.0;
    for (int j = 0; j < n; ++j) {
      const double a = -2.0 * M_PI * static_cast<double>((int64_t{j} * k) % n) / n;
      re += in[j] * cos(a);
      im += in[j] * sin(a);
    }
    worst = fmax(worst, fabs(out[2 * k] - re) + fabs(out[2 * k + 1] - im));
  }
  assert_true(worst < 1e-3);
  assert_true(host.scratch_bytes() < 64u * 8u * n);
}

void dft_length_pads_or_truncates_and_rank_two_is_real(void**) {
  kt::Host host;
  kt::Node node("DFT", "dl");
  TensorRef* x = host.F({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_OK(host.Run(node, 17, {x, host.I64({}, {2})}));
  EXPECT_FLOATS(host.out(0), 3, 0, -1, 0);
  EXPECT_OK(host.Run(node, 17, {x, host.I64({}, {8})}));
  EXPECT_SHAPE(host.out(0), 1, 8, 2);
  EXPECT_OK(host.Run(node, 17, {host.F({2, 2}, {1, 2, 5, 1})}));
  EXPECT_SHAPE(host.out(0), 2, 2, 2);
  EXPECT_FLOATS(host.out(0), 3, 0, -1, 0, 6, 0, 4, 0);
  kt::Node v20("DFT", "v20");  // opset 20: axis is input 2, default -2
  EXPECT_OK(host.Run(v20, 20, {host.F({2, 1, 1}, {1, 2}), nullptr, host.I64({}, {0})}));
  EXPECT_FLOATS(host.out(0), 3, 0, -1, 0);
  EXPECT_OK(host.Run(v20, 20, {host.F({1, 2, 1}, {1, 2})}));
  EXPECT_FLOATS(host.out(0), 3, 0, -1, 0);
  kt::Node ax("DFT", "ax0");
  ax.Int("axis", 0);  // the batch axis is a signal axis like any other
  EXPECT_OK(host.Run(ax, 17, {host.F({2, 1, 1}, {1, 2})}));
  EXPECT_FLOATS(host.out(0), 3, 0, -1, 0);
}

void dft_refuses_bad_axes_lengths_and_shapes(void**) {
  kt::Host host;
  TensorRef* x = host.Random({1, 4, 1}, 1);
  kt::Node last("DFT", "d");
  last.Int("axis", -1);
  EXPECT_FAIL(host.Run(last, 17, {x}), EPCTX_INVALID_ARGUMENT,
              "axis -1 is out of range: expected [-3, -2] or [0, 1]");
  kt::Node node("DFT", "d");
  EXPECT_FAIL(host.Run(node, 17, {x, host.I64({}, {0})}), EPCTX_INVALID_ARGUMENT,
              "dft_length is 0, expected a positive length");
  EXPECT_FAIL(host.Run(node, 17, {x, host.I64({2}, {4, 4})}), EPCTX_INVALID_ARGUMENT,
              "dft_length has 2 elements");
  EXPECT_FAIL(host.Run(node, 17, {host.Random({1, 4, 3}, 2)}), EPCTX_INVALID_ARGUMENT,
              "last dimension must be 1 (real) or 2 (complex)");
  EXPECT_FAIL(host.Run(node, 17, {host.Random({4}, 2)}), EPCTX_INVALID_ARGUMENT,
              "input must have rank >= 2");
  EXPECT_FAIL(host.Run(node, 17, {host.I32({1, 4, 1}, {1, 2, 3, 4})}), EPCTX_NOT_IMPLEMENTED,
              "input has dtype int32");
  EXPECT_FAIL(host.Run(node, 17, {host.F({1, 0, 1}, {})}), EPCTX_INVALID_ARGUMENT,
              "the signal along axis 1 is empty");
}

void stft_frames_a_complex_signal_and_refuses_bad_frames(void**) {
  kt::Host host;
  // Frames [1, 2i] and [2i, 3]: the two-point transforms are a +/- b.
  TensorRef* x = host.F({1, 3, 2}, {1, 0, 0, 2, 3, 0});
  kt::Node node("STFT", "stft");
  node.Int("onesided", 0);
  EXPECT_OK(host.Run(node, 17, {x, host.I64({}, {1}), nullptr, host.I64({}, {2})}));
  EXPECT_SHAPE(host.out(0), 1, 2, 2, 2);
  EXPECT_FLOATS(host.out(0), 1, 2, 1, -2, 3, 2, -3, 2);
  kt::Node one("STFT", "stft1");
  TensorRef* sig = host.Random({1, 16, 1}, 3);
  EXPECT_FAIL(host.Run(one, 17, {sig, host.I64({}, {0}), nullptr, host.I64({}, {4})}),
              EPCTX_INVALID_ARGUMENT, "frame_step is 0, expected a positive step");
  EXPECT_FAIL(host.Run(one, 17, {sig, host.I64({}, {2}), host.Random({4}, 1), host.I64({}, {5})}),
              EPCTX_INVALID_ARGUMENT, "frame_length is 5 but the window has 4 values");
  EXPECT_FAIL(host.Run(one, 17, {sig, host.I64({}, {2}), nullptr, host.I64({}, {17})}),
              EPCTX_INVALID_ARGUMENT, "frame length 17 must be in [1, 16]");
  EXPECT_FAIL(host.Run(one, 17, {sig, host.I64({}, {2})}), EPCTX_INVALID_ARGUMENT,
              "neither window nor frame_length is given");
}

void windows_cover_edge_sizes_and_half_precision_outputs(void**) {
  kt::Host host;
  kt::Node hann("HannWindow", "hann");
  EXPECT_OK(host.Run(hann, 17, {host.I64({}, {4})}));
  EXPECT_FLOATS(host.out(0), 0, 0.5f, 1, 0.5f);
  kt::Node sym("HannWindow", "sym");
  sym.Int("periodic", 0);
  EXPECT_OK(host.Run(sym, 17, {host.I32({}, {1})}));
  EXPECT_FLOATS(host.out(0), 1);
  EXPECT_OK(host.Run(sym, 17, {host.I32({}, {0})}));
  EXPECT_SHAPE(host.out(0), 0);
  EXPECT_FAIL(host.Run(sym, 17, {host.I32({}, {-3})}), EPCTX_INVALID_ARGUMENT,
              "size is -3, expected a length >= 0");
  kt::Node str("HannWindow", "str");
  str.Int("output_datatype", EPCTX_DTYPE_STRING);
  EXPECT_FAIL(host.Run(str, 17, {host.I32({}, {4})}), EPCTX_INVALID_GRAPH,
              "output_datatype is 8, expected a numeric ONNX element type");
  const double a0 = static_cast<double>(25.0f / 46.0f);
  const double want[4] = {a0 - (1.0 - a0), a0, 1.0, a0};
  kt::Node f16("HammingWindow", "f16");
  f16.Int("output_datatype", EPCTX_DTYPE_FLOAT16);
  EXPECT_OK(host.Run(f16, 17, {host.I64({}, {4})}));
  kt::Node bf16("HammingWindow", "bf16");
  bf16.Int("output_datatype", EPCTX_DTYPE_BFLOAT16);
  kt::Host host2;
  EXPECT_OK(host2.Run(bf16, 17, {host2.I64({}, {4})}));
  for (int i = 0; i < 4; ++i) {
    const float v = static_cast<float>(want[i]);
    assert_int_equal(static_cast<uint16_t*>(host.out(0)->data)[i], epctx::kern::FloatToHalf(v));
    assert_int_equal(static_cast<uint16_t*>(host2.out(0)->data)[i], epctx::kern::FloatToBF16(v));
  }
  kt::Node ints("BlackmanWindow", "i64");
  ints.Int("output_datatype", EPCTX_DTYPE_INT64).Int("periodic", 0);
  EXPECT_OK(host.Run(ints, 17, {host.I64({}, {3})}));
  const int64_t* iv = static_cast<int64_t*>(host.out(0)->data);
  assert_true(iv[0] == 0 && iv[2] == 0 && iv[1] <= 1);  // 0.42+0.5+0.08 in float coefficients
}

void mel_weight_matrix_builds_triangles_and_refuses_edges_out_of_range(void**) {
  kt::Host host;
  kt::Node node("MelWeightMatrix", "mel");
  auto run = [&](int64_t bins, int64_t dft, int64_t rate, float lo, float hi) {
    return host.Run(node, 17,
                    {host.I64({}, {bins}), host.I64({}, {dft}), host.I64({}, {rate}),
                     host.F({}, {lo}), host.F({}, {hi})});
  };
  EXPECT_OK(run(2, 8, 8, 0.0f, 4.0f));
  EXPECT_SHAPE(host.out(0), 5, 2);
  // Every column is a triangle peaking at 1.
  for (int col = 0; col < 2; ++col) {
    float peak = 0.0f;
    for (int row = 0; row < 5; ++row)
      peak = fmaxf(peak, static_cast<float*>(host.out(0)->data)[row * 2 + col]);
    assert_true(peak == 1.0f);
  }
  EXPECT_FAIL(run(8, 16, 8192, 0.0f, 5000.0f), EPCTX_INVALID_ARGUMENT,
              "edges [0.000000, 5000.000000] Hz must satisfy 0 <= lower <= upper");
  EXPECT_FAIL(run(8, 16, 8192, 300.0f, 100.0f), EPCTX_INVALID_ARGUMENT,
              "edges [300.000000, 100.000000]");
  EXPECT_FAIL(run(0, 16, 8192, 0.0f, 100.0f), EPCTX_INVALID_ARGUMENT,
              "num_mel_bins 0, dft_length 16 and sample_rate 8192 must be in [1, 2^40]");
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(rnn_bidirectional_batch_major_walks_each_sequence_length),
      cmocka_unit_test(rnn_zero_length_sequence_has_zero_state_not_initial_h),
      cmocka_unit_test(rnn_clip_bounds_the_gate_input),
      cmocka_unit_test(activation_alpha_beta_are_consumed_in_function_order),
      cmocka_unit_test(lstm_peepholes_and_input_forget_in_double),
      cmocka_unit_test(gru_linear_before_reset_resets_after_the_recurrence),
      cmocka_unit_test(recurrent_nodes_refuse_bad_attributes_and_shapes),
      cmocka_unit_test(recurrent_and_signal_kernels_are_registered_from_their_first_opset),
      cmocka_unit_test(dft_of_length_three_uses_the_chirp_transform),
      cmocka_unit_test(dft_inverse_undoes_the_forward_transform),
      cmocka_unit_test(dft_prime_length_matches_the_direct_sum),
      cmocka_unit_test(dft_length_pads_or_truncates_and_rank_two_is_real),
      cmocka_unit_test(dft_refuses_bad_axes_lengths_and_shapes),
      cmocka_unit_test(stft_frames_a_complex_signal_and_refuses_bad_frames),
      cmocka_unit_test(windows_cover_edge_sizes_and_half_precision_outputs),
      cmocka_unit_test(mel_weight_matrix_builds_triangles_and_refuses_edges_out_of_range),
  };
  return cmocka_run_group_tests_name("recurrent", tests, nullptr, nullptr);
}
