// Containers: AnyModule (a type-erased module), Sequential, ModuleList, ModuleDict and Functional,
// spelled as libtorch's. Modules go in as holders (Linear(3, 4)), as shared_ptrs, or as plain
// module objects (LinearImpl(3, 4)), which are moved into a shared_ptr.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lt/nn/module.h"

namespace lt::nn {

namespace detail {
template <typename T, typename = void>
struct holder_impl {
  using type = void;
};
template <typename T>
struct holder_impl<T, std::void_t<typename T::ImplType>> {
  using type = typename T::ImplType;
};

// The shared_ptr of a module given as a holder, a shared_ptr or a module object.
template <typename M>
auto module_ptr(M&& m) {
  using D = std::decay_t<M>;
  if constexpr (std::is_same_v<typename holder_impl<D>::type, void>) {
    if constexpr (std::is_base_of_v<Module, D>)
      return std::make_shared<D>(std::forward<M>(m));
    else
      return std::shared_ptr<typename D::element_type>(m);  // a shared_ptr
  } else {
    return m.ptr();
  }
}

// Whether Impl's forward takes the tensors A... and returns something convertible to a Tensor.
template <typename Impl, typename Args, typename = void>
struct can_forward : std::false_type {};
template <typename Impl, typename... A>
struct can_forward<Impl, std::tuple<A...>,
                   std::void_t<decltype(std::declval<Impl&>().forward(std::declval<A>()...))>>
    : std::is_convertible<decltype(std::declval<Impl&>().forward(std::declval<A>()...)), Tensor> {};

// Impl's forward called with the first N tensors of `a`, if it takes N tensors.
template <size_t>
using tensor_arg = const Tensor&;
template <typename Impl, size_t... I>
bool forward_n(Impl& m, const std::vector<Tensor>& a, std::index_sequence<I...>, Tensor* out) {
  if constexpr (can_forward<Impl, std::tuple<tensor_arg<I>...>>::value) {
    *out = m.forward(a[I]...);
    return true;
  } else {
    return false;
  }
}
// forward_n for N = a.size(), among 1 .. sizeof...(N).
template <typename Impl, size_t... N>
bool forward_any(Impl& m, const std::vector<Tensor>& a, Tensor* out, std::index_sequence<N...>) {
  return ((a.size() == N + 1 && forward_n(m, a, std::make_index_sequence<N + 1>(), out)) || ...);
}
}  // namespace detail

// A module of any type whose forward takes one to six Tensors and returns a Tensor (six: a
// TransformerDecoder's target, memory and masks).
class AnyModule {
 public:
  AnyModule() = default;
  template <typename M, typename = std::enable_if_t<!std::is_same_v<std::decay_t<M>, AnyModule>>>
  explicit AnyModule(M&& m) {
    auto p = detail::module_ptr(std::forward<M>(m));
    using Impl = typename decltype(p)::element_type;
    module_ = p;
    forward_ = [p](const std::vector<Tensor>& a) -> Tensor {
      Tensor out;
      if (!detail::forward_any(*p, a, &out, std::make_index_sequence<6>()))
        throw Error(p->name() + "'s forward() does not take " + std::to_string(a.size()) +
                    " tensors and return a tensor (AnyModule)");
      return out;
    };
    clone_ = [](const Module& m, const std::optional<Device>& device) {
      auto copy = std::dynamic_pointer_cast<Impl>(m.clone(device));
      if (!copy) throw Error("AnyModule::clone: " + m.name() + "'s clone() changed its type");
      return AnyModule(std::move(copy));
    };
  }

  // A deep copy of the module (Module::clone), as libtorch's AnyModule::clone.
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    return module_ ? clone_(*module_, device) : AnyModule();
  }
  template <typename... T>
  Tensor forward(const T&... args) const {
    if (!forward_) throw Error("AnyModule: forward() on an empty AnyModule");
    return forward_(std::vector<Tensor>{Tensor(args)...});
  }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <typename T>
  std::shared_ptr<T> ptr() const {
    auto p = std::dynamic_pointer_cast<T>(module_);
    if (!p)
      throw Error("AnyModule: the module is a " + (module_ ? module_->name() : "nothing") +
                  ", not the type asked for");
    return p;
  }
  template <typename T>
  T& get() const {
    return *ptr<T>();
  }
  bool is_empty() const noexcept { return module_ == nullptr; }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const std::vector<Tensor>&)> forward_;
  std::function<AnyModule(const Module&, const std::optional<Device>&)> clone_;
};

