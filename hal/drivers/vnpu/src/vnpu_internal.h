/* SPDX-License-Identifier: Apache-2.0 */
// Internals shared by the vnpu driver files: the message builder, the
// per-context state built by load_context, and the entry points of the
// validator and the kernels.
//
// A Context and its Graphs live in one host allocation each and point into
// the weight view, which the runtime keeps valid until release_context; a
// bound graph's command stream is a private copy (see Graph::copy). load_context reads no payload
// byte: get_graph verifies and validates a graph's command stream the first time it is bound, so
// graphs a session never binds are never read (a multi-graph binary shared by N models costs each
// model only its own graphs). A graph's fields are written once, by the get_graph call that
// validates it, and published through its `state`; execute runs only on published graphs, from many
// threads at once.
#ifndef EPCTX_VNPU_INTERNAL_H
#define EPCTX_VNPU_INTERNAL_H

#include <cstddef>
#include <atomic>
#include <cstdint>

#include <epctx/hal.h>

#include "epctx_uk/sgemm.h"
#include "vnpu_generated.h"

struct epctx_hal_context;

namespace epctx {
namespace vnpu {

struct OpPlan;

// One tap of a RESIZE axis: an input index and its weight (vnpu_transformer.cc).
struct ResizeTap {
  int32_t index;
  float weight;
};

// Appends to a caller's fixed buffer, always NUL-terminated, cuts silently.
class Msg {
 public:
  Msg(char* buf, size_t cap) : buf_(buf), cap_(cap) {
    if (cap_ > 0) buf_[0] = '\0';
  }
  Msg& s(const char* str);
  Msg& u(uint64_t v);
  Msg& i(int64_t v);
  void reset() {
    len_ = 0;
    if (cap_ > 0) buf_[0] = '\0';
  }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

// Graph::state: whether get_graph has validated the payload yet.
enum GraphState : uint32_t { kUnchecked = 0, kChecking = 1, kValid = 2 };

struct Graph {
  const epctx_hal_context* ctx;  // owner
  const char* name;              // copied, owned by the context allocation
  const uint8_t* data;           // payload view (unread until first bound)
  uint64_t size;
  // kUnchecked -> kChecking (one get_graph claims it) -> kValid, or back to
  // kUnchecked when validation fails (the next call reports it again). The
  // fields below are valid once kValid is observed with acquire ordering.
  std::atomic<uint32_t> state;
  // The command stream: a private copy of the payload, made before it is
  // verified, so that every field execute computes addresses and sizes from
  // (tensor shapes, offsets, op parameters) stays as validated even when the
  // mapped file is rewritten in place after the load. Weights stay mapped: a
  // changed weight changes numbers, never an address.
  uint8_t* copy;            // host allocation of `size` bytes, or nullptr
  const fb::Graph* stream;  // verified and validated, inside `copy`
  uint32_t num_inputs;
  uint32_t num_outputs;
  epctx_hal_tensor_desc* inputs;   // [num_inputs]
  epctx_hal_tensor_desc* outputs;  // [num_outputs]
  uint32_t* input_tensor;          // tensor index of INPUT(k)
  uint32_t* output_tensor;         // tensor index of OUTPUT(k)
  // Per tensor: the float32 copy of a FLOAT16 WEIGHT tensor, made once when
  // the graph is bound (stream 1.2), else nullptr; nullptr as a whole when
  // the graph has none. One host allocation: the table, then the floats.
  // The weight segment keeps float16 (half the file and mapping); the
  // copies are what ops read, so execute does no conversion.
  float** widened;
  // Per op: what get_graph planned (conv/plan.h), read by execute. One host
  // allocation with the binding tables below it (inputs .. output_tensor).
  OpPlan* plans;
  // Floats of workspace each of kWorkSlots workers needs (the largest of the
  // plans' work_floats), placed after the arena in the scratch the host
  // hands to execute; scratch_bytes covers both (WorkOffset, ScratchBytes).
  uint64_t work_floats;
  // The int8 panel strategies' weight-row sums (OpPlan::qsum_at), computed
  // when the graph is bound; nullptr when no op uses them.
  int32_t* qsums;
  // The RESIZE ops' taps (OpPlan::taps_at), computed when the graph is
  // bound from each op's validated fields; nullptr when there is none.
  ResizeTap* resize_taps;
};

// Workers with a workspace slot of their own: the most runs ForRangeSlots
// cuts an op that uses workspace into (1 where the driver runs serially).
#if defined(EPCTX_VNPU_SERIAL) && EPCTX_VNPU_SERIAL
constexpr uint32_t kWorkSlots = 1;
#else
constexpr uint32_t kWorkSlots = 8;
#endif

}  // namespace vnpu
}  // namespace epctx

struct epctx_hal_context {
  epctx_hal_host host;
  const uint8_t* weights;
  uint64_t weights_size;
  uint32_t num_graphs;
  epctx::vnpu::Graph* graphs;  // [num_graphs]
  uint32_t* by_name;           // [num_graphs] graph indices sorted by name
};

namespace epctx {
namespace vnpu {

constexpr uint32_t kStreamMajor = 1;
constexpr uint32_t kAlignment = 64;

// Checks every tensor and op of a verified stream against the arena size it
// declares and the weight segment, so that execute cannot touch memory out of
// bounds, and that every output is written by some op. Fills the graph's
// input/output counts; `host` provides scratch. Returns an epctx_code.
int ValidateGraph(const fb::Graph* g, uint64_t weights_size, const char* graph_name,
                  const epctx_hal_host& host, uint32_t* num_inputs, uint32_t* num_outputs,
                  Msg& msg);

// Where the bytes of tensor t live in one execute call.
struct Bindings {
  const Graph* graph;
  const epctx_hal_tensor* inputs;
  epctx_hal_tensor* outputs;
  uint8_t* scratch;
  const epctx_hal_parallel* par;  // the session's threads, or nullptr (execute)
  float* work;                    // kWorkSlots x graph->work_floats floats, or nullptr
  float* ptr(uint32_t t) const;
  // Worker slot's workspace (graph->work_floats floats).
  float* slot(uint32_t s) const { return work + uint64_t(s) * graph->work_floats; }
};

// Runs f(lo, hi, chunk) over [0, n) cut into at most min(par's threads,
// max_chunks) even runs, none under `min_units` units (serial, chunk 0,
// without par or with one run). Chunk indices of one call are distinct.
template <typename F>
void ForChunks(const epctx_hal_parallel* par, int64_t n, int64_t min_units, uint32_t max_chunks,
               const F& f) {
  if (n <= 0) return;
#if defined(EPCTX_VNPU_SERIAL) && EPCTX_VNPU_SERIAL
  (void)par;
  (void)min_units;
  (void)max_chunks;
  f(int64_t(0), n, 0u);
#else
  uint32_t chunks = 1;
  if (par && par->threads > 1) {
    const uint32_t most_threads = par->threads < max_chunks ? par->threads : max_chunks;
    const int64_t most = n / (min_units < 1 ? 1 : min_units);
    chunks = most < int64_t(most_threads) ? uint32_t(most) : most_threads;
  }
  if (chunks <= 1) {
    f(int64_t(0), n, 0u);
    return;
  }
  struct Job {
    const F* f;
    int64_t n;
    uint32_t chunks;
  } job{&f, n, chunks};
  par->parallel_for(
      par->user, chunks,
      [](void* arg, uint32_t c, uint32_t) {
        const Job& j = *static_cast<const Job*>(arg);
        const int64_t lo = j.n * c / j.chunks, hi = j.n * (c + 1) / j.chunks;
        if (lo < hi) (*j.f)(lo, hi, c);
      },
      &job);
#endif
}

// Calls f(lo, hi) over [0, n) independent units cut into at most par's
// thread count of even runs, none under `min_units` units (serial without
// par or with one run). Units must write disjoint memory and be computed the
// same whichever run holds them, so the bytes never depend on the threads.
template <typename F>
void ForRange(const epctx_hal_parallel* par, int64_t n, int64_t min_units, const F& f) {
  ForChunks(par, n, min_units, UINT32_MAX, [&](int64_t lo, int64_t hi, uint32_t) { f(lo, hi); });
}

// ForRange for ops that use a workspace slot: at most kWorkSlots runs, and
// f(lo, hi, slot) with a slot no other run of this call has.
template <typename F>
void ForRangeSlots(const epctx_hal_parallel* par, int64_t n, int64_t min_units, const F& f) {
  ForChunks(par, n, min_units, kWorkSlots, f);
}

// Taps of a window the pooling row kernels (uk::PoolRow, uk::QMaxPoolRow)
// take at most (kernels up to 8x8); larger windows clip every output.
constexpr int64_t kPoolRowTaps = 64;

// The output columns [*lo, *hi) of a pool whose window lies inside an
// input row of W (kernel KW, stride sw, left pad pl, OW outputs): what the
// row kernels take; the rest clip their window. Empty past kPoolRowTaps.
inline void PoolRowColumns(int64_t W, int64_t KW, int64_t sw, int64_t pl, int64_t OW, int64_t taps,
                           int64_t* lo, int64_t* hi) {
  *lo = pl <= 0 ? 0 : (pl + sw - 1) / sw;
  *hi = W - KW + pl < 0 ? 0 : (W - KW + pl) / sw + 1;
  *hi = *hi < OW ? *hi : OW;
  if (taps > kPoolRowTaps) *hi = 0;
}

// Units of `work` multiply-adds each that make a run worth a thread.
inline int64_t MinUnits(int64_t work) {
  constexpr int64_t kMinRunWork = int64_t{1} << 16;
  return work >= kMinRunWork ? 1
                             : (kMinRunWork + (work < 1 ? 1 : work) - 1) / (work < 1 ? 1 : work);
}

// Element i of an [int64] vector, loaded at any alignment. The flatbuffers
// Verifier checks a vector's 4-byte length prefix for alignment, not its
// elements, and real streams (epctx-compile's) do carry [int64] vectors at
// offsets that are 4 mod 8: Vector<int64_t>::Get would be a misaligned load
// (undefined behaviour; a fault on strict-alignment cores).
// The empty asm (no instruction) hides where the pointer came from: GCC 12
// takes Data(), flatbuffers' &length_ + 1, for one past the 4-byte length
// field and reports the read as out of bounds (-Warray-bounds,
// -Wstringop-overread; seen on riscv64), though it is inside the verified
// vector.
inline int64_t I64(const flatbuffers::Vector<int64_t>* v, uint32_t i) {
  const uint8_t* p = v->Data() + size_t(i) * sizeof(int64_t);
  __asm__("" : "+r"(p));
  int64_t x;
  __builtin_memcpy(&x, p, sizeof x);
  return x;
}

// Dimension d of a validated tensor.
inline int64_t Dim(const fb::Tensor* t, uint32_t d) { return I64(t->shape(), d); }

// Four floats as one GCC vector, loaded and stored at any alignment.
typedef float V4 __attribute__((vector_size(16)));
inline V4 Load4(const float* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store4(float* p, V4 v) { __builtin_memcpy(p, &v, sizeof(v)); }

// int8 level: the integer dtypes, and dtype sets as bit masks for the
// validator's messages.
inline bool IsInt(fb::DType d) {
  return d == fb::DType::INT8 || d == fb::DType::UINT8 || d == fb::DType::INT32;
}
inline uint32_t DTypeBit(fb::DType d) { return 1u << (uint32_t(d) & 31u); }
constexpr uint32_t kQ8 = (1u << uint32_t(fb::DType::INT8)) | (1u << uint32_t(fb::DType::UINT8));
constexpr uint32_t kF32 = 1u << uint32_t(fb::DType::FLOAT32);
constexpr uint32_t kI32 = 1u << uint32_t(fb::DType::INT32);
// Own names: flatbuffers' EnumNameDType keeps a function-local static
// table, an exported symbol the installed archive must not carry.
const char* DTypeName(fb::DType d);  // vnpu_validate.cc
inline const char* MaskName(uint32_t mask) {
  if (mask == kQ8) return "INT8 or UINT8";
  if (mask == kF32) return "FLOAT32";
  if (mask == kI32) return "INT32";
  if (mask == (kQ8 | kI32)) return "INT8, UINT8 or INT32";
  if (mask == DTypeBit(fb::DType::UINT8)) return "UINT8";
  if (mask == DTypeBit(fb::DType::INT8)) return "INT8";
  return "the same dtype as the input";
}

// Runs one int8-level op (vnpu_int8.cc); false for an op of another kind.
bool RunInt8(const Bindings& b, const fb::Op* o, const OpPlan& p);

// RESIZE's taps (vnpu_transformer.cc): how many an op of a validated
// stream needs (0 for other ops), and filling them (2 per output row, then
// 2 per output column).
uint64_t ResizeTapCount(const fb::Graph* g, const fb::Op* o);
void FillResizeTaps(const fb::Graph* g, const fb::Op* o, ResizeTap* taps);

// RECURRENT (vnpu_recurrent.cc): workspace floats (one slot) and the run.
uint64_t RecurrentWorkFloats(const fb::Recurrent* c);
void RunRecurrent(const Bindings& b, const fb::Recurrent* c);

// Runs one transformer-level op (stream 1.8, vnpu_transformer.cc); false
// for an op of another kind.
bool RunTransformer(const Bindings& b, const fb::Op* o, const OpPlan& p);

// Runs every op of a validated graph. Returns an epctx_code.
int RunGraph(const Bindings& b, Msg& msg);

// Number of elements of a validated tensor, and its element size in bytes
// (4; 2 for FLOAT16).
uint64_t Elements(const fb::Tensor* t);
uint64_t ElementSize(const fb::Tensor* t);

// IEEE 754 binary16 bits to float32, exactly (vnpu_convert.cc).
float HalfToFloat(uint16_t h);

// Runs one CONVERT op (vnpu_convert.cc).
void RunConvert(const Bindings& b, const fb::Convert* c);

// For activations that are a clamp (NONE, RELU, CLIP with alpha <= beta):
// sets [*lo, *hi] for a fused epilogue and returns true. Otherwise returns
// false (with no clamp) and the caller runs ActivateRow afterwards.
inline bool FusedClamp(fb::Activation kind, float alpha, float beta, float* lo, float* hi) {
  *lo = -__builtin_inff();
  *hi = __builtin_inff();
  switch (kind) {
    case fb::Activation::NONE: return true;
    case fb::Activation::RELU: *lo = 0.0f; return true;
    case fb::Activation::CLIP:
      if (!(alpha <= beta)) return false;
      *lo = alpha;
      *hi = beta;
      return true;
    default: return false;
  }
}

// FusedClamp into a tile's lo and hi, or LEAKY_RELU_MAX with a slope in
// (0, 1] as the tile's leaky epilogue (uk::Tile::leaky: the same numbers as
// ActivateRow's, NaN included; at slope 0, +inf * 0 would be a NaN). False:
// the caller activates afterwards.
bool FusedAct(fb::Activation kind, float alpha, float beta, uk::Tile* t);

// y[i] = act(x[i]) for n floats; y may equal x. The switch sits outside the
// loop so each activation is one tight loop (vnpu_kernels.cc).
void ActivateRow(fb::Activation kind, const float* x, float* y, uint64_t n, float alpha,
                 float beta);
// In place over `rows` rows of n floats, ld apart: one switch for all of them
// (a conv's block is cog rows of 24 pixels; a call per row cost as much as
// the activation).
void ActivateRows(fb::Activation kind, float* y, uint64_t rows, uint64_t n, uint64_t ld,
                  float alpha, float beta);

}  // namespace vnpu
}  // namespace epctx

#endif
