#include "lt/nn/module.h"

#include <map>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"

namespace lt::nn {

Tensor& Module::register_parameter(const std::string& pname, Tensor t, bool requires_grad) {
  LT_CHECK(t.defined(), name(), ": parameter '", pname, "' is undefined");
  if (requires_grad) t.requires_grad_();
  params_.emplace_back(pname, std::make_unique<Tensor>(std::move(t)));
  return *params_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
  buffers_.emplace_back(name, std::make_unique<Tensor>(std::move(t)));
  return *buffers_.back().second;
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     NamedTensors* out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t->defined()) out->emplace_back(prefix + n, *t);
  if (!recurse) return;
  for (const auto& [n, m] : children_) m->collect(prefix + n + ".", params, true, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors r;
  collect("", true, recurse, &r);
  return r;
}
NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors r;
  collect("", false, recurse, &r);
  return r;
}
std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> r;
  for (auto& [n, t] : named_parameters(recurse)) r.push_back(t);
  return r;
}
std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> r;
  for (auto& [n, t] : named_buffers(recurse)) r.push_back(t);
  return r;
}
std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> r;
  for (auto& [n, m] : children_) r.push_back(m);
  return r;
}

void Module::to(Device d) {
  NoGradGuard g;
  for (Tensor t : parameters()) t.set_data(t.detach().to(d));
  for (Tensor t : buffers()) t.set_data(t.detach().to(d));
}

void Module::to(Dtype dt) {
  NoGradGuard g;
  for (Tensor t : parameters())
    if (is_floating(t.dtype())) t.set_data(t.detach().to(dt));
  for (Tensor t : buffers())
    if (is_floating(t.dtype())) t.set_data(t.detach().to(dt));
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, m] : children_) m->train(on);
}

void Module::zero_grad() {
  for (Tensor t : parameters()) t.mutable_grad() = Tensor();
}

NamedTensors Module::state_dict() const {
  NamedTensors r = named_parameters();
  for (auto& nt : named_buffers()) r.push_back(nt);
  return r;
}

void Module::load_state_dict(const NamedTensors& state) {
  NamedTensors mine = state_dict();
  std::map<std::string, Tensor> given;
  for (const auto& [n, t] : state) {
    LT_CHECK(given.emplace(n, t).second, "load_state_dict: '", n, "' appears twice");
  }
  for (const auto& [n, t] : mine) {
    auto it = given.find(n);
    LT_CHECK(it != given.end(), "load_state_dict: missing '", n, "' (expected shape ",
             shape_str(t.sizes()), ")");
    LT_CHECK(it->second.sizes().equals(t.sizes()), "load_state_dict: '", n, "' has shape ",
             shape_str(it->second.sizes()), " but the module expects ", shape_str(t.sizes()));
    LT_CHECK(it->second.dtype() == t.dtype(), "load_state_dict: '", n, "' is ",
             dtype_name(it->second.dtype()), " but the module expects ", dtype_name(t.dtype()));
  }
  LT_CHECK(given.size() == mine.size(), "load_state_dict: ", given.size() - mine.size(),
           " unexpected entries (the module has ", mine.size(), ")");
  NoGradGuard g;
  for (auto& [n, t] : mine) {
    Tensor dst = t;
    dst.copy_(given.at(n));
  }
}

}  // namespace lt::nn
