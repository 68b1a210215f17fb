#include "lt/optim/optim.h"

#include <cmath>

#include "core/check.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt::optim {

OptimizerOptions& OptimizerParamGroup::options() {
  LT_CHECK(options_ != nullptr, "OptimizerParamGroup: this group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  LT_CHECK(options_ != nullptr, "OptimizerParamGroup: this group has no options");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  LT_CHECK(!groups.empty(), "optimizer: got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

void Optimizer::check_group(const OptimizerParamGroup& g) const {
  LT_CHECK(!g.params().empty(), "optimizer: got an empty parameter list");
  const double lr = g.has_options() ? g.options().get_lr() : defaults_->get_lr();
  LT_CHECK(lr >= 0, "optimizer: learning rate must be non-negative, got ", lr);
  for (const Tensor& p : g.params())
    LT_CHECK(p.defined() && p.requires_grad() && p.is_leaf(),
             "optimizer: every parameter must be a leaf tensor that requires grad");
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  check_group(group);
  OptimizerParamGroup g(group.params(),
                        group.has_options() ? group.options().clone() : defaults_->clone());
  const size_t from = params_.size();
  params_.insert(params_.end(), g.params().begin(), g.params().end());
  groups_.push_back(std::move(g));
  // The constructor's calls reach only this base's add_state; derived constructors call theirs.
  add_state(from);
}

void Optimizer::set_lr(double lr) {
  for (OptimizerParamGroup& g : groups_) g.options().set_lr(lr);
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard g;
  for (Tensor& p : params_) {
    if (set_to_none)
      p.mutable_grad() = Tensor();
    else if (p.grad().defined())
      p.mutable_grad().zero_();
  }
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  struct GradOn {  // the closure computes gradients even if step() is called under NoGradGuard
    bool prev = is_grad_enabled();
    GradOn() { set_grad_enabled(true); }
    ~GradOn() { set_grad_enabled(prev); }
  } on;
  return closure();
}

void Optimizer::end_step() {
  for (const Tensor& p : params_)
    if (p.device().is_lazy()) {
      mark_step(p.device());
      return;
    }
}

namespace {
template <typename O>
const O& options_of(const OptimizerParamGroup& g, const char* name) {
  const auto* o = dynamic_cast<const O*>(&g.options());
  LT_CHECK(o != nullptr, name, ": a parameter group's options are of another optimizer");
  return *o;
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

SGD::SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& defaults)
    : Optimizer(std::move(groups), defaults.clone()) {
  for (const OptimizerParamGroup& g : groups_) {
    const SGDOptions& o = options_of<SGDOptions>(g, "SGD");
    LT_CHECK(o.momentum_ >= 0 && o.weight_decay_ >= 0,
             "SGD: momentum and weight_decay must be >= 0");
    LT_CHECK(!o.nesterov_ || (o.momentum_ > 0 && o.dampening_ == 0),
             "SGD: nesterov needs momentum > 0 and dampening 0");
  }
  add_state(0);
}

void SGD::add_state(size_t) { momentum_.resize(params_.size()); }

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  {
    NoGradGuard g;
    size_t i = 0;
    for (OptimizerParamGroup& group : groups_) {
      const SGDOptions& o = options_of<SGDOptions>(group, "SGD");
      for (Tensor& p : group.params()) {
        Tensor d = p.grad();
        Tensor& buf = momentum_[i++];
        if (!d.defined()) continue;
        if (o.weight_decay_ != 0) d = d + p * o.weight_decay_;
        if (o.momentum_ != 0) {
          if (!buf.defined())
            buf = d.clone();
          else
            buf.mul_(o.momentum_).add_(d * (1.0 - o.dampening_));
          d = o.nesterov_ ? d + buf * o.momentum_ : buf;
        }
        p.sub_(d * o.lr_);
      }
    }
  }
  end_step();
  return loss;
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults, bool decoupled)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults,
           decoupled) {}

Adam::Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults, bool decoupled)
    : Optimizer(std::move(groups), defaults.clone()), decoupled_(decoupled) {
  for (const OptimizerParamGroup& g : groups_) {
    const AdamOptions& o = options_of<AdamOptions>(g, "Adam");
    auto [b1, b2] = o.betas_;
    LT_CHECK(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, "Adam: betas must be in [0, 1), got (", b1,
             ", ", b2, ")");
    LT_CHECK(o.eps_ >= 0 && o.weight_decay_ >= 0, "Adam: eps and weight_decay must be >= 0");
  }
  add_state(0);
}

void Adam::add_state(size_t from) {
  NoGradGuard g;
  // Zero state up front, as device data (made on the host and transferred, so that on the lazy
  // device the first step does not carry a fill): every step records the same graph.
  for (size_t i = from; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    m_.push_back(zeros_like(p, TensorOptions(kCPU).dtype(p.dtype())).to(p.device()));
    v_.push_back(zeros_like(p, TensorOptions(kCPU).dtype(p.dtype())).to(p.device()));
  }
  steps_.resize(params_.size(), 0);
}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  {
    NoGradGuard g;
    ++t_;
    size_t i = 0;
    for (OptimizerParamGroup& group : groups_) {
      const AdamOptions& o = options_of<AdamOptions>(group, "Adam");
      auto [b1, b2] = o.betas_;
      for (Tensor& p : group.params()) {
        const size_t k = i++;
        Tensor grad = p.grad();
        if (!grad.defined()) continue;
        // As torch.optim, each parameter counts its own steps: one whose gradient first
        // appears later gets the bias correction of its first step.
        const double t = static_cast<double>(++steps_[k]);
        const double step_size = o.lr_ / (1.0 - std::pow(b1, t));
        const double inv_sqrt_bc2 = 1.0 / std::sqrt(1.0 - std::pow(b2, t));
        if (o.weight_decay_ != 0) {
          if (decoupled_)
            p.mul_(1.0 - o.lr_ * o.weight_decay_);
          else
            grad = grad + p * o.weight_decay_;
        }
        m_[k].mul_(b1).add_(grad * (1.0 - b1));
        v_[k].mul_(b2).add_(grad * grad * (1.0 - b2));
        Tensor denom = sqrt(v_[k]) * inv_sqrt_bc2 + o.eps_;
        p.sub_(m_[k] / denom * step_size);
      }
    }
  }
  end_step();
  return loss;
}

LRScheduler::LRScheduler(Optimizer& opt) : optimizer_(opt) {
  for (const OptimizerParamGroup& g : opt.param_groups()) base_lrs_.push_back(g.options().get_lr());
}

void LRScheduler::step() {
  ++step_count_;
  const std::vector<double> lrs = get_lrs();
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].options().set_lr(lrs[i]);
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  LT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
}
std::vector<double> StepLR::get_lrs() {
  std::vector<double> r;
  for (double base : base_lrs_)
    r.push_back(base * std::pow(gamma_, static_cast<double>(step_count_ / step_size_)));
  return r;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {
  LT_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be positive, got ", t_max);
}
std::vector<double> CosineAnnealingLR::get_lrs() {
  // Not clamped at t_max: past it the rate rises again, as PyTorch's (a period of 2 t_max).
  const double c = std::cos(M_PI * static_cast<double>(step_count_) / static_cast<double>(t_max_));
  std::vector<double> r;
  for (double base : base_lrs_) r.push_back(eta_min_ + (base - eta_min_) * (1.0 + c) / 2.0);
  return r;
}

}  // namespace lt::optim
