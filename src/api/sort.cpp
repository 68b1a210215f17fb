// sort, argsort, msort, topk, kthvalue and median over the Argsort primitive (a library step on
// the lazy device, with no sync: its shape is the input's). Values are gathered with the
// indices, so their gradient is gather's; indices carry none.
#include <cmath>
#include <limits>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "ops/attrs.h"

namespace lt {
namespace {

Tensor sorting_permutation(const Tensor& t, int64_t dim, bool descending) {
  return call(OpKind::Argsort, {t}, SortAttrs{dim, descending}.attrs());
}

int64_t sort_dim(const Tensor& t, int64_t dim, const char* name) {
  return wrap_dim(dim, std::max<int64_t>(t.dim(), 1), name);
}

// Element k (0-based) of each slice in sorted order, as (values, indices) with dim kept.
std::tuple<Tensor, Tensor> kth_kept(const Tensor& t, const Tensor& order, int64_t d,
                                    const Tensor& pos) {
  Tensor idx = t.dim() == 0 ? order : gather(order, d, pos);
  return {t.dim() == 0 ? t : gather(t, d, idx), idx};
}

std::tuple<Tensor, Tensor> maybe_squeeze(std::tuple<Tensor, Tensor> r, const Tensor& t, int64_t d,
                                         bool keepdim) {
  if (keepdim || t.dim() == 0) return r;
  return {std::get<0>(r).squeeze(d), std::get<1>(r).squeeze(d)};
}

}  // namespace

// After a stable ascending sort along dim, runs of equal values: each run's length at its last
// element, -1 elsewhere; the first maximum is the longest run of the smallest value, and its last
// element's source index is the value's last occurrence (the sort is stable), as PyTorch's.
std::tuple<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  OpContext ctx("mode");
  if (t.dim() == 0) return {t.clone(), zeros({}, TensorOptions(t.device()).dtype(kInt64))};
  const int64_t d = sort_dim(t, dim, "mode"), n = t.size(d);
  LT_CHECK(n > 0, "mode: dim ", d, " of shape ", shape_str(t.sizes()), " is empty");
  Tensor order = sorting_permutation(t, d, false);
  Tensor s = gather(t, d, order);
  const TensorOptions longs = TensorOptions(t.device()).dtype(kInt64);
  const TensorOptions bools = TensorOptions(t.device()).dtype(kBool);
  Tensor starts = ones_like(s, bools), ends = starts;
  if (n > 1) {
    Tensor step = s.narrow(d, 1, n - 1) != s.narrow(d, 0, n - 1);
    Tensor yes = ones_like(s.narrow(d, 0, 1), bools);
    starts = cat({yes, step}, d);
    ends = cat({step, yes}, d);
  }
  Tensor ids = cumsum(starts.to(kInt64), d) - 1;
  Tensor len = zeros_like(ids).scatter_add(d, ids, ones_like(ids)).gather(d, ids);
  Tensor best = where(ends, len, full({}, -1, longs)).argmax(d, true);
  std::tuple<Tensor, Tensor> r{gather(s, d, best), gather(order, d, best)};
  return maybe_squeeze(r, t, d, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const {
  return lt::mode(*this, dim, keepdim);
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool /*stable: always*/) {
  OpContext ctx("argsort");
  return sorting_permutation(t, sort_dim(t, dim, "argsort"), descending);
}

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending) {
  OpContext ctx("sort");
  const int64_t d = sort_dim(t, dim, "sort");
  Tensor idx = sorting_permutation(t, d, descending);
  return {t.dim() == 0 ? t.clone() : gather(t, d, idx), idx};
}
std::tuple<Tensor, Tensor> sort(const Tensor& t, std::optional<bool>, int64_t dim,
                                bool descending) {
  return sort(t, dim, descending);
}
Tensor msort(const Tensor& t) { return std::get<0>(sort(t, 0)); }

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool) {
  OpContext ctx("topk");
  const int64_t d = sort_dim(t, dim, "topk");
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  LT_CHECK(k >= 0 && k <= n, "topk: k (", k, ") is out of range for dim ", d, " of size ", n,
           " (shape ", shape_str(t.sizes()), ")");
  Tensor idx = sorting_permutation(t, d, largest);
  if (t.dim() > 0) idx = idx.narrow(d, 0, k);
  return {t.dim() == 0 ? t.clone() : gather(t, d, idx), idx};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  OpContext ctx("kthvalue");
  const int64_t d = sort_dim(t, dim, "kthvalue");
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  LT_CHECK(k >= 1 && k <= n, "kthvalue: k (", k, ") is out of range for dim ", d, " of size ", n,
           " (shape ", shape_str(t.sizes()), ")");
  Tensor order = sorting_permutation(t, d, false);
  Tensor pos = t.dim() == 0 ? Tensor() : order.narrow(d, k - 1, 1);
  Tensor idx = t.dim() == 0 ? order : pos;
  return maybe_squeeze({t.dim() == 0 ? t.clone() : gather(t, d, idx), idx}, t, d, keepdim);
}

