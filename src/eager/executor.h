// The eager executor: runs one registry op on cpu tensors (views share storage).
#pragma once
#include "ops/shape_rules.h"

namespace lt {

Tensor eager_execute(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m);
// Elementwise ops only: writes the result into `out` (any strides, dtype m.dtype).
void eager_execute_into(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m,
                        const Tensor& out);

}  // namespace lt
