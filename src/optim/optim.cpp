#include "lt/optim/optim.h"

#include <cmath>

#include "core/check.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  LT_CHECK(lr >= 0, "optimizer: learning rate must be non-negative, got ", lr);
  LT_CHECK(!params_.empty(), "optimizer: got an empty parameter list");
  for (const Tensor& p : params_)
    LT_CHECK(p.defined() && p.requires_grad() && p.is_leaf(),
             "optimizer: every parameter must be a leaf tensor that requires grad");
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.mutable_grad() = Tensor();
}

void Optimizer::end_step() {
  for (const Tensor& p : params_)
    if (p.device().is_lazy()) {
      mark_step(p.device());
      return;
    }
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : Optimizer(std::move(params), o.lr_), options(o) {
  LT_CHECK(o.momentum_ >= 0 && o.weight_decay_ >= 0, "SGD: momentum and weight_decay must be >= 0");
  LT_CHECK(!o.nesterov_ || (o.momentum_ > 0 && o.dampening_ == 0),
           "SGD: nesterov needs momentum > 0 and dampening 0");
  momentum_.resize(params_.size());
}

void SGD::step() {
  {
    NoGradGuard g;
    const SGDOptions& o = options;
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor& p = params_[i];
      Tensor d = p.grad();
      if (!d.defined()) continue;
      if (o.weight_decay_ != 0) d = d + p * o.weight_decay_;
      if (o.momentum_ != 0) {
        Tensor& buf = momentum_[i];
        if (!buf.defined())
          buf = d.clone();
        else
          buf.mul_(o.momentum_).add_(d * (1.0 - o.dampening_));
        d = o.nesterov_ ? d + buf * o.momentum_ : buf;
      }
      p.sub_(d * lr_);
    }
  }
  end_step();
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o, bool decoupled)
    : Optimizer(std::move(params), o.lr_), options(o), decoupled_(decoupled) {
  auto [b1, b2] = o.betas_;
  LT_CHECK(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, "Adam: betas must be in [0, 1), got (", b1,
           ", ", b2, ")");
  LT_CHECK(o.eps_ >= 0 && o.weight_decay_ >= 0, "Adam: eps and weight_decay must be >= 0");
  NoGradGuard g;
  // Zero state up front, as device data (made on the host and transferred, so that on the lazy
  // device the first step does not carry a fill): every step records the same graph.
  for (const Tensor& p : params_) {
    m_.push_back(zeros_like(p, TensorOptions(kCPU).dtype(p.dtype())).to(p.device()));
    v_.push_back(zeros_like(p, TensorOptions(kCPU).dtype(p.dtype())).to(p.device()));
  }
  steps_.assign(params_.size(), 0);
}

void Adam::step() {
  {
    NoGradGuard g;
    ++t_;
    auto [b1, b2] = options.betas_;
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor& p = params_[i];
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      // As torch.optim, each parameter counts its own steps: one whose gradient first appears
      // later gets the bias correction of its first step.
      const double t = static_cast<double>(++steps_[i]);
      const double step_size = lr_ / (1.0 - std::pow(b1, t));
      const double inv_sqrt_bc2 = 1.0 / std::sqrt(1.0 - std::pow(b2, t));
      if (options.weight_decay_ != 0) {
        if (decoupled_)
          p.mul_(1.0 - lr_ * options.weight_decay_);
        else
          grad = grad + p * options.weight_decay_;
      }
      m_[i].mul_(b1).add_(grad * (1.0 - b1));
      v_[i].mul_(b2).add_(grad * grad * (1.0 - b2));
      Tensor denom = sqrt(v_[i]) * inv_sqrt_bc2 + options.eps_;
      p.sub_(m_[i] / denom * step_size);
    }
  }
  end_step();
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : opt_(opt), step_size_(step_size), gamma_(gamma), base_(opt.lr()) {
  LT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
}
void StepLR::step() {
  ++epoch_;
  opt_.set_lr(base_ * std::pow(gamma_, static_cast<double>(epoch_ / step_size_)));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : opt_(opt), t_max_(t_max), eta_min_(eta_min), base_(opt.lr()) {
  LT_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be positive, got ", t_max);
}
void CosineAnnealingLR::step() {
  ++epoch_;
  // Not clamped at t_max: past it the rate rises again, as PyTorch's (a period of 2 t_max).
  double c = std::cos(M_PI * static_cast<double>(epoch_) / static_cast<double>(t_max_));
  opt_.set_lr(eta_min_ + (base_ - eta_min_) * (1.0 + c) / 2.0);
}

}  // namespace lt::optim
