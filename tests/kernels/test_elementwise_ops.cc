// SPDX-License-Identifier: Apache-2.0
// The elementwise family beyond what the ONNX node suite checks: float16 /
// bfloat16 rounding, integer wrap-around and edge cases, NaN handling,
// rank 0 and empty tensors, broadcasting of three operands, and the codes
// and messages for bad attributes, dtypes and shapes.
#include <cmath>
#include <cstring>
#include <limits>

#include "test_util.h"

namespace {

using kt::Dims;

template <typename T>
TensorRef* Typed(kt::Host& host, int32_t dtype, const Dims& dims, const std::vector<T>& v) {
  TensorRef* t = host.Make(dtype, dims, nullptr);
  if (v.size() != t->elements() || sizeof(T) != epctx::dtype_size(dtype)) abort();
  if (t->bytes) memcpy(t->data, v.data(), t->bytes);
  return t;
}

template <typename T>
std::vector<T> Values(const TensorRef* t) {
  const T* p = static_cast<const T*>(t->data);
  return std::vector<T>(p, p + t->elements());
}

float Bits2F(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

void float16_arithmetic_rounds_each_result_to_nearest_even(void**) {
  kt::Host host;
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go
  // to the even mantissa, so 0x3c00 stays and 0x3c01 + 2^-11 goes to 0x3c02.
  TensorRef* a = Typed<uint16_t>(host, EPCTX_DTYPE_FLOAT16, {3}, {0x3c00, 0x3c01, 0x7bff});
  TensorRef* b = Typed<uint16_t>(host, EPCTX_DTYPE_FLOAT16, {3}, {0x1000, 0x1000, 0x7bff});
  kt::Node add("Add", "add_h");
  EXPECT_OK(host.Run(add, 14, {a, b}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_FLOAT16);
  std::vector<uint16_t> r = Values<uint16_t>(host.out(0));
  assert_int_equal(r[0], 0x3c00);
  assert_int_equal(r[1], 0x3c02);
  assert_int_equal(r[2], 0x7c00);  // 65504 + 65504 overflows to +inf
  kt::Node mx("Max", "max_h");
  EXPECT_OK(host.Run(mx, 13, {a, b}));
  r = Values<uint16_t>(host.out(0));
  assert_int_equal(r[0], 0x3c00);
  assert_int_equal(r[2], 0x7bff);
}

void bfloat16_computes_in_float_and_rounds_to_nearest_even(void**) {
  kt::Host host;
  // bfloat16 1.0 is 0x3f80; one ulp is 2^-7.
  TensorRef* x = host.F({4}, {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, Bits2F(0x7fc00001u), -0.0f});
  kt::Node to_bf("Cast", "to_bf");
  to_bf.Int("to", EPCTX_DTYPE_BFLOAT16);
  EXPECT_OK(host.Run(to_bf, 13, {x}));
  std::vector<uint16_t> r = Values<uint16_t>(host.out(0));
  assert_int_equal(r[0], 0x3f80);
  assert_int_equal(r[1], 0x3f82);
  assert_int_equal(r[2] & 0x7fc0, 0x7fc0);  // NaN stays a quiet NaN
  assert_int_equal(r[3], 0x8000);
  TensorRef* bf = Typed<uint16_t>(host, EPCTX_DTYPE_BFLOAT16, {2}, {0x3f81, 0x4000});
  kt::Node mul("Mul", "mul_bf");
  EXPECT_OK(host.Run(mul, 14, {bf, bf}));
  r = Values<uint16_t>(host.out(0));
  // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 rounds to 1 + 2^-6 (0x3f82); 2 * 2 = 4.
  assert_int_equal(r[0], 0x3f82);
  assert_int_equal(r[1], 0x4080);
  kt::Node sig("Sigmoid", "sig_bf");
  EXPECT_OK(host.Run(sig, 13, {Typed<uint16_t>(host, EPCTX_DTYPE_BFLOAT16, {1}, {0x0000})}));
  assert_int_equal(Values<uint16_t>(host.out(0))[0], 0x3f00);  // 0.5
  kt::Node back("Cast", "bf_to_f");
  back.Int("to", EPCTX_DTYPE_FLOAT);
  EXPECT_OK(host.Run(back, 13, {bf}));
  EXPECT_FLOATS(host.out(0), 1.0f + 0x1p-7f, 2.0f);
}

void integer_arithmetic_wraps_on_every_width(void**) {
  kt::Host host;
  kt::Node mul("Mul", "mul_u16");
  // 65535 * 65535 promotes to int in C++ and would overflow; it must wrap.
  EXPECT_OK(host.Run(mul, 14,
                     {Typed<uint16_t>(host, EPCTX_DTYPE_UINT16, {2}, {65535, 300}),
                      Typed<uint16_t>(host, EPCTX_DTYPE_UINT16, {2}, {65535, 300})}));
  assert_int_equal(Values<uint16_t>(host.out(0))[0], 1);
  assert_int_equal(Values<uint16_t>(host.out(0))[1], 90000 % 65536);
  kt::Node add("Add", "add_i8");
  EXPECT_OK(host.Run(add, 14,
                     {Typed<int8_t>(host, EPCTX_DTYPE_INT8, {2}, {127, -128}),
                      Typed<int8_t>(host, EPCTX_DTYPE_INT8, {2}, {1, -1})}));
  assert_int_equal(Values<int8_t>(host.out(0))[0], -128);
  assert_int_equal(Values<int8_t>(host.out(0))[1], 127);
  kt::Node sub("Sub", "sub_u32");
  EXPECT_OK(host.Run(sub, 14,
                     {Typed<uint32_t>(host, EPCTX_DTYPE_UINT32, {1}, {0}),
                      Typed<uint32_t>(host, EPCTX_DTYPE_UINT32, {1}, {1})}));
  assert_int_equal(Values<uint32_t>(host.out(0))[0], 0xffffffffu);
  kt::Node div("Div", "div_u8");
  // An unsigned divisor of 255 is not -1.
  EXPECT_OK(host.Run(div, 14,
                     {Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {2}, {255, 7}),
                      Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {2}, {255, 2})}));
  assert_int_equal(Values<uint8_t>(host.out(0))[0], 1);
  assert_int_equal(Values<uint8_t>(host.out(0))[1], 3);
  kt::Node div64("Div", "div_i64");
  EXPECT_OK(host.Run(div64, 14, {host.I64({1}, {INT64_MIN}), host.I64({1}, {-1})}));
  assert_true(Values<int64_t>(host.out(0))[0] == INT64_MIN);
  kt::Node neg("Neg", "neg_i32");
  EXPECT_OK(host.Run(neg, 13, {host.I32({2}, {INT32_MIN, 5})}));
  assert_int_equal(Values<int32_t>(host.out(0))[0], INT32_MIN);
  assert_int_equal(Values<int32_t>(host.out(0))[1], -5);
  kt::Node abs("Abs", "abs_i16");
  EXPECT_OK(host.Run(abs, 13, {Typed<int16_t>(host, EPCTX_DTYPE_INT16, {2}, {-32768, -3})}));
  assert_int_equal(Values<int16_t>(host.out(0))[0], -32768);
  assert_int_equal(Values<int16_t>(host.out(0))[1], 3);
  kt::Node sum("Sum", "sum_i64");
  EXPECT_OK(host.Run(sum, 13, {host.I64({1}, {INT64_MAX}), host.I64({1}, {1}), host.I64({}, {1})}));
  assert_true(Values<int64_t>(host.out(0))[0] == INT64_MIN + 1);
  kt::Node zero("Div", "div_zero_u8");
  EXPECT_FAIL(host.Run(zero, 14,
                       {Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {2}, {1, 2}),
                        Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {2}, {1, 0})}),
              EPCTX_INVALID_ARGUMENT, "integer division by zero (divisor B [2], element 1)");
}

