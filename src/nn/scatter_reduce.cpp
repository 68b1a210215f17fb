// lt::scatter_reduce (and Tensor::scatter_reduce), composed of the indexing primitives. amax and
// amin scatter src sorted along dim (ascending for amax), so that the last write to each target,
// which wins, is its extremum; their gradient, shared evenly by every element equal to the
// result (PyTorch's rule), is a custom autograd function, which puts this file in the nn layer.
// prod sorts src by target and multiplies each target's run by a segmented scan, so it is exact
// (products only, no division) and its gradient, the product of the others, holds with zeros.
#include <cmath>
#include <limits>

#include "api/dispatch.h"
#include "api/shift.h"
#include "core/check.h"
#include "lt/autograd_function.h"
#include "lt/ops.h"

namespace lt {
namespace {

using autograd::AutogradContext;
using autograd::variable_list;

// Targets that receive at least one element.
Tensor hit_mask(const Tensor& t, int64_t d, const Tensor& index) {
  return zeros(t.sizes(), t.options().dtype(kBool)).scatter(d, index, true);
}

Tensor extremum(const Tensor& t, int64_t d, const Tensor& index, const Tensor& src, bool max,
                bool include_self) {
  const Tensor order = argsort(src, d, /*descending=*/!max, /*stable=*/true);
  Tensor v = t.scatter(d, index.gather(d, order), src.gather(d, order));
  if (include_self) v = max ? maximum(v, t) : minimum(v, t);
  if (is_floating(src.dtype())) {  // NaN wins, as PyTorch's (sorting would put it anywhere)
    Tensor nan =
        zeros(t.sizes(), t.options().dtype(kInt64)).scatter_add(d, index, isnan(src).to(kInt64));
    v = where(nan > 0, std::numeric_limits<double>::quiet_NaN(), v);
  }
  return where(hit_mask(t, d, index), v, t);
}

struct Extremum : autograd::Function<Extremum> {
  static Tensor forward(AutogradContext* ctx, const Tensor& t, int64_t d, const Tensor& index,
                        const Tensor& src, bool max, bool include_self) {
    Tensor r = extremum(t, d, index, src, max, include_self);
    ctx->save_for_backward({t, index, src, r});
    ctx->saved_data["dim"] = d;
    ctx->saved_data["include_self"] = include_self;
    return r;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    const Tensor &t = s[0], &index = s[1], &src = s[2], &r = s[3], &g = grads[0];
    const int64_t d = ctx->saved_data["dim"].toInt();
    const bool include_self = ctx->saved_data["include_self"].toBool();
    const Tensor hit = hit_mask(t, d, index);
    const Tensor from_src = (src == r.gather(d, index)).to(src.dtype());
    const Tensor from_self = include_self ? ((t == r) & hit).to(t.dtype()) : zeros_like(t);
    const Tensor count = from_self + zeros_like(t).scatter_add(d, index, from_src);
    const Tensor share = where(hit, g / count, zeros_like(g));  // count >= 1 where hit
    return {where(hit, share * from_self, g),  Tensor(), Tensor(),
            from_src * share.gather(d, index), Tensor(), Tensor()};
  }
};

// Each target's product of the src elements index sends it (1 where none). src is sorted by
// target (stably) along d; a Hillis-Steele scan in log2(n) steps leaves each run's product on
// the run's last element, and only those are added into the targets. What else is added is -0.0,
// the identity of IEEE addition, so that a product of -0.0 keeps its sign.
Tensor src_products(const Tensor& t, int64_t d, const Tensor& index, const Tensor& src,
                    const Tensor& hit) {
  const int64_t n = index.size(d);
  const Tensor order = argsort(index, d, /*descending=*/false, /*stable=*/true);
  const Tensor to = index.gather(d, order);
  Tensor v = src.gather(d, order);
  for (int64_t k = 1; k < n; k *= 2)
    v = where(shifted(to, d, k, -1) == to, v * shifted(v, d, k, 1), v);
  const Tensor next = cat({to.narrow(d, 1, n - 1), full_like(to.narrow(d, 0, 1), -1)}, d);
  return ones_like(t).masked_fill(hit, -0.0).scatter_add(d, to,
                                                         where(next != to, v, full_like(v, -0.0)));
}

Tensor product(const Tensor& t, int64_t d, const Tensor& index, const Tensor& src,
               bool include_self) {
  if (t.dim() == 0)
    return product(t.reshape({1}), 0, index.reshape({1}), src.reshape({1}), include_self)
        .reshape({});
  if (index.numel() == 0) return t.clone();
  const Tensor hit = hit_mask(t, d, index);
  const Tensor p = src_products(t, d, index, src, hit);
  return include_self ? t * p : where(hit, p, t);
}

}  // namespace

Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  OpContext ctx("scatter_reduce");
  LT_CHECK(reduce == "sum" || reduce == "mean" || reduce == "amax" || reduce == "amin" ||
               reduce == "prod",
           "scatter_reduce: reduce must be one of sum, prod, mean, amax, amin; got '", reduce, "'");
  LT_CHECK(t.dtype() == src.dtype(), "scatter_reduce: expected self and src of one dtype, got ",
           dtype_name(t.dtype()), " and ", dtype_name(src.dtype()));
  LT_CHECK(index.dim() == t.dim() && src.dim() == t.dim(),
           "scatter_reduce: expected index and src with self's number of dims (", t.dim(),
           "), got ", index.dim(), " and ", src.dim());
  const int64_t d = t.dim() == 0 ? 0 : (dim < 0 ? dim + t.dim() : dim);
  LT_CHECK(d >= 0 && d < std::max<int64_t>(t.dim(), 1), "scatter_reduce: dim ", dim,
           " is out of range for a ", t.dim(), "-d tensor");
  // The part of src that index reaches (checked against index by the primitives below).
  Tensor part = src;
  for (int64_t k = 0; k < src.dim(); ++k)
    if (index.size(k) < src.size(k)) part = part.narrow(k, 0, index.size(k));
  if (reduce == "prod") return product(t, d, index, part, include_self);
  if (reduce == "amax" || reduce == "amin")
    return Extremum::apply(t, d, index, part, reduce == "amax", include_self);
  const Tensor hit = hit_mask(t, d, index);
  const Tensor base = include_self ? t : t.masked_fill(hit, 0);
  Tensor sum = base.scatter_add(d, index, part);
  if (reduce == "sum") return sum;
  // Targets nothing reaches keep t (where below); their count of 0 is raised to 1 first.
  const Tensor count = (include_self ? ones_like(t) : zeros_like(t))
                           .scatter_add(d, index, ones_like(part))
                           .clamp_min(1);
  const Tensor mean = is_floating(t.dtype())
                          ? sum / count
                          : (sum.to(kFloat64) / count.to(kFloat64)).floor().to(t.dtype());
  return where(hit, mean, t);
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                              const std::string& reduce, bool include_self) const {
  return lt::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self) const {
  return write_back(*this, lt::scatter_reduce(*this, dim, index, src, reduce, include_self),
                    "scatter_reduce_");
}

}  // namespace lt
