// lt::nn::Module: parameters, buffers and submodules in registration order, device/dtype moves,
// train/eval, state dicts (saved as safetensors). Modules are used through holders in
// libtorch's style: `lt::nn::Linear fc(784, 256); fc->forward(x);`.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "lt/ordered_dict.h"
#include "lt/tensor.h"

namespace lt::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
template <typename Impl>
class ModuleHolder;

class Module : public std::enable_shared_from_this<Module> {
 public:
  virtual ~Module() = default;

  Module() = default;
  // A move keeps the registered tensors and children (the handles alias the same tensors).
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  std::vector<Tensor> parameters(bool recurse = true) const;
  // Dotted names ("fc1.weight") in registration order, as libtorch's OrderedDict.
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // Every module below this one, depth first; with include_self this one first, which needs it
  // to be owned by a shared_ptr (a holder), as in libtorch.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                  bool include_self = true);
  // Calls fn on this module and then on every descendant, depth first.
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn,
             const std::string& prefix = "");

  // Moves every parameter and buffer in place (handles held elsewhere see the move).
  void to(Device d, bool non_blocking = false);
  void to(Dtype t, bool non_blocking = false);
  void to(Device d, Dtype t, bool non_blocking = false);
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Gradients become undefined (set_to_none = true, PyTorch 2's default) or zero.
  void zero_grad(bool set_to_none = true);

  // Parameters and buffers by dotted name ("0.weight", "fc1.bias", ...).
  NamedTensors state_dict() const;
  // Checks every name, shape and dtype first; on any mismatch throws and changes nothing.
  void load_state_dict(const NamedTensors& state);
  void save(const std::string& path) const;  // safetensors
  void load(const std::string& path);

  // A deep copy: new parameters and buffers holding copies of these values (on `device` if
  // given), in a module of the same class. Modules that derive from Cloneable<T>, and the
  // built-in layers, implement it; a plain Module subclass throws, as in libtorch.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  virtual std::string name() const { return "Module"; }
  // One line describing this module ("Linear(in_features=3, out_features=4, bias=true)");
  // operator<< prints it with the children indented below.
  virtual void pretty_print(std::ostream& os) const { os << name(); }

  // Registration, public as in libtorch. Names are unique per kind and contain no '.'; an
  // undefined tensor may be registered (it is skipped by parameters()).
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    check_child_name(name, m != nullptr);
    children_.emplace_back(name, m);
    return m;
  }
  // A holder (torch::nn::Linear(...)) registers its module; the result assigns to a holder.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, const ModuleHolder<M>& holder) {
    return register_module(name, holder.ptr());
  }
  // Removes a registered child; an unknown name is an error.
  void unregister_module(const std::string& name);
  // Replaces a registered child (same name) and returns the new one.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> m) {
    replace_child(name, m);
    return m;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, const ModuleHolder<M>& holder) {
    return replace_module(name, holder.ptr());
  }

 protected:
  // A shallow copy: the same registered tensors and children (what Cloneable starts from).
  Module(const Module& o);
  // Drops every registration (Cloneable, before reset() registers anew).
  void clear_registrations();
  // Copies src's parameter and buffer values (detached clones, moved to `device` if given)
  // into this module's, recursively through children of the same names; the structure must
  // match, or it throws naming the first difference.
  void copy_state_from(const Module& src, const std::optional<Device>& device);
  template <typename M>
  std::shared_ptr<Module> clone_from(std::shared_ptr<M> fresh,
                                     const std::optional<Device>& device) const {
    fresh->copy_state_from(*this, device);
    return fresh;
  }

 private:
  void collect(const std::string& prefix, bool params, bool recurse,
               OrderedDict<std::string, Tensor>* out) const;
  void check_child_name(const std::string& name, bool non_null) const;
  void replace_child(const std::string& name, std::shared_ptr<Module> m);

  // unique_ptr keeps the addresses that register_parameter returned stable.
  std::vector<std::pair<std::string, std::unique_ptr<Tensor>>> params_;
  std::vector<std::pair<std::string, std::unique_ptr<Tensor>>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// Holder: a shared pointer to a module implementation, with -> and forward-by-call.
template <typename Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;
  template <typename... Args,
            typename = std::enable_if_t<!(sizeof...(Args) == 1 &&
                                          (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> &&
                                           ...))>>
  explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // An empty holder (`torch::nn::Linear fc{nullptr};`), assigned later.
  ModuleHolder(std::nullptr_t) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    if (!impl_)
      throw Error(std::string("accessing an empty ModuleHolder (") + typeid(Impl).name() +
                  "): it was built from nullptr and never assigned");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return impl_ != nullptr; }
  template <typename... A>
  auto operator()(A&&... a) const {
    return get()->forward(std::forward<A>(a)...);
  }
  // Indexing forwards to the module (Sequential, ModuleList, ModuleDict).
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  std::shared_ptr<Impl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Module& m);
template <typename Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& h) {
  return os << *h;
}

// libtorch's base for user modules that clone: reset() (re)builds every parameter, buffer and
// child, and clone() is a copy of the object whose reset() ran anew, then given this module's
// values.
template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;
  virtual void reset() = 0;
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->clear_registrations();
    copy->reset();
    copy->copy_state_from(*this, device);
    return copy;
  }
};

// In a built-in module class with an `options` member and a constructor from it: clone() is a
// new module from the same options, given this one's values.
#define LT_CLONE_FROM_OPTIONS(Self)                                                   \
  std::shared_ptr<::lt::nn::Module> clone(const std::optional<::lt::Device>& device = \
                                              std::nullopt) const override {          \
    return clone_from(std::make_shared<Self>(options), device);                       \
  }
#define LT_CLONE_DEFAULT(Self)                                                        \
  std::shared_ptr<::lt::nn::Module> clone(const std::optional<::lt::Device>& device = \
                                              std::nullopt) const override {          \
    return clone_from(std::make_shared<Self>(), device);                              \
  }

#define LT_MODULE(Name)                                \
  class Name : public ::lt::nn::ModuleHolder<Name##Impl> { \
   public:                                             \
    using ::lt::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

}  // namespace lt::nn