void mod_takes_the_divisor_sign_unless_fmod(void**) {
  kt::Host host;
  TensorRef* a = host.I32({5}, {-7, 7, -7, INT32_MIN, 0});
  TensorRef* b = host.I32({5}, {3, -3, -3, -1, 5});
  kt::Node mod("Mod", "mod");
  EXPECT_OK(host.Run(mod, 13, {a, b}));
  std::vector<int32_t> r = Values<int32_t>(host.out(0));
  assert_int_equal(r[0], 2);
  assert_int_equal(r[1], -2);
  assert_int_equal(r[2], -1);
  assert_int_equal(r[3], 0);
  assert_int_equal(r[4], 0);
  kt::Node fm("Mod", "fmod");
  fm.Int("fmod", 1);
  EXPECT_OK(host.Run(fm, 13, {a, b}));
  r = Values<int32_t>(host.out(0));
  assert_int_equal(r[0], -1);
  assert_int_equal(r[1], 1);
  EXPECT_OK(host.Run(fm, 13, {host.F({2}, {-7.5f, 7.5f}), host.F({}, {2})}));
  EXPECT_FLOATS(host.out(0), -1.5f, 1.5f);
  kt::Node ffloat("Mod", "mod_f");
  EXPECT_FAIL(host.Run(ffloat, 13, {host.F({1}, {1}), host.F({1}, {1})}), EPCTX_INVALID_GRAPH,
              "Mod node 'mod_f': attribute fmod must be 1 for float inputs, found 0");
  kt::Node bad("Mod", "mod_bad");
  bad.Int("fmod", 2);
  EXPECT_FAIL(host.Run(bad, 13, {a, b}), EPCTX_INVALID_GRAPH, "fmod must be 0 or 1, found 2");
  kt::Node zero("Mod", "mod_zero");
  EXPECT_FAIL(host.Run(zero, 13, {a, host.I32({}, {0})}), EPCTX_INVALID_ARGUMENT,
              "integer division by zero");
}

