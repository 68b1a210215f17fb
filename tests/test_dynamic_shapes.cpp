// Dynamic shapes (docs/ARCHITECTURE.md, "Dynamic shapes"): a graph that misses the compile cache
// only because sizes changed since a graph of the same structure gets shape-generic code, which
// every later graph of that structure reuses when its guard holds; sizes 0 and 1 are never
// merged; equal sizes share a symbol until a graph shows them different. Every result is
// checked against the eager device: exactly for data movement, and with rtol 1e-5 / atol 1e-6
// where a reduction or matmul may sum in another order (float32).
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "lazy_vs_eager.h"

namespace {

const lt::Device kLazy("lazy");

int64_t counter(const char* name) { return lt::metrics::counter(name); }

class DynamicShapes : public lt_test::MlirFromScratch {
 protected:
  void TearDown() override {
    unsetenv("LT_DYNAMIC_SHAPES");
    MlirFromScratch::TearDown();
  }
};

TEST_F(DynamicShapes, ElementwiseAndReductionsCompileTwiceForFiveSizes) {
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    const lt::Tensor& x = v[0];
    return {lt::softmax(x * 2.0f, 1) + x.mean(0), (x - x.amax(1, true)).exp().sum()};
  };
  lt::manual_seed(1);
  for (int64_t n : {5, 9, 17, 33, 3})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 12})}, 1e-5, 1e-6, "n " + std::to_string(n));
  // The first size: specialized. The second: generic (one symbol, n). Then three reuses.
  EXPECT_EQ(counter("UncachedCompile"), 2) << lt::metrics::report();
  EXPECT_EQ(counter("StaticCompile"), 1);
  EXPECT_EQ(counter("DynamicCompile"), 1);
  EXPECT_EQ(counter("ShapeGeneralization"), 1);
  EXPECT_EQ(counter("DynamicCacheHit"), 3);
}

TEST_F(DynamicShapes, SizesZeroAndOneAreNeverMerged) {
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {(v[0] + v[1]).relu().sum(0), v[0] * 3.0f};
  };
  lt::manual_seed(2);
  for (int64_t n : {4, 6})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 3}), lt::randn({3})}, 1e-5, 1e-6, "n");
  EXPECT_EQ(counter("DynamicCompile"), 1);
  // n = 1 and n = 0 fail the generic code's guard (dynamic sizes are >= 2): specialized code.
  for (int64_t n : {1, 0}) {
    const int64_t statics = counter("StaticCompile");
    lt_test::lazy_matches_eager(f, {lt::randn({n, 3}), lt::randn({3})}, 1e-5, 1e-6,
                                "n " + std::to_string(n));
    EXPECT_EQ(counter("StaticCompile"), statics + 1) << "n " << n;
  }
  // Larger sizes still reuse the generic code.
  const int64_t compiles = counter("UncachedCompile");
  lt_test::lazy_matches_eager(f, {lt::randn({50, 3}), lt::randn({3})}, 1e-5, 1e-6, "n 50");
  EXPECT_EQ(counter("UncachedCompile"), compiles);
}

TEST_F(DynamicShapes, ABroadcastOneNeverRunsCodeMadeForEqualSizes) {
  // a + b with b's rows equal to a's in the first graphs, then 1: the broadcast is another
  // computation, and the guard (dynamic sizes >= 2) keeps it off the generic code.
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {v[0] + v[1]};
  };
  lt::manual_seed(3);
  for (int64_t n : {3, 5})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 4}), lt::randn({n, 4})}, 0, 0, "equal");
  EXPECT_EQ(counter("DynamicCompile"), 1);
  lt_test::lazy_matches_eager(f, {lt::randn({6, 4}), lt::randn({1, 4})}, 0, 0, "broadcast");
  lt_test::lazy_matches_eager(f, {lt::randn({7, 4}), lt::randn({7, 4})}, 0, 0, "equal again");
  EXPECT_EQ(counter("DynamicCacheHit"), 1);
}

TEST_F(DynamicShapes, EqualSizesShareASymbolUntilAGraphShowsThemDifferent) {
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    const lt::Tensor& x = v[0];
    return {(x * 2.0f).exp().sum(1), x.sum(0), x.t().contiguous() + 1.0f};
  };
  lt::manual_seed(4);
  for (int64_t n : {4, 6})
    lt_test::lazy_matches_eager(f, {lt::randn({n, n})}, 1e-5, 1e-6, "square");
  EXPECT_EQ(counter("DynamicCompile"), 1);
  // Rows and columns now differ: the one-symbol code does not admit it; a new generalization.
  lt_test::lazy_matches_eager(f, {lt::randn({5, 7})}, 1e-5, 1e-6, "5x7");
  EXPECT_EQ(counter("ShapeGeneralization"), 2);
  EXPECT_EQ(counter("DynamicCompile"), 2);
  lt_test::lazy_matches_eager(f, {lt::randn({9, 3})}, 1e-5, 1e-6, "9x3");
  lt_test::lazy_matches_eager(f, {lt::randn({8, 8})}, 1e-5, 1e-6, "8x8");
  EXPECT_EQ(counter("DynamicCompile"), 2);
}

