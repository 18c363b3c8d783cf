// SPDX-License-Identifier: Apache-2.0
// Structure-aware libFuzzer target for every CPU kernel in the registry.
//
// The input is not a model file: it is read as a recipe (FuzzedDataProvider)
// for one valid node of one registered op at an opset the row covers, with
// 0-6 inputs of any numeric dtype and shapes of rank 0-8 (zero dims, dims of
// 2^31 and more beside a zero), attributes picked from the names and string
// values the kernels read, and 1-4 outputs (some omitted). That is exactly
// what the session can hand a kernel once a model parsed, so anything a
// kernel does wrong with it is a kernel bug.
//
// Every tensor is its own exact-size heap block, so ASan sees any read or
// write past it (the session's run buffers are separate blocks too). After a
// run: a failure needs a code and a message; a success needs every output
// set and consistent, views must lie inside an input or attribute tensor,
// and the inputs must be unchanged.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace {

// A broken promise: says which, and what ran, then aborts (libFuzzer saves
// the input). EPCTX_FUZZ_VERBOSE=1 prints the node of every run.
[[noreturn]] void Broken(const char* why, const char* op) {
  fprintf(stderr, "fuzz_kernels: %s: %s\n", op, why);
  abort();
}

using epctx::Status;
using epctx::StrView;
using epctx::TensorRef;
using epctx::onnx::AttributeView;
using epctx::onnx::AttrType;

// Outputs and scratch beyond these are refused the way an exhausted arena
// refuses them, so that legal but huge shapes cost no time.
constexpr uint64_t kMaxOutputBytes = 4u << 20;
constexpr uint64_t kMaxScratchBytes = 16u << 20;
constexpr uint64_t kMaxInputBytes = 64u << 10;

// Attribute names and string values the kernels read (grep of kernels/*.cc).
// clang-format off
const char* const kWords[] = {
    "activation_alpha", "activation_beta", "activations", "align_corners", "allowzero",
    "alpha", "antialias", "auto_pad", "axes", "axis", "batch_axis", "batch_dims", "beta",
    "bias", "block_size", "blocksize", "ceil_mode", "center_point_box", "clip",
    "coordinate_transformation_mode", "count_include_pad", "cubic_coeff_a", "decay_factor",
    "detect_negative", "detect_positive", "dilations", "direction", "dtype", "end",
    "epsilon", "equation", "exclude_outside", "exclusive", "extrapolation_value", "fmod",
    "gamma", "group", "hidden_size", "ignore_index", "input_forget", "inverse", "k",
    "keep_aspect_ratio_policy", "keepdims", "kernel_shape", "lambd", "largest", "layout",
    "linear_before_reset", "max", "max_gram_length", "max_skip_count", "min",
    "min_gram_length", "mode", "momentum", "nearest_mode", "ngram_counts", "ngram_indexes",
    "noop_with_empty_axes", "norm_coefficient", "norm_coefficient_post", "num_outputs",
    "onesided", "output_datatype", "output_dtype", "output_height", "output_padding",
    "output_shape", "output_width", "p", "padding_mode", "pads", "periodic", "perm",
    "pool_int64s", "pool_strings", "ratio", "reduction", "reverse", "sample_size",
    "sampling_ratio", "scale", "scales", "seed", "select_last_index", "size", "sizes",
    "sorted", "spatial", "spatial_scale", "split", "start", "stash_type", "storage_order",
    "strides", "time_axis", "to", "training_mode", "transA", "transB", "upper", "value",
    "value_float", "value_floats", "value_int", "value_ints", "value_string",
    "value_strings", "weights", "sparse_value",
    // string values
    "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge", "wrap",
    "linear", "nearest", "cubic", "bilinear", "bicubic", "zeros", "border", "reflection",
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
    "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn", "round_prefer_floor",
    "round_prefer_ceil", "floor", "ceil", "stretch", "not_larger", "not_smaller",
    "forward", "reverse", "bidirectional", "Tanh", "Sigmoid", "Relu", "Affine", "LeakyRelu",
    "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus", "DCR",
    "CRD", "LEFT", "RIGHT", "none", "sum", "mean", "add", "mul", "max", "min", "avg",
    "TF", "IDF", "TFIDF", "ij,jk->ik", "ij,jk", "...ii->...i", "i,i", "ii", "bij,bjk->bik",
    "ab->ba", "", "a", "->", "...", "x",
};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