void bitshift_past_the_width_gives_zero(void**) {
  kt::Host host;
  TensorRef* x = Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {4}, {1, 1, 255, 255});
  TensorRef* s = Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {4}, {7, 8, 9, 1});
  kt::Node left("BitShift", "shl");
  left.Str("direction", "LEFT");
  EXPECT_OK(host.Run(left, 11, {x, s}));
  std::vector<uint8_t> r = Values<uint8_t>(host.out(0));
  assert_int_equal(r[0], 128);
  assert_int_equal(r[1], 0);
  assert_int_equal(r[2], 0);
  assert_int_equal(r[3], 254);
  kt::Node right("BitShift", "shr");
  right.Str("direction", "RIGHT");
  EXPECT_OK(host.Run(right, 11, {x, s}));
  r = Values<uint8_t>(host.out(0));
  assert_int_equal(r[2], 0);
  assert_int_equal(r[3], 127);
  EXPECT_OK(host.Run(left, 11,
                     {Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {2}, {1, 1}),
                      Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {2}, {63, 64})}));
  assert_true(Values<uint64_t>(host.out(0))[0] == (1ull << 63));
  assert_true(Values<uint64_t>(host.out(0))[1] == 0);
  EXPECT_OK(host.Run(left, 11,
                     {Typed<uint16_t>(host, EPCTX_DTYPE_UINT16, {1}, {0xffff}),
                      Typed<uint16_t>(host, EPCTX_DTYPE_UINT16, {}, {4})}));
  assert_int_equal(Values<uint16_t>(host.out(0))[0], 0xfff0);
  kt::Node up("BitShift", "up");
  up.Str("direction", "UP");
  EXPECT_FAIL(
      host.Run(up, 11, {x, s}), EPCTX_INVALID_GRAPH,
      "BitShift node 'up': attribute direction must be \"LEFT\" or \"RIGHT\", found \"UP\"");
  kt::Node none("BitShift", "none");
  EXPECT_FAIL(host.Run(none, 11, {x, s}), EPCTX_INVALID_GRAPH, "found \"\"");
  EXPECT_FAIL(host.Run(left, 11, {host.I32({1}, {1}), host.I32({1}, {1})}), EPCTX_NOT_IMPLEMENTED,
              "A has dtype int32");
}

void comparisons_broadcast_and_treat_nan_as_unordered(void**) {
  kt::Host host;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorRef* a = host.F({2, 1}, {1, nan});
  TensorRef* b = host.F({3}, {0, 1, 2});
  struct C {
    const char* op;
    std::vector<uint8_t> want;
  };
  const C cases[] = {
      {"Less", {0, 0, 1, 0, 0, 0}},    {"LessOrEqual", {0, 1, 1, 0, 0, 0}},
      {"Greater", {1, 0, 0, 0, 0, 0}}, {"GreaterOrEqual", {1, 1, 0, 0, 0, 0}},
      {"Equal", {0, 1, 0, 0, 0, 0}},
  };
  for (const C& c : cases) {
    kt::Node node(c.op, "cmp");
    EXPECT_OK(host.Run(node, 16, {a, b}));
    assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_BOOL);
    EXPECT_SHAPE(host.out(0), 2, 3);
    if (Values<uint8_t>(host.out(0)) != c.want) fail_msg("%s gave wrong values", c.op);
  }
  // Bool bytes other than 0/1 (possible in a file) count as true.
  kt::Node eq("Equal", "eq_bool");
  EXPECT_OK(host.Run(eq, 13,
                     {Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {3}, {2, 0, 1}),
                      Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {3}, {1, 0, 0})}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({1, 1, 0}));
  kt::Node lt("Less", "lt_u64");
  EXPECT_OK(host.Run(lt, 13,
                     {Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {1}, {~0ull}),
                      Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {1}, {1})}));
  assert_int_equal(Values<uint8_t>(host.out(0))[0], 0);
  kt::Node mixed("Less", "lt_mixed");
  EXPECT_FAIL(host.Run(mixed, 13, {a, host.I32({1}, {1})}), EPCTX_INVALID_ARGUMENT,
              "A is float but B is int32; expected one type");
  kt::Node lb("Less", "lt_bool");
  TensorRef* t = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {1}, {1});
  EXPECT_FAIL(host.Run(lb, 13, {t, t}), EPCTX_NOT_IMPLEMENTED, "A has dtype bool");
}

