// SPDX-License-Identifier: Apache-2.0
// libepctx_ort_ep.so in stock ONNX Runtime (1.30, from onnxruntime-node):
// registered by absolute path, it runs epctx-compile's packages (embed_mode
// 0 and 1, a package with a CPU node between two EPContext nodes, a signed
// package) with the bits epctx's own runtime gives and the numbers ORT's CPU
// EP gives on the source model; it refuses a package whose source no driver
// accepts, a package whose versions epctx's checks refuse, and a tampered
// signed package with epctx's message; a vendor's driver library given as
// an EP option runs its own package.
//
// Arguments: libonnxruntime.so.1, libepctx_ort_ep.so, epctx-compile,
// epctx-sign, the generated models folder, a work folder, the hello_npu
// sample driver library and tests/hal's folder of its models.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <epctx/epctx.h>
#include <onnxruntime_c_api.h>

// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include <cmocka.h>
}

namespace {

const char* g_ort_lib;
const char* g_ep_lib;
const char* g_compile;
const char* g_sign;
std::string g_models;
std::string g_work;
const char* g_hello_lib;
std::string g_hello_models;

const OrtApi* g_api;
OrtEnv* g_env;

void CheckOrt(OrtStatus* st, const char* what) {
  if (!st) return;
  std::string msg = g_api->GetErrorMessage(st);
  g_api->ReleaseStatus(st);
  fail_msg("%s: %s", what, msg.c_str());
}

// Runs a shell command; fails the test when it does not exit 0.
void Sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  if (rc != 0) fail_msg("command failed (%d): %s", rc, cmd.c_str());
}

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
};

// A deterministic input for every float input of the model (via epctx's
// view of it).
std::vector<std::pair<std::string, Tensor>> MakeInputs(const std::string& model) {
  epctx_env* env = nullptr;
  assert_null(epctx_env_create(nullptr, EPCTX_LOG_ERROR, &env));
  epctx_session_options* so = nullptr;
  assert_null(epctx_session_options_create(&so));
  assert_null(epctx_session_options_set(so, "epctx.signature_policy", "off"));
  epctx_session* s = nullptr;
  assert_null(epctx_env_register_builtin_drivers(env));
  epctx_status* st = epctx_session_create(env, model.c_str(), so, &s);
  if (st) fail_msg("%s: %s", model.c_str(), epctx_status_message(st));
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < epctx_session_input_count(s); ++i) {
    epctx_io_info info{};
    assert_null(epctx_session_input_info(s, i, &info));
    assert_int_equal(info.dtype, EPCTX_DTYPE_FLOAT);
    Tensor t;
    size_t n = 1;
    for (size_t d = 0; d < info.rank; ++d) {
      t.dims.push_back(info.dims[d] < 0 ? 1 : info.dims[d]);
      n *= static_cast<size_t>(t.dims.back());
    }
    for (size_t k = 0; k < n; ++k) t.data.push_back(std::sin(0.37F * static_cast<float>(k + i)));
    out.emplace_back(info.name, t);
  }
  epctx_session_release(s);
  epctx_session_options_release(so);
  epctx_env_release(env);
  return out;
}

// epctx's own runtime on the package: the first output.
Tensor RunEpctx(const std::string& model,
                const std::vector<std::pair<std::string, Tensor>>& inputs) {
  epctx_env* env = nullptr;
  assert_null(epctx_env_create(nullptr, EPCTX_LOG_ERROR, &env));
  assert_null(epctx_env_register_builtin_drivers(env));
  epctx_session* s = nullptr;
  epctx_status* st = epctx_session_create(env, model.c_str(), nullptr, &s);
  if (st) fail_msg("%s: %s", model.c_str(), epctx_status_message(st));
  std::vector<const char*> names;
  std::vector<epctx_tensor*> ins;
  for (const auto& in : inputs) {
    epctx_tensor* t = nullptr;
    assert_null(epctx_tensor_wrap(env, EPCTX_DTYPE_FLOAT, in.second.dims.data(),
                                  in.second.dims.size(), const_cast<float*>(in.second.data.data()),
                                  in.second.data.size() * sizeof(float), &t));
    names.push_back(in.first.c_str());
    ins.push_back(t);
  }
  epctx_tensor* out = nullptr;
  st = epctx_session_run(s, names.data(), ins.data(), ins.size(), nullptr, &out, 1);
  if (st) fail_msg("epctx run %s: %s", model.c_str(), epctx_status_message(st));
  Tensor r;
  r.dims.assign(epctx_tensor_dims(out), epctx_tensor_dims(out) + epctx_tensor_rank(out));
  const auto* p = static_cast<const float*>(epctx_tensor_data(out));
  r.data.assign(p, p + epctx_tensor_bytes(out) / sizeof(float));
  epctx_tensor_release(out);
  for (epctx_tensor* t : ins) epctx_tensor_release(t);
  epctx_session_release(s);
  epctx_env_release(env);
  return r;
}

