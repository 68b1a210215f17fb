// A libtorch-style program built against the installed lazytensor::torch drop-in headers with
// no edit but the device: fits a cubic polynomial by gradient descent, on the device named by
// argv[1] ("cpu" or "lazy"), and exits non-zero if it did not learn the coefficients.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const torch::Device device(argc > 1 ? std::string(argv[1]) : std::string("cpu"));
  torch::manual_seed(1);
  const torch::Tensor true_w = torch::tensor({{0.5}, {-1.5}, {2.0}});
  const double true_b = 0.25;
  torch::nn::Linear fc(3, 1);
  fc->to(device);
  torch::optim::SGD optimizer(fc->parameters(), torch::optim::SGDOptions(0.3));
  double loss_value = 0;
  for (const auto step : c10::irange(3000)) {
    torch::Tensor x = torch::rand({32, 1}) * 2 - 1;
    torch::Tensor features = torch::cat({x, x.pow(2), x.pow(3)}, 1);
    torch::Tensor target = torch::matmul(features, true_w) + true_b;
    features = features.to(device);
    target = target.to(device);
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(fc->forward(features), target);
    loss.backward();
    optimizer.step();
    if (step % 1000 == 999) loss_value = loss.item<double>();
  }
  torch::Tensor w = fc->weight.to(torch::kCPU).view({3, 1});
  const bool ok = loss_value < 1e-3 && w.allclose(true_w, 0, 0.05);
  std::cout << device.str() << ": loss " << loss_value << ", weights " << w.view({3}) << "\n";
  return ok ? 0 : 1;
}
