// SPDX-License-Identifier: Apache-2.0
// libepctx_ort_ep.so: epctx as an ONNX Runtime plugin execution provider.
//
// ORT loads the library with RegisterExecutionProviderLibrary and calls
// CreateEpFactories. The factory offers one OrtEpDevice on the CPU
// hardware device (the HAL drivers work on host memory: no allocator, no
// data transfer). Per session ORT creates an Ep, which owns an epctx env
// (built-in drivers plus the driver libraries named by the EP option
// driver_library) and a context group its sessions share.
//
// Run path: GetCapability claims each com.microsoft:EPContext node whose
// `source` a driver of the env accepts, as epctx's pre-flight check answers
// it; Compile turns each claimed node into a one-node model (node_model.h)
// and creates an epctx session from it, with ep.context_file_path set to the
// ORT model's path so that embed_mode=0 files resolve and stay contained
// beneath the model's folder exactly as in epctx. A signed package (a
// manifest beside the model, or signature options set) is first verified by
// a session over the whole model file, kept alive in the same context
// group, so the node sessions bind the contexts that session verified.
// Every other node stays with ORT's CPU EP. Errors are OrtStatus values
// carrying epctx's message.
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <epctx/epctx.h>

#include "compile_path.h"
#include "node_model.h"
#include "ort_api.h"

