// Products big enough to be split over our threads (eager/matmul.cpp, blas_gemm: single-threaded
// OpenBLAS parts, rows of C or, with few rows, its columns), with plain and transposed operands,
// against a double-precision reference. Tolerance: float32 sums of k products of randn values,
// in another order than the reference: 1e-5 * sqrt(k) relative to the sum of |terms|, taken as
// 2e-3 absolute for k = 4096 and 1e-3 for k = 512.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

// The worst |got - reference| of a @ b, a [m, k] and b [k, n] on the cpu device.
double worst_error(const lt::Tensor& a, const lt::Tensor& b) {
  const std::vector<double> av = a.contiguous().to_vector<double>(),
                            bv = b.contiguous().to_vector<double>();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const std::vector<double> got = lt::matmul(a, b).to_vector<double>();
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<double> row(static_cast<size_t>(n), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double x = av[static_cast<size_t>(i * k + p)];
      const double* br = bv.data() + p * n;
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += x * br[j];
    }
    for (int64_t j = 0; j < n; ++j)
      worst = std::max(worst,
                       std::abs(got[static_cast<size_t>(i * n + j)] - row[static_cast<size_t>(j)]));
  }
  return worst;
}

TEST(Blas, ProductsSplitOverOurThreadsMatchTheReference) {
  const int threads = lt::get_num_threads();
  lt::set_num_threads(2);
  lt::manual_seed(5);
  // Rows split: 512^3 (2.7e8 flops); with A and B transposed views.
  const lt::Tensor a = lt::randn({512, 512}), b = lt::randn({512, 512});
  EXPECT_LT(worst_error(a, b), 1e-3);
  EXPECT_LT(worst_error(a.t(), b), 1e-3);
  EXPECT_LT(worst_error(a, b.t()), 1e-3);
  // Columns split: 4 rows (fewer than 8 per thread and than the columns), 4 x 4096 x 8192.
  const lt::Tensor c = lt::randn({4, 4096}), d = lt::randn({4096, 8192});
  EXPECT_LT(worst_error(c, d), 2e-3);
  EXPECT_LT(worst_error(lt::randn({4096, 4}).t(), lt::randn({8192, 4096}).t()), 2e-3);
  lt::set_num_threads(threads);
}

// A batch of tiny products with one shared b and a strided a (a transposed view: adaptive
// average pooling's [N, C, 7, 7] x [7, 1]) runs as one product of a's dense copy: each matrix
// as its own product, against a double-precision reference, for float and int64.
TEST(Blas, TinyBatchedProductsOfAStridedViewFoldIntoOne) {
  lt::manual_seed(6);
  const lt::Tensor x = lt::randn({3, 5, 7, 7}), w = lt::randn({7, 2});
  const lt::Tensor a = x.transpose(-1, -2);
  ASSERT_FALSE(a.is_contiguous());
  const lt::Tensor got = lt::matmul(a, w);
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{3, 5, 7, 2}));
  const std::vector<double> g = got.to_vector<double>(), xv = x.to_vector<double>(),
                            wv = w.to_vector<double>();
  for (int64_t b = 0; b < 15; ++b)  // got[b][r][c] = sum_p x[b][p][r] w[p][c]
    for (int64_t r = 0; r < 7; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        double want = 0;
        for (int64_t p = 0; p < 7; ++p) want += xv[b * 49 + p * 7 + r] * wv[p * 2 + c];
        EXPECT_NEAR(g[b * 14 + r * 2 + c], want, 1e-5) << b << ", " << r << ", " << c;
      }
  const lt::Tensor xi = lt::randint(-4, 5, {4, 6, 3, 3}), wi = lt::randint(-4, 5, {3, 1});
  EXPECT_TRUE(lt::equal(lt::matmul(xi.transpose(-1, -2), wi),
                        lt::matmul(xi.transpose(-1, -2).contiguous(), wi)));
}

}  // namespace
