// SPDX-License-Identifier: Apache-2.0
#include "test_util.h"

int main() {
  const TestGroup groups[] = {ConvTests(), ElementwiseTests(), PoolResizeTests(), DataTests()};
  int failed = 0;
  for (const TestGroup& g : groups)
    failed += _cmocka_run_group_tests(g.name, g.tests, g.count, nullptr, nullptr);
  return failed;
}
