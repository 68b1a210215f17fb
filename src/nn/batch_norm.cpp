// lt::batch_norm (libtorch's torch::batch_norm, behind F::batch_norm and BatchNorm1d/2d). In
// training it normalizes with the batch's statistics through a custom autograd function whose
// backward is the closed form
//   dx = w * rstd * (g - sum(g) / n - xhat * sum(g * xhat) / n),  dw = sum(g * xhat),  db = sum(g)
// (sums over every dim but the channel's, n values per channel): two reductions, which dw and db
// need anyway, where autograd through the mean/variance composite took four more. The custom
// function puts this file in the nn layer. In evaluation it is a plain composite.
#include <optional>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/autograd_function.h"
#include "lt/ops.h"

namespace lt {
namespace {

using autograd::AutogradContext;
using autograd::variable_list;

// Every dim but the channel dim (1).
std::vector<int64_t> stat_dims(const Tensor& x) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < x.dim(); ++i) d.push_back(i);
  return d;
}

// [C] viewed as [1, C, 1, ...] against x.
Tensor per_channel(const Tensor& v, const Tensor& x) {
  std::vector<int64_t> s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return v.reshape(IntList(s));
}

// The affine-free normalization and its pieces, as autograd would see them: xhat = c * rstd.
struct Stats {
  Tensor mean, centered, var, rstd;
};
Stats batch_stats(const Tensor& x, double eps) {
  const std::vector<int64_t> dims = stat_dims(x);
  Stats s;
  s.mean = x.mean(IntList(dims), true);
  s.centered = x - s.mean;
  s.var = (s.centered * s.centered).mean(IntList(dims), true);
  s.rstd = rsqrt(s.var + eps);
  return s;
}

// y * weight + bias per channel, either of them undefined.
Tensor affine(Tensor y, const Tensor& w, const Tensor& b) {
  if (w.defined()) y = y * per_channel(w, y);
  if (b.defined()) y = y + per_channel(b, y);
  return y;
}

// Outputs: y, and the batch's mean and (biased) variance for the running statistics, [1, C, ...]
// and without gradient.
struct BatchNormTrain : autograd::Function<BatchNormTrain> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& w,
                               const Tensor& b, double eps) {
    const Stats s = batch_stats(x, eps);
    const Tensor y = affine(s.centered * s.rstd, w, b);
    ctx->save_for_backward({x, w, s.mean, s.rstd});
    ctx->saved_data["eps"] = eps;
    ctx->mark_non_differentiable({s.mean, s.var});
    return {y, s.mean, s.var};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const Tensor &x = saved[0], &w = saved[1], &g = grads[0];
    const std::vector<int64_t> dims = stat_dims(x);
    const IntList d(dims);
    const bool need_x = ctx->needs_input_grad(0), need_w = ctx->needs_input_grad(1),
               need_b = ctx->needs_input_grad(2);
    if (is_grad_enabled()) {
      // create_graph: the gradient itself is differentiated later, so it is the composite's own
      // gradient, recorded from x (whose history the saved copy keeps) rather than from the
      // statistics forward computed without a graph.
      const double eps = ctx->saved_data["eps"].toDouble();
      const Stats s = batch_stats(x, eps);
      const Tensor y = affine(s.centered * s.rstd, w, Tensor());
      variable_list in,
          out{Tensor(), Tensor(), need_b ? g.sum(d).reshape({x.size(1)}) : Tensor(), Tensor()};
      if (need_x) in.push_back(x);
      if (need_w) in.push_back(w);
      if (!in.empty()) {
        const variable_list r = autograd::grad({y}, in, {g}, true, true, true);
        size_t k = 0;
        if (need_x) out[0] = r[k++];
        if (need_w) out[1] = r[k++];
      }
      return out;
    }
    const Tensor &mean = saved[2], &rstd = saved[3];
    const double n = static_cast<double>(x.numel() / x.size(1));
    const Tensor sg = need_x || need_b ? g.sum(d, true) : Tensor();
    Tensor xhat, sgx, dx, dw;
    if (need_x || need_w) {
      xhat = (x - mean) * rstd;
      sgx = (g * xhat).sum(d, true);
    }
    if (need_x) {
      const Tensor scale = w.defined() ? per_channel(w, x) * rstd : rstd;
      dx = scale * (g - sg * (1.0 / n) - xhat * (sgx * (1.0 / n)));
    }
    if (need_w) dw = sgx.reshape({x.size(1)});
    return {dx, dw, need_b ? sg.reshape({x.size(1)}) : Tensor(), Tensor()};
  }
};

void check_channel_vector(const Tensor& v, const char* what, const Tensor& x) {
  if (!v.defined()) return;
  LT_CHECK(v.numel() == x.size(1), "batch_norm: ", what, " should contain ", x.size(1),
           " elements (the input's channels, shape ", shape_str(x.sizes()), "), not ", v.numel(),
           " (shape ", shape_str(v.sizes()), ")");
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool /*cudnn_enabled*/) {
  OpContext op("batch_norm");
  LT_CHECK(input.defined() && input.dim() >= 2,
           "batch_norm: expected an input [N, C, ...] of at least 2 dims, got ",
           input.defined() ? shape_str(input.sizes()) : std::string("an undefined tensor"));
  check_channel_vector(weight, "weight", input);
  check_channel_vector(bias, "bias", input);
  check_channel_vector(running_mean, "running_mean", input);
  check_channel_vector(running_var, "running_var", input);
  LT_CHECK(running_mean.defined() == running_var.defined(),
           "batch_norm: running_mean and running_var must both be given or both be undefined");
  const int64_t c = input.size(1);
  if (!training) {
    LT_CHECK(running_mean.defined(),
             "batch_norm: evaluation (training = false) needs running_mean and running_var");
    return in_compute_dtype(input, [&](const Tensor& x) {
      return affine((x - per_channel(running_mean.to(x.dtype()), x)) *
                        rsqrt(per_channel(running_var.to(x.dtype()), x) + eps),
                    weight, bias);
    });
  }
  // As libtorch: an empty result still connected to the parameters.
  if (input.numel() == 0) return affine(input.clone(), weight, bias);
  LT_CHECK(input.numel() / c > 1,
           "batch_norm: expected more than 1 value per channel when training, got input of shape ",
           shape_str(input.sizes()));
  Tensor mean, var;
  Tensor y = in_compute_dtype(input, [&](const Tensor& x) {
    variable_list r = BatchNormTrain::apply(x, weight, bias, eps);
    mean = r[1];
    var = r[2];
    return r[0];
  });
  if (running_mean.defined()) {
    NoGradGuard g;
    const double n = static_cast<double>(input.numel() / c);
    const Tensor unbiased = var.reshape({c}) * (n / std::max(n - 1.0, 1.0));
    running_mean.mul_(1.0 - momentum).add_(mean.reshape({c}).to(running_mean.dtype()) * momentum);
    running_var.mul_(1.0 - momentum).add_(unbiased.to(running_var.dtype()) * momentum);
  }
  return y;
}

}  // namespace lt
