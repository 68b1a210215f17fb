// lt::scatter_reduce (and Tensor::scatter_reduce), composed of the indexing primitives. amax and
// amin scatter src sorted along dim (ascending for amax), so that the last write to each target,
// which wins, is its extremum; their gradient, shared evenly by every element equal to the
// result (PyTorch's rule), is a custom autograd function, which puts this file in the nn layer.
#include <cmath>
#include <limits>

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

}  // namespace

Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  OpContext ctx("scatter_reduce");
  LT_CHECK(reduce == "sum" || reduce == "mean" || reduce == "amax" || reduce == "amin" ||
               reduce == "prod",
           "scatter_reduce: reduce must be one of sum, prod, mean, amax, amin; got '", reduce, "'");
  LT_CHECK(reduce != "prod", "scatter_reduce: reduce='prod' is not supported yet");
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

}  // namespace lt