const int32_t kDtypes[] = {
    EPCTX_DTYPE_FLOAT, EPCTX_DTYPE_INT64, EPCTX_DTYPE_INT32, EPCTX_DTYPE_UINT8,
    EPCTX_DTYPE_INT8,  EPCTX_DTYPE_BOOL,  EPCTX_DTYPE_DOUBLE, EPCTX_DTYPE_FLOAT16,
    EPCTX_DTYPE_UINT16, EPCTX_DTYPE_INT16, EPCTX_DTYPE_UINT32, EPCTX_DTYPE_UINT64,
    EPCTX_DTYPE_BFLOAT16,
};

const int64_t kSpecialInts[] = {
    0, 1, -1, 2, 3, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, int64_t(1) << 31,
    -(int64_t(1) << 31), (int64_t(1) << 31) - 1, int64_t(1) << 32, int64_t(1) << 40,
    int64_t(1) << 62, 65536, 23170, -2, -3, 255, 127, -128};
const int64_t kSpecialDims[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 65536, int64_t(1) << 31,
                                (int64_t(1) << 31) - 1, int64_t(1) << 32, (int64_t(1) << 62),
                                // clang-format on
                                INT64_MAX, 23170};

struct Block {
  void* p = nullptr;
  uint64_t bytes = 0;
};

int64_t SmallOrSpecialInt(FuzzedDataProvider& fdp) {
  uint8_t b = fdp.ConsumeIntegral<uint8_t>();
  if (b < 200) return int64_t(b % 13) - 4;
  return kSpecialInts[b % (sizeof(kSpecialInts) / sizeof(kSpecialInts[0]))];
}

float SmallOrSpecialFloat(FuzzedDataProvider& fdp) {
  uint8_t b = fdp.ConsumeIntegral<uint8_t>();
  if (b < 180) return float(int(b % 17) - 8) * 0.5f;
  switch (b % 8) {
    case 0: return __builtin_nanf("");
    case 1: return __builtin_inff();
    case 2: return -__builtin_inff();
    case 3: return 1e30f;
    case 4: return -1e30f;
    case 5: return 3e9f;
    case 6: return 1e-40f;
    default: return float(SmallOrSpecialInt(fdp));
  }
}

// One element of dtype at p from the recipe: small integers mostly, edge
// values sometimes, raw bits for the float types now and then.
void FillElement(FuzzedDataProvider& fdp, int32_t dtype, uint8_t* p) {
  int64_t v = SmallOrSpecialInt(fdp);
  switch (dtype) {
    case EPCTX_DTYPE_FLOAT: {
      float f = SmallOrSpecialFloat(fdp);
      memcpy(p, &f, 4);
      break;
    }
    case EPCTX_DTYPE_DOUBLE: {
      double d = SmallOrSpecialFloat(fdp);
      memcpy(p, &d, 8);
      break;
    }
    case EPCTX_DTYPE_INT64:
    case EPCTX_DTYPE_UINT64: memcpy(p, &v, 8); break;
    case EPCTX_DTYPE_INT32:
    case EPCTX_DTYPE_UINT32: {
      int32_t x = int32_t(v);
      memcpy(p, &x, 4);
      break;
    }
    case EPCTX_DTYPE_INT16:
    case EPCTX_DTYPE_UINT16:
    case EPCTX_DTYPE_FLOAT16:
    case EPCTX_DTYPE_BFLOAT16: {
      uint16_t x = fdp.ConsumeIntegral<uint16_t>();
      if (dtype == EPCTX_DTYPE_INT16 || dtype == EPCTX_DTYPE_UINT16) x = uint16_t(v);
      memcpy(p, &x, 2);
      break;
    }
    case EPCTX_DTYPE_BOOL: {
      // Bytes other than 0/1 in a bool tensor (a caller's input, a file's
      // initializer) are undefined behaviour where a kernel loads them as
      // bool: known open (see README); EPCTX_FUZZ_RAW_BOOL=1 fuzzes them.
      static const bool raw = getenv("EPCTX_FUZZ_RAW_BOOL") != nullptr;
      *p = raw ? uint8_t(v) : uint8_t(v & 1);
      break;
    }
    default: *p = uint8_t(v); break;
  }
}

