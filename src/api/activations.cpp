// Activation functions and feature dropout, as composites of registry primitives (they fuse into
// the surrounding lazy kernel). Branches that could overflow are clamped before the transcendental
// so that the branch `where` does not take contributes 0, not 0 * inf = NaN, to the gradient.
#include <cmath>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"

namespace lt {

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  OpContext ctx("leaky_relu");
  return where(x > 0, x, x * negative_slope);
}

Tensor elu(const Tensor& x, double alpha, double scale, double input_scale) {
  OpContext ctx("elu");
  return in_compute_dtype(x, [&](const Tensor& x) {
    Tensor neg = expm1(x.clamp_max(0.0) * input_scale) * alpha;
    return where(x > 0, x, neg) * scale;
  });
}

Tensor selu(const Tensor& x) {
  return elu(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946);
}

Tensor celu(const Tensor& x, double alpha) {
  OpContext ctx("celu");
  LT_CHECK(alpha != 0, "celu: alpha must not be 0");
  return elu(x, alpha, 1.0, 1.0 / alpha);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  OpContext ctx("softplus");
  return in_compute_dtype(x, [&](const Tensor& x) {
    Tensor bx = x * beta;
    return where(bx > threshold, x, log1p(exp(bx.clamp_max(threshold))) / beta);
  });
}

Tensor log_sigmoid(const Tensor& x) {
  OpContext ctx("log_sigmoid");
  return in_compute_dtype(x,
                          [](const Tensor& x) { return x.clamp_max(0.0) - log1p(exp(-abs(x))); });
}

Tensor mish(const Tensor& x) {
  return in_compute_dtype(x, [](const Tensor& x) { return x * tanh(softplus(x, 1.0, 20.0)); });
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  OpContext ctx("hardtanh");
  LT_CHECK(min_val <= max_val, "hardtanh: min_val ", min_val, " must not exceed max_val ", max_val);
  return x.clamp(min_val, max_val);
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }

Tensor hardsigmoid(const Tensor& x) {
  OpContext ctx("hardsigmoid");
  return in_compute_dtype(x, [](const Tensor& x) { return (x + 3.0).clamp(0.0, 6.0) / 6.0; });
}

Tensor hardswish(const Tensor& x) {
  OpContext ctx("hardswish");
  return in_compute_dtype(x, [](const Tensor& x) { return x * (x + 3.0).clamp(0.0, 6.0) / 6.0; });
}

Tensor softsign(const Tensor& x) {
  return in_compute_dtype(x, [](const Tensor& x) { return x / (abs(x) + 1.0); });
}

Tensor threshold(const Tensor& x, double th, double value) {
  OpContext ctx("threshold");
  return where(x > th, x, value);
}

Tensor glu(const Tensor& x, int64_t dim) {
  OpContext ctx("glu");
  LT_CHECK(x.dim() > 0, "glu: expected at least 1 dim, got a 0-d tensor");
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  LT_CHECK(d >= 0 && d < x.dim(), "glu: dim ", dim, " out of range for shape ",
           shape_str(x.sizes()));
  LT_CHECK(x.size(d) % 2 == 0, "glu: dim ", dim, " of shape ", shape_str(x.sizes()),
           " must have an even size");
  const int64_t h = x.size(d) / 2;
  return in_compute_dtype(
      x, [&](const Tensor& x) { return x.narrow(d, 0, h) * sigmoid(x.narrow(d, h, h)); });
}

Tensor softmin(const Tensor& x, int64_t dim) { return softmax(-x, dim); }

Tensor feature_dropout(const Tensor& x, double p, bool train) {
  OpContext ctx("dropout2d");
  LT_CHECK(x.dim() >= 2, "dropout2d: expected an input [N, C, ...] or [C, ...], got shape ",
           shape_str(x.sizes()));
  // dropout() of a ones tensor with one element per (sample, channel) gives the channel scales
  // (0 or 1 / (1 - p)), broadcast over the feature dims; it also checks p.
  std::vector<int64_t> mask_shape = x.sizes().vec();
  const size_t keep_dims = x.dim() == 3 ? 1 : 2;  // [C, H, W] has no batch dim
  for (size_t i = keep_dims; i < mask_shape.size(); ++i) mask_shape[i] = 1;
  Tensor scale = dropout(ones(mask_shape, x.options()), p, train);
  return train && p != 0 ? x * scale : x;
}

Tensor dropout2d(const Tensor& x, double p, bool train) { return feature_dropout(x, p, train); }

}  // namespace lt
