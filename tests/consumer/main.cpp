// Built against the *installed* package: proves the headers, the exported target and the
// package config are complete. Exits non-zero on a wrong result.
#include <cmath>
#include <iostream>

#include <lt/lt.h>

int main() {
  lt::Tensor a = lt::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  lt::Tensor b = lt::matmul(a, a.t()) + 1.0f;  // [[6, 12], [12, 26]]
  float s = b.sum().item<float>();
  std::cout << b << "\nsum = " << s << "\n";
  return std::fabs(s - 56.0f) < 1e-5f ? 0 : 1;
}
