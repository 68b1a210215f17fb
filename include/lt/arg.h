// LT_ARG(T, name): an option argument spelled as libtorch's (TORCH_ARG): a setter name(v) that
// returns the options object, a getter name(), and the member name_ (a default value may follow:
// LT_ARG(double, eps) = 1e-5;). Used by the nn options and the data loader options.
#pragma once

#define LT_ARG(T, name)                                    \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_
