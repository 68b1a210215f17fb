#include "lt/nn/utils.h"

#include <cmath>
#include <ostream>

#include "core/check.h"
#include "lt/autograd.h"
#include "lt/ops.h"

namespace lt::nn::utils {

GradNorm::operator double() const { return total_.item<double>(); }

std::ostream& operator<<(std::ostream& os, const GradNorm& n) {
  return os << static_cast<double>(n);
}

GradNorm clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                         bool error_if_nonfinite) {
  LT_CHECK(max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  LT_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive or inf, got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads, norms;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return GradNorm(zeros({}));
  for (const Tensor& g : grads) norms.push_back(norm(g, norm_type, {}, false).to(grads[0].dtype()));
  Tensor total = norm(stack(norms), norm_type, {}, false);
  if (error_if_nonfinite) {
    const double t = total.item<double>();
    LT_CHECK(std::isfinite(t), "clip_grad_norm_: the total norm of order ", norm_type,
             " of the gradients is ", t, "; set error_if_nonfinite=false to scale anyway");
  }
  Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (const Tensor& g : grads) g.mul_(coef.to(g.dtype()));
  return GradNorm(total);
}
GradNorm clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm,
                         double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}
GradNorm clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                         bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) p.grad().clamp_(-clip_value, clip_value);
}
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}
void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace lt::nn::utils
