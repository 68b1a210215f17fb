// Convolutions whose GEMMs run the MLIR backend's generated matmul kernels (conv_gemm.cpp): a
// conv2d, its input gradient and its weight gradient, each on chunks of images whose columns are
// padded to the kernel's row length. LT_MLIR_MATMUL=codegen makes every shape the kernel fits
// take it, whatever the host's timing would choose. Lazy results (forward and both gradients)
// are checked against eager, which runs the same convolutions on OpenBLAS: float32 products
// summed in another order. A weight gradient sums 12.5k products of unit normals (16 images of
// 28x28) whose partial sums reach a few hundred, so its entries differ by up to ~1e-3 however
// small they end: 1e-4 relative plus 2e-3 absolute.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "lazy_vs_eager.h"

namespace {

struct Config {
  int64_t n, c, o, h, w, k, stride, pad, dil, groups;
  std::string str() const {
    return "N " + std::to_string(n) + ", C " + std::to_string(c) + " -> " + std::to_string(o) +
           ", " + std::to_string(h) + "x" + std::to_string(w) + ", kernel " + std::to_string(k) +
           ", stride " + std::to_string(stride) + ", pad " + std::to_string(pad) + ", dilation " +
           std::to_string(dil) + ", groups " + std::to_string(groups);
  }
};

class ConvGemm : public lt_test::MlirFromScratch {
 protected:
  void SetUp() override {
    lt_test::MlirFromScratch::SetUp();
    setenv("LT_MLIR_MATMUL", "codegen", 1);
  }
  void TearDown() override {
    unsetenv("LT_MLIR_MATMUL");
    lt_test::MlirFromScratch::TearDown();
  }
};

// conv2d of inputs {x, w, b, r} and the gradients of sum(conv2d * r) in x, w and b.
std::vector<lt::Tensor> conv_and_grads(const std::vector<lt::Tensor>& in, const Config& k) {
  lt::Tensor x = in[0].detach().requires_grad_(), w = in[1].detach().requires_grad_(),
             b = in[2].detach().requires_grad_();
  lt::Tensor y =
      lt::conv2d(x, w, b, {k.stride, k.stride}, {k.pad, k.pad}, {k.dil, k.dil}, k.groups);
  (y * in[3]).sum().backward();
  return {y, x.grad(), w.grad(), b.grad()};
}

std::vector<lt::Tensor> inputs(const Config& k, lt::Dtype dtype = lt::kFloat32) {
  const int64_t oh = (k.h + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
  const int64_t ow = (k.w + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
  const lt::TensorOptions o = lt::TensorOptions().dtype(dtype);
  return {lt::randn({k.n, k.c, k.h, k.w}, o), lt::randn({k.o, k.c / k.groups, k.k, k.k}, o),
          lt::randn({k.o}, o), lt::randn({k.n, k.o, oh, ow}, o)};
}

void expect_matches(const Config& k, lt::Dtype dtype = lt::kFloat32) {
  lt_test::lazy_matches_eager(
      [&](const std::vector<lt::Tensor>& in) { return conv_and_grads(in, k); }, inputs(k, dtype),
      1e-4, 2e-3, k.str());
}

// The small ResNet's convolutions (28x28, 14x14, 7x7; 3x3 and the strided 1x1 shortcut): each
// float32 step whose product the kernel fits runs on it.
TEST_F(ConvGemm, ResnetConvolutionsMatchEagerOnGeneratedKernels) {
  lt::manual_seed(1);
  const std::vector<Config> configs = {{16, 24, 24, 28, 28, 3, 1, 1, 1, 1},
                                       {16, 24, 48, 28, 28, 3, 2, 1, 1, 1},
                                       {16, 48, 48, 14, 14, 3, 1, 1, 1, 1},
                                       {16, 96, 96, 7, 7, 3, 1, 1, 1, 1},
                                       {16, 24, 48, 28, 28, 1, 2, 0, 1, 1}};
  for (const Config& k : configs) {
    lt::clear_compile_cache();  // specialized code for each (shape-generic code runs OpenBLAS)
    expect_matches(k);
  }
  // Per config: forward, input and weight gradient, but the 1x1 forward (k = 24, under the
  // kernel's 32). The 24-channel input gradients (k = 24 too) run with their depth padded to 32.
  EXPECT_EQ(lt::metrics::counter("CodegenConvSteps"), 14)
      << "steps whose GEMMs run generated kernels";
}

// 48 -> 48 channels at 14x14: all three steps fit (K = 432 rows, Og = 48 >= 32 as the input
// gradient's k, the weight gradient's 48 columns whole vectors).
TEST_F(ConvGemm, ForwardAndBothGradientsTakeTheKernels) {
  lt::manual_seed(2);
  expect_matches({8, 48, 48, 14, 14, 3, 1, 1, 1, 1});
  EXPECT_EQ(lt::metrics::counter("CodegenConvSteps"), 3);
}

// Input gradients whose k (output channels per group) is under the kernel's depth: w^T's extra
// columns and g's extra rows are zeros, with groups and a stride.
TEST_F(ConvGemm, ShallowInputGradientsRunPaddedToTheKernelsDepth) {
  lt::manual_seed(4);
  expect_matches({8, 24, 24, 28, 28, 3, 1, 1, 1, 1});
  expect_matches({4, 16, 24, 13, 11, 3, 2, 1, 1, 1});
  expect_matches({4, 32, 48, 12, 12, 3, 1, 1, 1, 2});  // 24 output channels per group
  // All three steps of each take kernels (the forward steps' k, C x 9, is at least 32).
  EXPECT_EQ(lt::metrics::counter("CodegenConvSteps"), 9);
}

// With each kernel timed against OpenBLAS on this host (no LT_MLIR_MATMUL), a convolution with
// close calls among its kernels is timed again in its step: the first 18 runs alternate all of
// its kernels with those that won alone, then one side is kept. Every run matches eager.
TEST_F(ConvGemm, CloseCallsAreDecidedInTheirStep) {
  unsetenv("LT_MLIR_MATMUL");
  lt::manual_seed(5);
  const Config k{6, 24, 24, 20, 20, 3, 1, 1, 1, 1};  // shapes no other test compiles kernels for
  for (int step = 0; step < 24; ++step) expect_matches(k);
  const int64_t trials = lt::metrics::counter("CodegenConvTrials"),
                kept = lt::metrics::counter("CodegenMatmulTrialKept"),
                dropped = lt::metrics::counter("CodegenMatmulTrialDropped");
  EXPECT_EQ(kept + dropped, trials) << lt::metrics::report();  // each decided once
  EXPECT_GE(
      lt::metrics::counter("CodegenMatmulChosen") + lt::metrics::counter("CodegenMatmulDeclined"),
      1)
      << "the kernels were timed against OpenBLAS";
}

// Random configurations: strides, padding, dilation, groups, odd sizes, a batch of 1; the chunk
// widths are padded to the kernel's row length whatever they are.
TEST_F(ConvGemm, RandomConfigurationsMatchEager) {
  lt::manual_seed(3);
  std::mt19937 gen(11);
  auto pick = [&](std::vector<int64_t> v) { return v[gen() % v.size()]; };
  for (int trial = 0; trial < 10; ++trial) {
    Config k;
    k.groups = pick({1, 1, 2});
    k.c = k.groups * pick({8, 16, 32, 40});
    k.o = k.groups * pick({16, 32, 40, 48});
    k.n = pick({1, 3, 8});
    k.h = pick({5, 9, 13, 16});
    k.w = pick({6, 11, 16});
    k.k = pick({1, 3, 5});
    k.stride = pick({1, 2});
    k.pad = pick({0, 1, 2});
    k.dil = pick({1, 2});
    if (k.h + 2 * k.pad < k.dil * (k.k - 1) + 1 || k.w + 2 * k.pad < k.dil * (k.k - 1) + 1)
      k.pad = k.dil * (k.k - 1);
    lt::clear_compile_cache();
    expect_matches(k);
  }
  EXPECT_GT(lt::metrics::counter("CodegenConvSteps"), 0);
}

// Operands that are not dense row-major (a transposed view of the images), an empty batch, and
// float64 (no generated kernels: OpenBLAS's double GEMMs).
TEST_F(ConvGemm, ViewsEmptyBatchesAndDoublesMatchEager) {
  lt::manual_seed(4);
  const Config k{4, 32, 48, 12, 12, 3, 1, 1, 1, 1};
  lt_test::TensorsFn transposed = [&](const std::vector<lt::Tensor>& in) {
    std::vector<lt::Tensor> v = in;
    v[0] = in[0].transpose(2, 3);  // [N, C, W, H] read as images of H x W
    return conv_and_grads(v, k);
  };
  lt_test::lazy_matches_eager(transposed, inputs(k), 1e-4, 2e-3, "transposed images");
  EXPECT_EQ(lt::metrics::counter("CodegenConvSteps"), 3);
  lt::clear_compile_cache();
  expect_matches({0, 32, 48, 12, 12, 3, 1, 1, 1, 1});
  lt::clear_compile_cache();
  const int64_t before = lt::metrics::counter("CodegenConvSteps");
  expect_matches(k, lt::kFloat64);
  EXPECT_EQ(lt::metrics::counter("CodegenConvSteps"), before) << "float64 runs OpenBLAS";
}

}  // namespace