class Run {
 public:
  ~Run() {
    for (Block& b : blocks_) free(b.p);
    for (TensorRef* t : tensors_) delete t;
  }

  void* NewBlock(uint64_t bytes, uint32_t align) {
    void* p = nullptr;
    if (align < sizeof(void*)) align = sizeof(void*);
    if (posix_memalign(&p, align, bytes ? bytes : 1) != 0) abort();
    blocks_.push_back({p, bytes});
    return p;
  }

  // Random dims whose element count fits kMaxInputBytes; false otherwise.
  bool MakeShape(FuzzedDataProvider& fdp, uint32_t* rank, int64_t* dims) {
    uint8_t r = fdp.ConsumeIntegral<uint8_t>();
    *rank = r < 240 ? r % 5 : r % 9;
    for (uint32_t i = 0; i < *rank; ++i) {
      uint8_t b = fdp.ConsumeIntegral<uint8_t>();
      dims[i] =
          b < 224 ? b % 6 : kSpecialDims[b % (sizeof(kSpecialDims) / sizeof(kSpecialDims[0]))];
    }
    uint64_t n = 0;
    return epctx::shape_elements(dims, *rank, &n) && n <= kMaxInputBytes / 8;
  }

  TensorRef* MakeInput(FuzzedDataProvider& fdp) {
    TensorRef* t = new TensorRef();
    tensors_.push_back(t);
    t->dtype =
        kDtypes[fdp.ConsumeIntegralInRange<size_t>(0, sizeof(kDtypes) / sizeof(kDtypes[0]) - 1)];
    if (!MakeShape(fdp, &t->rank, t->dims)) return nullptr;
    size_t es = epctx::dtype_size(t->dtype);
    t->bytes = t->elements() * es;
    uint8_t* p = static_cast<uint8_t*>(NewBlock(t->bytes, 64));
    for (uint64_t i = 0; i < t->elements(); ++i) FillElement(fdp, t->dtype, p + i * es);
    t->data = p;
    return t;
  }

  const epctx::onnx::TensorView* MakeAttrTensor(FuzzedDataProvider& fdp) {
    TensorRef* src = MakeInput(fdp);
    if (!src) return nullptr;
    auto* tv = new epctx::onnx::TensorView();
    attr_tensors_.emplace_back(tv);
    tv->dtype = src->dtype;
    tv->rank = src->rank;
    for (uint32_t i = 0; i < src->rank; ++i) tv->dims[i] = src->dims[i];
    tv->storage = epctx::onnx::Storage::kRaw;
    tv->data = src->data;
    tv->bytes = src->bytes;
    return tv;
  }

  StrView Keep(const std::string& s) {
    strings_.emplace_back(new std::string(s));
    return StrView{strings_.back()->data(), strings_.back()->size()};
  }