void logic_ops_take_bools_only(void**) {
  kt::Host host;
  TensorRef* a = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {2, 2}, {0, 0, 1, 1});
  TensorRef* b = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {2}, {0, 1});
  kt::Node and_("And", "and");
  EXPECT_OK(host.Run(and_, 7, {a, b}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({0, 0, 0, 1}));
  kt::Node or_("Or", "or");
  EXPECT_OK(host.Run(or_, 7, {a, b}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({0, 1, 1, 1}));
  kt::Node xor_("Xor", "xor");
  EXPECT_OK(host.Run(xor_, 7, {a, b}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({0, 1, 1, 0}));
  kt::Node not_("Not", "not");
  EXPECT_OK(host.Run(not_, 1, {Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {}, {7})}));
  EXPECT_SHAPE(host.out(0));
  assert_int_equal(Values<uint8_t>(host.out(0))[0], 0);
  EXPECT_FAIL(host.Run(and_, 7, {host.F({1}, {1}), host.F({1}, {1})}), EPCTX_NOT_IMPLEMENTED,
              "And node 'and': A has dtype float");
}

void where_broadcasts_three_operands(void**) {
  kt::Host host;
  TensorRef* c = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {2, 1}, {1, 0});
  TensorRef* x = host.F({3}, {1, 2, 3});
  TensorRef* y = host.F({}, {-1});
  kt::Node where("Where", "where");
  EXPECT_OK(host.Run(where, 16, {c, x, y}));
  EXPECT_SHAPE(host.out(0), 2, 3);
  EXPECT_FLOATS(host.out(0), 1, 2, 3, -1, -1, -1);
  // Y varying on the outer axis, condition on the inner one.
  TensorRef* c2 = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {2}, {0, 1});
  EXPECT_OK(host.Run(where, 16, {c2, host.I64({}, {9}), host.I64({2, 3, 1}, {1, 2, 3, 4, 5, 6})}));
  EXPECT_SHAPE(host.out(0), 2, 3, 2);
  assert_true(Values<int64_t>(host.out(0)) ==
              std::vector<int64_t>({1, 9, 2, 9, 3, 9, 4, 9, 5, 9, 6, 9}));
  // All rank 0.
  EXPECT_OK(host.Run(
      where, 16,
      {Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {}, {0}), host.F({}, {1}), host.F({}, {2})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 2);
  // Empty.
  EXPECT_OK(host.Run(where, 16, {Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {0, 1}, {}), x, y}));
  EXPECT_SHAPE(host.out(0), 0, 3);
  EXPECT_FAIL(host.Run(where, 16, {host.F({1}, {1}), x, y}), EPCTX_INVALID_ARGUMENT,
              "Where node 'where': condition is float, expected bool");
  EXPECT_FAIL(host.Run(where, 16, {c, x, host.I32({}, {1})}), EPCTX_INVALID_ARGUMENT,
              "X is float but Y is int32");
  EXPECT_FAIL(host.Run(where, 16, {c, x, host.F({2}, {1, 2})}), EPCTX_INVALID_ARGUMENT,
              "do not broadcast");
}

