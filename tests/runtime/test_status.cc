// SPDX-License-Identifier: Apache-2.0
// Status: two words on the stack, its message in a reference-counted slot
// of a fixed pool; reporting an error still cannot fail when the pool is
// empty (the message then names the code).
#if EPCTX_TEST_THREADS
#include <pthread.h>
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include "core/status.h"

using epctx::Status;

namespace {

Status Fails(int code, const char* what) {
  EPCTX_RETURN_IF_ERROR(Status::Error(code, "node '%s': expected 3 inputs, found %d", what, 2));
  return Status::Ok();
}

void ok_status_is_two_words_and_has_no_slot(void**) {
  // The code, the cause and a pointer to the message (16 bytes on 64-bit
  // targets, 12 on 32-bit ones).
  static_assert(sizeof(Status) <= 2 * sizeof(int) + sizeof(void*), "Status must stay small");
  size_t before = Status::PoolSlotsInUse();
  Status s = Status::Ok();
  assert_true(s.ok());
  assert_int_equal(s.code(), EPCTX_OK);
  assert_string_equal(s.message(), "");
  assert_int_equal(Status::PoolSlotsInUse(), before);
}

void error_keeps_code_message_and_cause_through_return_and_with_code(void**) {
  Status s = Fails(EPCTX_INCOMPATIBLE_SDK, "conv1");
  assert_false(s.ok());
  assert_string_equal(s.message(), "node 'conv1': expected 3 inputs, found 2");
  s.WithCode(EPCTX_INVALID_GRAPH);
  assert_int_equal(s.code(), EPCTX_INVALID_GRAPH);
  assert_int_equal(s.cause(), EPCTX_INCOMPATIBLE_SDK);
  assert_int_equal(Status::PoolSlotsInUse(), 1);
}

void copies_share_one_slot_and_prefix_leaves_other_copies_alone(void**) {
  assert_int_equal(Status::PoolSlotsInUse(), 0);
  {
    Status a = Status::Error(EPCTX_INVALID_ARGUMENT, "input 'x': rank %d", 5);
    Status b = a;
    Status c;
    c = b;
    assert_int_equal(Status::PoolSlotsInUse(), 1);
    assert_ptr_equal(a.message(), c.message());
    b.Prefix("model '%s'", "m.onnx");
    assert_string_equal(b.message(), "model 'm.onnx': input 'x': rank 5");
    assert_string_equal(a.message(), "input 'x': rank 5");
    assert_int_equal(Status::PoolSlotsInUse(), 2);
    Status d = static_cast<Status&&>(b);  // a move takes the slot along
    assert_string_equal(d.message(), "model 'm.onnx': input 'x': rank 5");
    assert_int_equal(Status::PoolSlotsInUse(), 2);
    a = Status::Ok();
    c = Status::Ok();
    assert_int_equal(Status::PoolSlotsInUse(), 1);
  }
  assert_int_equal(Status::PoolSlotsInUse(), 0);
}

void long_messages_are_cut_and_lose_no_slot(void**) {
  char big[1000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  Status s = Status::Error(EPCTX_FAIL, "%s", big);
  assert_int_equal(strlen(s.message()), Status::kMaxMessage - 1);
  assert_false(s.HasRoom());
  s.Prefix("%s", big);  // a prefix as long as the message still leaves a NUL
  assert_int_equal(strlen(s.message()), Status::kMaxMessage - 1);
}

void an_empty_pool_still_reports_the_code(void**) {
  static Status held[256];
  const size_t n = Status::PoolSlots();
  assert_true(n > 0 && n < 256);
  for (size_t i = 0; i < n; ++i) held[i] = Status::Error(EPCTX_FAIL, "held %zu", i);
  assert_int_equal(Status::PoolSlotsInUse(), n);
  Status s = Status::Error(EPCTX_INVALID_GRAPH, "lost detail");
  assert_int_equal(s.code(), EPCTX_INVALID_GRAPH);
  assert_non_null(strstr(s.message(), "INVALID_GRAPH"));
  s.Prefix("outer");  // no slot: the prefix is dropped, nothing breaks
  assert_non_null(strstr(s.message(), "INVALID_GRAPH"));
  Status copy = s;
  assert_int_equal(copy.code(), EPCTX_INVALID_GRAPH);
  assert_true(s.HasRoom());
  held[0] = Status::Ok();
  Status t = Status::Error(EPCTX_NOT_FOUND, "back to %s", "detail");
  assert_string_equal(t.message(), "back to detail");
  for (size_t i = 0; i < n; ++i) held[i] = Status::Ok();
  t = Status::Ok();
  assert_int_equal(Status::PoolSlotsInUse(), 0);
}

#if EPCTX_TEST_THREADS
void* churn(void* arg) {
  const int id = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  for (int i = 0; i < 20000; ++i) {
    Status a = Status::Error(EPCTX_EP_FAIL, "thread %d step %d", id, i);
    Status b = a;
    b.Prefix("t%d", id);
    char want[64];
    epctx::format(want, sizeof want, "thread %d step %d", id, i);
    if (strcmp(a.message(), want) != 0 && !strstr(a.message(), "EP_FAIL")) return arg;
  }
  return nullptr;
}

void threads_take_and_return_slots_without_losing_any(void**) {
  pthread_t t[4];
  for (intptr_t i = 0; i < 4; ++i)
    assert_int_equal(pthread_create(&t[i], nullptr, churn, reinterpret_cast<void*>(i + 1)), 0);
  for (int i = 0; i < 4; ++i) {
    void* r = reinterpret_cast<void*>(1);
    pthread_join(t[i], &r);
    assert_null(r);
  }
  assert_int_equal(Status::PoolSlotsInUse(), 0);
}
#endif

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(ok_status_is_two_words_and_has_no_slot),
    cmocka_unit_test(error_keeps_code_message_and_cause_through_return_and_with_code),
    cmocka_unit_test(copies_share_one_slot_and_prefix_leaves_other_copies_alone),
    cmocka_unit_test(long_messages_are_cut_and_lose_no_slot),
    cmocka_unit_test(an_empty_pool_still_reports_the_code),
#if EPCTX_TEST_THREADS
    cmocka_unit_test(threads_take_and_return_slots_without_losing_any),
#endif
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