namespace epctx {
namespace ort_ep {
namespace {

constexpr const char* kEpName = "epctx";
constexpr const char* kVendor = "epctx";
constexpr const char* kVersion = "0.1.0";

// Session-config keys the EP hands on to epctx unchanged (ORT keeps any
// key in its session options).
constexpr const char* kPassedKeys[] = {
    "epctx.load_mode",
    "epctx.signature_policy",
    "epctx.signature_path",
    "epctx.keys_path",
    "epctx.expected_model_id",
    "epctx.max_memory_bytes",
    "epctx.advise",
    "session.fail_on_suboptimal_compiled_model",
};
// EP options (ORT prefixes them with "ep.epctx."): comma-free single values.
constexpr const char* kOptDriverLibrary = "ep.epctx.driver_library";
constexpr const char* kOptTrustedKey = "ep.epctx.trusted_key";
constexpr const char* kOptRollbackStore = "ep.epctx.rollback_store";

using Config = std::vector<std::pair<std::string, std::string>>;

struct Factory : OrtEpFactory {
  const OrtApi* api = nullptr;
  const OrtEpApi* ep_api = nullptr;
  std::string registered_name;
};

struct Ep;

// One claimed EPContext node: its one-node model and the epctx session over
// it. The model bytes are the session's buffer and live as long as it.
struct Kernel : OrtNodeComputeInfo {
  Ep* ep = nullptr;
  NodeModel model;                   // input_names/output_names: the fused node's, in order
  std::vector<size_t> bound_inputs;  // the fused node's inputs the session takes
  epctx_session* session = nullptr;
  ~Kernel() { epctx_session_release(session); }
};

struct Ep : OrtEp {
  Factory* factory = nullptr;
  const OrtApi* api = nullptr;
  const OrtLogger* logger = nullptr;  // the session's, valid while the Ep lives
  epctx_env* env = nullptr;
  epctx_context_group* group = nullptr;
  Config config;
  // ORT's compile API (ep.context_enable=1): emit EPContext nodes, the
  // context embedded (embed_mode 1) or beside output_path.
  bool generate = false;
  bool embed = false;
  std::string output_path;
  // The primary (main_context=1) EPContext nodes GetCapability claimed,
  // whose contexts main_context=0 nodes bind their graphs in.
  std::vector<PrimaryContext> primaries;
  // Whole-model sessions that verified signed packages (one per model).
  std::vector<std::pair<std::string, epctx_session*>> verified;
  ~Ep() {
    for (auto& v : verified) epctx_session_release(v.second);
    epctx_context_group_release(group);
    epctx_env_release(env);
  }
  const std::string* Get(const char* key) const {
    for (const auto& kv : config)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

// Takes an epctx status (owned) and returns ORT's (NULL on success).
OrtStatus* FromEpctx(const OrtApi& api, epctx_status* st, const std::string& context = "") {
  if (!st) return nullptr;
  std::string msg = "epctx: ";
  if (!context.empty()) msg += context + ": ";
  msg += epctx_status_message(st);
  int code = epctx_status_code(st);
  epctx_status_release(st);
  return MakeStatus(api, code, msg);
}

bool FileExists(const std::string& path) {
  struct stat s {};
  return stat(path.c_str(), &s) == 0;
}

OrtStatus* ReadConfig(const OrtApi& api, const OrtSessionOptions* so, const char* key,
                      Config* out) {
  int has = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.HasSessionConfigEntry(so, key, &has));
  if (!has) return nullptr;
  size_t size = 0;
  OrtStatus* probe = api.GetSessionConfigEntry(so, key, nullptr, &size);
  if (probe) api.ReleaseStatus(probe);
  std::string value(size, '\0');
  EPCTX_ORT_RETURN_IF_ERROR(api.GetSessionConfigEntry(so, key, &value[0], &size));
  value.resize(std::strlen(value.c_str()));
  out->emplace_back(key, value);
  return nullptr;
}

OrtStatus* ModelPath(const OrtApi& api, const OrtGraph* graph, std::string* out) {
  const ORTCHAR_T* path = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetModelPath(graph, &path));
  *out = path ? path : "";
  return nullptr;
}

// Session options for a node session (or, with whole_model, for the
// session that verifies a signed package).
OrtStatus* MakeOptions(const Ep& ep, const std::string& model_path, bool whole_model, bool verified,
                       epctx_session_options** out) {
  const OrtApi& api = *ep.api;
  EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(api, epctx_session_options_create(out)));
  epctx_session_options* o = *out;
  if (!whole_model && !model_path.empty())
    EPCTX_ORT_RETURN_IF_ERROR(
        FromEpctx(api, epctx_session_options_set(o, "ep.context_file_path", model_path.c_str())));
  for (const auto& kv : ep.config) {
    // A node model is not the signed file: the package was verified whole.
    if (verified && (kv.first == "epctx.signature_policy" || kv.first == "epctx.signature_path" ||
                     kv.first == "epctx.expected_model_id"))
      continue;
    EPCTX_ORT_RETURN_IF_ERROR(
        FromEpctx(api, epctx_session_options_set(o, kv.first.c_str(), kv.second.c_str())));
  }
  if (verified)
    EPCTX_ORT_RETURN_IF_ERROR(
        FromEpctx(api, epctx_session_options_set(o, "epctx.signature_policy", "off")));
  return FromEpctx(api, epctx_session_options_set_context_group(o, ep.group));
}

struct OptionsDeleter {
  void operator()(epctx_session_options* o) const { epctx_session_options_release(o); }
};
using OptionsPtr = std::unique_ptr<epctx_session_options, OptionsDeleter>;

// Whether the package must be verified as a whole before its nodes load.
bool NeedsVerification(const Ep& ep, const std::string& model_path) {
  if (model_path.empty()) return false;
  const std::string* policy = ep.Get("epctx.signature_policy");
  if (policy && *policy == "off") return false;
  return FileExists(model_path + ".sig") || (policy && *policy == "required") ||
         ep.Get("epctx.signature_path") || ep.Get("epctx.expected_model_id");
}

OrtStatus* VerifyPackage(Ep& ep, const std::string& model_path) {
  for (const auto& v : ep.verified)
    if (v.first == model_path) return nullptr;
  epctx_session_options* raw = nullptr;
  OrtStatus* st = MakeOptions(ep, model_path, true, false, &raw);
  OptionsPtr options(raw);
  if (st) return st;
  epctx_session* session = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(
      *ep.api, epctx_session_create(ep.env, model_path.c_str(), options.get(), &session)));
  ep.verified.emplace_back(model_path, session);
  return nullptr;
}

// Whether a driver of the env takes this node (epctx's own routing, from
// the node's attributes alone: no context is loaded and nothing verified
// here, hence the options of a verified package).
OrtStatus* Routes(const Ep& ep, const NodeModel& m, const std::string& model_path, bool* out) {
  *out = false;
  epctx_session_options* raw = nullptr;
  OrtStatus* st = MakeOptions(ep, model_path, false, true, &raw);
  OptionsPtr options(raw);
  if (st) return st;
  epctx_compat_report* report = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(
      FromEpctx(*ep.api, epctx_model_check_compatibility_from_buffer(
                             ep.env, m.bytes.data(), m.bytes.size(), options.get(), &report)));
  epctx_compat_node node{};
  epctx_status* s = epctx_compat_report_node_count(report) == 1
                        ? epctx_compat_report_node(report, 0, &node)
                        : nullptr;
  *out = !s && node.driver != nullptr;
  epctx_status_release(s);
  epctx_compat_report_release(report);
  return nullptr;
}

// The fused node's inputs and outputs in ORT's order (the kernel context's
// indices), and which inputs the epctx session takes (by name).
OrtStatus* BindFusedIo(const OrtApi& api, const OrtNode* fused,
                       const std::vector<std::string>& session_inputs, Kernel* k) {
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumInputs(fused, &num));
  std::vector<const OrtValueInfo*> values(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetInputs(fused, values.data(), num));
  k->model.input_names.clear();
  k->bound_inputs.clear();
  for (size_t i = 0; i < num; ++i) {
    const char* name = "";
    if (values[i]) EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(values[i], &name));
    k->model.input_names.emplace_back(name ? name : "");
    for (const std::string& in : session_inputs)
      if (in == k->model.input_names.back()) k->bound_inputs.push_back(i);
  }
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetNumOutputs(fused, &num));
  values.assign(num, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetOutputs(fused, values.data(), num));
  k->model.output_names.clear();
  for (const OrtValueInfo* vi : values) {
    const char* name = "";
    if (vi) EPCTX_ORT_RETURN_IF_ERROR(api.GetValueInfoName(vi, &name));
    k->model.output_names.emplace_back(name ? name : "");
  }
  return nullptr;
}

