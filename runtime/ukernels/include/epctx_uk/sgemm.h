/* SPDX-License-Identifier: Apache-2.0 */
// epctx's single-precision micro-kernel library: one register-blocked tile
// kernel per instruction set and a packed SGEMM built on it. The CPU kernels
// (runtime/src/kernels) and the vnpu driver (hal/drivers/vnpu) both link this
// library (target epctx_ukernels_obj) and nothing else of each other.
//
// A tile is C[4 x 24] (kMr rows, kMaxStrips strips of kStrip columns). The
// tile kernel reads A through two strides and B as 8-wide strips, so one
// kernel serves packed panels, the vnpu weight layouts (A = conv weights
// [block][k][8], B = GEMM weights [strip][k][8]) and unpacked rows (a 1x1
// convolution reads its input directly):
//   A[r][k]         = a[r * a_rs + k * a_ks]
//   B[k][s * 8 + j] = b[s * b_ss + k * b_ks + j]
//   C[r][j]         = c[r * ldc + j]
// Instruction sets: AVX2+FMA and AVX-512 on x86-64 (chosen at run time by
// cpuid/xgetbv, the rest of the build stays baseline x86-64), NEON on
// aarch64, and the portable GCC-vector kernel everywhere. The AVX-512 kernel
// is fastest when B strips lie side by side (b_ss == 8: rows of whole
// tiles), the layout Sgemm packs. All are re-entrant and keep no
// state except the cached cpuid answer; a caller splits work by row or
// column blocks (sub-ranges of C) to run them on several threads.
//
// Numbers: the AVX2 and NEON kernels fuse multiply and add (one rounding),
// the portable one does not, so they agree to rounding, not bit for bit.
#ifndef EPCTX_UK_SGEMM_H
#define EPCTX_UK_SGEMM_H

#include <cstdint>

