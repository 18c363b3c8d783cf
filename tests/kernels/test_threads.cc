// SPDX-License-Identifier: Apache-2.0
// The intra-op pool and the kernels that split their work over it: every
// chunk runs exactly once, a busy pool runs a call on its caller, and each
// parallel kernel gives the same bits at 1, 2, 3 and 4 threads (sizes above
// the split thresholds, odd edges so blocks end mid-tile).
#include <atomic>
#include <cstring>

#include "core/thread_pool.h"
#include "test_util.h"

namespace {

using epctx::ThreadPool;

ThreadPool* MakePool(uint32_t threads) {
  ThreadPool* p = ThreadPool::Create(epctx::Allocator::Default(), threads);
  assert_non_null(p);
  assert_int_equal(p->threads(), threads);
  return p;
}

void pool_of_one_thread_is_no_pool(void**) {
  assert_null(ThreadPool::Create(epctx::Allocator::Default(), 1));
  assert_null(ThreadPool::Create(epctx::Allocator::Default(), 0));
}

struct Counts {
  std::atomic<uint32_t> hits[2000];
  std::atomic<uint32_t> bad_worker{0};
  uint32_t threads;
};

void parallel_for_runs_every_chunk_once(void**) {
  ThreadPool* p = MakePool(4);
  for (uint32_t chunks : {1u, 2u, 3u, 4u, 7u, 1000u, 2000u}) {  // 2000: serial
    for (int round = 0; round < 20; ++round) {
      Counts c;
      c.threads = p->threads();
      for (auto& h : c.hits) h.store(0);
      p->ParallelFor(
          chunks,
          [](void* u, uint32_t chunk, uint32_t worker) {
            Counts* c = static_cast<Counts*>(u);
            c->hits[chunk].fetch_add(1);
            if (worker >= c->threads) c->bad_worker.fetch_add(1);
          },
          &c);
      for (uint32_t i = 0; i < chunks; ++i) assert_int_equal(c.hits[i].load(), 1);
      for (uint32_t i = chunks; i < 2000; ++i) assert_int_equal(c.hits[i].load(), 0);
      assert_int_equal(c.bad_worker.load(), 0);
    }
  }
  ThreadPool::Destroy(p);
}

struct Nested {
  ThreadPool* pool;
  std::atomic<uint32_t> inner_hits{0};
  std::atomic<uint32_t> inner_nonzero_worker{0};
};

// A call from inside a chunk finds the pool busy and runs on its caller
// (worker 0), instead of waiting for threads that are waiting for it.
void nested_call_runs_on_its_caller(void**) {
  Nested n;
  n.pool = MakePool(3);
  n.pool->ParallelFor(
      3,
      [](void* u, uint32_t, uint32_t) {
        Nested* n = static_cast<Nested*>(u);
        n->pool->ParallelFor(
            5,
            [](void* u2, uint32_t, uint32_t worker) {
              Nested* n2 = static_cast<Nested*>(u2);
              n2->inner_hits.fetch_add(1);
              if (worker != 0) n2->inner_nonzero_worker.fetch_add(1);
            },
            n);
      },
      &n);
  assert_int_equal(n.inner_hits.load(), 15);
  assert_int_equal(n.inner_nonzero_worker.load(), 0);
  ThreadPool::Destroy(n.pool);
}

void chunk_range_cuts_whole_units_evenly(void**) {
  int64_t lo, hi, next = 0;
  for (uint32_t c = 0; c < 3; ++c) {
    epctx::ChunkRange(100, 3, c, 24, &lo, &hi);
    assert_int_equal(lo, next);
    assert_true(lo % 24 == 0);
    next = hi;
  }
  assert_int_equal(next, 100);
}

// Runs `node` on fresh copies of the same inputs with no pool and with
// pools of 2..4 threads; every output must match the first bit for bit.
template <typename MakeInputs>
void SameBitsAtAnyThreadCount(kt::Node& node, int64_t opset, MakeInputs make) {
  std::vector<std::vector<uint8_t>> first;
  for (uint32_t threads = 1; threads <= 4; ++threads) {
    ThreadPool* pool = threads > 1 ? MakePool(threads) : nullptr;
    kt::Host host;
    host.SetPool(pool);
    EXPECT_OK(host.Run(node, opset, make(host)));
    for (uint32_t o = 0; o < node.view().num_outputs; ++o) {
      const TensorRef* t = host.out(o);
      assert_non_null(t);
      const uint8_t* d = static_cast<const uint8_t*>(t->data);
      if (threads == 1) {
        first.emplace_back(d, d + t->bytes);
      } else {
        assert_int_equal(t->bytes, first[o].size());
        if (memcmp(d, first[o].data(), t->bytes) != 0)
          fail_msg("output %u differs at %u threads", o, threads);
      }
    }
    // The work was large enough to be cut: the pool really ran it.
    if (pool && pool->parallel_calls() == 0)
      fail_msg("%u threads: nothing ran in parallel", threads);
    ThreadPool::Destroy(pool);
  }
}

void conv_same_bits_at_any_thread_count(void**) {
  kt::Node conv("Conv");
  conv.Ints("pads", {1, 1, 1, 1});
  SameBitsAtAnyThreadCount(conv, 11, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({1, 16, 37, 41}, 1), h.Random({40, 16, 3, 3}, 2),
                                   h.Random({40}, 3)};
  });
  kt::Node pointwise("Conv");
  SameBitsAtAnyThreadCount(pointwise, 11, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({2, 64, 29, 31}, 4), h.Random({70, 64, 1, 1}, 5)};
  });
  kt::Node depthwise("Conv");
  depthwise.Int("group", 48).Ints("pads", {1, 1, 1, 1}).Ints("strides", {2, 2});
  SameBitsAtAnyThreadCount(depthwise, 11, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({1, 48, 95, 97}, 6), h.Random({48, 1, 3, 3}, 7),
                                   h.Random({48}, 8)};
  });
  kt::Node transpose("ConvTranspose");
  transpose.Ints("strides", {2, 2});
  SameBitsAtAnyThreadCount(transpose, 11, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({1, 32, 33, 35}, 9), h.Random({32, 24, 3, 3}, 10)};
  });
}