// ---- OrtNodeComputeInfo ----

OrtStatus* ORT_API_CALL CreateState(OrtNodeComputeInfo* self, OrtNodeComputeContext*,
                                    void** state) {
  *state = self;
  return nullptr;
}

void ORT_API_CALL ReleaseState(OrtNodeComputeInfo*, void*) {}

struct TensorList {
  std::vector<epctx_tensor*> items;
  ~TensorList() {
    for (epctx_tensor* t : items) epctx_tensor_release(t);
  }
};

OrtStatus* ORT_API_CALL Compute(OrtNodeComputeInfo* self, void*, OrtKernelContext* kctx) {
  auto* k = static_cast<Kernel*>(self);
  const OrtApi& api = *k->ep->api;
  size_t n_in = 0;
  size_t n_out = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.KernelContext_GetInputCount(kctx, &n_in));
  EPCTX_ORT_RETURN_IF_ERROR(api.KernelContext_GetOutputCount(kctx, &n_out));
  if (n_in != k->model.input_names.size() || n_out != k->model.output_names.size())
    return api.CreateStatus(ORT_EP_FAIL, "epctx: fused node's inputs or outputs changed");
  TensorList inputs;
  std::vector<const char*> in_names;
  for (size_t i : k->bound_inputs) {
    const OrtValue* v = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.KernelContext_GetInput(kctx, i, &v));
    OrtTensorTypeAndShapeInfo* info = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorTypeAndShape(v, &info));
    ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    size_t count = 0;
    OrtStatus* st = api.GetTensorElementType(info, &elem);
    if (!st) st = api.GetDimensionsCount(info, &rank);
    std::vector<int64_t> dims(rank);
    if (!st) st = api.GetDimensions(info, dims.data(), rank);
    if (!st) st = api.GetTensorShapeElementCount(info, &count);
    api.ReleaseTensorTypeAndShapeInfo(info);
    if (st) return st;
    const void* data = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorData(v, &data));
    auto dtype = static_cast<epctx_dtype>(elem);
    epctx_tensor* t = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(
        api, epctx_tensor_wrap(k->ep->env, dtype, dims.data(), rank, const_cast<void*>(data),
                               count * epctx_dtype_size(dtype), &t)));
    inputs.items.push_back(t);
    in_names.push_back(k->model.input_names[i].c_str());
  }
  std::vector<const char*> out_names;
  for (const std::string& s : k->model.output_names) out_names.push_back(s.c_str());
  TensorList outputs;
  outputs.items.assign(n_out, nullptr);
  EPCTX_ORT_RETURN_IF_ERROR(
      FromEpctx(api,
                epctx_session_run(k->session, in_names.data(), inputs.items.data(), in_names.size(),
                                  out_names.data(), outputs.items.data(), n_out),
                "EPContext node '" + k->model.node_name + "'"));
  for (size_t i = 0; i < n_out; ++i) {
    epctx_tensor* t = outputs.items[i];
    OrtValue* v = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(
        api.KernelContext_GetOutput(kctx, i, epctx_tensor_dims(t), epctx_tensor_rank(t), &v));
    void* data = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(api.GetTensorMutableData(v, &data));
    if (epctx_tensor_bytes(t)) std::memcpy(data, epctx_tensor_data(t), epctx_tensor_bytes(t));
  }
  return nullptr;
}

