// Reductions and the statistics built from them (mean, var, std, logsumexp, norm).
#include <algorithm>
#include <cmath>
#include <limits>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "ops/attrs.h"

namespace lt {
namespace {
using K = OpKind;

Tensor reduce(K op, const Tensor& t, IntList dims, bool keepdim) {
  ReduceAttrs a{reduce_dims(dims, t.dim(), op_name(op)), keepdim, t.dtype()};
  if (op_dtype_rule(op) == DtypeRule::AttrDtype && !is_floating(t.dtype())) a.dtype = kInt64;
  return call(op, {t}, a.attrs());
}

Tensor arg(K op, const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) {
    LT_CHECK(t.numel() > 0, op_name(op), ": cannot take the ", op_name(op), " of an empty tensor");
    return call(op, {t.reshape({-1})}, ReduceAttrs{{0}, false}.attrs());
  }
  return call(op, {t}, ReduceAttrs{{wrap_dim(*dim, t.dim(), op_name(op))}, keepdim}.attrs());
}

int64_t count_of(const Tensor& t, IntList dims) {
  Dims d = reduce_dims(dims, t.dim(), "mean");
  int64_t n = 1;
  for (int64_t v : d) n *= t.size(v);
  return n;
}

void require_float(const Tensor& t, const char* op) {
  LT_CHECK(is_floating(t.dtype()), op, ": expected a floating-point input, got ",
           dtype_name(t.dtype()), " (shape ", shape_str(t.sizes()), "); cast with .to(lt::kFloat32)");
}

Tensor squeeze_dims(Tensor r, IntList dims, int64_t nd) {
  Dims d = reduce_dims(dims, nd, "reduce");
  for (size_t i = d.size(); i-- > 0;) r = r.squeeze(d[i]);
  return r;
}
}  // namespace

Tensor sum(const Tensor& t) { return reduce(K::Sum, t, {}, false); }
Tensor sum(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::Sum, t, dims, keepdim); }
Tensor prod(const Tensor& t) { return reduce(K::Prod, t, {}, false); }
Tensor prod(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::Prod, t, dims, keepdim); }
Tensor amax(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::Amax, t, dims, keepdim); }
Tensor amin(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::Amin, t, dims, keepdim); }
Tensor any(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::Any, t, dims, keepdim); }
Tensor all(const Tensor& t, IntList dims, bool keepdim) { return reduce(K::All, t, dims, keepdim); }
Tensor mean(const Tensor& t) { return mean(t, {}, false); }
Tensor mean(const Tensor& t, IntList dims, bool keepdim) {
  OpContext ctx("mean");
  require_float(t, "mean");
  return in_compute_dtype(t, [&](const Tensor& t) {
    return sum(t, dims, keepdim) / static_cast<double>(count_of(t, dims));
  });
}
Tensor max(const Tensor& t) {
  LT_CHECK(t.numel() > 0, "max: cannot reduce an empty tensor (shape ", shape_str(t.sizes()), ")");
  return amax(t);
}
Tensor min(const Tensor& t) {
  LT_CHECK(t.numel() > 0, "min: cannot reduce an empty tensor (shape ", shape_str(t.sizes()), ")");
  return amin(t);
}
std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  OpContext ctx("max");
  return {amax(t, dim, keepdim), arg(K::Argmax, t, dim, keepdim)};
}
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  OpContext ctx("min");
  return {amin(t, dim, keepdim), arg(K::Argmin, t, dim, keepdim)};
}
Tensor argmax(const Tensor& t) { return arg(K::Argmax, t, std::nullopt, false); }
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) { return arg(K::Argmax, t, dim, keepdim); }
Tensor argmin(const Tensor& t) { return arg(K::Argmin, t, std::nullopt, false); }
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) { return arg(K::Argmin, t, dim, keepdim); }

Tensor var(const Tensor& t, IntList dims, bool unbiased, bool keepdim) {
  OpContext ctx("var");
  require_float(t, "var");
  return in_compute_dtype(t, [&](const Tensor& t) {
    Tensor mu = mean(t, dims, true);
    Tensor d = t - mu;
    // PyTorch divides by max(0, N - correction): an empty or too small group gives nan, not -0.
    double n = std::max(0.0, static_cast<double>(count_of(t, dims)) - (unbiased ? 1.0 : 0.0));
    return sum(d * d, dims, keepdim) / n;
  });
}
Tensor std(const Tensor& t, IntList dims, bool unbiased, bool keepdim) {
  OpContext ctx("std");
  return in_compute_dtype(t,
                          [&](const Tensor& t) { return sqrt(var(t, dims, unbiased, keepdim)); });
}