TEST_F(DynamicShapes, ReshapesSlicesAndExpandsWithRunTimeSizes) {
  // Reshapes with one dynamic size a side (a collapse and an expansion: views) and with two
  // (read through the linear index); a slice whose start moves with the size; expand; permute.
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    const lt::Tensor &x = v[0], &y = v[1];
    const int64_t n = x.size(0), m = y.size(1);
    return {(x * 2.0f).reshape({n * 2, 3}) + 1.0f, (x + 1.0f).reshape({n * 6}),
            (y - 1.0f).reshape({n * m}) * 2.0f,    (y * 3.0f).reshape({m, n}) + 0.5f,
            (x * 2.0f).narrow(0, 1, n - 1),        (x + 2.0f).select(0, n - 1),
            x.sum(1, true).expand({n, 6}) * x,     (y * 1.5f).permute({1, 0}) - 1.0f};
  };
  lt::manual_seed(5);
  for (int64_t n : {3, 4, 7, 10}) {
    lt_test::lazy_matches_eager(f, {lt::randn({n, 6}), lt::randn({n, n + 2})}, 1e-6, 1e-6,
                                "n " + std::to_string(n));
  }
  EXPECT_EQ(counter("UncachedCompile"), 2) << lt::metrics::report();
  EXPECT_EQ(counter("DynamicCacheHit"), 2);
}

TEST_F(DynamicShapes, LargeSizesChooseThreadsAtRunTime) {
  // Shape-generic loops decide at run time whether the work repays the threads.
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {(v[0] * 2.0f).tanh() + v[0], lt::softmax(v[0], 1)};
  };
  lt::manual_seed(6);
  for (int64_t n : {16, 24, 4000, 9})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 512})}, 1e-5, 1e-6, "n");
  EXPECT_GT(counter("MlirRuntimeParallelChoice"), 0);
  EXPECT_EQ(counter("DynamicCompile"), 1);
}

TEST_F(DynamicShapes, MatmulWithRunTimeRowsRunsTheGeneratedKernelOnChunks) {
  // Rows at run time, k and n fixed: whole chunks of rows run a kernel compiled for a chunk,
  // the rest OpenBLAS. 1e-3 absolute: both sum k = 64 float32 products of randn values, in
  // different orders (as test_lazy's CompiledMatmulByGeneratedCodeMatchesEager).
  setenv("LT_MLIR_MATMUL", "codegen", 1);
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {lt::matmul(v[0] * 0.5f, v[1]).relu()};
  };
  lt::manual_seed(9);
  const lt::Tensor w = lt::randn({64, 64});
  for (int64_t n : {40, 72, 200, 136, 8})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 64}), w}, 0, 1e-3, "rows");
  unsetenv("LT_MLIR_MATMUL");
  EXPECT_EQ(counter("DynamicCompile"), 1);
  EXPECT_EQ(counter("CodegenMatmulChunked"), 1);
  EXPECT_GT(counter("CodegenMatmulRuns"), 0);
}

TEST_F(DynamicShapes, MatmulWithManyRunTimeRowsRunsChunksOf256First) {
  // Many rows: chunks of 256 on a kernel of their own, then chunks of the small size (128 for
  // n = 64), then OpenBLAS for the rest; 400 rows take all three. Tolerance as above.
  setenv("LT_MLIR_MATMUL", "codegen", 1);
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {lt::matmul(v[0] * 0.5f, v[1]).relu()};
  };
  lt::manual_seed(10);
  const lt::Tensor w = lt::randn({64, 64});
  for (int64_t n : {40, 600, 400, 256, 520, 17})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 64}), w}, 0, 1e-3, "rows");
  unsetenv("LT_MLIR_MATMUL");
  EXPECT_EQ(counter("DynamicCompile"), 1);
  EXPECT_EQ(counter("CodegenMatmulChunked"), 1);
  EXPECT_EQ(counter("CodegenMatmulBigChunks"), 1);
  EXPECT_GT(counter("CodegenMatmulRuns"), 0);
}