// ---- OrtEp ----

const char* ORT_API_CALL EpGetName(const OrtEp*) noexcept { return kEpName; }

OrtStatus* ORT_API_CALL GetCapability(OrtEp* self, const OrtGraph* graph,
                                      OrtEpGraphSupportInfo* support) noexcept {
  auto* ep = static_cast<Ep*>(self);
  const OrtApi& api = *ep->api;
  if (ep->generate) return ClaimCompilable(api, *ep->factory->ep_api, graph, support);
  std::string model_path;
  EPCTX_ORT_RETURN_IF_ERROR(ModelPath(api, graph, &model_path));
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumNodes(graph, &num));
  std::vector<const OrtNode*> nodes(num);
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNodes(graph, nodes.data(), num));
  for (const OrtNode* node : nodes) {
    if (!IsEpContextNode(api, node)) continue;
    NodeModel m;
    EPCTX_ORT_RETURN_IF_ERROR(BuildNodeModel(api, node, &m));
    bool routes = false;
    EPCTX_ORT_RETURN_IF_ERROR(Routes(*ep, m, model_path, &routes));
    if (!routes) continue;
    if (m.main_context == 1) {
      PrimaryContext p;
      p.model_path = model_path;
      p.source = m.source;
      for (const onnx::AttributeProto& a : m.proto.graph().node(0).attribute()) {
        if (a.name() == "ep_cache_context") p.ep_cache_context = a.s();
        if (a.name() == "embed_mode") p.embed_mode = a.i();
      }
      ep->primaries.push_back(std::move(p));
    }
    OrtNodeFusionOptions fusion{};
    fusion.ort_version_supported = ORT_API_VERSION;
    fusion.drop_constant_initializers = false;
    EPCTX_ORT_RETURN_IF_ERROR(
        ep->factory->ep_api->EpGraphSupportInfo_AddNodesToFuse(support, &node, 1, &fusion));
  }
  return nullptr;
}

OrtStatus* CompileOne(Ep& ep, const OrtGraph* graph, const OrtNode* fused, Kernel* k) {
  const OrtApi& api = *ep.api;
  size_t num = 0;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNumNodes(graph, &num));
  if (num != 1) return api.CreateStatus(ORT_EP_FAIL, "epctx: a fused partition holds one node");
  const OrtNode* node = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.Graph_GetNodes(graph, &node, 1));
  EPCTX_ORT_RETURN_IF_ERROR(BuildNodeModel(api, node, &k->model));
  const std::vector<std::string> node_inputs = k->model.input_names;
  EPCTX_ORT_RETURN_IF_ERROR(BindFusedIo(api, fused, node_inputs, k));
  std::string model_path;
  EPCTX_ORT_RETURN_IF_ERROR(ModelPath(api, graph, &model_path));
  const bool verify = NeedsVerification(ep, model_path);
  if (verify) EPCTX_ORT_RETURN_IF_ERROR(VerifyPackage(ep, model_path));
  epctx_session_options* raw = nullptr;
  OrtStatus* st = MakeOptions(ep, model_path, false, verify, &raw);
  OptionsPtr options(raw);
  if (st) return st;
  const std::string label = model_path.empty() ? "<memory>" : model_path;
  if (k->model.main_context == 1)
    return FromEpctx(api,
                     epctx_session_create_from_buffer(ep.env, k->model.bytes.data(),
                                                      k->model.bytes.size(), options.get(),
                                                      &k->session),
                     label);
  // main_context=0: its graph lies in a primary's context. Try the primaries
  // of this model with its source; the first context that holds the graph
  // binds it (epctx's own rule, contexts.cc).
  std::string first_error;
  for (const PrimaryContext& p : ep.primaries) {
    if (p.model_path != model_path || (!k->model.source.empty() && p.source != k->model.source))
      continue;
    EPCTX_ORT_RETURN_IF_ERROR(AdoptPrimary(api, p, &k->model));
    epctx_status* es = epctx_session_create_from_buffer(
        ep.env, k->model.bytes.data(), k->model.bytes.size(), options.get(), &k->session);
    if (!es) return nullptr;
    if (first_error.empty()) first_error = epctx_status_message(es);
    epctx_status_release(es);
  }
  return api.CreateStatus(
      ORT_INVALID_GRAPH,
      ("epctx: " + label + ": EPContext node '" + k->model.node_name +
       "' (main_context=0): no primary EPContext node's context holds its graph" +
       (first_error.empty() ? std::string() : " (" + first_error + ")"))
          .c_str());
}

