// Linear, Conv2d, LayerNorm, BatchNorm2d, Embedding, Sequential.
#include <cmath>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/nn/modules.h"

namespace lt::nn {
namespace {
// U(-bound, bound): PyTorch's kaiming_uniform_(a = sqrt(5)) for weights and its bias init
// both come to bound = 1 / sqrt(fan_in).
Tensor uniform(IntList sizes, double bound) { return (rand(sizes) * 2.0 - 1.0) * bound; }
}  // namespace

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias) {
  LT_CHECK(in > 0 && out > 0, "Linear: in_features ", in, " and out_features ", out,
           " must be positive");
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight = register_parameter("weight", uniform({out, in}, bound));
  if (with_bias) bias = register_parameter("bias", uniform({out}, bound));
}
Tensor LinearImpl::forward(const Tensor& x) { return linear(x, weight, bias); }

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : options(o) {
  LT_CHECK(o.in_channels > 0 && o.out_channels > 0 && o.kernel_size > 0 && o.groups_ > 0 &&
               o.in_channels % o.groups_ == 0 && o.out_channels % o.groups_ == 0,
           "Conv2d: channels ", o.in_channels, " -> ", o.out_channels, ", kernel ",
           o.kernel_size, ", groups ", o.groups_, " are not a valid configuration");
  int64_t fan_in = o.in_channels / o.groups_ * o.kernel_size * o.kernel_size;
  double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight = register_parameter(
      "weight", uniform({o.out_channels, o.in_channels / o.groups_, o.kernel_size, o.kernel_size},
                        bound));
  if (o.bias_) bias = register_parameter("bias", uniform({o.out_channels}, bound));
}
Tensor Conv2dImpl::forward(const Tensor& x) {
  const auto& o = options;
  return conv2d(x, weight, bias, {o.stride_, o.stride_}, {o.padding_, o.padding_},
                {o.dilation_, o.dilation_}, o.groups_);
}

LayerNormImpl::LayerNormImpl(std::vector<int64_t> shape, double eps, bool affine)
    : normalized_shape(std::move(shape)), eps(eps) {
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
  }
}
Tensor LayerNormImpl::forward(const Tensor& x) {
  return layer_norm(x, normalized_shape, weight, bias, eps);
}

BatchNorm2dImpl::BatchNorm2dImpl(int64_t n, double eps, double momentum)
    : num_features(n), eps(eps), momentum(momentum) {
  weight = register_parameter("weight", ones({n}));
  bias = register_parameter("bias", zeros({n}));
  running_mean = register_buffer("running_mean", zeros({n}));
  running_var = register_buffer("running_var", ones({n}));
  num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
}
Tensor BatchNorm2dImpl::forward(const Tensor& x) {
  LT_CHECK(x.dim() == 4 && x.size(1) == num_features, "BatchNorm2d: expected input [N, ",
           num_features, ", H, W], got ", shape_str(x.sizes()));
  Tensor mean, var;
  if (is_training()) {
    mean = x.mean({0, 2, 3}, true);
    Tensor c = x - mean;
    var = (c * c).mean({0, 2, 3}, true);
    NoGradGuard g;
    const double n = static_cast<double>(x.numel() / num_features);
    Tensor unbiased = var.detach().reshape({num_features}) * (n / std::max(n - 1.0, 1.0));
    running_mean.mul_(1.0 - momentum).add_(mean.detach().reshape({num_features}) * momentum);
    running_var.mul_(1.0 - momentum).add_(unbiased * momentum);
    num_batches_tracked.add_(1);
  } else {
    mean = running_mean.reshape({1, num_features, 1, 1});
    var = running_var.reshape({1, num_features, 1, 1});
  }
  Tensor y = (x - mean) * rsqrt(var + eps);
  return y * weight.reshape({1, num_features, 1, 1}) + bias.reshape({1, num_features, 1, 1});
}

EmbeddingImpl::EmbeddingImpl(int64_t num, int64_t dim) {
  LT_CHECK(num > 0 && dim > 0, "Embedding: sizes ", num, " x ", dim, " must be positive");
  weight = register_parameter("weight", randn({num, dim}));
}
Tensor EmbeddingImpl::forward(const Tensor& indices) { return embedding(indices, weight); }

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor h = x;
  for (auto& f : steps_) h = f(h);
  return h;
}

}  // namespace lt::nn
