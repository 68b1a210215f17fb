// Matmul compiled by MLIR itself (transform-dialect tiling + vectorization), the alternative to
// the OpenBLAS library step that issue 4 asks to measure. Plain C++ header.
//
// Why the backend still calls OpenBLAS for every shape: see docs/ARCHITECTURE.md ("Matmul:
// BLAS or generated code") and `bench_lazy --benchmark_filter=matmul`, which runs both.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backend/mlir/executable.h"
#include "backend/mlir/partition.h"
#include "core/storage.h"

namespace lt::backend {

struct CodegenMatmul {
  // C[m, n] = A[m, k] B[k, n]; float32, row-major, contiguous. Empty if compilation failed.
  std::function<void(const float* a, const float* b, float* c)> run;
  double compile_ms = 0;
  std::string error;  // why `run` is empty
  // codegen_matmul_cached: whether the kernel beat OpenBLAS on this host, and the timings.
  bool chosen = true;
  // Lost that timing by less than kCloseCall: a step with this product still runs the in-step
  // trial (executable.cpp), which times both where the step runs them.
  bool close_call = false;
  std::string choice;
  std::string cache_key;  // its disk cache key under LT_CACHE_DIR ("" when the cache is off)
};

// LT_MLIR_MATMUL: blas (never generate), codegen (always where the tiles fit), or unset: time
// both once per shape on this host and keep the faster (matmul_choice.cpp).
enum class MatmulPolicy { kBlas, kCodegen, kMeasure };
MatmulPolicy matmul_policy();
// Times `kernel` against cblas_sgemm on m x k times k x n; `why` gets the figures (LT_DEBUG
// prints them). Counters CodegenMatmulChosen / CodegenMatmulDeclined.
// `close_call`, when given, gets whether OpenBLAS won by at most kCloseCall (counter
// CodegenMatmulCloseCall).
// `blas_k` (0: k): OpenBLAS's depth, less than k where the kernel runs a product padded to k.
bool generated_matmul_wins(const CodegenMatmul& kernel, int64_t m, int64_t n, int64_t k,
                           std::string* why, bool* close_call = nullptr, int64_t blas_k = 0);
// The timing alone misleads both ways. Inside a step OpenBLAS ran up to 1.6x slower than alone
// (the MLP's weight gradient, 256x784x64: 0.12 ms alone, 0.20 ms in its step, where the
// generated kernel kept its 0.07 ms); and OpenBLAS's pthreads spin ~2^28 cycles after a call,
// so a kernel timed soon after one (the previous shape's timing) shared the cores with them:
// 2.4x its usual time in some runs. A kernel at most this much slower alone is a close call,
// decided by the in-step trial (a few steps run the slower side).
constexpr double kCloseCall = 2.5;

// Tiles: blocks of C of up to 32x128 over OpenMP threads, k in steps of up to 128, then register
// tiles of outer products (FMAs) over k, sized from the JIT's target (matmul_register_tile in
// target.h: 8x32 with AVX-512, 4x16 with AVX2). Tiles must divide what they tile (partial tiles
// did not vectorize): rows by the register tile; columns past its multiples are split off as a
// tail with a narrower register tile (whole vectors); k >= 32 (codegen_matmul_fits; otherwise
// `error` says so).
bool codegen_matmul_fits(int64_t m, int64_t n, int64_t k);
// The least k it takes (a shallower product pads k with zeros to run on it: conv_gemm.cpp).
constexpr int64_t kCodegenMinDepth = 32;
// dst[r][0, cols) = src[r][0, cols) for r < rows, rows `src_ld` and `dst_ld` floats apart, over
// the threads: the blocks the kernel's callers copy into its row-major layout and back.
void copy_rows(const float* src, int64_t src_ld, float* dst, int64_t dst_ld, int64_t rows,
               int64_t cols);
// n floats from the buffer cache (cache_malloc), freed with the handle: the kernel callers'
// scratch (B with padded rows, a chunk of A's columns or of B's and C's).
using ScratchFloats = Scratch<float>;
inline ScratchFloats scratch_floats(int64_t n) { return scratch<float>(n); }
// `accumulate`: C += A B (C's values are read), else C = A B.
CodegenMatmul compile_codegen_matmul(int64_t m, int64_t n, int64_t k, bool accumulate = false);

// The process's kernels by shape: compiled on first use (~30 ms; CodegenMatmulCompiles) or
// loaded from the disk cache under LT_CACHE_DIR (DiskCacheHit, as the backend's graphs), kept
// for the process (a failure too: it is logged once, CodegenMatmulFailed, and the caller keeps
// BLAS), with the host's choice between it and OpenBLAS (`chosen`, measured once per shape and
// thread count; under LT_CACHE_DIR kept as a note beside the kernel, so a later process on the
// same CPU and features reads it instead of timing again: CodegenMatmulChoiceCached).
// `blas_k` (0: k): the depth OpenBLAS is timed on, for a product the caller pads to depth k.
std::shared_ptr<const CodegenMatmul> codegen_matmul_cached(int64_t m, int64_t n, int64_t k,
                                                           bool accumulate = false,
                                                           int64_t blas_k = 0);

// The schedule's library matmuls that run a generated kernel (matmul_choice.cpp): float32, B
// 2-d, a shape the kernel fits and whose kernel beat OpenBLAS on this host.
LibraryKernels matmul_kernels(const Schedule& s);
// The same for shape-generic code (`dyn`): a matmul whose rows are dynamic (k and B static) runs
// a kernel compiled for a chunk of rows on each whole chunk and OpenBLAS on the rest; the chunk
// is the smallest multiple of 32 rows giving each thread two blocks of C (at most 256).
LibraryKernels chunked_matmul_kernels(const Schedule& s, const ir::DynamicShapes& dyn);

// Adds the schedule's conv2d, conv2d input- and weight-gradient steps whose GEMMs run generated
// kernels (conv_gemm.cpp): float32 steps with a chunk width whose kernel fits and beat OpenBLAS
// on this host (none with LT_MLIR_MATMUL=blas). For specialized code: the chunks follow the
// sizes.
void add_conv_kernels(const Schedule& s, LibraryKernels* kernels);

}  // namespace lt::backend
