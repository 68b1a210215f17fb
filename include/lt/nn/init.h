// torch::nn::init: in-place initializers for parameters, drawn from lt's seeded generator
// (lt::manual_seed) and run without recording gradient history, as libtorch's. Each returns
// the tensor it filled.
#pragma once
#include <cstdint>
#include <tuple>

#include "lt/reduction.h"
#include "lt/scalar.h"
#include "lt/tensor.h"

namespace lt::nn::init {

// The recommended gain for a nonlinearity: 1 (linear, convolutions, sigmoid), 5/3 (tanh),
// sqrt(2) (relu), sqrt(2 / (1 + param^2)) (leaky_relu, param = its negative slope).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight of 2 or more dims: size(1) and size(0) times the receptive
// field (the product of the remaining dims).
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor constant_(Tensor tensor, const Scalar& value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
// The identity matrix (2-d tensors); dirac_: the identity convolution (3 to 5 dims).
Tensor eye_(Tensor matrix);
Tensor dirac_(Tensor tensor);
// U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out)); N(0, gain^2 2 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// std = calculate_gain(nonlinearity, a) / sqrt(fan), fan by `mode`; uniform: bound sqrt(3) std.
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
// A (semi-)orthogonal matrix from the QR decomposition of a normal draw (the tensor seen as
// [size(0), numel / size(0)]), signs fixed by R's diagonal as PyTorch does, times gain.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace lt::nn::init
