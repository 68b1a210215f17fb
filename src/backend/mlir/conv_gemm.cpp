// Convolution steps on generated matmul kernels: a conv2d or its gradients run im2col and
// one GEMM per chunk of images (eager/conv.cpp); on the MLIR backend those GEMMs run the
// kernels of matmul_codegen.cpp where a kernel fits the chunk's shape and beat OpenBLAS when
// timed on this host (matmul_choice.cpp), as the graph's library matmuls do. Plain C++.
//
// The chunks are shaped by the eager convolution (images per chunk from the L2 cache, parts per
// thread), so the kernels are made at compile time for every chunk width it may run with
// (conv2d_chunk_columns, 1 to num_threads() threads); a width without a kernel runs OpenBLAS.
// A chunk's columns are rounded up to whole 64-byte lines: the extra columns of B are zeros and
// C's are dropped. The weight gradient runs transposed, dw^T [K, Og] += cols [K, n] g^T [n, Og],
// its Og rounded up too: K is the long side, which the kernel's register tiles take as rows.
#include <algorithm>
#include <array>
#include <map>
#include <memory>

#include "backend/mlir/matmul_codegen.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "eager/kernels.h"

namespace lt::backend {
namespace {

// A row length rounded up to whole cache lines of floats (the kernel's column tail must be whole
// vectors), and off multiples of 1024 (the kernel copies a B with such rows into padded ones
// first: b_rows in matmul_codegen.cpp).
int64_t padded_length(int64_t n) {
  constexpr int64_t kLine = 16, kAlias = 1024;
  const int64_t c = (n + kLine - 1) / kLine * kLine;
  return c % kAlias == 0 ? c + kLine : c;
}

class GeneratedConvGemm : public ConvGemm {
 public:
  int64_t padded(int64_t n) const override { return padded_length(n); }
  // A shallower input gradient (24 output channels: its k) is padded to the kernels' least
  // depth: a third more FMAs on a kernel up to ~2x OpenBLAS's speed, where the timing says so.
  int64_t depth(int64_t k) const override { return std::max(k, kCodegenMinDepth); }
  bool has(int64_t m, int64_t n, int64_t k, bool accumulate) const override {
    return kernels_.count({m, n, k, accumulate ? 1 : 0}) > 0;
  }
  void run(int64_t m, int64_t n, int64_t k, bool accumulate, const float* a, const float* b,
           float* c) const override {
    kernels_.at({m, n, k, accumulate ? 1 : 0})->run(a, b, c);
  }
  // The kernel for the shape, if it fits and won its timing on this host against OpenBLAS on
  // the product's own depth `blas_k` (0: k; less where k is padded), or lost it as a close call
  // (then the step's in-step trial decides: executable.cpp).
  void add(int64_t m, int64_t n, int64_t k, bool accumulate, int64_t blas_k = 0) {
    const std::array<int64_t, 4> key{m, n, k, accumulate ? 1 : 0};
    if (kernels_.count(key) || !codegen_matmul_fits(m, n, k)) return;
    std::shared_ptr<const CodegenMatmul> kernel =
        codegen_matmul_cached(m, n, k, accumulate, blas_k);
    if (kernel->run && (kernel->chosen || kernel->close_call)) kernels_[key] = std::move(kernel);
  }
  bool empty() const { return kernels_.empty(); }
  bool close_calls() const {
    return std::any_of(kernels_.begin(), kernels_.end(),
                       [](const auto& e) { return !e.second->chosen; });
  }
  // The same without the close calls' kernels (null if none is left).
  std::shared_ptr<GeneratedConvGemm> winners() const {
    auto w = std::make_shared<GeneratedConvGemm>();
    for (const auto& [key, kernel] : kernels_)
      if (kernel->chosen) w->kernels_[key] = kernel;
    if (w->empty()) return nullptr;
    return w;
  }

 private:
  std::map<std::array<int64_t, 4>, std::shared_ptr<const CodegenMatmul>> kernels_;
};

std::shared_ptr<const GeneratedConvGemm> conv_gemm_for(const ir::Node* n) {
  if (matmul_policy() == MatmulPolicy::kBlas || n->n_operands < 2) return nullptr;
  const OpKind op = n->op;
  if (op != OpKind::Conv2d && op != OpKind::Conv2dGradInput && op != OpKind::Conv2dGradWeight)
    return nullptr;
  const OpMeta& a = n->operands[0]->meta;  // x (conv2d), else the output's gradient
  const OpMeta& b = n->operands[1]->meta;  // w, or x (weight gradient)
  if (n->meta.dtype != kFloat32 || a.dtype != kFloat32 || b.dtype != kFloat32 ||
      a.sizes.size() != 4 || b.sizes.size() != 4 || n->meta.sizes.size() != 4)
    return nullptr;
  const ConvAttrs c = ConvAttrs::of(n->attrs);
  const bool wgrad = op == OpKind::Conv2dGradWeight;
  const Dims& x = op == OpKind::Conv2d ? a.sizes : wgrad ? b.sizes : n->meta.sizes;
  const Dims& w = wgrad ? n->meta.sizes : b.sizes;
  const Dims& y = op == OpKind::Conv2d ? n->meta.sizes : a.sizes;
  const int64_t og = w[0] / std::max<int64_t>(c.groups, 1), kk = w[1] * w[2] * w[3];
  auto gemm = std::make_shared<GeneratedConvGemm>();
  for (int64_t cols : conv2d_chunk_columns(x, w, y, c, num_threads())) {
    const int64_t p = gemm->padded(cols);
    if (op == OpKind::Conv2d)
      gemm->add(og, p, kk, false);
    else if (op == OpKind::Conv2dGradInput)
      gemm->add(kk, p, gemm->depth(og), false, og);
    else
      gemm->add(kk, gemm->padded(og), p, true);
  }
  if (gemm->empty()) return nullptr;
  return gemm;
}

}  // namespace

void add_conv_kernels(const Schedule& s, LibraryKernels* kernels) {
  for (const Schedule::Step& st : s.steps) {
    if (st.kind != Schedule::Kind::Library) continue;
    if (std::shared_ptr<const GeneratedConvGemm> gemm = conv_gemm_for(st.node)) {
      MatmulKernel k;
      if (gemm->close_calls()) {  // the trial runs with and without them
        k.won_alone = false;
        k.conv_winners = gemm->winners();
        metrics_impl::add("CodegenConvTrials");
      }
      k.conv = std::move(gemm);
      (*kernels)[st.node] = std::move(k);
      metrics_impl::add("CodegenConvSteps");
    }
  }
}

}  // namespace lt::backend