// ORT's compile API: the partition compiled by epctx's compile library,
// run from its in-memory package, and the EPContext node for ORT's output.
OrtStatus* GenerateOne(Ep& ep, const OrtGraph* graph, const OrtNode* fused, Kernel* k,
                       OrtNode** ep_context_node) {
  const OrtApi& api = *ep.api;
  const char* fused_name = nullptr;
  EPCTX_ORT_RETURN_IF_ERROR(api.Node_GetName(fused, &fused_name));
  std::string bin;
  if (!ep.embed && !ep.output_path.empty()) {
    std::string stem = ep.output_path;
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0)
      stem.resize(stem.size() - 5);
    bin = stem + "_" + (fused_name ? fused_name : "ctx") + ".bin";
  }
  CompiledPartition part;
  EPCTX_ORT_RETURN_IF_ERROR(CompilePartition(api, graph, ep_context_node != nullptr, bin,
                                             fused_name ? fused_name : "", &part, ep_context_node));
  k->model.bytes = part.ctx_model;
  k->model.node_name = part.node_name;
  EPCTX_ORT_RETURN_IF_ERROR(BindFusedIo(api, fused, part.inputs, k));
  epctx_session_options* raw = nullptr;
  OrtStatus* st = MakeOptions(ep, "", false, false, &raw);
  OptionsPtr options(raw);
  if (st) return st;
  return FromEpctx(api,
                   epctx_session_create_from_buffer(ep.env, k->model.bytes.data(),
                                                    k->model.bytes.size(), options.get(),
                                                    &k->session),
                   "partition " + part.node_name);
}

OrtStatus* ORT_API_CALL Compile(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused,
                                size_t count, OrtNodeComputeInfo** infos,
                                OrtNode** ep_context_nodes) noexcept {
  auto* ep = static_cast<Ep*>(self);
  for (size_t i = 0; i < count; ++i) {
    infos[i] = nullptr;
    if (ep_context_nodes) ep_context_nodes[i] = nullptr;
  }
  for (size_t i = 0; i < count; ++i) {
    auto k = std::make_unique<Kernel>();
    k->ort_version_supported = ORT_API_VERSION;
    k->CreateState = CreateState;
    k->Compute = Compute;
    k->ReleaseState = ReleaseState;
    k->ep = ep;
    OrtStatus* st = ep->generate ? GenerateOne(*ep, graphs[i], fused[i], k.get(),
                                               ep_context_nodes ? &ep_context_nodes[i] : nullptr)
                                 : CompileOne(*ep, graphs[i], fused[i], k.get());
    if (st) {
      for (size_t j = 0; j < i; ++j) {
        delete static_cast<Kernel*>(infos[j]);
        infos[j] = nullptr;
      }
      return st;
    }
    infos[i] = k.release();
  }
  return nullptr;
}

void ORT_API_CALL ReleaseNodeComputeInfos(OrtEp*, OrtNodeComputeInfo** infos,
                                          size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) delete static_cast<Kernel*>(infos[i]);
}

// ---- OrtEpFactory ----