namespace epctx {
namespace uk {

constexpr int kMr = 4;         // rows of a tile
constexpr int kStrip = 8;      // columns of a B strip
constexpr int kMaxStrips = 3;  // strips of a tile
constexpr int kNr = kStrip * kMaxStrips;

// kAvx512 (AVX512F + VL) implies kAvx2: a CPU that runs it runs both.
enum class Isa : uint32_t { kAuto = 0, kPortable = 1, kAvx2 = 2, kNeon = 3, kAvx512 = 4 };

// The instruction set this CPU runs best (never kAuto). Cached after the first
// call.
Isa BestIsa();
// Whether `isa` runs on this CPU with this build (kAuto and kPortable: yes).
bool IsaAvailable(Isa isa);
const char* IsaName(Isa isa);
// The instruction set a kernel call runs on: kAuto becomes BestIsa(), one
// this CPU or build lacks becomes kPortable.
Isa ResolveIsa(Isa isa);

// One tile: C = clamp(acc + row_bias[r] + col_bias[j], lo, hi) where acc is
// A[rows x kc] * B[kc x cols], plus C's previous values when `accumulate`.
// Bias and clamp apply only when `last` (the final K slice). rows is 1..4,
// cols 1..24; only rows x cols of C (and of the biases) are read or written.
// A rows past `rows` are never read; B strips past ceil(cols / 8) are never
// read, but the last strip is read 8 columns wide (packed strips are padded).
// segs > 1: K is segs slices of kc steps each, slice s reading A at
// a + s * a_seg and B at b + s * b_seg (a convolution's taps, each a shift of
// the same input), summed as one K: C is read and written once, not once per
// slice. segs 0 and 1 are one slice.
struct Tile {
  int64_t kc;
  const float* a;
  int64_t a_rs, a_ks;
  const float* b;
  int64_t b_ss, b_ks;
  float* c;
  int64_t ldc;
  int32_t rows, cols;
  bool accumulate, last;
  const float* row_bias;  // [rows] or null
  const float* col_bias;  // [cols] or null
  float lo, hi;           // -inf, +inf for no activation
  int32_t segs;
  int64_t a_seg, b_seg;
  // Instead of the clamp (when `leaky`, on the last K slice too): C =
  // max(max(v, v * slope), lo), v the first operand of both, so a NaN
  // becomes lo: LeakyRelu (slope in (0, 1]) then at least lo, as
  // ActivateRow's Act::kLeakyMax computes it, bit for bit. hi is unused.
  bool leaky;
  float slope;
  // Block tiles (TileKernel2) only: when nonzero, B's columns 24..47
  // (strips 3..5) start at b + b_ps rather than b + 3 * b_ss: B packed in
  // panels of 24 columns (BlockPanelCols), each its own run of k rows.
  int64_t b_ps;
};

using TileFn = void (*)(const Tile& t);
// The tile kernel of `isa` (kAuto: BestIsa()), or null if unavailable.
TileFn TileKernel(Isa isa);

// A block tile: the Tile contract with rows 1..kMr2 (8) and cols 1..kNr2
// (48), i.e. up to 2 x 2 tiles (rows 4..7 read A at a + 4 * a_rs, write C at
// c + 4 * ldc and take row_bias + 4; columns 24..47 read B strips 3..5 and
// col_bias + 24). Each value it loads serves more multiply-adds: on AVX-512
// a full 8 x 48 block whose B strips lie side by side (b_ss == 8) is one
// kernel of 24 zmm accumulators (every lane used; the 4 x 24 tile wastes
// half of its ymm third), narrower blocks in pieces of 24, 16 and 8
// columns. Elsewhere, and for blocks of fewer rows or with strips apart, it
// is several tile calls. Results equal
// the tile's to rounding, not bit for bit (the tile splits even and odd k),
// and are the same bytes whatever a caller's thread split.
constexpr int kMr2 = 2 * kMr;
constexpr int kNr2 = 2 * kNr;
TileFn TileKernel2(Isa isa);

// K steps to give one block tile call when a caller sweeps many 8-row
// blocks over the same 48 columns of B (a GEMM's row blocks, a dense
// convolution's output channel panels): where the block is four 4 x 24
// tiles (AVX2, NEON, portable), each reading its 24 columns of B over the
// whole slice, a slice of 128 keeps the block's B (24 KiB) in L1 for the
// sweep; longer ones read it from L2 at every block (0.5 bytes per flop:
// ViT-B/16's projections ran at 52 GFLOP/s on 1024 against 60-67 on 128
// on a Zen 3 core whose FMA peak is 92). AVX-512's single kernel: 1024.
int64_t BlockKc(Isa isa);

// Columns per packed B panel that the block tile of `isa` reads best when
// B streams from L2 (a dense convolution's im2col): 24 where the block is
// four 4 x 24 tiles (AVX2), each tile then reading one contiguous run of
// 96-byte rows (Tile.b_ps to the second panel); rows of 48 are read in
// halves 192 bytes apart, one cache line of three shared by both (the
// 8 x 48 block from L2 at K 256-512: 66-79 GFLOP/s in 48-column rows,
// 85-91 in 24-column panels on a Zen 3 core whose FMA peak is 92). 48
// (one panel, b_ps 0) elsewhere: AVX-512's kernel reads 48 columns a row.
int BlockPanelCols(Isa isa);
// Whether this build has an instruction set whose BlockPanelCols is 24
// (x86-64: AVX2): callers test it first, so their panel paths compile away
// on Arm, RISC-V and the microcontroller boards.
#if defined(__x86_64__)
constexpr bool kPanelIsa = true;
#else
constexpr bool kPanelIsa = false;
#endif

// C[M x N] = clamp(alpha * op(A) * op(B) + beta * C + row_bias[i] + col_bias[j], lo, hi),
// row-major. op(A) is M x K (A is M x K with lda >= K, or K x M when
// trans_a); op(B) is K x N (B is K x N with ldb >= N, or N x K when trans_b).
// beta == 0 never reads C. A call may cover any row/column block of a larger
// product (offset A, B, C and the biases), so threads can split it.
//
// pack_b, when set, replaces B, ldb and trans_b: it writes rows [k0, k0+kc)
// x columns [j0, j0+nc) of op(B) as strips of 8 columns, column j of row k
// at dst[(j / 8) * strip_stride + k * k_stride + j % 8], the columns from nc
// to the next multiple of 8 zero. (Sgemm asks for strip_stride 8 and
// k_stride 48, one 48-column panel per call.) A convolution packs straight from its image
// this way (implicit im2col), never materialising the im2col matrix.
using PackBFn = void (*)(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                         float* dst, int64_t strip_stride, int64_t k_stride);

// An operand packed once, ahead of the products that read it (a layer's
// constant weights, packed when a session is created), in exactly the
// layout Sgemm's own packing writes per block, so a Gemm naming it skips
// that pack and gives the same bits. The caller owns `data` (64-byte
// aligned) and keeps it alive and unchanged while products read it.
//
// PackedB holds op(B) [K x N] as panels of kNr2 (48) columns, each panel
// its K rows of 48 floats one after the other (columns past N zero), as
// Sgemm packs the panels of one K slice. A product may read any columns
// [j0, j0 + N') of it with j0 a multiple of kNr2, which is how GemmRunner
// cuts columns across threads; it reads every row (its K is the packed K).
struct PackedB {
  const float* data = nullptr;
  int64_t K = 0, N = 0;
};
// Floats SgemmPackB writes for op(B) of K x N.
uint64_t SgemmPackedBFloats(int64_t K, int64_t N);
// Packs op(B) (B is K x N with ldb >= N, or N x K when trans_b) into dst,
// SgemmPackedBFloats(K, N) floats.
void SgemmPackB(bool trans_b, const float* B, int64_t ldb, int64_t K, int64_t N, float* dst);

// PackedA holds alpha * op(A) [M x K] as K slices of SgemmKc(kAuto) (the
// last one shorter), each slice the rows in panels of kMr2 (8) rows, element (r, k)
// of a panel at k * 8 + r, rows past M zero. A product may read any rows
// [i0, i0 + M') of it with i0 a multiple of kMr2, how GemmRunner cuts rows;
// it reads every column (its K is the packed K).
struct PackedA {
  const float* data = nullptr;
  int64_t M = 0, K = 0;
};
// K steps per slice of Sgemm on `isa`: BlockKc, at most 256.
int64_t SgemmKc(Isa isa);
// Floats SgemmPackA writes for op(A) of M x K.
uint64_t SgemmPackedAFloats(int64_t M, int64_t K);
// Packs alpha * op(A) (A is M x K with lda >= K, or K x M when trans_a)
// into dst, SgemmPackedAFloats(M, K) floats.
void SgemmPackA(bool trans_a, const float* A, int64_t lda, int64_t M, int64_t K, float alpha,
                float* dst);

struct Gemm {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  float alpha = 1.0f;
  const float* A = nullptr;
  int64_t lda = 0;
  const float* B = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* C = nullptr;
  int64_t ldc = 0;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  float lo = -__builtin_inff(), hi = __builtin_inff();
  PackBFn pack_b = nullptr;
  const void* pack_b_ctx = nullptr;
  // Set: replaces B, ldb, trans_b and pack_b with columns [packed_b_col,
  // packed_b_col + N) of a PackedB of this K (packed_b_col a multiple of
  // kNr2).
  const PackedB* packed_b = nullptr;
  int64_t packed_b_col = 0;
  // Set: replaces A, lda, trans_a and alpha (folded in when packed) with
  // rows [packed_a_row, packed_a_row + M) of a PackedA of this K
  // (packed_a_row a multiple of kMr2).
  const PackedA* packed_a = nullptr;
  int64_t packed_a_row = 0;
};

// Floats of workspace Sgemm needs (at most ~124k floats whatever the sizes).
uint64_t SgemmWorkspaceFloats(int64_t M, int64_t N, int64_t K);

// Runs g with `workspace` of SgemmWorkspaceFloats(M, N, K) floats (64-byte
// aligned preferred) on `isa`'s tile kernel (kAuto: the best; an unavailable
// one falls back to portable).
void Sgemm(const Gemm& g, float* workspace, Isa isa = Isa::kAuto);

// C[M x N] = A[M x K] * B^T (B is N x K, rows ldb apart), row-major, no
// accumulation: a recurrent step's H_{t-1} R^T. Packing all of B per step
// (what Sgemm does) would cost as much as the product and pad M to the
// tile's rows, so up to 4 rows take dot products over B's rows (DotRows,
// elementwise.h), which are contiguous in K and each read once; more rows
// run Sgemm with `workspace` of SgemmWorkspaceFloats(M, N, K) floats.
void SgemmBt(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
             int64_t ldb, float* C, int64_t ldc, float* workspace);

}  // namespace uk
}  // namespace epctx

#endif
