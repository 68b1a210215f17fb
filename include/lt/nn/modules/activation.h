// Activation modules, each forwarding to its function: the plain ones to lt/ops.h, the ones with
// options to F::xxx(x, options) (lt/nn/functional.h), which also applies `inplace` (the result
// written into the input, as libtorch's, which autograd refuses on a leaf that requires grad).
#pragma once
#include <string>

#include "lt/nn/functional.h"
#include "lt/nn/module.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

// Activations without options.
#define LT_NN_ACTIVATION(Name, expr)                    \
  class Name##Impl : public Module {                    \
   public:                                              \
    Tensor forward(const Tensor& x) { return expr; }    \
    std::string name() const override { return #Name; } \
    LT_CLONE_DEFAULT(Name##Impl)                        \
  };                                                    \
  LT_MODULE(Name)

LT_NN_ACTIVATION(Sigmoid, sigmoid(x));
LT_NN_ACTIVATION(Tanh, tanh(x));
LT_NN_ACTIVATION(SiLU, silu(x));
LT_NN_ACTIVATION(Mish, mish(x));
LT_NN_ACTIVATION(Softsign, softsign(x));
LT_NN_ACTIVATION(LogSigmoid, log_sigmoid(x));
LT_NN_ACTIVATION(Hardsigmoid, hardsigmoid(x));
LT_NN_ACTIVATION(Hardswish, hardswish(x));
LT_NN_ACTIVATION(Identity, x);
#undef LT_NN_ACTIVATION

// Activations with Options: forward is F::fn(x, options).
#define LT_NN_ACTIVATION_WITH_OPTIONS(Name, fn)                            \
  class Name##Impl : public Module {                                       \
   public:                                                                 \
    explicit Name##Impl(const Name##Options& o = {}) : options(o) {}       \
    Tensor forward(const Tensor& x) { return functional::fn(x, options); } \
    std::string name() const override { return #Name; }                    \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                      \
    Name##Options options;                                                 \
  };                                                                       \
  LT_MODULE(Name)

LT_NN_ACTIVATION_WITH_OPTIONS(ReLU, relu);
LT_NN_ACTIVATION_WITH_OPTIONS(ReLU6, relu6);
LT_NN_ACTIVATION_WITH_OPTIONS(SELU, selu);
LT_NN_ACTIVATION_WITH_OPTIONS(LeakyReLU, leaky_relu);
LT_NN_ACTIVATION_WITH_OPTIONS(ELU, elu);
LT_NN_ACTIVATION_WITH_OPTIONS(CELU, celu);
LT_NN_ACTIVATION_WITH_OPTIONS(GELU, gelu);
LT_NN_ACTIVATION_WITH_OPTIONS(Softplus, softplus);
LT_NN_ACTIVATION_WITH_OPTIONS(Hardtanh, hardtanh);
LT_NN_ACTIVATION_WITH_OPTIONS(GLU, glu);
#undef LT_NN_ACTIVATION_WITH_OPTIONS

class ThresholdImpl : public Module {
 public:
  explicit ThresholdImpl(const ThresholdOptions& o) : options(o) {}
  ThresholdImpl(double threshold, double value)
      : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  Tensor forward(const Tensor& x) { return functional::threshold(x, options); }
  std::string name() const override { return "Threshold"; }
  LT_CLONE_FROM_OPTIONS(ThresholdImpl)
  ThresholdOptions options;
};
LT_MODULE(Threshold);

// Softmax, LogSoftmax and Softmin over options.dim().
#define LT_NN_SOFTMAX(Name, fn)                                            \
  class Name##Impl : public Module {                                       \
   public:                                                                 \
    explicit Name##Impl(const SoftmaxOptions& o) : options(o) {}           \
    explicit Name##Impl(int64_t dim) : options(dim) {}                     \
    Tensor forward(const Tensor& x) { return functional::fn(x, options); } \
    std::string name() const override { return #Name; }                    \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                      \
    SoftmaxOptions options;                                                \
  };                                                                       \
  LT_MODULE(Name)
LT_NN_SOFTMAX(Softmax, softmax);
LT_NN_SOFTMAX(LogSoftmax, log_softmax);
LT_NN_SOFTMAX(Softmin, softmin);
#undef LT_NN_SOFTMAX

}  // namespace lt::nn