TEST_F(DynamicShapes, MatmulWithRunTimeKRunsTheGeneratedKernelOnChunksOfK) {
  // k at run time (a weight gradient x^T g, k the batch), rows and n fixed: the chunks of 64 of
  // k add up in C through a kernel that accumulates, the rest of k runs OpenBLAS, and a k below
  // one chunk (or 0) OpenBLAS alone. 256 columns: x^T is copied for the kernel, which the copy
  // rule allows from 256 columns of C on (executable.cpp, run_matmul). Tolerance: sums of up to 200
  // float32 products of randn values in different orders; 2e-3 absolute.
  setenv("LT_MLIR_MATMUL", "codegen", 1);
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {lt::matmul(v[0].t(), v[1] * 0.5f) + 1.0f};
  };
  lt::manual_seed(10);
  for (int64_t k : {100, 64, 130, 200, 20, 0, 128})
    lt_test::lazy_matches_eager(f, {lt::randn({k, 32}), lt::randn({k, 256})}, 0, 2e-3,
                                "k " + std::to_string(k));
  unsetenv("LT_MLIR_MATMUL");
  EXPECT_EQ(counter("DynamicCompile"), 1) << lt::metrics::report();
  EXPECT_EQ(counter("CodegenMatmulChunked"), 1);
  EXPECT_GT(counter("CodegenMatmulRuns"), 0);
}

TEST_F(DynamicShapes, LinearWithRunTimeRowsRunsTransposedOnChunksOfColumns) {
  // x W^T with the rows of x at run time runs as C^T = W x^T (W read as it lies): the columns of
  // C^T in chunks of 64 on the kernel, each chunk of x^T and of C^T copied, the rest and a batch
  // under 64 on OpenBLAS. Tolerance as above: k = 96 products; 1e-3 absolute.
  setenv("LT_MLIR_MATMUL", "codegen", 1);
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {(lt::matmul(v[0], v[1].t()) * 0.5f).relu()};
  };
  lt::manual_seed(11);
  const lt::Tensor w = lt::randn({256, 96});
  for (int64_t n : {100, 64, 130, 200, 20, 128})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 96}), w}, 0, 1e-3, "n");
  unsetenv("LT_MLIR_MATMUL");
  EXPECT_EQ(counter("DynamicCompile"), 1) << lt::metrics::report();
  EXPECT_EQ(counter("CodegenMatmulChunked"), 1);
  EXPECT_GE(counter("CodegenMatmulTransposed"), 1);
  EXPECT_GT(counter("CodegenMatmulRuns"), 0);
}

TEST_F(DynamicShapes, TrainingWithVariableBatchesMatchesEager) {
  // An MLP trained with SGD on both devices from equal weights; the batch size changes each
  // step. Weights after every step within 1e-4 (float32 matmuls and sums in other orders).
  lt::manual_seed(7);
  lt::nn::Sequential cpu{lt::nn::Linear(20, 16), lt::nn::ReLU(), lt::nn::Linear(16, 5)};
  lt::nn::Sequential lazy{lt::nn::Linear(20, 16), lt::nn::ReLU(), lt::nn::Linear(16, 5)};
  {
    lt::NoGradGuard g;
    auto pc = cpu->parameters(), pl = lazy->parameters();
    for (size_t i = 0; i < pc.size(); ++i) pl[i].copy_(pc[i]);
  }
  lazy->to(kLazy);
  lt::optim::SGD oc(cpu->parameters(), lt::optim::SGDOptions(0.1)),
      ol(lazy->parameters(), lt::optim::SGDOptions(0.1));
  for (int64_t b : {16, 24, 9, 31, 1, 40, 2, 17}) {
    lt::Tensor x = lt::randn({b, 20}), y = lt::randint(0, 5, {b});
    for (bool on_lazy : {false, true}) {
      auto& m = on_lazy ? lazy : cpu;
      auto& o = on_lazy ? ol : oc;
      o.zero_grad();
      lt::Tensor loss =
          lt::cross_entropy(m->forward(on_lazy ? x.to(kLazy) : x), on_lazy ? y.to(kLazy) : y);
      loss.backward();
      o.step();
    }
    auto pc = cpu->parameters(), pl = lazy->parameters();
    for (size_t i = 0; i < pc.size(); ++i)
      ASSERT_TRUE(lt::allclose(pl[i].to("cpu"), pc[i], 1e-4, 1e-5)) << "batch " << b;
  }
  EXPECT_GE(counter("DynamicCompile"), 1);
  EXPECT_LE(counter("UncachedCompile"), 5) << lt::metrics::report();
}

