// Optimizer state dicts: what torch::save(optimizer, path) writes and torch::load reads back.
#include <map>
#include <string>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"
#include "lt/optim/optim.h"

namespace lt::optim {
namespace {

using Entries = std::vector<std::pair<std::string, Tensor>>;

// "kind.i" -> (kind, i); false when the name has no numeric suffix.
bool split_name(const std::string& n, std::string* kind, size_t* i) {
  const size_t dot = n.rfind('.');
  if (dot == std::string::npos || dot + 1 == n.size()) return false;
  for (size_t k = dot + 1; k < n.size(); ++k)
    if (n[k] < '0' || n[k] > '9') return false;
  *kind = n.substr(0, dot);
  *i = std::stoul(n.substr(dot + 1));
  return true;
}

void check_like(const char* opt, const std::string& kind, size_t i, const Tensor& t,
                const Tensor& p) {
  LT_CHECK(t.sizes().equals(p.sizes()) && t.dtype() == p.dtype(), opt, ": state '", kind, ".", i,
           "' is ", dtype_name(t.dtype()), " ", shape_str(t.sizes()), " but parameter ", i, " is ",
           dtype_name(p.dtype()), " ", shape_str(p.sizes()));
}

}  // namespace

Entries Optimizer::state_dict() const {
  Entries r;
  for (size_t g = 0; g < groups_.size(); ++g)
    r.emplace_back("group." + std::to_string(g) + ".lr",
                   scalar_tensor(groups_[g].options().get_lr(), kFloat64));
  save_state(&r);
  return r;
}

void Optimizer::check_state(const std::string& kind, size_t i, const Tensor& t) const {
  (void)t;
  LT_CHECK(false, "load_state_dict: this optimizer has no state '", kind, ".", i, "'");
}

void Optimizer::load_state_dict(const Entries& state) {
  std::map<size_t, double> lrs;
  for (const auto& [name, t] : state) {
    LT_CHECK(t.defined(), "load_state_dict: '", name, "' is undefined");
    std::string kind;
    size_t i = 0;
    if (name.rfind("group.", 0) == 0) {
      const std::string rest = name.substr(6);
      const size_t dot = rest.find('.');
      LT_CHECK(dot != std::string::npos && rest.substr(dot) == ".lr",
               "load_state_dict: unknown entry '", name, "'");
      const size_t g = std::stoul(rest.substr(0, dot));
      LT_CHECK(g < groups_.size(), "load_state_dict: '", name, "' but the optimizer has ",
               groups_.size(), " parameter groups");
      LT_CHECK(t.numel() == 1, "load_state_dict: '", name, "' must hold one value");
      lrs[g] = t.to(kCPU).to(kFloat64).item<double>();
      continue;
    }
    LT_CHECK(split_name(name, &kind, &i), "load_state_dict: unknown entry '", name, "'");
    LT_CHECK(i < params_.size(), "load_state_dict: '", name, "' but the optimizer has ",
             params_.size(), " parameters");
    check_state(kind, i, t);
  }
  // Everything checked: now change the state.
  NoGradGuard no_grad;
  for (auto& [g, lr] : lrs) groups_[g].options().set_lr(lr);
  for (const auto& [name, t] : state) {
    std::string kind;
    size_t i = 0;
    if (name.rfind("group.", 0) != 0 && split_name(name, &kind, &i)) set_state(kind, i, t);
  }
}

void SGD::save_state(Entries* out) const {
  for (size_t i = 0; i < momentum_.size(); ++i)
    if (momentum_[i].defined())
      out->emplace_back("momentum_buffer." + std::to_string(i), momentum_[i]);
}
void SGD::check_state(const std::string& kind, size_t i, const Tensor& t) const {
  LT_CHECK(kind == "momentum_buffer", "load_state_dict: SGD has no state '", kind, "'");
  check_like("SGD", kind, i, t, params_[i]);
}
void SGD::set_state(const std::string&, size_t i, const Tensor& t) {
  momentum_[i] = t.to(params_[i].device()).clone();
}

void Adam::save_state(Entries* out) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string n = std::to_string(i);
    out->emplace_back("exp_avg." + n, m_[i]);
    out->emplace_back("exp_avg_sq." + n, v_[i]);
    out->emplace_back("step." + n, scalar_tensor(steps_[i], kInt64));
  }
}
void Adam::check_state(const std::string& kind, size_t i, const Tensor& t) const {
  if (kind == "step") {
    LT_CHECK(t.numel() == 1 && !is_floating(t.dtype()), "load_state_dict: Adam's 'step.", i,
             "' must be one integer");
    return;
  }
  LT_CHECK(kind == "exp_avg" || kind == "exp_avg_sq", "load_state_dict: Adam has no state '", kind,
           "'");
  check_like("Adam", kind, i, t, params_[i]);
}
void Adam::set_state(const std::string& kind, size_t i, const Tensor& t) {
  if (kind == "step") {
    steps_[i] = t.to(kCPU).to(kInt64).item<int64_t>();
    t_ = std::max(t_, steps_[i]);
    return;
  }
  (kind == "exp_avg" ? m_ : v_)[i] = t.to(params_[i].device()).clone();
}

ParamStateMap& Optimizer::state() {
  state_view_.clear();
  for (size_t i = 0; i < params_.size(); ++i)
    if (auto s = param_state(i)) state_view_[params_[i].unsafeGetTensorImpl()] = std::move(s);
  return state_view_;
}

std::unique_ptr<OptimizerParamState> SGD::param_state(size_t i) const {
  if (!momentum_[i].defined()) return nullptr;
  auto s = std::make_unique<SGDParamState>();
  s->momentum_buffer_ = momentum_[i];
  return s;
}

std::unique_ptr<OptimizerParamState> Adam::param_state(size_t i) const {
  if (steps_[i] == 0) return nullptr;
  auto s = std::make_unique<AdamParamState>();
  s->step_ = steps_[i];
  s->exp_avg_ = m_[i];
  s->exp_avg_sq_ = v_[i];
  return s;
}

}  // namespace lt::optim