  static Status Alloc(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                      TensorRef** out) {
    Run* r = static_cast<Run*>(user);
    uint64_t n = 0;
    size_t es = epctx::dtype_size(dtype);
    // As the session: a node with fewer outputs than the op needs fails.
    if (index >= r->num_outputs_)
      return Status::Error(EPCTX_INVALID_GRAPH, "kernel wrote an output the node lacks");
    if (rank > epctx::kMaxRank || !epctx::shape_elements(dims, rank, &n) || !es)
      return Status::Error(EPCTX_INVALID_ARGUMENT, "output shape or type not allocatable");
    if (n > kMaxOutputBytes / es) return Status::Error(EPCTX_OUT_OF_MEMORY, "fuzz output cap");
    TensorRef* t = new TensorRef();
    r->tensors_.push_back(t);
    t->dtype = dtype;
    t->rank = rank;
    for (uint32_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
    t->bytes = n * es;
    t->data = r->NewBlock(t->bytes, 64);
    memset(t->data, 0xA5, t->bytes);
    r->outputs_[index] = t;
    r->viewed_[index] = false;
    *out = t;
    return Status::Ok();
  }

  static Status View(void* user, uint32_t index, int32_t dtype, uint32_t rank, const int64_t* dims,
                     const void* data) {
    Run* r = static_cast<Run*>(user);
    uint64_t n = 0;
    if (index >= r->num_outputs_)
      return Status::Error(EPCTX_INVALID_GRAPH, "kernel wrote an output the node lacks");
    if (rank > epctx::kMaxRank || !epctx::shape_elements(dims, rank, &n) ||
        !epctx::dtype_size(dtype))
      return Status::Error(EPCTX_INVALID_ARGUMENT, "output view shape not valid");
    TensorRef* t = new TensorRef();
    r->tensors_.push_back(t);
    t->dtype = dtype;
    t->rank = rank;
    for (uint32_t i = 0; i < rank; ++i) t->dims[i] = dims[i];
    t->bytes = n * epctx::dtype_size(dtype);
    t->data = const_cast<void*>(data);
    r->outputs_[index] = t;
    r->viewed_[index] = true;
    return Status::Ok();
  }

  static void* Scratch(void* user, uint64_t bytes, uint32_t alignment) {
    Run* r = static_cast<Run*>(user);
    if (bytes > kMaxScratchBytes - r->scratch_bytes_) return nullptr;
    r->scratch_bytes_ += bytes;
    return r->NewBlock(bytes, alignment ? alignment : 16);
  }

  // True when [p, p + n) lies inside one block the run handed the kernel.
  bool InsideSomeBlock(const void* p, uint64_t n) const {
    if (n == 0) return true;
    const uint8_t* q = static_cast<const uint8_t*>(p);
    for (const Block& b : blocks_) {
      const uint8_t* base = static_cast<const uint8_t*>(b.p);
      if (q >= base && q <= base + b.bytes && n <= b.bytes - uint64_t(q - base)) return true;
    }
    return false;
  }

  std::vector<Block> blocks_;
  std::vector<TensorRef*> tensors_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<epctx::onnx::TensorView>> attr_tensors_;
  std::vector<std::unique_ptr<std::vector<int64_t>>> ints_;
  std::vector<std::unique_ptr<std::vector<float>>> floats_;
  std::vector<std::unique_ptr<std::vector<StrView>>> strs_;
  TensorRef* outputs_[8] = {};
  bool viewed_[8] = {};
  uint32_t num_outputs_ = 0;
  uint64_t scratch_bytes_ = 0;
};

uint32_t NumRows() {
  static uint32_t n = [] {
    const char *d, *o;
    int64_t lo, hi;
    uint32_t i = 0;
    while (epctx::KernelTableRow(i, &d, &o, &lo, &hi)) ++i;
    return i;
  }();
  return n;
}

AttributeView MakeAttr(FuzzedDataProvider& fdp, Run& run) {
  AttributeView a;
  a.name = run.Keep(kWords[fdp.ConsumeIntegralInRange<size_t>(0, kNumWords - 1)]);
  uint8_t kind = fdp.ConsumeIntegral<uint8_t>() % 7;
  uint32_t count = fdp.ConsumeIntegralInRange<uint32_t>(0, 8);
  switch (kind) {
    case 0:
      a.type = AttrType::kInt;
      a.i = SmallOrSpecialInt(fdp);
      break;
    case 1:
      a.type = AttrType::kFloat;
      a.f = SmallOrSpecialFloat(fdp);
      break;
    case 2:
      a.type = AttrType::kString;
      a.s = run.Keep(kWords[fdp.ConsumeIntegralInRange<size_t>(0, kNumWords - 1)]);
      break;
    case 3: {
      auto* v = new std::vector<int64_t>();
      run.ints_.emplace_back(v);
      for (uint32_t i = 0; i < count; ++i) v->push_back(SmallOrSpecialInt(fdp));
      a.type = AttrType::kInts;
      a.ints = v->data();
      a.count = count;
      break;
    }
    case 4: {
      auto* v = new std::vector<float>();
      run.floats_.emplace_back(v);
      for (uint32_t i = 0; i < count; ++i) v->push_back(SmallOrSpecialFloat(fdp));
      a.type = AttrType::kFloats;
      a.floats = v->data();
      a.count = count;
      break;
    }
    case 5: {
      auto* v = new std::vector<StrView>();
      run.strs_.emplace_back(v);
      for (uint32_t i = 0; i < count; ++i)
        v->push_back(run.Keep(kWords[fdp.ConsumeIntegralInRange<size_t>(0, kNumWords - 1)]));
      a.type = AttrType::kStrings;
      a.strings = v->data();
      a.count = count;
      break;
    }
    default:
      a.type = AttrType::kTensor;
      a.t = run.MakeAttrTensor(fdp);
      if (!a.t) a.type = AttrType::kUndefined;
      break;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A pinned recipe ("op:<domain>:<Op>:<opset>\n" + the rest) names its op
  // instead of indexing the table, so regression files keep meaning the same
  // node when rows are added; EPCTX_FUZZ_PIN=<file> writes one.
  const char *domain = nullptr, *op = nullptr;
  int64_t lo, hi, opset = 0;
  if (size > 3 && memcmp(data, "op:", 3) == 0) {
    const uint8_t* nl = static_cast<const uint8_t*>(memchr(data, '\n', size));
    if (!nl) return -1;
    std::string head(reinterpret_cast<const char*>(data) + 3, nl - data - 3);
    size_t c1 = head.find(':'), c2 = head.rfind(':');
    if (c1 == std::string::npos || c1 == c2) return -1;
    std::string want_domain = head.substr(0, c1), want_op = head.substr(c1 + 1, c2 - c1 - 1);
    opset = strtoll(head.c_str() + c2 + 1, nullptr, 10);
    for (uint32_t i = 0; epctx::KernelTableRow(i, &domain, &op, &lo, &hi); ++i)
      if (want_domain == domain && want_op == op && opset >= lo && opset <= hi) break;
    if (!epctx::FindKernel(StrView{want_domain.data(), want_domain.size()},
                           StrView{want_op.data(), want_op.size()}, opset))
      return -1;
    size -= nl + 1 - data;
    data = nl + 1;
  }
  FuzzedDataProvider fdp(data, size);
  if (!op) {
    if (!epctx::KernelTableRow(fdp.ConsumeIntegralInRange<uint32_t>(0, NumRows() - 1), &domain, &op,
                               &lo, &hi))
      abort();
    opset = fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
    if (const char* pin = getenv("EPCTX_FUZZ_PIN")) {
      // FuzzedDataProvider took the two integers from the end.
      FILE* f = fopen(pin, "wb");
      if (!f) abort();
      fprintf(f, "op:%s:%s:%lld\n", domain, op, static_cast<long long>(opset));
      fwrite(data, 1, fdp.remaining_bytes(), f);
      fclose(f);
    }
  }

  Run run;
  epctx::onnx::NodeView node;
  node.op_type = run.Keep(op);
  node.domain = run.Keep(domain);
  node.name = run.Keep("n");

  uint32_t num_inputs = fdp.ConsumeIntegralInRange<uint32_t>(0, 6);
  std::vector<const TensorRef*> inputs;
  std::vector<StrView> input_names;
  for (uint32_t i = 0; i < num_inputs; ++i) {
    bool present = fdp.ConsumeIntegral<uint8_t>() < 230;
    const TensorRef* t = present ? run.MakeInput(fdp) : nullptr;
    if (present && !t) return -1;  // larger than the input cap: not interesting
    inputs.push_back(t);
    input_names.push_back(run.Keep(t ? "x" + std::to_string(i) : ""));
  }
  node.inputs = input_names.data();
  node.num_inputs = num_inputs;

  std::vector<AttributeView> attrs;
  uint32_t num_attrs = fdp.ConsumeIntegralInRange<uint32_t>(0, 6);
  for (uint32_t i = 0; i < num_attrs; ++i) attrs.push_back(MakeAttr(fdp, run));
  node.attrs = attrs.data();
  node.num_attrs = num_attrs;

  std::vector<StrView> output_names;
  run.num_outputs_ = fdp.ConsumeIntegralInRange<uint32_t>(1, 4);
  for (uint32_t i = 0; i < run.num_outputs_; ++i)
    output_names.push_back(
        run.Keep(fdp.ConsumeIntegral<uint8_t>() < 240 ? "y" + std::to_string(i) : ""));
  node.outputs = output_names.data();
  node.num_outputs = run.num_outputs_;

  // Inputs are const to a kernel: keep a copy to compare after the run.
  std::vector<std::vector<uint8_t>> before;
  for (const TensorRef* t : inputs) {
    const uint8_t* p = t ? static_cast<const uint8_t*>(t->data) : nullptr;
    before.emplace_back(p, p ? p + t->bytes : p);
  }

  epctx::KernelFn fn = epctx::FindKernel(node.domain, node.op_type, opset);
  if (!fn) Broken("the table row has no kernel", op);
  static const bool verbose = getenv("EPCTX_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    fprintf(stderr, "%s opset %lld, %u outputs\n", op, static_cast<long long>(opset),
            node.num_outputs);
    for (uint32_t i = 0; i < num_inputs; ++i) {
      const TensorRef* t = inputs[i];
      if (!t) {
        fprintf(stderr, "  in%u absent\n", i);
        continue;
      }
      fprintf(stderr, "  in%u dtype %d rank %u [", i, t->dtype, t->rank);
      for (uint32_t d = 0; d < t->rank; ++d)
        fprintf(stderr, "%lld ", static_cast<long long>(t->dims[d]));
      fprintf(stderr, "]\n");
    }
    for (const AttributeView& a : attrs) {
      fprintf(stderr, "  attr %.*s type %d i %lld f %g s '%.*s' count %u:", a.name.len(),
              a.name.data, static_cast<int>(a.type), static_cast<long long>(a.i), a.f, a.s.len(),
              a.s.data, a.count);
      for (uint32_t k = 0; a.ints && k < a.count; ++k)
        fprintf(stderr, " %lld", static_cast<long long>(a.ints[k]));
      fprintf(stderr, "\n");
    }
  }
  epctx::KernelHost host{&run, &Run::Alloc, &Run::View, &Run::Scratch};
  epctx::KernelContext ctx(node, opset, inputs.data(), num_inputs, host);
  Status st = fn(ctx);
  Status attr = ctx.AttrStatus();
  if (!attr.ok()) st = attr;

  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && inputs[i]->bytes &&
        memcmp(before[i].data(), inputs[i]->data, inputs[i]->bytes))
      Broken("wrote into its input", op);