std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  OpContext ctx("median");
  const int64_t d = sort_dim(t, dim, "median");
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  LT_CHECK(n > 0, "median: cannot take the median of an empty dim ", d, " (shape ",
           shape_str(t.sizes()), ")");
  Tensor order = sorting_permutation(t, d, false);
  if (t.dim() == 0) return {t.clone(), order};
  std::vector<int64_t> one(t.sizes().begin(), t.sizes().end());
  one[d] = 1;
  Tensor pos = full(IntList(one), (n - 1) / 2, TensorOptions(kInt64).device(t.device()));
  if (is_floating(t.dtype())) {  // a NaN in the slice is its median: the first NaN sorted
    Tensor nans = isnan(t).sum({d}, true);
    pos = where(nans > 0, n - nans, pos);
  }
  return maybe_squeeze(kth_kept(t, order, d, pos), t, d, keepdim);
}

Tensor median(const Tensor& t) {
  OpContext ctx("median");
  if (t.numel() == 0) {
    LT_CHECK(is_floating(t.dtype()), "median: an empty ", dtype_name(t.dtype()),
             " tensor has no median");
    return full({}, std::numeric_limits<double>::quiet_NaN(),
                TensorOptions(t.dtype()).device(t.device()));
  }
  return std::get<0>(median(t.reshape({-1}), 0, false));
}

// cummax/cummin: the index is the latest position j <= i whose value is the running extreme (or
// a NaN, which then stays the extreme), as PyTorch's (>= for cummax, ties take the later
// index); both scans are log2(n) shifted maximum steps (as cumsum's); the values are gathered
// with the indices, so their gradient goes to those positions, as libtorch's.
namespace {
std::tuple<Tensor, Tensor> cumulative_extreme(const Tensor& x, int64_t dim, bool is_max,
                                              const char* name) {
  OpContext ctx(name);
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions(kInt64).device(x.device()))};
  const int64_t d = wrap_dim(dim, x.dim(), name), n = x.size(d);
  const TensorOptions io = TensorOptions(kInt64).device(x.device());
  if (n == 0) return {x.clone(), zeros(x.sizes(), io)};
  auto scan = [&](Tensor y, bool take_max, const Scalar& fill) {
    for (int64_t k = 1; k < n; k *= 2) {
      std::vector<int64_t> zs(y.sizes().begin(), y.sizes().end());
      zs[d] = k;
      Tensor s = cat({full(IntList(zs), fill, y.options()), y.narrow(d, 0, n - k)}, d);
      y = take_max ? maximum(y, s) : minimum(y, s);
    }
    return y;
  };
  const bool fl = is_floating(x.dtype());
  // The identity of the scan: +-inf, or the dtype's extreme integer (false/true for bool).
  const int64_t top = x.dtype() == kBool
                          ? 1
                          : std::numeric_limits<int64_t>::max() >> (64 - 8 * dtype_size(x.dtype()));
  const Scalar lowest = fl ? Scalar(-std::numeric_limits<double>::infinity())
                           : Scalar(x.dtype() == kBool ? int64_t{0} : -top - 1);
  const Scalar highest = fl ? Scalar(std::numeric_limits<double>::infinity()) : Scalar(top);
  const Tensor& v = x;  // only compared: the scan records no gradient path to the result
  Tensor running = scan(v, is_max, is_max ? lowest : highest);
  Tensor mark = v == running;
  if (fl) mark = mark.logical_or(isnan(v));
  std::vector<int64_t> along(x.dim(), 1);
  along[d] = n;
  Tensor pos = where(mark, arange(n, io).reshape(IntList(along)), full({}, -1, io));
  Tensor idx = scan(pos, true, int64_t{-1});
  return {gather(x, d, idx), idx};
}
}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  return cumulative_extreme(x, dim, true, "cummax");
}
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  return cumulative_extreme(x, dim, false, "cummin");
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return lt::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return lt::cummin(*this, dim); }

Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return lt::argsort(*this, dim, descending, stable);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return lt::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim,
                                        bool descending) const {
  return lt::sort(*this, stable, dim, descending);
}
Tensor Tensor::msort() const { return lt::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return lt::topk(*this, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return lt::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return lt::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const {
  return lt::median(*this, dim, keepdim);
}

}  // namespace lt