// A name and a module, for Sequential({{"conv", Conv2d(...)}, {"relu", ReLU()}}).
struct NamedAnyModule {
  template <typename M>
  NamedAnyModule(std::string name, M&& m) : name(std::move(name)), module(std::forward<M>(m)) {}
  std::string name;
  AnyModule module;
};

// Runs its modules in order; the first may take several tensors, the rest take one.
class SequentialImpl : public Module {
 public:
  template <typename... M>
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  SequentialImpl(std::initializer_list<NamedAnyModule> named) {
    for (const NamedAnyModule& n : named) push_back(n.name, n.module);
  }

  template <typename M>
  void push_back(M&& m) {
    push_back(std::to_string(modules_.size()), std::forward<M>(m));
  }
  template <typename M>
  void push_back(const std::string& name, M&& m) {
    AnyModule any;
    if constexpr (std::is_same_v<std::decay_t<M>, AnyModule>)
      any = m;
    else
      any = AnyModule(std::forward<M>(m));
    register_module(name, any.ptr());
    modules_.push_back(std::move(any));
  }
  // Appends the modules of another Sequential.
  void extend(const SequentialImpl& other) {
    for (const AnyModule& m : other.modules_) push_back(m);
  }

  template <typename... T>
  Tensor forward(const Tensor& x, const T&... rest) {
    if (modules_.empty()) throw Error("Sequential: forward() of an empty Sequential");
    Tensor h = modules_[0].forward(x, rest...);
    for (size_t i = 1; i < modules_.size(); ++i) h = modules_[i].forward(h);
    return h;
  }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::vector<AnyModule>::iterator begin() { return modules_.begin(); }
  std::vector<AnyModule>::iterator end() { return modules_.end(); }
  std::vector<AnyModule>::const_iterator begin() const { return modules_.begin(); }
  std::vector<AnyModule>::const_iterator end() const { return modules_.end(); }
  std::shared_ptr<Module> ptr(size_t i) const { return at_index(i).ptr(); }
  template <typename T>
  std::shared_ptr<T> ptr(size_t i) const {
    return at_index(i).template ptr<T>();
  }
  template <typename T>
  T& at(size_t i) const {
    return at_index(i).template get<T>();
  }
  std::shared_ptr<Module> operator[](size_t i) const { return ptr(i); }
  std::string name() const override { return "Sequential"; }

 private:
  const AnyModule& at_index(size_t i) const {
    if (i >= modules_.size())
      throw Error("Sequential: index " + std::to_string(i) + " out of range for " +
                  std::to_string(modules_.size()) + " modules");
    return modules_[i];
  }
  std::vector<AnyModule> modules_;
};
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>()) {}
  Sequential(std::initializer_list<NamedAnyModule> named)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named)) {}
};

