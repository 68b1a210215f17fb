// Optimizers (SGD, Adam, AdamW) and learning-rate schedulers, as torch.optim. On the lazy
// device step() ends with lt::mark_step(), so each training step is one compiled graph.
#pragma once
#include <cstdint>
#include <tuple>
#include <vector>

#include "lt/tensor.h"

namespace lt::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  void zero_grad();  // drops the gradients (set to none, as PyTorch 2's default)
  virtual void step() = 0;
  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  void end_step();  // the barrier when the parameters live on the lazy device
  std::vector<Tensor> params_;
  double lr_;
};

struct SGDOptions {
  explicit SGDOptions(double lr) : lr_(lr) {}
  SGDOptions& momentum(double v) { momentum_ = v; return *this; }
  SGDOptions& dampening(double v) { dampening_ = v; return *this; }
  SGDOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  SGDOptions& nesterov(bool v) { nesterov_ = v; return *this; }
  double lr_, momentum_ = 0, dampening_ = 0, weight_decay_ = 0;
  bool nesterov_ = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& o);
  void step() override;
  SGDOptions options;

 private:
  std::vector<Tensor> momentum_;
};

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AdamOptions& betas(std::tuple<double, double> b) { betas_ = b; return *this; }
  AdamOptions& eps(double v) { eps_ = v; return *this; }
  AdamOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8, weight_decay_ = 0;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& o, bool decoupled = false);
  void step() override;
  AdamOptions options;
  int64_t step_count() const { return t_; }

 private:
  bool decoupled_;
  int64_t t_ = 0;               // step() calls
  std::vector<int64_t> steps_;  // per parameter: the steps that had a gradient
  std::vector<Tensor> m_, v_;
};

struct AdamWOptions : AdamOptions {
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay_ = 1e-2; }
};

// Adam with decoupled weight decay (Loshchilov & Hutter), weight_decay 0.01 by default.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& o) : Adam(std::move(params), o, true) {}
};

// lr = base * gamma^(epoch / step_size); call step() once per epoch.
class StepLR {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  void step();

 private:
  Optimizer& opt_;
  int64_t step_size_, epoch_ = 0;
  double gamma_, base_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / t_max)) / 2.
class CosineAnnealingLR {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0);
  void step();

 private:
  Optimizer& opt_;
  int64_t t_max_, epoch_ = 0;
  double eta_min_, base_;
};

}  // namespace lt::optim
