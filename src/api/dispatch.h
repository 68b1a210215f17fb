// The one entry point of every primitive: device check, record-time shape/dtype rule, then the
// eager executor (cpu) or the lazy runtime (lazy). Also the helpers the API layer shares.
#pragma once
#include "ops/lazy_hooks.h"
#include "lt/ops.h"
#include "ops/shape_rules.h"

namespace lt {

Tensor call(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a = kNoAttrs);
// Same, for creation/random ops whose device comes from the attributes.
Tensor call_on(Device d, OpKind op, const OpAttrs& a);

// A host scalar as a 0-d "wrapped number" tensor on `d` (PyTorch's promotion rules apply).
Tensor wrap_scalar(const Scalar& s, Device d);
// A 0-d tensor of dtype `t` holding `s`.
Tensor scalar_of(const Scalar& s, Dtype t, Device d);

// Throws if `t` is an expanded view (writing it would hit one element several times).
void check_writable(const Tensor& t, const char* what, const char* suffix = "");
// Writes v (same shape and dtype) into self: lazy substitution or an eager copy.
void assign_value(Tensor& self, const Tensor& v);
// Whether an op's result of dtype `from` may be written into a tensor of dtype `to`: never
// float into integer, never a number into bool (libtorch's rule for in-place ops).
bool can_cast(Dtype from, Dtype to);
// In-place: compute op(self, others...) and write it into self (checks shape and dtype).
Tensor& inplace(OpKind op, const Tensor& self, ArrayRef<Tensor> in, const OpAttrs& a = kNoAttrs);
// An in-place composite's last step (addcmul_, erfinv_, scatter_reduce_, ...): writes `result`
// into self after the checks inplace() makes, naming `op` (say "addcmul_") in their errors.
Tensor& write_back(const Tensor& self, const Tensor& result, const char* op);

// A composite's stop-gradient: `fresh`, an op's result that nothing else holds yet, loses its
// autograd history (Tensor::detach lives above this layer). For a shift such as softmax's
// maximum, whose gradient is 0 exactly: backward then neither computes it nor leaves the
// rounding residue of a sum that cancels.
Tensor without_history(Tensor fresh);

// log_softmax of floating `x` over `dim` (wrapped, numel > 0) in its two halves, for callers that
// need only part of it: shifted = x - max (the shift without history) and log_sum = the log of
// sum(exp(shifted)) over dim, kept as a size-1 dim with `keepdim`. log_softmax is their difference.
struct LogSoftmaxParts {
  Tensor shifted, log_sum;
};
LogSoftmaxParts log_softmax_parts(const Tensor& x, int64_t dim, bool keepdim = true);

// The values of `t` if they are known without running a graph (an eager tensor, or lazy
// device data and views of it); undefined otherwise. For value checks at the user's call.
Tensor known_values(const Tensor& t);

// A libtorch op on float16/bfloat16 computes in float32 and rounds once, however many
// primitives our composite of it records: f runs on x widened and the result is rounded back.
// (Other dtypes: f(x) as is.)
template <typename F>
Tensor in_compute_dtype(const Tensor& x, F&& f) {
  if (!x.defined() || !is_storage_dtype(x.dtype()) || !is_floating(x.dtype())) return f(x);
  return f(x.to(compute_dtype(x.dtype()))).to(x.dtype());
}

// A 2-d op's pair argument given as 1 or 2 values ({3} is {3, 3}); `fallback` when it is empty
// and a fallback is given (a pool's stride defaults to its kernel). Errors name op and what.
Dims pair_of(IntList v, const char* op, const char* what, IntList fallback = {});

// Philox stream position: returns {seed, offset} and advances by n elements.
std::pair<uint64_t, uint64_t> next_random(int64_t n);

}  // namespace lt