const char* ORT_API_CALL FactoryGetName(const OrtEpFactory*) noexcept { return kEpName; }
const char* ORT_API_CALL FactoryGetVendor(const OrtEpFactory*) noexcept { return kVendor; }
uint32_t ORT_API_CALL FactoryGetVendorId(const OrtEpFactory*) noexcept { return 0; }
const char* ORT_API_CALL FactoryGetVersion(const OrtEpFactory*) noexcept { return kVersion; }

OrtStatus* ORT_API_CALL GetSupportedDevices(OrtEpFactory* self,
                                            const OrtHardwareDevice* const* devices,
                                            size_t num_devices, OrtEpDevice** ep_devices,
                                            size_t max_ep_devices,
                                            size_t* num_ep_devices) noexcept {
  auto* f = static_cast<Factory*>(self);
  *num_ep_devices = 0;
  for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i) {
    if (f->api->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
    OrtEpDevice* d = nullptr;
    EPCTX_ORT_RETURN_IF_ERROR(f->ep_api->CreateEpDevice(self, devices[i], nullptr, nullptr, &d));
    ep_devices[(*num_ep_devices)++] = d;
    break;  // one device: the drivers are the env's, not per hardware device
  }
  return nullptr;
}

OrtStatus* LoadFile(const OrtApi& api, const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return api.CreateStatus(ORT_NO_SUCHFILE, ("epctx: cannot read " + path).c_str());
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return nullptr;
}

// epctx's log lines go to the ORT session's logger, at ORT's severities.
void LogToOrt(void* user, int level, const char* message) {
  const auto* ep = static_cast<const Ep*>(user);
  OrtLoggingLevel severity = level <= EPCTX_LOG_ERROR     ? ORT_LOGGING_LEVEL_ERROR
                             : level == EPCTX_LOG_WARNING ? ORT_LOGGING_LEVEL_WARNING
                             : level == EPCTX_LOG_INFO    ? ORT_LOGGING_LEVEL_INFO
                                                          : ORT_LOGGING_LEVEL_VERBOSE;
  OrtStatus* st =
      ep->api->Logger_LogMessage(ep->logger, severity, message, __FILE__, __LINE__, "epctx");
  if (st) ep->api->ReleaseStatus(st);
}

OrtStatus* InitEp(Ep& ep, const OrtSessionOptions* so) {
  const OrtApi& api = *ep.api;
  for (const char* key : kPassedKeys)
    EPCTX_ORT_RETURN_IF_ERROR(ReadConfig(api, so, key, &ep.config));
  Config ep_options;
  for (const char* key : {kOptDriverLibrary, kOptTrustedKey, kOptRollbackStore})
    EPCTX_ORT_RETURN_IF_ERROR(ReadConfig(api, so, key, &ep_options));
  Config gen;
  for (const char* key : {"ep.context_enable", "ep.context_embed_mode", "ep.context_file_path"})
    EPCTX_ORT_RETURN_IF_ERROR(ReadConfig(api, so, key, &gen));
  for (const auto& kv : gen) {
    if (kv.first == "ep.context_enable") ep.generate = kv.second == "1";
    if (kv.first == "ep.context_embed_mode") ep.embed = kv.second == "1";
    if (kv.first == "ep.context_file_path") ep.output_path = kv.second;
  }
  EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(api, epctx_env_create(nullptr, EPCTX_LOG_WARNING, &ep.env)));
  if (ep.logger)
    EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(api, epctx_env_set_log_callback(ep.env, LogToOrt, &ep)));
  EPCTX_ORT_RETURN_IF_ERROR(FromEpctx(api, epctx_env_register_builtin_drivers(ep.env)));
  for (const auto& kv : ep_options) {
    if (kv.first == kOptDriverLibrary) {
      EPCTX_ORT_RETURN_IF_ERROR(
          FromEpctx(api, epctx_env_load_driver_library(ep.env, kv.second.c_str())));
    } else if (kv.first == kOptTrustedKey) {
      std::string key;
      EPCTX_ORT_RETURN_IF_ERROR(LoadFile(api, kv.second, &key));
      EPCTX_ORT_RETURN_IF_ERROR(
          FromEpctx(api, epctx_env_add_trusted_key(ep.env, key.data(), key.size()), kv.second));
    } else if (kv.first == kOptRollbackStore) {
      EPCTX_ORT_RETURN_IF_ERROR(
          FromEpctx(api, epctx_env_set_rollback_store(ep.env, kv.second.c_str())));
    }
  }
  return FromEpctx(api, epctx_context_group_create(ep.env, &ep.group));
}