TEST_F(DynamicShapes, TransformerSequenceLengthsCompileBoundedly) {
  // A TransformerEncoderLayer (eval: no dropout) forward and backward over five lengths,
  // outputs and gradients as eager's. Three compiles: the first step (parameters get their
  // gradients), the second (gradients accumulate: another structure), and generic code from the
  // third on.
  lt::manual_seed(8);
  lt::nn::TransformerEncoderLayer cpu(
      lt::nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32));
  cpu->eval();
  lt::nn::TransformerEncoderLayer lazy(
      std::dynamic_pointer_cast<lt::nn::TransformerEncoderLayerImpl>(cpu->clone()));
  lazy->to(kLazy);
  for (int64_t s : {7, 12, 20, 9, 16}) {
    lt::Tensor x = lt::randn({s, 3, 16});
    lt::Tensor xc = x.clone().requires_grad_(true), xl = x.to(kLazy).requires_grad_(true);
    lt::Tensor oc = cpu->forward(xc), ol = lazy->forward(xl);
    (oc * oc).sum().backward();
    (ol * ol).sum().backward();
    lt::mark_step();
    EXPECT_TRUE(lt::allclose(ol.to("cpu"), oc, 1e-4, 1e-5)) << "length " << s;
    EXPECT_TRUE(lt::allclose(xl.grad().to("cpu"), xc.grad(), 1e-4, 1e-4)) << "length " << s;
  }
  EXPECT_EQ(counter("UncachedCompile"), 3) << lt::metrics::report();
  EXPECT_EQ(counter("DynamicCacheHit"), 2);
}

TEST_F(DynamicShapes, LibraryStepsTakeTheirSizesAtRunTime) {
  // Convolution, pooling and their gradients over images of changing size, an embedding of a
  // changing number of tokens, cat, argmax: eager kernels between compiled clusters, each given
  // this graph's sizes and size attributes (the pooling gradients' input extents).
  lt::manual_seed(10);
  const lt::Tensor w = lt::randn({4, 2, 3, 3}), table = lt::randn({11, 5});
  for (int64_t h : {12, 16, 20, 14}) {
    lt::Tensor x = lt::randn({2, 2, h, h + 2}), tok = lt::randint(0, 11, {h});
    lt::Tensor wc = w.clone().requires_grad_(true), wl = w.to(kLazy).requires_grad_(true);
    auto net = [](const lt::Tensor& x, const lt::Tensor& w) {
      lt::Tensor y = lt::conv2d(x, w, {}, {1, 1}, {1, 1}).relu();
      return lt::avg_pool2d(lt::max_pool2d(y, {2, 2}), {2, 2});
    };
    lt::Tensor yc = net(x, wc), yl = net(x.to(kLazy), wl);
    (yc * yc).sum().backward();
    (yl * yl).sum().backward();
    lt::Tensor ec = lt::cat({lt::embedding(tok, table), table}, 0).argmax(1);
    lt::Tensor el =
        lt::cat({lt::embedding(tok.to(kLazy), table.to(kLazy)), table.to(kLazy)}, 0).argmax(1);
    lt::mark_step();
    EXPECT_TRUE(lt::allclose(yl.to("cpu"), yc, 1e-5, 1e-5)) << "h " << h;
    EXPECT_TRUE(lt::allclose(wl.grad().to("cpu"), wc.grad(), 1e-4, 1e-4)) << "h " << h;
    EXPECT_TRUE(lt::equal(el.to("cpu"), ec)) << "h " << h;
  }
  EXPECT_GE(counter("DynamicCacheHit"), 1) << lt::metrics::report();
}

// A cluster of shape-generic code whose own sizes never change is the static graph's function:
// it takes no sizes argument, and the compiled cluster is shared with the static graph. Here
// the only cluster is a fixed [5, 7] input's chain, beside a matmul (a library step) whose
// rows change.
TEST_F(DynamicShapes, AStaticClusterOfGenericCodeIsTheStaticGraphs) {
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {lt::matmul(v[0], v[1]), (v[2] * 3.0f + 1.0f).sigmoid()};
  };
  lt::manual_seed(9);
  const lt::Tensor w = lt::randn({16, 4}), fixed = lt::randn({5, 7});
  for (int64_t rows : {6, 9, 13})
    lt_test::lazy_matches_eager(f, {lt::randn({rows, 16}), w, fixed}, 1e-5, 1e-6,
                                "rows " + std::to_string(rows));
  EXPECT_EQ(counter("DynamicCompile"), 1) << lt::metrics::report();
  EXPECT_GE(counter("MlirClustersReused"), 1) << lt::metrics::report();
}

TEST_F(DynamicShapes, OffCompilesEveryShape) {
  setenv("LT_DYNAMIC_SHAPES", "off", 1);
  const lt_test::TensorsFn f = [](const std::vector<lt::Tensor>& v) -> std::vector<lt::Tensor> {
    return {(v[0] * 2.0f).exp()};
  };
  for (int64_t n : {5, 6, 7})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 4})}, 1e-6, 1e-6, "off");
  EXPECT_EQ(counter("UncachedCompile"), 3);
  EXPECT_EQ(counter("DynamicCompile"), 0);
}

}  // namespace
