// Autograd controls and libtorch's torch::autograd API. Gradients are recorded for every op
// whose inputs require grad, on every device (on the lazy device backward() records more graph,
// compiled with the step).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Sets grad mode in its scope (for this thread), like torch::AutoGradMode.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// Disables gradient recording in its scope, like torch::NoGradGuard.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

namespace autograd {

using Variable = Tensor;
using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

// A node of the backward graph: what Tensor::grad_fn() returns.
class Node {
 public:
  virtual ~Node() = default;
  // "MulBackward0" for a recorded mul; a custom Function's class name for its node.
  virtual std::string name() const = 0;
  virtual size_t num_inputs() const = 0;
};

// The gradients of `outputs` (weighted by grad_outputs; omitted ones are 1 for one-element
// outputs) with respect to `inputs`, returned instead of accumulated into .grad().
// retain_graph (default: create_graph) keeps the values the formulas saved, so the graph can be
// differentiated again; create_graph records the backward computation itself, for higher-order
// gradients. An input the outputs do not depend on is an error unless allow_unused (then its
// gradient is undefined).
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);

// Accumulates the gradients of `tensors` into the .grad() of the leaves (of `inputs` only, when
// given), as Tensor::backward for several roots at once.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

}  // namespace autograd
}  // namespace lt