void rank0_and_empty_tensors_flow_through(void**) {
  kt::Host host;
  kt::Node sin("Sin", "sin");
  EXPECT_OK(host.Run(sin, 7, {host.F({}, {0.5f})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), std::sin(0.5f));
  kt::Node add("Add", "add");
  EXPECT_OK(host.Run(add, 14, {host.F({}, {1}), host.F({}, {2})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 3);
  EXPECT_OK(host.Run(add, 14, {host.F({0, 3}, {}), host.F({3}, {1, 2, 3})}));
  EXPECT_SHAPE(host.out(0), 0, 3);
  kt::Node mean("Mean", "mean");
  EXPECT_OK(host.Run(mean, 13, {host.F({}, {4})}));
  EXPECT_SHAPE(host.out(0));
  EXPECT_FLOATS(host.out(0), 4);
  kt::Node pw("Pow", "pow");
  EXPECT_OK(host.Run(pw, 15, {host.F({0}, {}), host.I64({}, {2})}));
  EXPECT_SHAPE(host.out(0), 0);
  kt::Node cast("Cast", "cast");
  cast.Int("to", EPCTX_DTYPE_INT8);
  EXPECT_OK(host.Run(cast, 13, {host.F({}, {-3.7f})}));
  EXPECT_SHAPE(host.out(0));
  assert_int_equal(Values<int8_t>(host.out(0))[0], -3);
}

void cast_saturates_floats_and_wraps_integers(void**) {
  kt::Host host;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorRef* f = host.F({5}, {300.0f, -1.5f, nan, 1e20f, -1e20f});
  kt::Node u8("Cast", "u8");
  u8.Int("to", EPCTX_DTYPE_UINT8);
  EXPECT_OK(host.Run(u8, 13, {f}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({255, 0, 0, 255, 0}));
  kt::Node i64("Cast", "i64");
  i64.Int("to", EPCTX_DTYPE_INT64);
  EXPECT_OK(host.Run(i64, 13, {f}));
  std::vector<int64_t> r = Values<int64_t>(host.out(0));
  assert_true(r[0] == 300 && r[1] == -1 && r[2] == 0 && r[3] == INT64_MAX && r[4] == INT64_MIN);
  kt::Node u64("Cast", "u64");
  u64.Int("to", EPCTX_DTYPE_UINT64);
  EXPECT_OK(host.Run(u64, 13, {f}));
  assert_true(Values<uint64_t>(host.out(0))[3] == UINT64_MAX);
  EXPECT_OK(host.Run(u8, 13, {host.I32({3}, {300, -1, 256})}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({44, 255, 0}));
  kt::Node b("Cast", "b");
  b.Int("to", EPCTX_DTYPE_BOOL);
  EXPECT_OK(host.Run(b, 13, {f}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({1, 1, 1, 1, 1}));
  kt::Node fl("Cast", "fl");
  fl.Int("to", EPCTX_DTYPE_FLOAT);
  EXPECT_OK(host.Run(fl, 13, {Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {1}, {~0ull})}));
  EXPECT_FLOATS(host.out(0), 18446744073709551616.0f);
  // float16 -> bfloat16 goes through float: 65504 is 0x477fe0 in float,
  // which rounds to bfloat16 0x4780 (65536).
  kt::Node hb("Cast", "hb");
  hb.Int("to", EPCTX_DTYPE_BFLOAT16);
  EXPECT_OK(host.Run(hb, 13, {Typed<uint16_t>(host, EPCTX_DTYPE_FLOAT16, {2}, {0x7bff, 0x3c00})}));
  assert_true(Values<uint16_t>(host.out(0)) == std::vector<uint16_t>({0x4780, 0x3f80}));
  kt::Node like("CastLike", "like");
  EXPECT_OK(host.Run(like, 15, {host.F({2}, {1.5f, -2}), host.I32({0}, {})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_INT32);
  assert_true(Values<int32_t>(host.out(0)) == std::vector<int32_t>({1, -2}));
  kt::Node str("Cast", "str");
  str.Int("to", EPCTX_DTYPE_STRING);
  EXPECT_FAIL(host.Run(str, 13, {f}), EPCTX_NOT_IMPLEMENTED, "cast to string (8) is not supported");
  kt::Node bad("Cast", "bad");
  bad.Int("to", 99);
  EXPECT_FAIL(host.Run(bad, 13, {f}), EPCTX_INVALID_GRAPH,
              "Cast node 'bad': attribute to is 99, not a tensor element type");
  kt::Node missing("Cast", "missing");
  EXPECT_FAIL(host.Run(missing, 13, {f}), EPCTX_INVALID_GRAPH, "attribute to is missing");
}

void max_min_propagate_nan(void**) {
  kt::Host host;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorRef* a = host.F({3}, {nan, 1, 2});
  TensorRef* b = host.F({3}, {1, nan, 3});
  for (const char* op : {"Max", "Min"}) {
    kt::Node node(op, "m");
    EXPECT_OK(host.Run(node, 13, {a, b}));
    std::vector<float> r = kt::ToVec(host.out(0));
    assert_true(std::isnan(r[0]) && std::isnan(r[1]));
    assert_true(r[2] == (op[1] == 'a' ? 3.0f : 2.0f));
  }
  kt::Node mx("Max", "max_u32");
  EXPECT_OK(host.Run(mx, 13,
                     {Typed<uint32_t>(host, EPCTX_DTYPE_UINT32, {2}, {0xffffffffu, 1}),
                      Typed<uint32_t>(host, EPCTX_DTYPE_UINT32, {1}, {2})}));
  assert_true(Values<uint32_t>(host.out(0)) == std::vector<uint32_t>({0xffffffffu, 2}));
  kt::Node mixed("Min", "min_mixed");
  EXPECT_FAIL(host.Run(mixed, 13, {a, host.I32({1}, {1})}), EPCTX_INVALID_ARGUMENT,
              "input 1 is int32, expected float like input 0");
  kt::Node none("Sum", "sum_none");
  EXPECT_FAIL(host.Run(none, 13, {}), EPCTX_INVALID_GRAPH, "expected at least one input");
  kt::Node mean("Mean", "mean_i");
  EXPECT_FAIL(host.Run(mean, 13, {host.I32({1}, {1})}), EPCTX_NOT_IMPLEMENTED,
              "data_0 has dtype int32");
  EXPECT_OK(host.Run(mean, 13, {host.F({2}, {1, 2}), host.F({2, 1}, {3, 5}), host.F({}, {2})}));
  EXPECT_SHAPE(host.out(0), 2, 2);
  EXPECT_FLOATS(host.out(0), 2, 7.0f / 3, 8.0f / 3, 3);
}

void pow_mixes_base_and_exponent_types(void**) {
  kt::Host host;
  kt::Node pw("Pow", "pow");
  EXPECT_OK(host.Run(pw, 15, {host.I32({3}, {3, -2, 2}), host.I32({3}, {4, 3, 40})}));
  assert_int_equal(host.out(0)->dtype, EPCTX_DTYPE_INT32);
  std::vector<int32_t> r = Values<int32_t>(host.out(0));
  assert_int_equal(r[0], 81);
  assert_int_equal(r[1], -8);
  assert_int_equal(r[2], INT32_MAX);  // 2^40 saturates
  EXPECT_OK(host.Run(pw, 15, {host.I64({2}, {2, 9}), host.F({2}, {0.5f, 0.5f})}));
  assert_true(Values<int64_t>(host.out(0)) == std::vector<int64_t>({1, 3}));
  EXPECT_OK(host.Run(
      pw, 15, {host.F({2}, {2, 4}), Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {2}, {10, 0})}));
  EXPECT_FLOATS(host.out(0), 1024, 1);
  EXPECT_OK(host.Run(pw, 15,
                     {Typed<double>(host, EPCTX_DTYPE_DOUBLE, {1}, {2.0}),
                      Typed<double>(host, EPCTX_DTYPE_DOUBLE, {1}, {0.5})}));
  assert_true(std::fabs(Values<double>(host.out(0))[0] - std::sqrt(2.0)) < 1e-15);
  TensorRef* t = Typed<uint8_t>(host, EPCTX_DTYPE_BOOL, {1}, {1});
  EXPECT_FAIL(host.Run(pw, 15, {host.F({1}, {2}), t}), EPCTX_NOT_IMPLEMENTED,
              "exponent Y has dtype bool");
  EXPECT_FAIL(
      host.Run(pw, 15, {Typed<uint8_t>(host, EPCTX_DTYPE_UINT8, {1}, {2}), host.F({1}, {2})}),
      EPCTX_NOT_IMPLEMENTED, "X has dtype uint8");
}

void round_is_half_to_even_and_math_covers_double(void**) {
  kt::Host host;
  kt::Node round("Round", "round");
  EXPECT_OK(host.Run(round, 11, {host.F({6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.6f})}));
  EXPECT_FLOATS(host.out(0), 0, 2, 2, 0, -2, 3);
  EXPECT_OK(host.Run(round, 11, {Typed<double>(host, EPCTX_DTYPE_DOUBLE, {2}, {3.5, -3.5})}));
  assert_true(Values<double>(host.out(0)) == std::vector<double>({4.0, -4.0}));
  kt::Node exp("Exp", "exp_d");
  EXPECT_OK(host.Run(exp, 13, {Typed<double>(host, EPCTX_DTYPE_DOUBLE, {1}, {1.0})}));
  // Computed in double: float's exp would be ~1e-7 off.
  assert_true(std::fabs(Values<double>(host.out(0))[0] - 2.718281828459045) < 1e-15);
  kt::Node sign("Sign", "sign");
  EXPECT_OK(host.Run(sign, 13, {Typed<int8_t>(host, EPCTX_DTYPE_INT8, {3}, {-128, 0, 5})}));
  assert_true(Values<int8_t>(host.out(0)) == std::vector<int8_t>({-1, 0, 1}));
  EXPECT_OK(host.Run(sign, 13, {Typed<uint32_t>(host, EPCTX_DTYPE_UINT32, {2}, {0, 7})}));
  assert_true(Values<uint32_t>(host.out(0)) == std::vector<uint32_t>({0, 1}));
  kt::Node recip("Reciprocal", "recip_h");
  EXPECT_OK(
      host.Run(recip, 13, {Typed<uint16_t>(host, EPCTX_DTYPE_FLOAT16, {2}, {0x4000, 0x0000})}));
  assert_true(Values<uint16_t>(host.out(0)) == std::vector<uint16_t>({0x3800, 0x7c00}));
  kt::Node sin("Sin", "sin_i");
  EXPECT_FAIL(host.Run(sin, 7, {host.I32({1}, {1})}), EPCTX_NOT_IMPLEMENTED,
              "Sin node 'sin_i': X has dtype int32, which this kernel does not support");
}

void isinf_honours_detect_flags(void**) {
  kt::Host host;
  const float inf = std::numeric_limits<float>::infinity();
  TensorRef* x = host.F({4}, {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1});
  kt::Node both("IsInf", "both");
  EXPECT_OK(host.Run(both, 10, {x}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({1, 1, 0, 0}));
  kt::Node pos("IsInf", "pos");
  pos.Int("detect_negative", 0);
  EXPECT_OK(host.Run(pos, 10, {x}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({1, 0, 0, 0}));
  kt::Node neg("IsInf", "neg");
  neg.Int("detect_positive", 0);
  EXPECT_OK(host.Run(neg, 10, {x}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({0, 1, 0, 0}));
  kt::Node nan("IsNaN", "nan_h");
  EXPECT_OK(
      host.Run(nan, 13, {Typed<uint16_t>(host, EPCTX_DTYPE_FLOAT16, {3}, {0x7e00, 0x7c00, 0})}));
  assert_true(Values<uint8_t>(host.out(0)) == std::vector<uint8_t>({1, 0, 0}));
}

void activations_compute_reference_values(void**) {
  kt::Host host;
  TensorRef* x = host.F({4}, {-2, 0, 0.5f, 100});
  struct A {
    const char* op;
    std::vector<float> want;
  };
  const float e2 = std::exp(-2.0f);
  const A cases[] = {
      {"Elu", {e2 - 1, 0, 0.5f, 100}},
      {"Selu", {1.0507010f * 1.6732632f * (e2 - 1), 0, 1.0507010f * 0.5f, 105.07010f}},
      {"Celu", {e2 - 1, 0, 0.5f, 100}},
      {"Softplus", {std::log1p(e2), std::log(2.0f), std::log1p(std::exp(0.5f)), 100}},
      {"Softsign", {-2.0f / 3, 0, 0.5f / 1.5f, 100.0f / 101}},
      {"HardSwish", {-2 * (0.5f - 2.0f / 6), 0, 0.5f * (0.5f + 0.5f / 6), 100}},
      {"ThresholdedRelu", {0, 0, 0, 100}},
  };
  for (const A& a : cases) {
    kt::Node node(a.op, "act");
    EXPECT_OK(host.Run(node, 14, {x}));
    std::vector<float> got = kt::ToVec(host.out(0));
    for (size_t i = 0; i < 4; ++i)
      if (std::fabs(got[i] - a.want[i]) > 1e-5f * std::fmax(1.0f, std::fabs(a.want[i])))
        fail_msg("%s[%zu] = %g, want %g", a.op, i, (double)got[i], (double)a.want[i]);
  }
  // com.microsoft QuickGelu: x * sigmoid(alpha * x); alpha 1 (SiLU, the
  // vector row) and ORT's default 1.702 (scalar), on a long input so the
  // row's vector body and tail both run.
  std::vector<float> xs(37);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -9.0f + 0.5f * float(i);
  TensorRef* xl = host.F({37}, xs);
  for (float alpha : {1.0f, 1.702f}) {
    kt::Node qg("QuickGelu", "qg");
    qg.Domain("com.microsoft");
    if (alpha != 1.702f) qg.Float("alpha", alpha);
    EXPECT_OK(host.Run(qg, 1, {xl}));
    std::vector<float> got = kt::ToVec(host.out(0));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double v = xs[i], want = v / (1.0 + std::exp(-double(alpha) * v));
      if (std::fabs(got[i] - want) > 1e-6 * std::fmax(1.0, std::fabs(want)))
        fail_msg("QuickGelu alpha %g at %g = %g, want %g", double(alpha), v, double(got[i]), want);
    }
  }
  kt::Node celu0("Celu", "celu0");
  celu0.Float("alpha", 0.0f);
  EXPECT_FAIL(host.Run(celu0, 12, {x}), EPCTX_INVALID_GRAPH, "alpha must be nonzero");
  kt::Node prelu("PRelu", "prelu");
  EXPECT_OK(host.Run(prelu, 16, {host.F({2, 2}, {-1, 1, -2, 2}), host.F({2}, {0.5f, 3})}));
  EXPECT_FLOATS(host.out(0), -0.5f, 1, -1, 2);
  EXPECT_FAIL(host.Run(prelu, 16, {host.F({2}, {1, 2}), host.F({3}, {1, 2, 3})}),
              EPCTX_INVALID_ARGUMENT, "do not broadcast");
  kt::Node shrink("Shrink", "shrink_i8");
  shrink.Float("lambd", 1.5f).Float("bias", 1.0f);
  EXPECT_OK(host.Run(shrink, 9, {Typed<int8_t>(host, EPCTX_DTYPE_INT8, {4}, {-3, 1, 5, -128})}));
  assert_true(Values<int8_t>(host.out(0)) == std::vector<int8_t>({-2, 0, 4, -127}));
  kt::Node relu("Relu", "relu_i8");
  EXPECT_OK(host.Run(relu, 14, {Typed<int8_t>(host, EPCTX_DTYPE_INT8, {2}, {-5, 5})}));
  assert_true(Values<int8_t>(host.out(0)) == std::vector<int8_t>({0, 5}));
}

void clip_on_integers_checks_bounds(void**) {
  kt::Host host;
  TensorRef* x = Typed<int8_t>(host, EPCTX_DTYPE_INT8, {4}, {-128, -1, 1, 127});
  kt::Node clip("Clip", "clip");
  EXPECT_OK(host.Run(clip, 13,
                     {x, Typed<int8_t>(host, EPCTX_DTYPE_INT8, {}, {-5}),
                      Typed<int8_t>(host, EPCTX_DTYPE_INT8, {1}, {5})}));
  assert_true(Values<int8_t>(host.out(0)) == std::vector<int8_t>({-5, -1, 1, 5}));
  EXPECT_OK(host.Run(clip, 13, {x, nullptr, Typed<int8_t>(host, EPCTX_DTYPE_INT8, {}, {0})}));
  assert_true(Values<int8_t>(host.out(0)) == std::vector<int8_t>({-128, -1, 0, 0}));
  EXPECT_OK(host.Run(clip, 13, {Typed<uint64_t>(host, EPCTX_DTYPE_UINT64, {2}, {~0ull, 3})}));
  assert_true(Values<uint64_t>(host.out(0)) == std::vector<uint64_t>({~0ull, 3}));
  EXPECT_FAIL(host.Run(clip, 13, {x, host.F({}, {0})}), EPCTX_INVALID_ARGUMENT,
              "Clip node 'clip': min is float, expected int8 like X");
  EXPECT_FAIL(host.Run(clip, 13, {x, Typed<int8_t>(host, EPCTX_DTYPE_INT8, {2}, {0, 1})}),
              EPCTX_INVALID_ARGUMENT, "min must be a scalar, found shape [2]");
  kt::Node old("Clip", "clip6");
  EXPECT_FAIL(host.Run(old, 6, {x}), EPCTX_NOT_IMPLEMENTED, "X has dtype int8");
}

const CMUnitTest kTests[] = {
    cmocka_unit_test(float16_arithmetic_rounds_each_result_to_nearest_even),
    cmocka_unit_test(bfloat16_computes_in_float_and_rounds_to_nearest_even),
    cmocka_unit_test(integer_arithmetic_wraps_on_every_width),
    cmocka_unit_test(mod_takes_the_divisor_sign_unless_fmod),
    cmocka_unit_test(bitshift_past_the_width_gives_zero),
    cmocka_unit_test(comparisons_broadcast_and_treat_nan_as_unordered),
    cmocka_unit_test(logic_ops_take_bools_only),
    cmocka_unit_test(where_broadcasts_three_operands),
    cmocka_unit_test(rank0_and_empty_tensors_flow_through),
    cmocka_unit_test(cast_saturates_floats_and_wraps_integers),
    cmocka_unit_test(max_min_propagate_nan),
    cmocka_unit_test(pow_mixes_base_and_exponent_types),
    cmocka_unit_test(round_is_half_to_even_and_math_covers_double),
    cmocka_unit_test(isinf_honours_detect_flags),
    cmocka_unit_test(activations_compute_reference_values),
    cmocka_unit_test(clip_on_integers_checks_bounds),
};

}  // namespace

int main() { return cmocka_run_group_tests_name("elementwise_ops", kTests, nullptr, nullptr); }