// A list of registered modules (named "0", "1", ...), indexed and iterated; no forward().
class ModuleListImpl : public Module {
 public:
  template <typename... M>
  explicit ModuleListImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  template <typename M>
  void push_back(M&& m) {
    std::shared_ptr<Module> p = detail::module_ptr(std::forward<M>(m));
    register_module(std::to_string(modules_.size()), p);
    modules_.push_back(std::move(p));
  }
  void extend(const ModuleListImpl& other) {
    for (const auto& m : other.modules_) push_back(m);
  }
  // Inserts at `index` (0 <= index <= size()); the names are renumbered.
  template <typename M>
  void insert(size_t index, M&& m) {
    if (index > modules_.size())
      throw Error("ModuleList::insert: index " + std::to_string(index) + " out of range for " +
                  std::to_string(modules_.size()) + " modules");
    std::vector<std::shared_ptr<Module>> all = modules_;
    all.insert(all.begin() + static_cast<std::ptrdiff_t>(index),
               std::shared_ptr<Module>(detail::module_ptr(std::forward<M>(m))));
    rebuild(all);
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }
  std::shared_ptr<Module> ptr(size_t i) const { return at_index(i); }
  template <typename T>
  std::shared_ptr<T> ptr(size_t i) const {
    auto p = std::dynamic_pointer_cast<T>(at_index(i));
    if (!p)
      throw Error("ModuleList: module " + std::to_string(i) + " is a " + at_index(i)->name() +
                  ", not the type asked for");
    return p;
  }
  template <typename T>
  T& at(size_t i) const {
    return *ptr<T>(i);
  }
  std::shared_ptr<Module> operator[](size_t i) const { return at_index(i); }
  std::string name() const override { return "ModuleList"; }

 private:
  const std::shared_ptr<Module>& at_index(size_t i) const {
    if (i >= modules_.size())
      throw Error("ModuleList: index " + std::to_string(i) + " out of range for " +
                  std::to_string(modules_.size()) + " modules");
    return modules_[i];
  }
  void rebuild(const std::vector<std::shared_ptr<Module>>& all);
  std::vector<std::shared_ptr<Module>> modules_;
};
LT_MODULE(ModuleList);

// Modules by name, in insertion order.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& items) {
    for (const auto& [k, m] : items) insert(k, m);
  }
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& items) {
    for (const auto& it : items) insert(it.key(), it.value());
  }
  template <typename M>
  void insert(const std::string& key, M&& m) {
    std::shared_ptr<Module> p = detail::module_ptr(std::forward<M>(m));
    if (dict_.contains(key)) {
      replace_module(key, p);
      dict_[key] = p;
      return;
    }
    register_module(key, p);
    dict_.insert(key, std::move(p));
  }
  // Inserts or replaces every module of `items`.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& items) {
    for (const auto& [k, m] : items) insert(k, m);
  }
  // Removes `key` and returns its module.
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();
  bool contains(const std::string& key) const noexcept { return dict_.contains(key); }
  std::vector<std::string> keys() const { return dict_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return dict_.values(); }
  const OrderedDict<std::string, std::shared_ptr<Module>>& items() const noexcept { return dict_; }
  size_t size() const noexcept { return dict_.size(); }
  bool empty() const noexcept { return dict_.empty(); }
  auto begin() const { return dict_.begin(); }
  auto end() const { return dict_.end(); }
  std::shared_ptr<Module> operator[](const std::string& key) const { return dict_[key]; }
  template <typename T>
  std::shared_ptr<T> ptr(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<T>(dict_[key]);
    if (!p)
      throw Error("ModuleDict: '" + key + "' is a " + dict_[key]->name() +
                  ", not the type asked for");
    return p;
  }
  template <typename T>
  T& at(const std::string& key) const {
    return *ptr<T>(key);
  }
  std::string name() const override { return "ModuleDict"; }

 private:
  OrderedDict<std::string, std::shared_ptr<Module>> dict_{"module"};
};
LT_MODULE(ModuleDict);

// Wraps a function as a module: Functional(torch::relu), Functional(lt::leaky_relu, 0.2) (the
// extra arguments follow the input), or any callable taking a Tensor.
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function f) : f_(std::move(f)) {}
  template <typename F, typename A0, typename... A>
  FunctionalImpl(F f, A0&& a0, A&&... rest)
      : f_([f, bound = std::make_tuple(std::forward<A0>(a0), std::forward<A>(rest)...)](Tensor x) {
          return std::apply([&](const auto&... a) { return Tensor(f(x, a...)); }, bound);
        }) {}
  Tensor forward(const Tensor& x) { return f_(x); }
  Tensor operator()(const Tensor& x) { return f_(x); }
  std::string name() const override { return "Functional"; }

 private:
  Function f_;
};
LT_MODULE(Functional);

}  // namespace lt::nn