// The options of a session with the epctx EP appended (with_ep) or ORT's
// CPU EP only.
OrtSessionOptions* MakeOrtOptions(bool with_ep, const std::vector<std::string>& ep_keys = {},
                                  const std::vector<std::string>& ep_values = {}) {
  OrtSessionOptions* so = nullptr;
  CheckOrt(g_api->CreateSessionOptions(&so), "CreateSessionOptions");
  if (!with_ep) return so;
  const OrtEpDevice* const* devices = nullptr;
  size_t n = 0;
  CheckOrt(g_api->GetEpDevices(g_env, &devices, &n), "GetEpDevices");
  const OrtEpDevice* ours = nullptr;
  for (size_t i = 0; i < n; ++i)
    if (std::strcmp(g_api->EpDevice_EpName(devices[i]), "epctx") == 0) ours = devices[i];
  assert_non_null(ours);
  std::vector<const char*> k;
  std::vector<const char*> v;
  k.reserve(ep_keys.size());
  v.reserve(ep_values.size());
  for (const auto& s : ep_keys) k.push_back(s.c_str());
  for (const auto& s : ep_values) v.push_back(s.c_str());
  CheckOrt(g_api->SessionOptionsAppendExecutionProvider_V2(so, g_env, &ours, 1, k.data(), v.data(),
                                                           k.size()),
           "SessionOptionsAppendExecutionProvider_V2");
  return so;
}

// Runs `model` in ORT; returns the first output, or the error message in
// *error (then the output is empty).
Tensor RunOrt(const std::string& model, OrtSessionOptions* so,
              const std::vector<std::pair<std::string, Tensor>>& inputs,
              std::string* error = nullptr) {
  Tensor r;
  OrtSession* session = nullptr;
  OrtStatus* st = g_api->CreateSession(g_env, model.c_str(), so, &session);
  g_api->ReleaseSessionOptions(so);
  if (st && error) {
    *error = g_api->GetErrorMessage(st);
    g_api->ReleaseStatus(st);
    return r;
  }
  CheckOrt(st, model.c_str());
  OrtMemoryInfo* mem = nullptr;
  CheckOrt(g_api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "mem");
  std::vector<const char*> names;
  std::vector<OrtValue*> values;
  for (const auto& in : inputs) {
    OrtValue* v = nullptr;
    CheckOrt(g_api->CreateTensorWithDataAsOrtValue(mem, const_cast<float*>(in.second.data.data()),
                                                   in.second.data.size() * sizeof(float),
                                                   in.second.dims.data(), in.second.dims.size(),
                                                   ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v),
             "input");
    names.push_back(in.first.c_str());
    values.push_back(v);
  }
  OrtAllocator* alloc = nullptr;
  CheckOrt(g_api->GetAllocatorWithDefaultOptions(&alloc), "allocator");
  char* out_name = nullptr;
  CheckOrt(g_api->SessionGetOutputName(session, 0, alloc, &out_name), "output name");
  OrtValue* out = nullptr;
  const char* out_names[] = {out_name};
  st = g_api->Run(session, nullptr, names.data(), values.data(), values.size(), out_names, 1, &out);
  if (st && error) {
    *error = g_api->GetErrorMessage(st);
    g_api->ReleaseStatus(st);
  } else {
    CheckOrt(st, "Run");
    OrtTensorTypeAndShapeInfo* info = nullptr;
    CheckOrt(g_api->GetTensorTypeAndShape(out, &info), "shape");
    size_t rank = 0;
    size_t count = 0;
    CheckOrt(g_api->GetDimensionsCount(info, &rank), "rank");
    r.dims.resize(rank);
    CheckOrt(g_api->GetDimensions(info, r.dims.data(), rank), "dims");
    CheckOrt(g_api->GetTensorShapeElementCount(info, &count), "count");
    g_api->ReleaseTensorTypeAndShapeInfo(info);
    float* p = nullptr;
    CheckOrt(g_api->GetTensorMutableData(out, reinterpret_cast<void**>(&p)), "data");
    r.data.assign(p, p + count);
    g_api->ReleaseValue(out);
  }
  CheckOrt(g_api->AllocatorFree(alloc, out_name), "free");
  for (OrtValue* v : values) g_api->ReleaseValue(v);
  g_api->ReleaseMemoryInfo(mem);
  g_api->ReleaseSession(session);
  return r;
}

