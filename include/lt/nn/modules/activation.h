// Activation modules, each a thin wrapper over its function in lt/ops.h. An `inplace` option
// writes the result into the input (as libtorch's), which autograd refuses on a leaf that
// requires grad.
#pragma once
#include <string>

#include "lt/nn/module.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

namespace detail {
// The in-place form of an activation: the result copied into x, then x.
inline Tensor maybe_inplace(const Tensor& x, const Tensor& y, bool inplace) {
  return inplace ? x.copy_(y) : y;
}
}  // namespace detail

// Activations without options.
#define LT_NN_ACTIVATION(Name, expr)                    \
  class Name##Impl : public Module {                    \
   public:                                              \
    Tensor forward(const Tensor& x) { return expr; }    \
    std::string name() const override { return #Name; } \
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

class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return options.inplace() ? x.relu_() : relu(x); }
  std::string name() const override { return "ReLU"; }
  ReLUOptions options;
};
LT_MODULE(ReLU);

class ReLU6Impl : public Module {
 public:
  explicit ReLU6Impl(const ReLU6Options& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return detail::maybe_inplace(x, relu6(x), options.inplace()); }
  std::string name() const override { return "ReLU6"; }
  ReLU6Options options;
};
LT_MODULE(ReLU6);

class SELUImpl : public Module {
 public:
  explicit SELUImpl(const SELUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return detail::maybe_inplace(x, selu(x), options.inplace()); }
  std::string name() const override { return "SELU"; }
  SELUOptions options;
};
LT_MODULE(SELU);

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) {
    return detail::maybe_inplace(x, leaky_relu(x, options.negative_slope()), options.inplace());
  }
  std::string name() const override { return "LeakyReLU"; }
  LeakyReLUOptions options;
};
LT_MODULE(LeakyReLU);

class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) {
    return detail::maybe_inplace(x, elu(x, options.alpha()), options.inplace());
  }
  std::string name() const override { return "ELU"; }
  ELUOptions options;
};
LT_MODULE(ELU);

class CELUImpl : public Module {
 public:
  explicit CELUImpl(const CELUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) {
    return detail::maybe_inplace(x, celu(x, options.alpha()), options.inplace());
  }
  std::string name() const override { return "CELU"; }
  CELUOptions options;
};
LT_MODULE(CELU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return gelu(x, options.approximate()); }
  std::string name() const override { return "GELU"; }
  GELUOptions options;
};
LT_MODULE(GELU);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return softplus(x, options.beta(), options.threshold()); }
  std::string name() const override { return "Softplus"; }
  SoftplusOptions options;
};
LT_MODULE(Softplus);

class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) {
    return detail::maybe_inplace(x, hardtanh(x, options.min_val(), options.max_val()),
                                 options.inplace());
  }
  std::string name() const override { return "Hardtanh"; }
  HardtanhOptions options;
};
LT_MODULE(Hardtanh);

class ThresholdImpl : public Module {
 public:
  explicit ThresholdImpl(const ThresholdOptions& o) : options(o) {}
  ThresholdImpl(double threshold, double value)
      : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  Tensor forward(const Tensor& x) {
    return detail::maybe_inplace(x, lt::threshold(x, options.threshold(), options.value()),
                                 options.inplace());
  }
  std::string name() const override { return "Threshold"; }
  ThresholdOptions options;
};
LT_MODULE(Threshold);

// Softmax, LogSoftmax and Softmin over options.dim().
#define LT_NN_SOFTMAX(Name, fn)                                      \
  class Name##Impl : public Module {                                 \
   public:                                                           \
    explicit Name##Impl(const SoftmaxOptions& o) : options(o) {}     \
    explicit Name##Impl(int64_t dim) : options(dim) {}               \
    Tensor forward(const Tensor& x) { return fn(x, options.dim()); } \
    std::string name() const override { return #Name; }              \
    SoftmaxOptions options;                                          \
  };                                                                 \
  LT_MODULE(Name)
LT_NN_SOFTMAX(Softmax, softmax);
LT_NN_SOFTMAX(LogSoftmax, log_softmax);
LT_NN_SOFTMAX(Softmin, softmin);
#undef LT_NN_SOFTMAX

class GLUImpl : public Module {
 public:
  explicit GLUImpl(const GLUOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return glu(x, options.dim()); }
  std::string name() const override { return "GLU"; }
  GLUOptions options;
};
LT_MODULE(GLU);

}  // namespace lt::nn
