// lt::nn::Module: parameters, buffers and submodules in registration order, device/dtype moves,
// train/eval, state dicts (saved as safetensors). Modules are used through holders in
// libtorch's style: `lt::nn::Linear fc(784, 256); fc->forward(x);`.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lt/tensor.h"

namespace lt::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  virtual ~Module() = default;

  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;

  // Moves every parameter and buffer in place (handles held elsewhere see the move).
  void to(Device d);
  void to(Dtype t);
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // Parameters and buffers by dotted name ("0.weight", "fc1.bias", ...).
  NamedTensors state_dict() const;
  // Checks every name, shape and dtype first; on any mismatch throws and changes nothing.
  void load_state_dict(const NamedTensors& state);
  void save(const std::string& path) const;  // safetensors
  void load(const std::string& path);

  virtual std::string name() const { return "Module"; }

 protected:
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    children_.emplace_back(name, m);
    return m;
  }

 private:
  void collect(const std::string& prefix, bool params, bool recurse, NamedTensors* out) const;

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

  Impl* operator->() const { return impl_.get(); }
  Impl& operator*() const { return *impl_; }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  template <typename... A>
  auto operator()(A&&... a) const {
    return impl_->forward(std::forward<A>(a)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

#define LT_MODULE(Name)                                \
  class Name : public ::lt::nn::ModuleHolder<Name##Impl> { \
   public:                                             \
    using ::lt::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

}  // namespace lt::nn
