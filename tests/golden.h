// Helpers of the tests that compare against PyTorch's printed values: the scripts under
// tests/reference/ fill every input and parameter by one formula (tests/reference/golden.py),
// which filled() repeats, and print the results, which expect_golden() checks element by element.
#pragma once
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <string>
#include <vector>

namespace lt_test {

// A tensor's values in float64, on the host.
inline std::vector<double> values_of(const lt::Tensor& t) {
  return t.cpu().to(lt::kFloat64).to_vector<double>();
}

// The k-th filled tensor on `d` (float64): element j is 0.4 sin(1.7 j + 0.9 k + 0.1).
inline lt::Tensor filled(const std::vector<int64_t>& sizes, int k, lt::Device d) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t j = 0; j < v.size(); ++j)
    v[j] = 0.4 * std::sin(1.7 * static_cast<double>(j) + 0.9 * k + 0.1);
  return lt::tensor(v, sizes).to(d);
}

// `got` has `want`'s values within `tol` (and, when given, the shape `sizes`).
inline void expect_golden(const lt::Tensor& got, const std::vector<double>& want, double tol,
                          const std::string& what, const std::vector<int64_t>* sizes = nullptr) {
  if (sizes) ASSERT_EQ(got.sizes().vec(), *sizes) << what;
  std::vector<double> g = values_of(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], tol) << what << " [" << i << "]";
}

}  // namespace lt_test
