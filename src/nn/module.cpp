#include "lt/nn/module.h"

#include <map>
#include <typeinfo>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"

namespace lt::nn {

namespace {
// A new parameter, buffer or submodule name: non-empty, no '.', not yet among `slots`.
template <typename Slots>
void check_name(const Module& m, const char* kind, const std::string& n, const Slots& slots) {
  LT_CHECK(!n.empty() && n.find('.') == std::string::npos, m.name(), ": ", kind, " name '", n,
           "' must be non-empty and contain no '.'");
  for (const auto& [k, t] : slots)
    LT_CHECK(k != n, m.name(), ": a ", kind, " named '", n, "' is already registered");
}
}  // namespace

Tensor& Module::register_parameter(const std::string& pname, Tensor t, bool requires_grad) {
  check_name(*this, "parameter", pname, params_);
  if (t.defined() && requires_grad) t.requires_grad_();
  params_.emplace_back(pname, std::make_unique<Tensor>(std::move(t)));
  return *params_.back().second;
}

Tensor& Module::register_buffer(const std::string& bname, Tensor t) {
  check_name(*this, "buffer", bname, buffers_);
  buffers_.emplace_back(bname, std::make_unique<Tensor>(std::move(t)));
  return *buffers_.back().second;
}

void Module::check_child_name(const std::string& n, bool non_null) const {
  LT_CHECK(non_null, name(), ": register_module('", n, "') was given an empty module");
  check_name(*this, "submodule", n, children_);
}

void Module::replace_child(const std::string& n, std::shared_ptr<Module> m) {
  LT_CHECK(m != nullptr, name(), ": replace_module('", n, "') was given an empty module");
  for (auto& [k, c] : children_)
    if (k == n) {
      c = std::move(m);
      return;
    }
  LT_CHECK(false, name(), ": replace_module: no submodule named '", n, "'");
}

void Module::unregister_module(const std::string& n) {
  for (auto it = children_.begin(); it != children_.end(); ++it)
    if (it->first == n) {
      children_.erase(it);
      return;
    }
  LT_CHECK(false, name(), ": unregister_module: no submodule named '", n, "'");
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     OrderedDict<std::string, Tensor>* out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t->defined()) out->insert(prefix + n, *t);
  if (!recurse) return;
  for (const auto& [n, m] : children_) m->collect(prefix + n + ".", params, true, out);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> r("parameter");
  collect("", true, recurse, &r);
  return r;
}
OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> r("buffer");
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

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> r("module");
  for (auto& [n, m] : children_) r.insert(n, m);
  return r;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> r("module");
  if (include_self) {
    std::shared_ptr<Module> self = weak_from_this().lock();
    LT_CHECK(self != nullptr, name(),
             ": named_modules()/modules() with include_self need the module to be owned by a "
             "shared_ptr (a holder); call them with include_self = false");
    r.insert(prefix, self);
  }
  // Depth first, children after their parent (each owned by its parent's shared_ptr).
  apply(
      [&](const std::string& n, Module& m) {
        if (&m != this) r.insert(n, m.shared_from_this());
      },
      prefix);
  return r;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& [n, c] : children_) c->apply(fn);
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& prefix) {
  fn(prefix, *this);
  for (auto& [n, c] : children_) c->apply(fn, prefix.empty() ? n : prefix + "." + n);
}

void Module::to(Device d, bool) {
  NoGradGuard g;
  for (Tensor t : parameters()) t.set_data(t.detach().to(d));
  for (Tensor t : buffers()) t.set_data(t.detach().to(d));
}

void Module::to(Dtype dt, bool) {
  NoGradGuard g;
  for (Tensor t : parameters())
    if (is_floating(t.dtype())) t.set_data(t.detach().to(dt));
  for (Tensor t : buffers())
    if (is_floating(t.dtype())) t.set_data(t.detach().to(dt));
}

void Module::to(Device d, Dtype dt, bool) {
  to(dt);
  to(d);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, m] : children_) m->train(on);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard g;
  for (Tensor t : parameters()) {
    if (set_to_none)
      t.mutable_grad() = Tensor();
    else if (t.grad().defined())
      t.mutable_grad().zero_();
  }
}

NamedTensors Module::state_dict() const {
  NamedTensors r = named_parameters().pairs();
  for (auto& nt : named_buffers()) r.push_back(nt);
  return r;
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  std::function<void(const Module&, int)> print = [&](const Module& mod, int indent) {
    mod.pretty_print(os);
    auto kids = mod.named_children();
    if (kids.is_empty()) return;
    os << "(\n";
    for (const auto& item : kids) {
      os << std::string(static_cast<size_t>(indent + 2), ' ') << "(" << item.key() << "): ";
      print(*item.value(), indent + 2);
      os << "\n";
    }
    os << std::string(static_cast<size_t>(indent), ' ') << ")";
  };
  print(m, 0);
  return os;
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

Module::Module(const Module& o)
    : std::enable_shared_from_this<Module>(), children_(o.children_), training_(o.training_) {
  for (const auto& [n, t] : o.params_) params_.emplace_back(n, std::make_unique<Tensor>(*t));
  for (const auto& [n, t] : o.buffers_) buffers_.emplace_back(n, std::make_unique<Tensor>(*t));
}

void Module::clear_registrations() {
  params_.clear();
  buffers_.clear();
  children_.clear();
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  throw_error("clone: ", name(), " (", typeid(*this).name(),
              ") does not implement clone(); "
              "derive it from torch::nn::Cloneable<",
              name(),
              "> and build its parameters in "
              "reset()");
}

namespace {
void copy_tensors(const char* kind, const std::string& module,
                  std::vector<std::pair<std::string, std::unique_ptr<Tensor>>>& dst,
                  const std::vector<std::pair<std::string, std::unique_ptr<Tensor>>>& src,
                  const std::optional<Device>& device) {
  LT_CHECK(dst.size() == src.size(), "clone: ", module, " has ", src.size(), " ", kind,
           "s but its copy built ", dst.size());
  for (size_t i = 0; i < src.size(); ++i) {
    LT_CHECK(dst[i].first == src[i].first, "clone: ", module, "'s ", kind, " '", src[i].first,
             "' became '", dst[i].first, "' in the copy");
    const Tensor& s = *src[i].second;
    Tensor& d = *dst[i].second;
    if (!s.defined()) {
      d = Tensor();
      continue;
    }
    NoGradGuard no_grad;
    Tensor v = s.detach().clone();
    if (device && v.device() != *device) v = v.to(*device);
    if (d.defined()) {
      d.set_data(v);
    } else {
      d = v;
    }
    if (s.requires_grad() != d.requires_grad()) d.requires_grad_(s.requires_grad());
  }
}
}  // namespace

void Module::copy_state_from(const Module& src, const std::optional<Device>& device) {
  training_ = src.training_;
  copy_tensors("parameter", name(), params_, src.params_, device);
  copy_tensors("buffer", name(), buffers_, src.buffers_, device);
  LT_CHECK(children_.size() == src.children_.size(), "clone: ", name(), " has ",
           src.children_.size(), " submodules but its copy built ", children_.size());
  for (size_t i = 0; i < children_.size(); ++i) {
    LT_CHECK(children_[i].first == src.children_[i].first, "clone: ", name(), "'s submodule '",
             src.children_[i].first, "' became '", children_[i].first, "' in the copy");
    children_[i].second->copy_state_from(*src.children_[i].second, device);
  }
}

}  // namespace lt::nn
