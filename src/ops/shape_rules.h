// Record-time shape and dtype rules: run before any kernel or IR node is made, on every device,
// so a bad call throws lt::Error at the user's line with the op, the shapes and what was expected.
#pragma once
#include "lt/tensor.h"
#include "ops/registry.h"

namespace lt {

struct OpMeta {
  Dims sizes;
  Dtype dtype = kFloat32;    // output dtype
  Dtype compute = kFloat32;  // dtype the inputs are brought to before the kernel runs
};

OpMeta infer_meta(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a);

// PyTorch's result_type: dimensioned tensors > 0-d tensors > wrapped host scalars, by category.
Dtype result_type(ArrayRef<Tensor> in);

}  // namespace lt
