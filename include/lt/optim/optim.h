// Optimizers (SGD, Adam, AdamW) and learning-rate schedulers, as torch.optim. On the lazy
// device step() ends with lt::mark_step(), so each training step is one compiled graph.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lt/tensor.h"

namespace lt::optim {

// The options of one parameter group (libtorch's OptimizerOptions): each optimizer's options
// derive from it.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
};

// Parameters with their own options; without options a group takes the optimizer's defaults.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup o) {
    params_ = std::move(o.params_);
    options_ = std::move(o.options_);
    return *this;
  }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();  // throws if it has none
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// One parameter's optimizer state, as libtorch's: cast to the optimizer's own kind
// (SGDParamState, AdamParamState). Its tensors are the optimizer's (in-place edits reach it).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
};
struct SGDParamState : OptimizerParamState {
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  Tensor momentum_buffer_;
};
struct AdamParamState : OptimizerParamState {
  int64_t step() const { return step_; }
  const Tensor& exp_avg() const { return exp_avg_; }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  int64_t step_ = 0;
  Tensor exp_avg_, exp_avg_sq_;
};
// Keyed by the parameter's param.unsafeGetTensorImpl(), as libtorch's.
using ParamStateMap = std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>;

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;
  Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  // Drops the gradients (set_to_none, PyTorch 2's default) or zeroes them in place.
  void zero_grad(bool set_to_none = true);
  // One update; with a closure, it first re-evaluates the loss (under grad mode) and returns it.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  void add_param_group(const OptimizerParamGroup& group);
  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  double lr() const { return groups_.front().options().get_lr(); }  // the first group's
  void set_lr(double lr);                                           // every group's
  const std::vector<Tensor>& params() const { return params_; }     // of all groups, in order
  // The per-parameter state of the parameters that have some (after a step with a gradient),
  // read afresh on each call; the map itself is a view: erasing from it changes nothing.
  ParamStateMap& state();

  // The state torch::save writes: each group's learning rate ("group.0.lr", float64 0-d) and the
  // per-parameter state ("momentum_buffer.3", "exp_avg.0", "exp_avg_sq.0", "step.0"), where i
  // indexes params(). load_state_dict checks every entry (names, parameter indices, shapes,
  // dtypes) before changing anything; state missing from `state` is left as it is.
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state);

 protected:
  // Appends the per-parameter state as (kind.i, tensor) entries.
  virtual void save_state(std::vector<std::pair<std::string, Tensor>>* out) const { (void)out; }
  // Throws unless `t` can be state `kind` of parameter i (the shapes checked against it).
  virtual void check_state(const std::string& kind, size_t i, const Tensor& t) const;
  virtual void set_state(const std::string& kind, size_t i, const Tensor& t) {
    (void)kind, (void)i, (void)t;
  }
  // Per-parameter state for params_[from...] (the constructor and add_param_group call it).
  virtual void add_state(size_t from) { (void)from; }
  // Parameter i's state for state(), or null while it has none.
  virtual std::unique_ptr<OptimizerParamState> param_state(size_t i) const {
    (void)i;
    return nullptr;
  }
  Tensor run_closure(const LossClosure& closure);
  void end_step();  // the barrier when the parameters live on the lazy device
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<Tensor> params_;

 private:
  void check_group(const OptimizerParamGroup& g) const;
  ParamStateMap state_view_;
};

// The OptimizerOptions of options type Self, read through its lr_ field.
template <typename Self>
struct OptionsOf : OptimizerOptions {
  double get_lr() const override { return static_cast<const Self&>(*this).lr_; }
  void set_lr(double lr) override { static_cast<Self&>(*this).lr_ = lr; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Self>(static_cast<const Self&>(*this));
  }
};

// libtorch's option style: lr(v) sets, lr() reads.
#define LT_OPTIM_ARG(Self, T, name) \
  Self& name(T v) {                 \
    name##_ = v;                    \
    return *this;                   \
  }                                 \
  T name() const { return name##_; }

struct SGDOptions : OptionsOf<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // implicit, as libtorch's: SGD(params, 0.1)
  LT_OPTIM_ARG(SGDOptions, double, lr)
  LT_OPTIM_ARG(SGDOptions, double, momentum)
  LT_OPTIM_ARG(SGDOptions, double, dampening)
  LT_OPTIM_ARG(SGDOptions, double, weight_decay)
  LT_OPTIM_ARG(SGDOptions, bool, nesterov)
  double lr_, momentum_ = 0, dampening_ = 0, weight_decay_ = 0;
  bool nesterov_ = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& defaults);
  Tensor step(LossClosure closure = nullptr) override;

 private:
  void add_state(size_t from) override;
  void save_state(std::vector<std::pair<std::string, Tensor>>* out) const override;
  void check_state(const std::string& kind, size_t i, const Tensor& t) const override;
  void set_state(const std::string& kind, size_t i, const Tensor& t) override;
  std::unique_ptr<OptimizerParamState> param_state(size_t i) const override;
  std::vector<Tensor> momentum_;
};

struct AdamOptions : OptionsOf<AdamOptions> {
  using Betas = std::tuple<double, double>;
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  LT_OPTIM_ARG(AdamOptions, double, lr)
  LT_OPTIM_ARG(AdamOptions, Betas, betas)
  LT_OPTIM_ARG(AdamOptions, double, eps)
  LT_OPTIM_ARG(AdamOptions, double, weight_decay)
  double lr_;
  Betas betas_{0.9, 0.999};
  double eps_ = 1e-8, weight_decay_ = 0;
};
#undef LT_OPTIM_ARG

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = {}, bool decoupled = false);
  Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults = {},
       bool decoupled = false);
  Tensor step(LossClosure closure = nullptr) override;
  int64_t step_count() const { return t_; }

 private:
  void add_state(size_t from) override;
  void save_state(std::vector<std::pair<std::string, Tensor>>* out) const override;
  void check_state(const std::string& kind, size_t i, const Tensor& t) const override;
  void set_state(const std::string& kind, size_t i, const Tensor& t) override;
  std::unique_ptr<OptimizerParamState> param_state(size_t i) const override;
  bool decoupled_;
  int64_t t_ = 0;               // step() calls
  std::vector<int64_t> steps_;  // per parameter: the steps that had a gradient
  std::vector<Tensor> m_, v_;
};

struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay_ = 1e-2; }
};

// Adam with decoupled weight decay (Loshchilov & Hutter), weight_decay 0.01 by default.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& defaults = AdamWOptions())
      : Adam(std::move(params), defaults, true) {}
  AdamW(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults = AdamWOptions())
      : Adam(std::move(groups), defaults, true) {}
};

// libtorch's LRScheduler: step() sets every group's rate to get_lrs() and counts the steps.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& opt);
  virtual ~LRScheduler() = default;
  void step();

 protected:
  virtual std::vector<double> get_lrs() = 0;
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;  // each group's rate when the scheduler was made
  int64_t step_count_ = 0;
};

// lr = base * gamma^(epoch / step_size); call step() once per epoch.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);

 private:
  std::vector<double> get_lrs() override;
  int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / t_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0);

 private:
  std::vector<double> get_lrs() override;
  int64_t t_max_;
  double eta_min_;
};

}  // namespace lt::optim
