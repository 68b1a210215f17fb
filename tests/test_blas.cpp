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

}  // namespace
