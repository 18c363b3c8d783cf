/* SPDX-License-Identifier: Apache-2.0 */
// cmocka includes and assertion helpers shared by the kernel test files.
#ifndef EPCTX_TESTS_KERNELS_TEST_UTIL_H
#define EPCTX_TESTS_KERNELS_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <vector>

#include "harness.h"

using kt::TensorRef;

#define EXPECT_OK(expr)                                                            \
  do {                                                                             \
    epctx::Status st_ = (expr);                                                    \
    if (!st_.ok()) fail_msg("%s: %s", epctx_code_name(st_.code()), st_.message()); \
  } while (0)

// Asserts the code and that the message contains `needle`.
#define EXPECT_FAIL(expr, code_, needle)                                                       \
  do {                                                                                         \
    epctx::Status st_ = (expr);                                                                \
    if (st_.code() != (code_))                                                                 \
      fail_msg("expected %s, got %s: %s", epctx_code_name(code_), epctx_code_name(st_.code()), \
               st_.message());                                                                 \
    if (!kt::Contains(st_.message(), needle))                                                  \
      fail_msg("message '%s' lacks '%s'", st_.message(), needle);                              \
  } while (0)

#define EXPECT_SHAPE(t, ...)                                            \
  do {                                                                  \
    kt::Dims want_ = {__VA_ARGS__};                                     \
    kt::Dims got_ = kt::ShapeVec(t);                                    \
    if (want_ != got_) fail_msg("shape mismatch at line %d", __LINE__); \
  } while (0)

#define EXPECT_FLOATS(t, ...)                                                                      \
  do {                                                                                             \
    std::vector<float> want_ = {__VA_ARGS__};                                                      \
    std::vector<float> got_ = kt::ToVec(t);                                                        \
    assert_int_equal(want_.size(), got_.size());                                                   \
    for (size_t i_ = 0; i_ < want_.size(); ++i_)                                                   \
      if (!(got_[i_] - want_[i_] < 1e-5f && want_[i_] - got_[i_] < 1e-5f))                         \
        fail_msg("element %zu: want %g got %g (line %d)", i_, (double)want_[i_], (double)got_[i_], \
                 __LINE__);                                                                        \
  } while (0)

struct TestGroup {
  const char* name;
  const CMUnitTest* tests;
  size_t count;
};
TestGroup ConvTests();
TestGroup ElementwiseTests();
TestGroup PoolResizeTests();
TestGroup DataTests();

#endif
