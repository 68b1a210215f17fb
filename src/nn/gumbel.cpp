// F::gumbel_softmax. In the nn layer because the hard sample's straight-through gradient
// detaches the soft sample, which is autograd's.
#include <limits>

#include "core/check.h"
#include "lt/autograd.h"
#include "lt/nn/functional.h"

namespace lt::nn::functional {

Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, int64_t dim) {
  LT_CHECK(is_floating(logits.dtype()), "gumbel_softmax: expected floating-point logits, got ",
           dtype_name(logits.dtype()));
  LT_CHECK(tau > 0, "gumbel_softmax: tau must be positive, got ", tau);
  // Gumbel(0, 1) noise -log(E), E ~ Exp(1) = -log(1 - U), U ~ [0, 1); E is kept above 0.
  Tensor u = rand(logits.sizes(), logits.options());
  Tensor e = (-log1p(-u)).clamp_min(std::numeric_limits<float>::min());
  Tensor soft = softmax((logits - log(e)) / tau, dim);
  if (!hard) return soft;
  // A one-hot of the argmax whose gradient is the soft sample's (the straight-through trick).
  Tensor hot = zeros_like(soft).scatter(dim, soft.argmax(dim, true), 1.0);
  return hot - soft.detach() + soft;
}

}  // namespace lt::nn::functional
