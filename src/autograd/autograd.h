// Reverse-mode autograd over lt::Tensor (device-agnostic: formulas are lt::Tensor ops, so on
// the lazy device backward() records graph like any other code).
#pragma once
#include <memory>
#include <vector>

#include "core/tensor_impl.h"
#include "lt/autograd.h"
#include "lt/tensor.h"
#include "ops/registry.h"

namespace lt::autograd {

struct GradFn;
struct CustomNode;

// Where an input's gradient goes: output `output_nr` of the node that produced it, or the leaf
// it accumulates into.
struct Edge {
  std::shared_ptr<GradFn> fn;
  std::shared_ptr<TensorImpl> leaf;
  uint32_t output_nr = 0;
  bool active() const { return fn || leaf; }
};

// The backward node of one recorded op (one output), or of a custom autograd::Function (any
// number of outputs; `custom` set).
struct GradFn final : Node, std::enable_shared_from_this<GradFn> {
  OpKind op{};
  OpAttrs attrs;
  std::vector<Edge> next;           // per input
  std::vector<Tensor> saved;        // per input: its value if the formula reads it
  std::vector<uint32_t> saved_version;
  std::vector<Dims> in_sizes;
  std::vector<Dtype> in_dtypes;
  Tensor out;                       // the output's value if the formula reads it
  uint32_t out_version = 0;
  Dims out_sizes;
  Dtype out_dtype = kFloat32;
  uint32_t num_outputs = 1;
  std::shared_ptr<CustomNode> custom;
  // Per output: the autograd state of a tensor that called retain_grad() (weak: the tensor
  // owns its state, and its state owns this node).
  std::vector<std::weak_ptr<AutogradPayload>> retained;
  bool released = false;  // a backward without retain_graph freed what the formula reads

  std::string name() const override;
  size_t num_inputs() const override { return next.size(); }
};

struct Meta final : AutogradPayload {
  bool requires_grad = false;
  bool retains_grad = false;
  uint32_t output_nr = 0;
  Tensor grad;
  std::shared_ptr<GradFn> grad_fn;
};

Meta* meta_of(const Tensor& t);       // null when the tensor has no autograd state
Meta& ensure_meta(const Tensor& t);
Tensor detached(const Tensor& t);     // a new handle on the same data without history
// A new handle on t's data whose history is output `output_nr` of `fn`.
Tensor with_history(const Tensor& t, std::shared_ptr<GradFn> fn, uint32_t output_nr);
Edge edge_of(const Tensor& t);

// Gradients of one node's inputs given the gradient of its output (undefined = no gradient);
// `saved` and `out` stand for the node's saved values (with history under create_graph).
std::vector<Tensor> apply_formula(const GradFn& fn, const std::vector<Tensor>& saved,
                                  const Tensor& out, const Tensor& grad);
// Which values a formula reads, and whether an op has one: the gradient column of ops.def
// (formula_reads, differentiable in ops/registry.h).

// A custom function's backward: runs the user's static backward (src/autograd/custom.cpp).
std::vector<Tensor> apply_custom(GradFn& fn, std::vector<Tensor> grads);
void release_custom(GradFn& fn);
std::string custom_name(const GradFn& fn);

}  // namespace lt::autograd