Tensor logsumexp(const Tensor& t, IntList dims, bool keepdim) {
  OpContext ctx("logsumexp");
  if (is_storage_dtype(t.dtype()) && is_floating(t.dtype()))
    return in_compute_dtype(t, [&](const Tensor& t) { return logsumexp(t, dims, keepdim); });
  Tensor x = is_floating(t.dtype()) ? t : t.to(kFloat32);
  if (x.numel() == 0) return log(sum(exp(x), dims, keepdim));
  Tensor m = without_history(amax(x, dims, true));  // the result ignores the shift
  Tensor finite = abs(m) != std::numeric_limits<double>::infinity();
  Tensor ms = where(finite, m, 0.0);
  Tensor r = log(sum(exp(x - ms), dims, true)) + ms;
  return keepdim ? r : squeeze_dims(r, dims, x.dim());
}

Tensor norm(const Tensor& t) { return norm(t, 2.0, {}, false); }
Tensor norm(const Tensor& t, double p, IntList dims, bool keepdim) {
  OpContext ctx("norm");
  require_float(t, "norm");
  if (is_storage_dtype(t.dtype()))
    return in_compute_dtype(t, [&](const Tensor& t) { return norm(t, p, dims, keepdim); });
  if (p == 2.0) return sqrt(sum(t * t, dims, keepdim));
  if (p == 1.0) return sum(abs(t), dims, keepdim);
  if (std::isinf(p)) return p > 0 ? amax(abs(t), dims, keepdim) : amin(abs(t), dims, keepdim);
  if (p > 0) return pow(sum(pow(abs(t), p), dims, keepdim), 1.0 / p);
  std::optional<std::vector<int64_t>> d;  // p = 0 and p < 0: vector_norm's (no recursion)
  if (!dims.empty()) d = dims.vec();
  return linalg::vector_norm(t, p, d, keepdim);
}

// ---- methods
Tensor Tensor::sum() const { return lt::sum(*this); }
Tensor Tensor::sum(int64_t d, bool k) const { return lt::sum(*this, IntList(d), k); }
Tensor Tensor::sum(IntList d, bool k) const { return lt::sum(*this, d, k); }
Tensor Tensor::mean() const { return lt::mean(*this); }
Tensor Tensor::mean(int64_t d, bool k) const { return lt::mean(*this, IntList(d), k); }
Tensor Tensor::mean(IntList d, bool k) const { return lt::mean(*this, d, k); }
Tensor Tensor::prod() const { return lt::prod(*this); }
Tensor Tensor::prod(int64_t d, bool k) const { return lt::prod(*this, IntList(d), k); }
Tensor Tensor::prod(IntList d, bool k) const { return lt::prod(*this, d, k); }
Tensor Tensor::amax() const { return lt::amax(*this); }
Tensor Tensor::amax(int64_t d, bool k) const { return lt::amax(*this, IntList(d), k); }
Tensor Tensor::amax(IntList d, bool k) const { return lt::amax(*this, d, k); }
Tensor Tensor::any() const { return lt::any(*this); }
Tensor Tensor::any(int64_t d, bool k) const { return lt::any(*this, IntList(d), k); }
Tensor Tensor::any(IntList d, bool k) const { return lt::any(*this, d, k); }
Tensor Tensor::all() const { return lt::all(*this); }
Tensor Tensor::all(int64_t d, bool k) const { return lt::all(*this, IntList(d), k); }
Tensor Tensor::all(IntList d, bool k) const { return lt::all(*this, d, k); }
Tensor Tensor::amin() const { return lt::amin(*this); }
Tensor Tensor::amin(int64_t d, bool k) const { return lt::amin(*this, IntList(d), k); }
Tensor Tensor::amin(IntList d, bool k) const { return lt::amin(*this, d, k); }
Tensor Tensor::max() const { return lt::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return lt::max(*this, d, k); }
Tensor Tensor::min() const { return lt::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return lt::min(*this, d, k); }
Tensor Tensor::argmax() const { return lt::argmax(*this); }
Tensor Tensor::argmax(int64_t d, bool k) const { return lt::argmax(*this, d, k); }
Tensor Tensor::argmin() const { return lt::argmin(*this); }
Tensor Tensor::argmin(int64_t d, bool k) const { return lt::argmin(*this, d, k); }
Tensor Tensor::var(bool u) const { return lt::var(*this, {}, u, false); }
Tensor Tensor::var(int64_t d, bool u, bool k) const { return lt::var(*this, IntList(d), u, k); }
Tensor Tensor::var(IntList d, bool u, bool k) const { return lt::var(*this, d, u, k); }
Tensor Tensor::std(bool u) const { return lt::std(*this, {}, u, false); }
Tensor Tensor::std(int64_t d, bool u, bool k) const { return lt::std(*this, IntList(d), u, k); }
Tensor Tensor::std(IntList d, bool u, bool k) const { return lt::std(*this, d, u, k); }
Tensor Tensor::logsumexp(IntList d, bool k) const { return lt::logsumexp(*this, d, k); }
Tensor Tensor::norm() const { return lt::norm(*this); }
Tensor Tensor::norm(double p, IntList d, bool k) const { return lt::norm(*this, p, d, k); }

}  // namespace lt