void gemm_and_matmul_same_bits_at_any_thread_count(void**) {
  kt::Node wide("MatMul");  // more columns than rows: cut by columns
  SameBitsAtAnyThreadCount(wide, 13, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({37, 300}, 11), h.Random({300, 517}, 12)};
  });
  kt::Node tall("MatMul");  // more rows: cut by rows
  SameBitsAtAnyThreadCount(tall, 13, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({3, 301, 250}, 13), h.Random({250, 45}, 14)};
  });
  kt::Node gemm("Gemm");
  gemm.Int("transB", 1).Float("alpha", 0.5f).Float("beta", 2.0f);
  SameBitsAtAnyThreadCount(gemm, 13, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({129, 200}, 15), h.Random({333, 200}, 16),
                                   h.Random({333}, 17)};
  });
}

void pooling_and_elementwise_same_bits_at_any_thread_count(void**) {
  kt::Node maxpool("MaxPool");
  maxpool.Ints("kernel_shape", {3, 3}).Ints("strides", {2, 2}).Outputs({"y", "i"});
  SameBitsAtAnyThreadCount(maxpool, 12, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({2, 33, 61, 59}, 18)};
  });
  kt::Node avg("AveragePool");
  avg.Ints("kernel_shape", {3, 3}).Ints("pads", {1, 1, 1, 1});
  SameBitsAtAnyThreadCount(avg, 11, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({1, 40, 57, 63}, 19)};
  });
  kt::Node gap("GlobalAveragePool");
  SameBitsAtAnyThreadCount(gap, 1, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({3, 77, 31, 29}, 20)};
  });
  kt::Node add("Add");  // per-channel broadcast: rows restart mid-chunk
  SameBitsAtAnyThreadCount(add, 14, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({2, 37, 55, 57}, 21), h.Random({37, 1, 57}, 22)};
  });
  kt::Node mean("Mean");  // three inputs folded in order, then divided
  SameBitsAtAnyThreadCount(mean, 13, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({5, 40000}, 24), h.Random({1, 40000}, 25),
                                   h.Random({5, 1}, 26)};
  });
  kt::Node sigmoid("Sigmoid");
  SameBitsAtAnyThreadCount(sigmoid, 13, [](kt::Host& h) {
    return std::vector<TensorRef*>{h.Random({3, 100003}, 23)};
  });
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pool_of_one_thread_is_no_pool),
      cmocka_unit_test(parallel_for_runs_every_chunk_once),
      cmocka_unit_test(nested_call_runs_on_its_caller),
      cmocka_unit_test(chunk_range_cuts_whole_units_evenly),
      cmocka_unit_test(conv_same_bits_at_any_thread_count),
      cmocka_unit_test(gemm_and_matmul_same_bits_at_any_thread_count),
      cmocka_unit_test(pooling_and_elementwise_same_bits_at_any_thread_count),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
