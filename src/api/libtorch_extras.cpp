// libtorch ops that programs reach for and that are a line or two over existing ones: dot, vdot
// and inner; addcmul and addcdiv (optimizers' updates); index_fill; unflatten and
// split_with_sizes; and the Tensor methods libtorch spells on the tensor (in-place forms
// included) for functions lt already has.
#include <algorithm>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"
#include "ops/shape_rules.h"

namespace lt {
namespace {

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  LT_CHECK(a.dtype() == b.dtype(), op, ": expected both vectors to have the same dtype, got ",
           dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  OpContext ctx("dot");
  LT_CHECK(a.dim() == 1 && b.dim() == 1, "dot: expects 1-d tensors, got shapes ",
           shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  LT_CHECK(a.size(0) == b.size(0), "dot: the vectors have ", a.size(0), " and ", b.size(0),
           " elements (shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()), ")");
  check_same_dtype("dot", a, b);
  LT_CHECK(a.dtype() != kBool, "dot: not implemented for bool tensors (libtorch has none)");
  return (a * b).sum();
}
Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a, b); }  // real tensors only

Tensor inner(const Tensor& a, const Tensor& b) {
  OpContext ctx("inner");
  if (a.dim() == 0 || b.dim() == 0) return a * b;
  LT_CHECK(a.size(-1) == b.size(-1), "inner: the last dims must match, got shapes ",
           shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  std::vector<int64_t> out(a.sizes().begin(), a.sizes().end() - 1);
  out.insert(out.end(), b.sizes().begin(), b.sizes().end() - 1);
  const int64_t k = a.size(-1);
  auto rows = [](const Tensor& t) {  // the product of the leading dims (k may be 0)
    int64_t r = 1;
    for (int64_t i = 0; i + 1 < t.dim(); ++i) r *= t.size(i);
    return r;
  };
  Tensor a2 = a.reshape({rows(a), k}), b2 = b.reshape({rows(b), k});
  if (!is_floating(result_type({a, b})))  // matmul is for floats: a broadcast product's sum
    return (a2.unsqueeze(1) * b2.unsqueeze(0)).sum({2}).reshape(IntList(out));
  return matmul(a2, b2.t()).reshape(IntList(out));
}

Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  OpContext ctx("addcmul");
  Tensor p = t1 * t2;
  return input + (value.to_double() == 1.0 && !value.is_floating() ? p : p * value);
}
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  OpContext ctx("addcdiv");
  LT_CHECK(is_floating(t1.dtype()) || is_floating(t2.dtype()),
           "addcdiv: integer division is not supported (tensor1 ", dtype_name(t1.dtype()),
           ", tensor2 ", dtype_name(t2.dtype()), "); divide with div() instead");
  Tensor q = t1 / t2;
  return input + (value.to_double() == 1.0 ? q : q * value);
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value) {
  OpContext ctx("index_fill");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_fill");
  LT_CHECK(index.dtype() == kInt64, "index_fill: expected an int64 index, got ",
           dtype_name(index.dtype()));
  LT_CHECK(index.dim() <= 1, "index_fill: the index must be 0-d or 1-d, got shape ",
           shape_str(index.sizes()));
  LT_CHECK(value.dim() == 0, "index_fill: the value must be a 0-d tensor, got shape ",
           shape_str(value.sizes()));
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  // Known indices are checked at the call, as libtorch's kernel does; computed ones on the lazy
  // device cannot be, and one out of range then fills nothing.
  if (Tensor v = known_values(index); v.defined() && !v.device().is_lazy() && v.numel() > 0) {
    const int64_t lo = v.min().item<int64_t>(), hi = v.max().item<int64_t>();
    LT_CHECK(lo >= -n && hi < n, "index_fill: index ", lo < -n ? lo : hi,
             " is out of range for dim ", d, " of size ", n, " (shape ", shape_str(x.sizes()), ")");
  }
  Tensor idx = index.reshape({1, -1}).to(x.device());
  idx = where(idx < 0, idx + n, idx);
  Tensor hit = (arange(n, TensorOptions(x.device()).dtype(kInt64)).unsqueeze(1) == idx).any({1});
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  if (x.dim() > 0) shape[static_cast<size_t>(d)] = n;
  return where(hit.reshape(IntList(shape)), value.to(x.device(), x.dtype()), x);
}
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_fill(x, dim, index, scalar_of(value, x.dtype(), x.device()));
}

