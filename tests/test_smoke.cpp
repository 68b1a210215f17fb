#include <gtest/gtest.h>
#include <lt/lt.h>
TEST(Smoke, AddWorks) {
  auto a = lt::tensor(std::vector<float>{1, 2, 3});
  EXPECT_EQ((a + a).to_vector<float>(), (std::vector<float>{2, 4, 6}));
}
