// Reverse-mode autograd over lt::Tensor (device-agnostic: formulas are lt::Tensor ops, so on
// the lazy device backward() records graph like any other code).
#pragma once
#include <memory>
#include <vector>

#include "core/tensor_impl.h"
#include "lt/tensor.h"
#include "ops/registry.h"

namespace lt::autograd {

struct GradFn;

// Where an input's gradient goes: the node that produced it, or the leaf it accumulates into.
struct Edge {
  std::shared_ptr<GradFn> fn;
  std::shared_ptr<TensorImpl> leaf;
  bool active() const { return fn || leaf; }
};

// The backward node of one recorded op.
struct GradFn {
  OpKind op;
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
};

struct Meta final : AutogradPayload {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<GradFn> grad_fn;
};

Meta* meta_of(const Tensor& t);       // null when the tensor has no autograd state
Meta& ensure_meta(const Tensor& t);
Tensor detached(const Tensor& t);     // a new handle on the same data without history

// Gradients of one node's inputs given the gradient of its output (undefined = no gradient).
std::vector<Tensor> apply_formula(const GradFn& fn, const Tensor& grad);
// Which values a formula reads, and whether an op has one: the gradient column of ops.def
// (formula_reads, differentiable in ops/registry.h).

}  // namespace lt::autograd