OrtStatus* ORT_API_CALL CreateEp(OrtEpFactory* self, const OrtHardwareDevice* const*,
                                 const OrtKeyValuePairs* const*, size_t,
                                 const OrtSessionOptions* so, const OrtLogger* logger,
                                 OrtEp** out) noexcept {
  auto* f = static_cast<Factory*>(self);
  auto ep = std::make_unique<Ep>();
  ep->ort_version_supported = ORT_API_VERSION;
  ep->GetName = EpGetName;
  ep->GetCapability = GetCapability;
  ep->Compile = Compile;
  ep->ReleaseNodeComputeInfos = ReleaseNodeComputeInfos;
  ep->factory = f;
  ep->api = f->api;
  ep->logger = logger;
  EPCTX_ORT_RETURN_IF_ERROR(InitEp(*ep, so));
  *out = ep.release();
  return nullptr;
}

void ORT_API_CALL ReleaseEp(OrtEpFactory*, OrtEp* ep) noexcept { delete static_cast<Ep*>(ep); }

OrtStatus* ORT_API_CALL CreateDataTransfer(OrtEpFactory*, OrtDataTransferImpl** out) noexcept {
  *out = nullptr;  // host memory only
  return nullptr;
}

bool ORT_API_CALL IsStreamAware(const OrtEpFactory*) noexcept { return false; }

OrtStatus* ORT_API_CALL ValidateCompatibility(OrtEpFactory*, const OrtHardwareDevice* const*,
                                              size_t, const char*,
                                              OrtCompiledModelCompatibility* out) noexcept {
  *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
  return nullptr;
}

OrtStatus* ORT_API_CALL CreateAllocator(OrtEpFactory*, const OrtMemoryInfo*,
                                        const OrtKeyValuePairs*, OrtAllocator** out) noexcept {
  *out = nullptr;
  return nullptr;
}

void ORT_API_CALL ReleaseAllocator(OrtEpFactory*, OrtAllocator*) noexcept {}

OrtStatus* ORT_API_CALL CreateSyncStream(OrtEpFactory*, const OrtMemoryDevice*,
                                         const OrtKeyValuePairs*,
                                         OrtSyncStreamImpl** out) noexcept {
  *out = nullptr;
  return nullptr;
}

}  // namespace
}  // namespace ort_ep
}  // namespace epctx

extern "C" {

__attribute__((visibility("default"))) OrtStatus* CreateEpFactories(const char* registered_name,
                                                                    const OrtApiBase* base,
                                                                    const OrtLogger*,
                                                                    OrtEpFactory** out, size_t max,
                                                                    size_t* n) {
  using namespace epctx::ort_ep;  // NOLINT(google-build-using-namespace): one entry point
  *n = 0;
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (!api) return nullptr;  // an ORT older than the headers: offer nothing
  if (max < 1) return api->CreateStatus(ORT_INVALID_ARGUMENT, "epctx: no room for a factory");
  auto f = std::make_unique<Factory>();
  f->api = api;
  f->ep_api = api->GetEpApi();
  f->registered_name = registered_name ? registered_name : "";
  f->ort_version_supported = ORT_API_VERSION;
  f->GetName = FactoryGetName;
  f->GetVendor = FactoryGetVendor;
  f->GetVendorId = FactoryGetVendorId;
  f->GetVersion = FactoryGetVersion;
  f->GetSupportedDevices = GetSupportedDevices;
  f->CreateEp = CreateEp;
  f->ReleaseEp = ReleaseEp;
  f->ValidateCompiledModelCompatibilityInfo = ValidateCompatibility;
  f->CreateAllocator = CreateAllocator;
  f->ReleaseAllocator = ReleaseAllocator;
  f->CreateDataTransfer = CreateDataTransfer;
  f->IsStreamAware = IsStreamAware;
  f->CreateSyncStreamForDevice = CreateSyncStream;
  out[0] = f.release();
  *n = 1;
  return nullptr;
}

__attribute__((visibility("default"))) OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  delete static_cast<epctx::ort_ep::Factory*>(factory);
  return nullptr;
}

}  // extern "C"