  if (!st.ok()) {
    if (st.code() == EPCTX_OK || st.message()[0] == '\0') Broken("failed without a message", op);
    if (verbose) fprintf(stderr, "  -> %d %s\n", st.code(), st.message());
    return 0;
  }
  uint64_t sink = 0;
  for (uint32_t i = 0; i < run.num_outputs_; ++i) {
    const TensorRef* t = run.outputs_[i];
    if (!t) continue;  // kernels may leave optional trailing outputs unset
    if (t->bytes != t->elements() * epctx::dtype_size(t->dtype))
      Broken("output bytes vs shape", op);
    // Constant views its attribute's own storage (value_float: a.f), which
    // lives as long as the model: the attribute array counts as a block.
    run.blocks_.push_back({attrs.data(), attrs.size() * sizeof(AttributeView)});
    for (auto& v : run.ints_) run.blocks_.push_back({v->data(), v->size() * sizeof(int64_t)});
    for (auto& v : run.floats_) run.blocks_.push_back({v->data(), v->size() * sizeof(float)});
    const size_t owned = run.blocks_.size() - 1 - run.ints_.size() - run.floats_.size();
    const bool inside = !run.viewed_[i] || run.InsideSomeBlock(t->data, t->bytes);
    run.blocks_.resize(owned);  // the extra ranges are not run.blocks_'s to free
    if (!inside) Broken("view output outside every input and attribute", op);
    const uint8_t* p = static_cast<const uint8_t*>(t->data);
    for (uint64_t k = 0; k < t->bytes; ++k) sink += p[k];
  }
  static volatile uint64_t keep;
  keep = keep + sink;
  return 0;
}
