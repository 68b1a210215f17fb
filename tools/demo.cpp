// lt-demo: a short tour of the eager API (the main job until training lands).
#include <chrono>
#include <iostream>

#include <lt/lt.h>

int main() {
  lt::manual_seed(0);
  lt::Device dev("cpu");
  lt::Tensor x = lt::randn({2, 4}, dev);
  lt::Tensor y = lt::ones({2, 4}, lt::TensorOptions().dtype(lt::kFloat32).device(dev));
  lt::Tensor z = x * y + 1.5f;
  std::cout << "x =\n" << x << "\nz = x * y + 1.5 =\n" << z << "\n";
  z.add_(y);
  lt::Tensor v = z.view({8});
  v.mul_(2.0f);
  std::cout << "after z.add_(y) and z.view({8}).mul_(2):\n" << z << "\n";
  std::cout << "z.sum() = " << z.sum().item<float>() << ", softmax(z, 1) =\n"
            << lt::softmax(z, 1) << "\n";
  auto t0 = std::chrono::steady_clock::now();
  lt::Tensor a = lt::randn({512, 512}), b = lt::randn({512, 512});
  lt::Tensor c = lt::matmul(a, b);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "matmul 512x512 @ 512x512 (OpenBLAS): " << ms << " ms, c[0,0] = "
            << c.select(0, 0).select(0, 0).item<float>() << "\n";
  try {
    lt::matmul(lt::zeros({2, 3}), lt::zeros({4, 5}));
  } catch (const lt::Error& e) {
    std::cout << "errors name the op and shapes: " << e.what() << "\n";
  }
  return 0;
}