Tensor unflatten(const Tensor& x, int64_t dim, IntList sizes) {
  OpContext ctx("unflatten");
  const int64_t d = wrap_dim(dim, x.dim(), "unflatten");
  LT_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t known = 1, unknown = 0;
  for (int64_t s : sizes) {
    if (s == -1)
      ++unknown;
    else
      known *= s;
  }
  LT_CHECK(unknown <= 1 && (unknown ? known != 0 && x.size(d) % known == 0 : known == x.size(d)),
           "unflatten: sizes ", shape_str(sizes), " do not multiply to dim ", d, "'s size ",
           x.size(d), " (shape ", shape_str(x.sizes()), ")");
  std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
  s.erase(s.begin() + d);
  s.insert(s.begin() + d, sizes.begin(), sizes.end());
  return x.reshape(IntList(s));
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntList sizes, int64_t dim) {
  return split(t, sizes, dim);
}

// ---- methods
Tensor Tensor::dot(const Tensor& o) const { return lt::dot(*this, o); }
Tensor Tensor::vdot(const Tensor& o) const { return lt::vdot(*this, o); }
Tensor Tensor::inner(const Tensor& o) const { return lt::inner(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return lt::mv(*this, v); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta,
                     const Scalar& alpha) const {
  return lt::addmm(*this, m1, m2, beta, alpha);
}
Tensor& Tensor::addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta,
                       const Scalar& alpha) const {
  return write_back(*this, lt::addmm(*this, m1, m2, beta, alpha), "addmm_");
}
Tensor Tensor::baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                       const Scalar& alpha) const {
  return lt::baddbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                      const Scalar& alpha) const {
  return lt::addbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return lt::addcmul(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return write_back(*this, lt::addcmul(*this, t1, t2, value), "addcmul_");
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return lt::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return write_back(*this, lt::addcdiv(*this, t1, t2, value), "addcdiv_");
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return lt::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Tensor& value) const {
  return lt::index_fill(*this, dim, index, value);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return write_back(*this, lt::index_fill(*this, dim, index, value), "index_fill_");
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) const {
  return write_back(*this, lt::index_fill(*this, dim, index, value), "index_fill_");
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return lt::index_copy(*this, dim, index, source);
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const {
  return write_back(*this, lt::index_copy(*this, dim, index, source), "index_copy_");
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                         const Scalar& alpha) const {
  return lt::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                           const Scalar& alpha) const {
  return write_back(*this, lt::index_add(*this, dim, index, source, alpha), "index_add_");
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return write_back(*this, lt::scatter(*this, dim, index, src), "scatter_");
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return write_back(*this, lt::scatter(*this, dim, index, value), "scatter_");
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return write_back(*this, lt::scatter_add(*this, dim, index, src), "scatter_add_");
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) const {
  return write_back(*this, lt::masked_scatter(*this, mask, source), "masked_scatter_");
}
Tensor Tensor::take_along_dim(const Tensor& index, std::optional<int64_t> dim) const {
  return lt::take_along_dim(*this, index, dim);
}
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return lt::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::diag(int64_t diagonal) const { return lt::diag(*this, diagonal); }
Tensor Tensor::count_nonzero(IntList dims) const { return lt::count_nonzero(*this, dims); }
Tensor Tensor::count_nonzero(int64_t dim) const { return lt::count_nonzero(*this, IntList(dim)); }
Tensor Tensor::logical_xor(const Tensor& o) const { return lt::logical_xor(*this, o); }
Tensor Tensor::xlogy(const Tensor& y) const { return lt::xlogy(*this, y); }
Tensor Tensor::xlogy(const Scalar& y) const { return lt::xlogy(*this, y); }
Tensor Tensor::copysign(const Tensor& o) const { return lt::copysign(*this, o); }
Tensor Tensor::copysign(const Scalar& o) const { return lt::copysign(*this, o); }
Tensor Tensor::heaviside(const Tensor& values) const { return lt::heaviside(*this, values); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return lt::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(IntList indices, int64_t dim) const {
  return lt::tensor_split(*this, indices, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntList sizes, int64_t dim) const {
  return lt::split(*this, sizes, dim);
}
Tensor Tensor::unflatten(int64_t dim, IntList sizes) const {
  return lt::unflatten(*this, dim, sizes);
}
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) const {
  return write_back(*this, lt::lerp(*this, end, weight), "lerp_");
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) const {
  return write_back(*this, lt::lerp(*this, end, weight), "lerp_");
}

}  // namespace lt
