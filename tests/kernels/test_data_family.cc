// SPDX-License-Identifier: Apache-2.0
// Data-family kernels (issue 10): what the ONNX node suite does not pin —
// hostile attributes and shapes, overflow, rank 0, float16/bfloat16
// rounding, integer wrap-around, and the determinism of the random ops.
#include <cmath>
#include <cstring>

#include "kernels/elem.h"
#include "test_util.h"

namespace {

using epctx::kern::FloatToBF16;
using epctx::kern::FloatToHalf;
using epctx::kern::HalfToFloat;

template <typename T>
const T* As(const TensorRef* t) {
  return static_cast<const T*>(t->data);
}

TensorRef* U16(kt::Host& host, int32_t dtype, const kt::Dims& dims,
               const std::vector<uint16_t>& v) {
  return host.Make(dtype, dims, v.data());
}

void trilu_clamps_huge_k_and_needs_rank_two(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node up("Trilu", "tu");
  EXPECT_OK(host.Run(up, 14, {x, host.I64({}, {INT64_MAX})}));
  EXPECT_FLOATS(host.out(0), 0, 0, 0, 0, 0, 0);
  EXPECT_OK(host.Run(up, 14, {x, host.I64({}, {INT64_MIN})}));
  EXPECT_FLOATS(host.out(0), 1, 2, 3, 4, 5, 6);
  kt::Node low("Trilu", "tl");
  low.Int("upper", 0);
  EXPECT_OK(host.Run(low, 14, {x, host.I64({}, {-1})}));
  EXPECT_FLOATS(host.out(0), 0, 0, 0, 4, 0, 0);
  EXPECT_FAIL(host.Run(low, 14, {host.F({3}, {1, 2, 3})}), EPCTX_INVALID_ARGUMENT,
              "Trilu node 'tl': input must have rank >= 2, found shape [3]");
  EXPECT_FAIL(host.Run(low, 14, {x, host.I64({2}, {1, 2})}), EPCTX_INVALID_ARGUMENT,
              "k must be a scalar");
}

void range_counts_integers_exactly_across_the_whole_int64_span(void**) {
  kt::Host host;
  kt::Node r("Range", "rg");
  EXPECT_OK(host.Run(
      r, 11, {host.I64({}, {INT64_MIN}), host.I64({}, {INT64_MAX}), host.I64({}, {INT64_MAX})}));
  EXPECT_SHAPE(host.out(0), 3);
  assert_true(As<int64_t>(host.out(0))[0] == INT64_MIN);
  assert_true(As<int64_t>(host.out(0))[1] == -1);
  assert_true(As<int64_t>(host.out(0))[2] == INT64_MAX - 1);
  EXPECT_OK(host.Run(r, 11, {host.I32({}, {5}), host.I32({}, {-5}), host.I32({}, {3})}));
  EXPECT_SHAPE(host.out(0), 0);
  EXPECT_FAIL(host.Run(r, 11, {host.I32({}, {0}), host.I32({}, {4}), host.I32({}, {0})}),
              EPCTX_INVALID_ARGUMENT, "delta is zero");
  EXPECT_FAIL(host.Run(r, 11, {host.F({}, {0}), host.F({}, {NAN}), host.F({}, {1})}),
              EPCTX_INVALID_ARGUMENT, "no finite element count");
  EXPECT_FAIL(host.Run(r, 11, {host.F({}, {0}), host.I32({}, {4}), host.F({}, {1})}),
              EPCTX_INVALID_ARGUMENT, "limit is int32, expected float like start");
  // Float values accumulate like ORT's loop: 0.1 added ten times.
  EXPECT_OK(host.Run(r, 11, {host.F({}, {0}), host.F({}, {1}), host.F({}, {0.1f})}));
  float v = 0;
  for (int i = 0; i < 10; ++i, v += 0.1f) assert_true(As<float>(host.out(0))[i] == v);
}

void constant_of_shape_fills_the_value_dtype_and_rejects_negative_dims(void**) {
  kt::Host host;
  int32_t seven = 7;
  epctx::onnx::TensorView value;
  value.dtype = EPCTX_DTYPE_INT32;
  value.rank = 1;
  value.dims[0] = 1;
  value.data = &seven;
  value.bytes = 4;
  kt::Node c("ConstantOfShape", "cs");
  c.Tensor("value", &value);
  EXPECT_OK(host.Run(c, 9, {host.I64({2}, {2, 2})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_INT32);
  for (int i = 0; i < 4; ++i) assert_int_equal(As<int32_t>(host.out(0))[i], 7);
  kt::Node scalar("ConstantOfShape", "cs0");
  EXPECT_OK(host.Run(scalar, 9, {host.I64({0}, {})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 0);
  EXPECT_FAIL(host.Run(c, 9, {host.I64({2}, {2, -1})}), EPCTX_INVALID_ARGUMENT,
              "shape[1] is -1, expected >= 0");
  EXPECT_FAIL(host.Run(c, 9, {host.I64({2}, {INT64_MAX, 4})}), EPCTX_INVALID_ARGUMENT,
              "invalid or too large");
  value.dims[0] = 2;
  EXPECT_FAIL(host.Run(c, 9, {host.I64({1}, {2})}), EPCTX_INVALID_GRAPH, "exactly one element");
}

void onehot_leaves_out_of_range_indices_off(void**) {
  kt::Host host;
  kt::Node n("OneHot", "oh");
  EXPECT_OK(host.Run(n, 11, {host.I64({4}, {0, -1, 3, -4}), host.F({}, {3}), host.F({2}, {0, 5})}));
  EXPECT_SHAPE(host.out(0), 4, 3);
  EXPECT_FLOATS(host.out(0), 5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0);
  EXPECT_FAIL(host.Run(n, 11, {host.I64({1}, {0}), host.F({}, {0}), host.F({2}, {0, 1})}),
              EPCTX_INVALID_ARGUMENT, "depth must be >= 1");
  EXPECT_FAIL(host.Run(n, 11, {host.I64({1}, {0}), host.F({}, {2}), host.F({3}, {0, 1, 2})}),
              EPCTX_INVALID_ARGUMENT, "values must have shape [2]");
}

void gathers_check_every_index_and_batch_dims(void**) {
  kt::Host host;
  TensorRef* x = host.F({2, 2}, {1, 2, 3, 4});
  kt::Node ge("GatherElements", "ge");
  ge.Int("axis", 1);
  EXPECT_OK(host.Run(ge, 13, {x, host.I64({2, 1}, {-1, 0})}));
  EXPECT_FLOATS(host.out(0), 2, 3);
  EXPECT_FAIL(host.Run(ge, 13, {x, host.I64({2, 1}, {0, 2})}), EPCTX_INVALID_ARGUMENT,
              "indices[1] = 2 is out of range: expected [-2, 1]");
  EXPECT_FAIL(host.Run(ge, 13, {x, host.I64({3, 1}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "exceeds data [2,2] on axis 0");
  kt::Node nd("GatherND", "nd");
  nd.Int("batch_dims", 2);
  EXPECT_FAIL(host.Run(nd, 13, {x, host.I64({2, 1}, {0, 0})}), EPCTX_INVALID_GRAPH,
              "batch_dims 2 is out of range");
  kt::Node nd0("GatherND", "nd0");
  EXPECT_OK(host.Run(nd0, 13, {x, host.I64({1, 2}, {-1, -2})}));
  EXPECT_FLOATS(host.out(0), 3);
  EXPECT_FAIL(host.Run(nd0, 13, {x, host.I64({1, 3}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "the last dimension must be in [1, 2]");
}

void scatter_reductions_follow_opset_and_round_like_ort(void**) {
  kt::Host host;
  kt::Node mx("ScatterElements", "se");
  mx.Str("reduction", "max");
  TensorRef* d = host.F({3}, {1, 5, 3});
  TensorRef* i = host.I64({2}, {0, 1});
  TensorRef* u = host.F({2}, {4, 4});
  EXPECT_FAIL(host.Run(mx, 16, {d, i, u}), EPCTX_INVALID_GRAPH, "attribute reduction is 'max'");
  EXPECT_OK(host.Run(mx, 18, {d, i, u}));
  EXPECT_FLOATS(host.out(0), 4, 5, 3);
  // int32 add wraps instead of overflowing.
  kt::Node add("ScatterElements", "add");
  add.Str("reduction", "add");
  EXPECT_OK(
      host.Run(add, 16, {host.I32({1}, {INT32_MAX}), host.I64({1}, {0}), host.I32({1}, {1})}));
  assert_int_equal(As<int32_t>(host.out(0))[0], INT32_MIN);
  // float16: 2048 + 1 ties to even (2048), 2048 + 3 rounds to 2052.
  const uint16_t h2048 = FloatToHalf(2048), h1 = FloatToHalf(1), h3 = FloatToHalf(3);
  EXPECT_OK(host.Run(add, 16,
                     {U16(host, EPCTX_DTYPE_FLOAT16, {2}, {h2048, h2048}), host.I64({2}, {0, 1}),
                      U16(host, EPCTX_DTYPE_FLOAT16, {2}, {h1, h3})}));
  assert_true(HalfToFloat(As<uint16_t>(host.out(0))[0]) == 2048.0f);
  assert_true(HalfToFloat(As<uint16_t>(host.out(0))[1]) == 2052.0f);
  // bfloat16 through ScatterND mul: 1.5 * 1.00390625 ties to even.
  kt::Node mul("ScatterND", "snd");
  mul.Str("reduction", "mul");
  EXPECT_OK(
      host.Run(mul, 16,
               {U16(host, EPCTX_DTYPE_BFLOAT16, {1}, {FloatToBF16(1.5f)}), host.I64({1, 1}, {0}),
                U16(host, EPCTX_DTYPE_BFLOAT16, {1}, {FloatToBF16(1.0078125f)})}));
  assert_int_equal(As<uint16_t>(host.out(0))[0], FloatToBF16(1.5f * 1.0078125f));
  kt::Node none("ScatterND", "snd0");
  EXPECT_FAIL(host.Run(none, 16, {d, host.I64({1, 1}, {3}), host.F({1}, {0})}),
              EPCTX_INVALID_ARGUMENT, "indices[0] = 3 is out of range");
  EXPECT_FAIL(host.Run(none, 16, {d, host.I64({1, 1}, {0}), host.F({2}, {0, 0})}),
              EPCTX_INVALID_ARGUMENT, "updates [2] must be indices [1,1] without its last axis");
  kt::Node boolred("ScatterElements", "sb");
  boolred.Str("reduction", "mul");
  bool t[2] = {true, false};
  TensorRef* b = host.Make(EPCTX_DTYPE_BOOL, {2}, t);
  EXPECT_FAIL(host.Run(boolred, 16, {b, host.I64({1}, {0}), host.Make(EPCTX_DTYPE_BOOL, {1}, t)}),
              EPCTX_NOT_IMPLEMENTED, "reduction on data of dtype bool");
}

void pad_crops_with_negative_pads_and_checks_modes(void**) {
  kt::Host host;
  TensorRef* x = host.F({1, 4}, {1, 2, 3, 4});
  kt::Node crop("Pad", "pc");
  EXPECT_OK(host.Run(crop, 13, {x, host.I64({4}, {0, -1, 0, 2}), host.F({}, {9})}));
  EXPECT_SHAPE(host.out(0), 1, 5);
  EXPECT_FLOATS(host.out(0), 2, 3, 4, 9, 9);
  kt::Node refl("Pad", "pr");
  refl.Str("mode", "reflect");
  EXPECT_OK(host.Run(refl, 13, {x, host.I64({4}, {0, 3, 0, 1})}));
  EXPECT_FLOATS(host.out(0), 4, 3, 2, 1, 2, 3, 4, 3);
  EXPECT_FAIL(host.Run(refl, 13, {x, host.I64({4}, {0, 4, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "must be smaller than its size 4");
  kt::Node edge("Pad", "pe");
  edge.Str("mode", "edge");
  EXPECT_FAIL(host.Run(edge, 13, {host.F({0}, {}), host.I64({2}, {1, 0})}), EPCTX_INVALID_ARGUMENT,
              "cannot edge-pad the empty axis 0");
  kt::Node wrap("Pad", "pw");
  wrap.Str("mode", "wrap");
  EXPECT_FAIL(host.Run(wrap, 18, {x, host.I64({4}, {0, 1, 0, 1})}), EPCTX_INVALID_GRAPH,
              "attribute mode is 'wrap'");
  EXPECT_OK(host.Run(wrap, 19, {x, host.I64({2}, {1, 5}), nullptr, host.I64({1}, {-1})}));
  EXPECT_FLOATS(host.out(0), 4, 1, 2, 3, 4, 1, 2, 3, 4, 1);
  EXPECT_FAIL(host.Run(crop, 13, {x, host.I64({4}, {0, -3, 0, -2})}), EPCTX_INVALID_ARGUMENT,
              "negative or huge size");
  EXPECT_FAIL(host.Run(crop, 13, {x, host.I64({3}, {0, 0, 0})}), EPCTX_INVALID_ARGUMENT,
              "pads has 3 values, expected 4");
  // Opset 2 takes pads and a float value as attributes; a rank-0 input pads nothing.
  kt::Node old("Pad", "p2");
  old.Ints("pads", {1, 0}).Float("value", -1.0f);
  EXPECT_OK(host.Run(old, 2, {host.F({2}, {5, 6})}));
  EXPECT_FLOATS(host.out(0), -1, 5, 6);
  kt::Node scalar("Pad", "p0");
  EXPECT_OK(host.Run(scalar, 13, {host.F({}, {3}), host.I64({0}, {})}));
  EXPECT_FLOATS(host.out(0), 3);
}

void split_num_outputs_allows_a_smaller_last_part_from_opset_18(void**) {
  kt::Host host;
  TensorRef* x = host.F({5}, {1, 2, 3, 4, 5});
  kt::Node s18("Split", "s18");
  s18.Int("num_outputs", 3).Outputs({"a", "b", "c"});
  EXPECT_OK(host.Run(s18, 18, {x}));
  EXPECT_FLOATS(host.out(0), 1, 2);
  EXPECT_FLOATS(host.out(1), 3, 4);
  EXPECT_FLOATS(host.out(2), 5);
  kt::Node s13("Split", "s13");
  s13.Outputs({"a", "b", "c"});
  EXPECT_FAIL(host.Run(s13, 13, {x}), EPCTX_INVALID_ARGUMENT, "cannot be split into 3 equal");
  EXPECT_FAIL(host.Run(s13, 13, {x, host.I64({3}, {4, 2, -1})}), EPCTX_INVALID_ARGUMENT,
              "split[2] is -1");
  EXPECT_FAIL(host.Run(s13, 13, {x, host.I64({2}, {4, 1})}), EPCTX_INVALID_ARGUMENT,
              "split has 2 values but the node has 3 outputs");
  kt::Node s11("Split", "s11");
  s11.Ints("split", {0, 5}).Outputs({"a", "b"});
  EXPECT_OK(host.Run(s11, 11, {x}));
  EXPECT_SHAPE(host.out(0), 0);
  EXPECT_FLOATS(host.out(1), 1, 2, 3, 4, 5);
  kt::Node bad("Split", "s4");
  bad.Int("num_outputs", 4).Outputs({"a", "b", "c", "d"});
  EXPECT_FAIL(host.Run(bad, 18, {x}), EPCTX_INVALID_ARGUMENT, "non-empty parts");
}

void expand_tile_and_depth_space_check_shapes(void**) {
  kt::Host host;
  kt::Node ex("Expand", "ex");
  EXPECT_OK(host.Run(ex, 13, {host.F({}, {7}), host.I64({2}, {2, 1})}));
  EXPECT_SHAPE(host.out(0), 2, 1);
  EXPECT_FLOATS(host.out(0), 7, 7);
  EXPECT_FAIL(host.Run(ex, 13, {host.F({2}, {1, 2}), host.I64({1}, {3})}), EPCTX_INVALID_ARGUMENT,
              "");
  kt::Node tile("Tile", "tl");
  EXPECT_OK(host.Run(tile, 13, {host.F({}, {3}), host.I64({0}, {})}));
  EXPECT_FLOATS(host.out(0), 3);
  EXPECT_FAIL(host.Run(tile, 13, {host.F({2}, {1, 2}), host.I64({1}, {INT64_MAX})}),
              EPCTX_INVALID_ARGUMENT, "output axis 0 overflows");
  EXPECT_FAIL(host.Run(tile, 13, {host.F({2}, {1, 2}), host.I64({1}, {-1})}),
              EPCTX_INVALID_ARGUMENT, "repeats[0] is -1");
  kt::Node d2s("DepthToSpace", "d2s");
  d2s.Int("blocksize", 0);
  EXPECT_FAIL(host.Run(d2s, 13, {host.Random({1, 4, 1, 1}, 1)}), EPCTX_INVALID_GRAPH,
              "blocksize is 0");
  kt::Node d2s_big("DepthToSpace", "d2sb");
  d2s_big.Int("blocksize", INT64_MAX);
  EXPECT_FAIL(host.Run(d2s_big, 13, {host.Random({1, 4, 1, 1}, 1)}), EPCTX_INVALID_ARGUMENT,
              "multiple of blocksize^2");
  kt::Node s2d("SpaceToDepth", "s2d");
  s2d.Int("blocksize", 2);
  EXPECT_FAIL(host.Run(s2d, 13, {host.Random({1, 1, 3, 2}, 1)}), EPCTX_INVALID_ARGUMENT,
              "multiples of blocksize 2");
}

void unique_treats_nans_as_one_value_and_keeps_first_occurrence_order(void**) {
  kt::Host host;
  kt::Node u("Unique", "uq");
  u.Int("sorted", 0).Outputs({"y", "idx", "inv", "cnt"});
  EXPECT_OK(host.Run(u, 11, {host.F({6}, {3, NAN, 1, 3, NAN, -0.0f})}));
  EXPECT_SHAPE(host.out(0), 4);
  const float* y = As<float>(host.out(0));
  assert_true(y[0] == 3 && std::isnan(y[1]) && y[2] == 1 && y[3] == 0);
  const int64_t want_idx[4] = {0, 1, 2, 5}, want_inv[6] = {0, 1, 2, 0, 1, 3},
                want_cnt[4] = {2, 2, 1, 1};
  assert_memory_equal(As<int64_t>(host.out(1)), want_idx, sizeof want_idx);
  assert_memory_equal(As<int64_t>(host.out(2)), want_inv, sizeof want_inv);
  assert_memory_equal(As<int64_t>(host.out(3)), want_cnt, sizeof want_cnt);
  kt::Node s("Unique", "us");
  EXPECT_OK(host.Run(s, 11, {host.F({}, {2})}));
  EXPECT_FLOATS(host.out(0), 2);
  kt::Node ax("Unique", "ua");
  ax.Int("axis", 2);
  EXPECT_FAIL(host.Run(ax, 11, {host.F({2, 2}, {1, 2, 3, 4})}), EPCTX_INVALID_ARGUMENT,
              "axis 2 is out of range");
}

void nonzero_compress_and_reverse_sequence_edges(void**) {
  kt::Host host;
  kt::Node nz("NonZero", "nz");
  EXPECT_OK(host.Run(nz, 13, {host.F({}, {5})}));
  EXPECT_SHAPE(host.out(0), 1, 1);
  assert_int_equal(As<int64_t>(host.out(0))[0], 0);
  EXPECT_OK(host.Run(nz, 13, {host.I32({2, 2}, {0, 0, 0, 0})}));
  EXPECT_SHAPE(host.out(0), 2, 0);
  kt::Node cp("Compress", "cp");
  bool cond[5] = {false, true, true, true, true};
  EXPECT_OK(host.Run(cp, 11, {host.F({3}, {1, 2, 3}), host.Make(EPCTX_DTYPE_BOOL, {5}, cond)}));
  EXPECT_FLOATS(host.out(0), 2, 3);
  EXPECT_FAIL(host.Run(cp, 11, {host.F({3}, {1, 2, 3}), host.F({1}, {1})}), EPCTX_INVALID_ARGUMENT,
              "condition must be bool");
  kt::Node rs("ReverseSequence", "rs");
  EXPECT_FAIL(host.Run(rs, 10, {host.F({2, 2}, {1, 2, 3, 4}), host.I64({2}, {3, 1})}),
              EPCTX_INVALID_ARGUMENT, "sequence_lens[0] = 3 is out of range: expected [0, 2]");
  kt::Node rs_bad("ReverseSequence", "rsb");
  rs_bad.Int("batch_axis", 1).Int("time_axis", 1);
  EXPECT_FAIL(host.Run(rs_bad, 10, {host.F({2, 2}, {1, 2, 3, 4}), host.I64({2}, {1, 1})}),
              EPCTX_INVALID_GRAPH, "must be 0 and 1");
}

void einsum_handles_implicit_output_ellipsis_and_bad_equations(void**) {
  kt::Host host;
  TensorRef* m = host.F({2, 3}, {1, 2, 3, 4, 5, 6});
  kt::Node tr("Einsum", "implicit");
  tr.Str("equation", "ba");  // implicit output "ab": a transpose
  EXPECT_OK(host.Run(tr, 12, {m}));
  EXPECT_SHAPE(host.out(0), 3, 2);
  EXPECT_FLOATS(host.out(0), 1, 4, 2, 5, 3, 6);
  kt::Node trace("Einsum", "trace");
  trace.Str("equation", "ii");
  EXPECT_OK(host.Run(trace, 12, {host.F({2, 2}, {1, 2, 3, 4})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 5);
  kt::Node bc("Einsum", "bcast");
  bc.Str("equation", "...i,...i->...");
  EXPECT_OK(host.Run(bc, 12, {m, host.F({1, 3}, {1, 1, 1})}));
  EXPECT_SHAPE(host.out(0), 2);
  EXPECT_FLOATS(host.out(0), 6, 15);
  kt::Node sum_ell("Einsum", "sumell");
  sum_ell.Str("equation", "...i->i");
  EXPECT_OK(host.Run(sum_ell, 12, {m}));
  EXPECT_FLOATS(host.out(0), 5, 7, 9);
  kt::Node i64("Einsum", "int");
  i64.Str("equation", "i,i->");
  EXPECT_OK(host.Run(i64, 12, {host.I64({2}, {INT64_MAX, 2}), host.I64({2}, {2, 1})}));
  assert_true(As<int64_t>(host.out(0))[0] == 0);  // 2^64 - 2 + 2 wraps to 0
  kt::Node bad("Einsum", "bad");
  bad.Str("equation", "i..,i");
  EXPECT_FAIL(host.Run(bad, 12, {m, m}), EPCTX_INVALID_GRAPH, "malformed or repeated '...'");
  kt::Node chars("Einsum", "chars");
  chars.Str("equation", "i1->i");
  EXPECT_FAIL(host.Run(chars, 12, {m}), EPCTX_INVALID_GRAPH, "unexpected character '1'");
  kt::Node size("Einsum", "size");
  size.Str("equation", "ij,ij->i");
  EXPECT_FAIL(host.Run(size, 12, {m, host.F({3, 2}, {1, 2, 3, 4, 5, 6})}), EPCTX_INVALID_ARGUMENT,
              "axis 0 has size 3 but its label has size 2");
  kt::Node terms("Einsum", "terms");
  terms.Str("equation", "ij->j");
  EXPECT_FAIL(host.Run(terms, 12, {m, m}), EPCTX_INVALID_GRAPH, "has 1 terms for 2 inputs");
  kt::Node out("Einsum", "out");
  out.Str("equation", "ij->k");
  EXPECT_FAIL(host.Run(out, 12, {m}), EPCTX_INVALID_GRAPH, "output letter 'k' is not in any");
}

void det_handles_singular_permuted_and_half_matrices(void**) {
  kt::Host host;
  kt::Node d("Det", "det");
  EXPECT_OK(host.Run(d, 11,
                     {host.F({2, 3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 2,  // swap rows: -2
                                         1, 2, 3, 2, 4, 6, 0, 0, 1})}));
  EXPECT_FLOATS(host.out(0), -2, 0);
  EXPECT_OK(host.Run(d, 11, {host.F({0, 0}, {})}));
  EXPECT_FLOATS(host.out(0), 1);
  EXPECT_OK(host.Run(d, 11,
                     {U16(host, EPCTX_DTYPE_FLOAT16, {2, 2},
                          {FloatToHalf(3), FloatToHalf(1), FloatToHalf(1), FloatToHalf(1)})}));
  assert_true(HalfToFloat(As<uint16_t>(host.out(0))[0]) == 2.0f);
  EXPECT_FAIL(host.Run(d, 11, {host.F({2, 3}, {1, 2, 3, 4, 5, 6})}), EPCTX_INVALID_ARGUMENT,
              "square in the last two axes");
  EXPECT_FAIL(host.Run(d, 11, {host.I32({1, 1}, {1})}), EPCTX_NOT_IMPLEMENTED, "int32");
}

void eyelike_writes_bfloat16_ones_and_size_of_a_scalar_is_one(void**) {
  kt::Host host;
  kt::Node e("EyeLike", "eye");
  e.Int("dtype", EPCTX_DTYPE_BFLOAT16).Int("k", -1);
  EXPECT_OK(host.Run(e, 9, {host.I32({3, 2}, {0, 0, 0, 0, 0, 0})}));
  const uint16_t one = FloatToBF16(1.0f);
  const uint16_t want[6] = {0, 0, one, 0, 0, one};
  assert_memory_equal(As<uint16_t>(host.out(0)), want, sizeof want);
  kt::Node far("EyeLike", "far");
  far.Int("k", INT64_MIN);
  EXPECT_OK(host.Run(far, 9, {host.F({2, 2}, {1, 1, 1, 1})}));
  EXPECT_FLOATS(host.out(0), 0, 0, 0, 0);
  kt::Node high("EyeLike", "high");
  high.Int("k", INT64_MAX);
  EXPECT_OK(host.Run(high, 9, {host.F({2, 2}, {1, 1, 1, 1})}));
  EXPECT_FLOATS(host.out(0), 0, 0, 0, 0);
  kt::Node s("Size", "sz");
  EXPECT_OK(host.Run(s, 13, {host.F({}, {1})}));
  EXPECT_SHAPE(host.out(0));
  assert_int_equal(As<int64_t>(host.out(0))[0], 1);
}

// Random ops: shapes, dtypes, ranges and seeds, never values.
void random_ops_honour_seed_shape_dtype_and_range(void**) {
  kt::Host host;
  kt::Node u("RandomUniform", "ru");
  u.Ints("shape", {4, 8}).Float("low", -2.0f).Float("high", 3.0f).Float("seed", 5.0f);
  EXPECT_OK(host.Run(u, 1, {}));
  EXPECT_SHAPE(host.out(0), 4, 8);
  std::vector<float> first = kt::ToVec(host.out(0));
  for (float v : first) assert_true(v >= -2.0f && v < 3.0f);
  EXPECT_OK(host.Run(u, 1, {}));
  assert_true(kt::ToVec(host.out(0)) == first);
  kt::Node u2("RandomUniform", "ru2");
  u2.Ints("shape", {4, 8}).Float("low", -2.0f).Float("high", 3.0f).Float("seed", 6.0f);
  EXPECT_OK(host.Run(u2, 1, {}));
  assert_true(kt::ToVec(host.out(0)) != first);
  kt::Node unseeded("RandomUniform", "rn");
  unseeded.Ints("shape", {16});
  EXPECT_OK(host.Run(unseeded, 1, {}));
  std::vector<float> a = kt::ToVec(host.out(0));
  EXPECT_OK(host.Run(unseeded, 1, {}));
  assert_true(kt::ToVec(host.out(0)) != a);
  kt::Node badr("RandomUniform", "rb");
  badr.Ints("shape", {2}).Float("low", 1.0f).Float("high", 1.0f);
  EXPECT_FAIL(host.Run(badr, 1, {}), EPCTX_INVALID_GRAPH, "must be below high");
  kt::Node ni("RandomNormal", "rni");
  ni.Ints("shape", {2}).Int("dtype", EPCTX_DTYPE_INT32);
  EXPECT_FAIL(host.Run(ni, 1, {}), EPCTX_NOT_IMPLEMENTED, "int32");
  kt::Node nl("RandomNormalLike", "rnl");
  nl.Float("mean", 10.0f).Float("scale", 0.5f).Float("seed", 1.0f).Int("dtype", 10);
  EXPECT_OK(host.Run(nl, 1, {host.Random({1000}, 3)}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  double mean = 0;
  for (int i = 0; i < 1000; ++i) mean += HalfToFloat(As<uint16_t>(host.out(0))[i]);
  mean /= 1000;
  assert_true(mean > 9.9 && mean < 10.1);
  kt::Node be("Bernoulli", "be");
  be.Int("dtype", EPCTX_DTYPE_BOOL).Float("seed", 2.0f);
  EXPECT_OK(host.Run(be, 15, {host.F({4}, {0, 1, 0, 1})}));
  const bool want[4] = {false, true, false, true};
  assert_memory_equal(As<bool>(host.out(0)), want, sizeof want);
  kt::Node mn("Multinomial", "mn");
  mn.Int("sample_size", 5).Int("dtype", EPCTX_DTYPE_INT64).Float("seed", 3.0f);
  EXPECT_OK(host.Run(mn, 7, {host.F({2, 3}, {-100, 0, -100, -100, -100, 0})}));
  EXPECT_SHAPE(host.out(0), 2, 5);
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(As<int64_t>(host.out(0))[i], 1);
    assert_int_equal(As<int64_t>(host.out(0))[5 + i], 2);
  }
  EXPECT_FAIL(host.Run(mn, 7, {host.F({1, 2}, {NAN, 0})}), EPCTX_INVALID_ARGUMENT,
              "no finite probability mass");
}

void dropout_is_a_view_in_inference_and_seeded_in_training(void**) {
  kt::Host host;
  TensorRef* x = host.F({6}, {1, 2, 3, 4, 5, 6});
  kt::Node inf("Dropout", "dr");
  inf.Outputs({"y", "mask"});
  EXPECT_OK(host.Run(inf, 13, {x, host.F({}, {0.9f})}));
  assert_true(host.viewed(0));
  for (int i = 0; i < 6; ++i) assert_true(As<bool>(host.out(1))[i]);
  bool on = true;
  TensorRef* train = host.Make(EPCTX_DTYPE_BOOL, {}, &on);
  EXPECT_FAIL(host.Run(inf, 13, {x, host.F({}, {1.0f}), train}), EPCTX_INVALID_ARGUMENT,
              "must be in [0, 1)");
  kt::Node tr("Dropout", "drt");
  tr.Int("seed", 9).Outputs({"y", "mask"});
  EXPECT_OK(host.Run(tr, 13, {x, host.F({}, {0.5f}), train}));
  std::vector<float> y = kt::ToVec(host.out(0));
  for (int i = 0; i < 6; ++i) {
    const bool keep = As<bool>(host.out(1))[i];
    assert_true(y[i] == (keep ? 2.0f * (i + 1) : 0.0f));
  }
  EXPECT_OK(host.Run(tr, 13, {x, host.F({}, {0.5f}), train}));
  assert_true(kt::ToVec(host.out(0)) == y);
  kt::Node old("Dropout", "dr7");
  old.Outputs({"y", "mask"});
  EXPECT_OK(host.Run(old, 7, {x}));
  assert_int_equal(host.out(1)->dtype, EPCTX_DTYPE_FLOAT);
  EXPECT_FLOATS(host.out(1), 1, 1, 1, 1, 1, 1);
}

void tfidf_rejects_duplicate_grams_and_string_pools(void**) {
  kt::Host host;
  TensorRef* x = host.I32({4}, {1, 2, 1, 2});
  kt::Node dup("TfIdfVectorizer", "tf");
  dup.Str("mode", "TF")
      .Int("min_gram_length", 1)
      .Int("max_gram_length", 2)
      .Int("max_skip_count", 0)
      .Ints("ngram_counts", {0, 2})
      .Ints("ngram_indexes", {0, 1, 2, 3})
      .Ints("pool_int64s", {1, 2, 1, 2, 1, 2});
  EXPECT_FAIL(host.Run(dup, 9, {x}), EPCTX_INVALID_GRAPH, "duplicate 2-gram");
  kt::Node ok("TfIdfVectorizer", "tf_ok");
  ok.Str("mode", "TFIDF")
      .Int("min_gram_length", 1)
      .Int("max_gram_length", 2)
      .Int("max_skip_count", 0)
      .Ints("ngram_counts", {0, 2})
      .Ints("ngram_indexes", {0, 1, 2})
      .Ints("pool_int64s", {1, 2, 1, 2})
      .Floats("weights", {1, 1, 0.5f});
  EXPECT_OK(host.Run(ok, 9, {x}));
  EXPECT_FLOATS(host.out(0), 2, 2, 1);  // (1,2) occurs twice, weighted 0.5
  kt::Node strings("TfIdfVectorizer", "tf_s");
  strings.Str("mode", "TF").Ints("pool_strings", {1});
  EXPECT_FAIL(host.Run(strings, 9, {x}), EPCTX_NOT_IMPLEMENTED, "pool_strings");
  kt::Node range("TfIdfVectorizer", "tf_r");
  range.Str("mode", "TF")
      .Int("min_gram_length", 1)
      .Int("max_gram_length", 3)
      .Int("max_skip_count", 0)
      .Ints("ngram_counts", {0, 2})
      .Ints("ngram_indexes", {0})
      .Ints("pool_int64s", {1});
  EXPECT_FAIL(host.Run(range, 9, {x}), EPCTX_INVALID_GRAPH, "max_gram_length (3)");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trilu_clamps_huge_k_and_needs_rank_two),
      cmocka_unit_test(range_counts_integers_exactly_across_the_whole_int64_span),
      cmocka_unit_test(constant_of_shape_fills_the_value_dtype_and_rejects_negative_dims),
      cmocka_unit_test(onehot_leaves_out_of_range_indices_off),
      cmocka_unit_test(gathers_check_every_index_and_batch_dims),
      cmocka_unit_test(scatter_reductions_follow_opset_and_round_like_ort),
      cmocka_unit_test(pad_crops_with_negative_pads_and_checks_modes),
      cmocka_unit_test(split_num_outputs_allows_a_smaller_last_part_from_opset_18),
      cmocka_unit_test(expand_tile_and_depth_space_check_shapes),
      cmocka_unit_test(unique_treats_nans_as_one_value_and_keeps_first_occurrence_order),
      cmocka_unit_test(nonzero_compress_and_reverse_sequence_edges),
      cmocka_unit_test(einsum_handles_implicit_output_ellipsis_and_bad_equations),
      cmocka_unit_test(det_handles_singular_permuted_and_half_matrices),
      cmocka_unit_test(eyelike_writes_bfloat16_ones_and_size_of_a_scalar_is_one),
      cmocka_unit_test(random_ops_honour_seed_shape_dtype_and_range),
      cmocka_unit_test(dropout_is_a_view_in_inference_and_seeded_in_training),
      cmocka_unit_test(tfidf_rejects_duplicate_grams_and_string_pools),
  };
  return cmocka_run_group_tests_name("kernels_data", tests, nullptr, nullptr);
}
