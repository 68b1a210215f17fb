// A libtorch MNIST program of the pytorch/examples kind, built against the installed
// lazytensor::torch drop-in headers with no edit but the device: a small convolutional net
// trained with torch::data (MNIST reader, Normalize, Stack, make_data_loader) and SGD, then
// evaluated. Usage: mnist_program DEVICE DATA_DIR [TRAIN_BATCHES]. Exits non-zero unless the
// test accuracy passes 60% (Fashion-MNIST after a few hundred steps: chance is 10%).
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*train=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: mnist_program DEVICE DATA_DIR [TRAIN_BATCHES]\n";
    return 2;
  }
  torch::manual_seed(1);
  const torch::Device device{std::string(argv[1])};
  const std::string root = argv[2];
  const int64_t max_batches = argc > 3 ? std::atoll(argv[3]) : 300;
  const int64_t kTrainBatchSize = 64, kTestBatchSize = 1000;

  Net model;
  model.to(device);

  auto train_dataset = torch::data::datasets::MNIST(root)
                           .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                           .map(torch::data::transforms::Stack<>());
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_dataset), kTrainBatchSize);
  auto test_dataset = torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                          .map(torch::data::transforms::Stack<>());
  const size_t test_size = test_dataset.size().value();
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), kTestBatchSize);

  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));

  model.train();
  int64_t batch_idx = 0;
  for (auto& batch : *train_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();
    if (++batch_idx % 100 == 0) {
      const float l = loss.template item<float>();
      if (std::isnan(l)) return 1;
      std::printf("%s: batch %ld loss %.4f\n", device.str().c_str(), static_cast<long>(batch_idx),
                  l);
    }
    if (batch_idx == max_batches) break;
  }

  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : *test_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(test_size);
  std::printf("%s: test loss %.4f, accuracy %.4f\n", device.str().c_str(),
              test_loss / static_cast<double>(test_size), accuracy);
  return accuracy > 0.6 ? 0 : 1;
}