void AssertSameBits(const Tensor& a, const Tensor& b) {
  assert_true(a.dims == b.dims);
  assert_int_equal(a.data.size(), b.data.size());
  assert_memory_equal(a.data.data(), b.data.data(), a.data.size() * sizeof(float));
}

void AssertClose(const Tensor& a, const Tensor& b, float tol) {
  assert_true(a.dims == b.dims);
  assert_int_equal(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i)
    if (std::fabs(a.data[i] - b.data[i]) > tol * (1 + std::fabs(b.data[i])))
      fail_msg("element %zu: %g vs %g", i, static_cast<double>(a.data[i]),
               static_cast<double>(b.data[i]));
}

// Compiles a generated model into the work folder: <work>/<tag>/model_ctx.onnx.
std::string Compile(const std::string& model, const std::string& tag, const std::string& args) {
  std::string dir = g_work + "/" + tag;
  Sh("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::string out = dir + "/model_ctx.onnx";
  Sh(std::string("'") + g_compile + "' -q " + args + " -o '" + out + "' '" + g_models + "/" +
     model + "/model.onnx'");
  return out;
}

// The EP on the package gives epctx's bits (close to them when ORT's CPU EP
// runs a node epctx would run with its own kernel) and ORT CPU's numbers.
void CheckPackage(const std::string& model, const std::string& pkg, bool has_cpu_node = false) {
  std::string src = g_models + "/" + model + "/model.onnx";
  auto inputs = MakeInputs(src);
  Tensor ep = RunOrt(pkg, MakeOrtOptions(true), inputs);
  if (has_cpu_node) AssertClose(ep, RunEpctx(pkg, inputs), 1e-5F);
  else AssertSameBits(ep, RunEpctx(pkg, inputs));
  AssertClose(ep, RunOrt(src, MakeOrtOptions(false), inputs), 1e-4F);
}

void runs_embed_mode_0_package_with_epctx_bits(void**) {
  CheckPackage("conv_basic", Compile("conv_basic", "embed0", "--embed-mode 0"));
}

void runs_embed_mode_1_package_with_epctx_bits(void**) {
  CheckPackage("conv_basic", Compile("conv_basic", "embed1", "--embed-mode 1"));
}

// Softmax kept off the NPU: EPContext nodes around an ORT CPU node.
void runs_package_with_cpu_node_between_contexts(void**) {
  CheckPackage("attention_block", Compile("attention_block", "mixed", "-i 'disable_ops|Softmax'"),
               true);
}

void refuses_package_of_unknown_source(void**) {
  std::string pkg = Compile("conv_basic", "unknown", "--embed-mode 1");
  // Same length, so the protobuf stays valid: source "vnpu" -> "xnpu".
  Sh("sed -i 's/vnpu/xnpu/g' '" + pkg + "'");
  auto inputs = MakeInputs(g_models + "/conv_basic/model.onnx");
  std::string error;
  Tensor r = RunOrt(pkg, MakeOrtOptions(true), inputs, &error);
  assert_true(r.data.empty());
  print_message("refused: %s\n", error.c_str());
  if (error.find("xnpu") == std::string::npos)
    fail_msg("error does not name the source: %s", error.c_str());
}

void runs_signed_package_and_refuses_tampered_one(void**) {
  std::string dir = g_work + "/keys";
  Sh("rm -rf '" + dir + "' && mkdir -p '" + dir + "' && '" + g_sign + "' keygen '" + dir +
     "/k.pem' '" + dir + "/p.pem' >/dev/null");
  std::string pkg =
      Compile("conv_basic", "signed", "--sign-key '" + dir + "/k.pem' --model-id conv");
  std::vector<std::string> keys = {"trusted_key"};
  std::vector<std::string> values = {dir + "/p.pem"};
  auto inputs = MakeInputs(g_models + "/conv_basic/model.onnx");
  Tensor ok = RunOrt(pkg, MakeOrtOptions(true, keys, values), inputs);
  assert_false(ok.data.empty());
  // epctx's session config entries pass through ORT's session options.
  OrtSessionOptions* other_id = MakeOrtOptions(true, keys, values);
  CheckOrt(g_api->AddSessionConfigEntry(other_id, "epctx.expected_model_id", "other"), "config");
  std::string id_error;
  assert_true(RunOrt(pkg, other_id, inputs, &id_error).data.empty());
  print_message("refused: %s\n", id_error.c_str());
  if (id_error.find("epctx") == std::string::npos || id_error.find("other") == std::string::npos)
    fail_msg("unexpected error: %s", id_error.c_str());
  // One byte of the context binary changed: epctx's verifier refuses it.
  Sh("ls '" + g_work + "/signed' >/dev/null && f=$(ls '" + g_work +
     "'/signed/*.bin) && printf '\\377' | dd of=\"$f\" bs=1 seek=200 conv=notrunc 2>/dev/null");
  std::string error;
  Tensor bad = RunOrt(pkg, MakeOrtOptions(true, keys, values), inputs, &error);
  assert_true(bad.data.empty());
  print_message("refused: %s\n", error.c_str());
  if (error.find("epctx") == std::string::npos ||
      error.find("does not match the signed manifest") == std::string::npos)
    fail_msg("unexpected error: %s", error.c_str());
}

void reports_driver_library_that_does_not_load(void**) {
  std::string pkg = Compile("conv_basic", "badlib", "--embed-mode 1");
  auto inputs = MakeInputs(g_models + "/conv_basic/model.onnx");
  std::string error;
  Tensor r = RunOrt(pkg, MakeOrtOptions(true, {"driver_library"}, {"/nonexistent/libacme.so"}),
                    inputs, &error);
  assert_true(r.data.empty());
  print_message("refused: %s\n", error.c_str());
  if (error.find("epctx") == std::string::npos ||
      error.find("/nonexistent/libacme.so") == std::string::npos)
    fail_msg("unexpected error: %s", error.c_str());
}

// hello_npu (hal/samples) loaded through the driver_library option runs
// hello_ctx.onnx (y = 2x), which no built-in driver takes.
void runs_package_of_a_driver_library(void**) {
  std::vector<std::pair<std::string, Tensor>> inputs = {
      {"x", Tensor{{8}, {1, -2, 3, -4, 5.5F, 0, 7, 1e3F}}}};
  std::string model = g_hello_models + "/hello_ctx.onnx";
  std::string error;
  assert_true(RunOrt(model, MakeOrtOptions(true), inputs, &error).data.empty());
  if (error.find("hello_npu") == std::string::npos)
    fail_msg("without the library: unexpected error: %s", error.c_str());
  Tensor y = RunOrt(model, MakeOrtOptions(true, {"driver_library"}, {g_hello_lib}), inputs);
  assert_true(y.dims == inputs[0].second.dims);
  for (size_t i = 0; i < y.data.size(); ++i) assert_true(y.data[i] == 2 * inputs[0].second.data[i]);
}

// The node says it was compiled with SDK 99.0.0, which vnpu (SDK 1.x)
// cannot run: epctx's version checks refuse it through ORT too.
void refuses_package_whose_versions_do_not_check(void**) {
  std::string pkg = Compile("conv_basic", "sdk", "--embed-mode 1");
  Sh("/usr/bin/python3 -c \"import onnx, sys; m = onnx.load(sys.argv[1]); "
     "[a.__setattr__('s', b'99.0.0') for n in m.graph.node for a in n.attribute "
     "if a.name == 'ep_sdk_version']; onnx.save(m, sys.argv[1])\" '" +
     pkg + "'");
  auto inputs = MakeInputs(g_models + "/conv_basic/model.onnx");
  std::string error;
  assert_true(RunOrt(pkg, MakeOrtOptions(true), inputs, &error).data.empty());
  print_message("refused: %s\n", error.c_str());
  if (error.find("epctx") == std::string::npos || error.find("99.0.0") == std::string::npos)
    fail_msg("unexpected error: %s", error.c_str());
}

// ORT's compile API with the EP: writes <work>/<tag>/model_ctx.onnx.
std::string CompileWithOrt(const std::string& model, const std::string& tag, bool embed) {
  std::string dir = g_work + "/" + tag;
  Sh("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::string out = dir + "/model_ctx.onnx";
  const OrtCompileApi* c = g_api->GetCompileApi();
  OrtSessionOptions* so = MakeOrtOptions(true);
  OrtModelCompilationOptions* opts = nullptr;
  CheckOrt(c->CreateModelCompilationOptionsFromSessionOptions(g_env, so, &opts), "options");
  std::string src = g_models + "/" + model + "/model.onnx";
  CheckOrt(c->ModelCompilationOptions_SetInputModelPath(opts, src.c_str()), "input");
  CheckOrt(c->ModelCompilationOptions_SetOutputModelPath(opts, out.c_str()), "output");
  CheckOrt(c->ModelCompilationOptions_SetEpContextEmbedMode(opts, embed), "embed");
  CheckOrt(c->CompileModel(g_env, opts), "CompileModel");
  c->ReleaseModelCompilationOptions(opts);
  g_api->ReleaseSessionOptions(so);
  return out;
}

// ORT's compile API writes a package epctx's runtime runs with the numbers
// of epctx-compile's package (the same bits when the model is one
// partition), and ORT runs it back through the EP.
void CheckOrtCompiled(const std::string& model, const std::string& tag, bool embed,
                      bool one_partition = true) {
  std::string pkg = CompileWithOrt(model, tag, embed);
  std::string src = g_models + "/" + model + "/model.onnx";
  auto inputs = MakeInputs(src);
  Tensor epctx_run = RunEpctx(pkg, inputs);
  Tensor reference =
      RunEpctx(Compile(model, tag + "_epctx", embed ? "--embed-mode 1" : ""), inputs);
  Tensor round_trip = RunOrt(pkg, MakeOrtOptions(true), inputs);
  if (one_partition) {
    AssertSameBits(epctx_run, reference);
    AssertSameBits(round_trip, epctx_run);
  } else {  // ORT runs the CPU node with its own kernel
    AssertClose(epctx_run, reference, 1e-5F);
    AssertClose(round_trip, epctx_run, 1e-5F);
  }
  AssertClose(epctx_run, RunOrt(src, MakeOrtOptions(false), inputs), 1e-4F);
}

void ort_compiled_embedded_package_runs_in_epctx(void**) {
  CheckOrtCompiled("conv_basic", "ortc_embed1", true);
}

void ort_compiled_external_package_runs_in_epctx(void**) {
  CheckOrtCompiled("conv_basic", "ortc_embed0", false);
}

// split: the backend leaves one node on the CPU between two partitions.
void ort_compiled_partial_package_runs_in_epctx(void**) {
  CheckOrtCompiled("split", "ortc_split", true, false);
}

int Setup(void**) {
  void* lib = dlopen(g_ort_lib, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen %s: %s\n", g_ort_lib, dlerror());
    return -1;
  }
  using GetApiBase = const OrtApiBase* (*)();
  auto get = reinterpret_cast<GetApiBase>(dlsym(lib, "OrtGetApiBase"));
  if (!get) return -1;
  g_api = get()->GetApi(ORT_API_VERSION);
  if (!g_api) return -1;
  CheckOrt(g_api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "test_ort_ep", &g_env), "CreateEnv");
  CheckOrt(g_api->RegisterExecutionProviderLibrary(g_env, "epctx_lib", g_ep_lib),
           "RegisterExecutionProviderLibrary");
  return 0;
}

int Teardown(void**) {
  CheckOrt(g_api->UnregisterExecutionProviderLibrary(g_env, "epctx_lib"), "Unregister");
  g_api->ReleaseEnv(g_env);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: %s ORT_LIB EP_LIB EPCTX_COMPILE EPCTX_SIGN MODELS WORK HELLO_LIB "
                 "HELLO_MODELS\n",
                 argv[0]);
    return 2;
  }
  g_ort_lib = argv[1];
  g_ep_lib = argv[2];
  g_compile = argv[3];
  g_sign = argv[4];
  g_models = argv[5];
  g_work = argv[6];
  g_hello_lib = argv[7];
  g_hello_models = argv[8];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_embed_mode_0_package_with_epctx_bits),
      cmocka_unit_test(runs_embed_mode_1_package_with_epctx_bits),
      cmocka_unit_test(runs_package_with_cpu_node_between_contexts),
      cmocka_unit_test(refuses_package_of_unknown_source),
      cmocka_unit_test(runs_signed_package_and_refuses_tampered_one),
      cmocka_unit_test(reports_driver_library_that_does_not_load),
      cmocka_unit_test(runs_package_of_a_driver_library),
      cmocka_unit_test(refuses_package_whose_versions_do_not_check),
      cmocka_unit_test(ort_compiled_embedded_package_runs_in_epctx),
      cmocka_unit_test(ort_compiled_external_package_runs_in_epctx),
      cmocka_unit_test(ort_compiled_partial_package_runs_in_epctx),
  };
  return cmocka_run_group_tests(tests, Setup, Teardown);
}
