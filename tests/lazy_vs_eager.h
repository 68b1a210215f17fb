// One check for tests of whole lazy graphs: a function of tensors run on eager inputs and on
// their lazy copies (one barrier), every output compared: exactly when rtol and atol are 0.
#pragma once
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <functional>
#include <string>
#include <vector>

namespace lt_test {

using TensorsFn = std::function<std::vector<lt::Tensor>(const std::vector<lt::Tensor>&)>;

inline void lazy_matches_eager(const TensorsFn& f, const std::vector<lt::Tensor>& in, double rtol,
                               double atol, const std::string& what) {
  std::vector<lt::Tensor> lin;
  for (const lt::Tensor& t : in) lin.push_back(t.to(lt::Device("lazy")));
  std::vector<lt::Tensor> want = f(in), got = f(lin);
  lt::mark_step();
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    lt::Tensor g = got[i].to("cpu");
    ASSERT_EQ(g.sizes().vec(), want[i].sizes().vec()) << what << " output " << i;
    const bool same =
        rtol == 0 && atol == 0 ? lt::equal(g, want[i]) : lt::allclose(g, want[i], rtol, atol);
    EXPECT_TRUE(same) << what << " output " << i << "\n" << g << want[i];
  }
}

// A test of the lazy device on the MLIR backend that starts as a new process would: an empty
// compile cache and zeroed metrics.
class MlirFromScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = lt::lazy_backend();
    lt::set_lazy_backend("mlir");
    lt::clear_compile_cache();
    lt::metrics::reset();
  }
  void TearDown() override { lt::set_lazy_backend(before_); }

 private:
  std::string before_;
};

}  // namespace lt_test
