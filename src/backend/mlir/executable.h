// The MLIR backend's executable: runs a partitioned graph step by step, compiled clusters
// through their packed entry points (JIT-compiled or loaded from the disk cache) and library
// steps on the eager kernels; releases values after their last reader and writes outputs into
// donated buffers where the partition allows it. Plain C++: no MLIR types.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/mlir/partition.h"

namespace lt {
class ConvGemm;  // eager/kernels.h
}

namespace lt::backend {

// The packed entry point (`void(void**)`) of a compiled function by its symbol name, or nullptr.
using PackedLookup = std::function<void (*(const std::string&))(void**)>;

// Library matmul steps that run generated code (matmul_codegen.h) instead of OpenBLAS:
// C[rows, m] = A[rows, k] B[k, m] on contiguous float32 buffers (`rows` at run time: a kernel
// for shape-generic code runs on chunks of rows). `transposed`: the kernel's tiles take only
// the transposed product, so it computes C^T[m, rows] = B^T A^T (its `a` is B^T, its `b` A^T,
// `rows` is m) and the step's value is the transposed view of that buffer.
struct MatmulKernel {
  // C[rows, m] = A[rows, k] B[k, m], row-major and contiguous (this run's sizes).
  std::function<void(const float* a, const float* b, float* c, int64_t rows, int64_t k, int64_t m)>
      run;
  bool transposed = false;
  // It beat OpenBLAS when both ran alone (matmul_choice.cpp); false: a close call.
  bool won_alone = true;
  // A convolution step's entry instead (no `run`): the kernels of its GEMMs (conv_gemm.cpp).
  // With close calls among them (won_alone false), the in-step trial runs `conv` against
  // `conv_winners`, the kernels that won alone (null: OpenBLAS throughout).
  std::shared_ptr<const ConvGemm> conv = nullptr;
  std::shared_ptr<const ConvGemm> conv_winners = nullptr;
  explicit operator bool() const { return static_cast<bool>(run); }
};
using LibraryKernels = std::unordered_map<const ir::Node*, MatmulKernel>;

// Cluster k's function (`c<k>`) and its packed entry point, the symbol that the JIT and the
// disk cache's libraries export for it.
std::string cluster_function(int k);
std::string cluster_entry(int k);

// `code` keeps the compiled code alive (a JIT engine, a dlopen'ed library). Returns nullptr when
// a cluster's function is missing. With `dyn`, the code is shape-generic: each run takes the
// sizes of RunArgs::graph (allocations, library steps, the functions' symbols argument).
std::unique_ptr<Executable> make_mlir_executable(const ir::Graph& g, Schedule s,
                                                 const PackedLookup& lookup,
                                                 std::shared_ptr<void> code,
                                                 const LibraryKernels& kernels = {},
                                                 std::shared_ptr<ir::DynamicShapes> dyn = nullptr);

}  // namespace lt::backend
