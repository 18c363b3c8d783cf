// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the whole load path through the C API: the input is
// a model file, loaded from the buffer with the built-in drivers (vnpu), so
// the ONNX reader, EPContext extraction, the embedded container, the vnpu
// validator, session planning and, when it loads, one run on zero-filled
// inputs of the declared shapes (symbolic dims as 1) are all reached.
// Nothing may crash or leak; every failure needs a message.
//
// A small model may legitimately ask for a great deal of work: a mutated pad
// or dilation turns a 581 KB model's first Conv into a 7.2 GB output (CI,
// 11-25), or, within a memory budget, into minutes of multiply-adds (CI,
// 11-25 again: a libFuzzer timeout; ocr_cls with its first Conv's pads
// set to 1000/2000 ran 5 min 44 s here under ASan). Those are the model's demands, not runtime
// bugs, so sessions run as an application bounding its costs would: one
// thread, epctx.max_memory_bytes=8M (every seed model runs within it; a
// larger request is OUT_OF_MEMORY naming the limit) and a run deadline of
// 1 s (RUN_DEADLINE_EXCEEDED between steps; with the budget no single step
// of those models takes long). The runtime's unlimited defaults are by
// design (tests/memory/test_max_memory.c, tests/runtime run options).
#include <cstdlib>
#include <cstring>
#include <vector>

#include <epctx/epctx.h>

namespace {

epctx_env* g_env = nullptr;
epctx_run_options* g_run_options = nullptr;
constexpr uint64_t kMaxInputBytes = 1u << 20;

void Check(epctx_status* st) {
  if (st && epctx_status_message(st)[0] == '\0') abort();
  epctx_status_release(st);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (epctx_env_create(nullptr, 0, &g_env) || epctx_env_register_builtin_drivers(g_env)) abort();
  if (epctx_run_options_create(&g_run_options) ||
      epctx_run_options_set_timeout_us(g_run_options, 1000000))
    abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The session borrows the buffer: give it its own block so ASan bounds it.
  std::vector<uint8_t> model(data, data + size);
  epctx_session_options* opt = nullptr;
  if (epctx_session_options_create(&opt)) abort();
  if (epctx_session_options_set(opt, "session.intra_op_num_threads", "1")) abort();
  if (epctx_session_options_set(opt, "epctx.max_memory_bytes", "8M")) abort();
  epctx_session* s = nullptr;
  epctx_status* st = epctx_session_create_from_buffer(g_env, model.data(), model.size(), opt, &s);
  epctx_session_options_release(opt);
  if (st) {
    Check(st);
    return 0;
  }
  size_t ni = epctx_session_input_count(s);
  std::vector<epctx_tensor*> inputs;
  std::vector<const char*> names;
  bool runnable = ni <= EPCTX_MAX_RUN_TENSORS;
  for (size_t i = 0; runnable && i < ni; ++i) {
    epctx_io_info info;
    Check(epctx_session_input_info(s, i, &info));
    int64_t dims[EPCTX_MAX_RANK];
    uint64_t n = epctx_dtype_size(info.dtype);
    runnable = n != 0 && info.rank <= EPCTX_MAX_RANK;
    for (size_t d = 0; runnable && d < info.rank; ++d) {
      dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
      runnable = !__builtin_mul_overflow(n, uint64_t(dims[d]), &n) && n <= kMaxInputBytes;
    }
    epctx_tensor* t = nullptr;
    if (runnable) {
      epctx_status* ts = epctx_tensor_create(g_env, info.dtype, dims, info.rank, &t);
      if (ts) {
        Check(ts);
        runnable = false;
      } else {
        memset(epctx_tensor_data(t), 0, epctx_tensor_bytes(t));
        inputs.push_back(t);
        names.push_back(info.name);
      }
    }
  }
  size_t no = epctx_session_output_count(s);
  if (runnable && no <= EPCTX_MAX_RUN_TENSORS) {
    std::vector<epctx_tensor*> outputs(no, nullptr);
    epctx_run_args args{};
    args.input_names = names.data();
    args.inputs = inputs.data();
    args.input_count = inputs.size();
    args.outputs = outputs.data();
    args.output_count = no;
    args.run_options = g_run_options;
    Check(epctx_session_run_with(s, &args));
    for (epctx_tensor* t : outputs) epctx_tensor_release(t);
  }
  for (epctx_tensor* t : inputs) epctx_tensor_release(t);
  epctx_session_release(s);
  return 0;
}
