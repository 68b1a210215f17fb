// torch::linalg: vector_norm, matrix_norm, norm and svdvals. The norms are written over
// primitives, so the lazy device fuses them and autograd needs no formula of its own. Singular
// values come from LAPACK on the host in float64 (src/eager/svd.cpp): on the lazy device a sync,
// counted as DataDependentSync. Their values and gradients come from one identity: with u_i and
// v_i x's singular vectors (constants here, without history), s_i = u_i^T x v_i. Recorded as
// that product, s has its value (to rounding) and, by autograd of the product, PyTorch's gradient
// u_i v_i^T (for distinct singular values), with no formula of its own.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/metrics.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "lt/ops.h"

namespace lt {
namespace {

// x's singular vectors: u [..., m, k] and v [..., n, k], k = min(m, n), in x's dtype on x's
// device, without history.
std::pair<Tensor, Tensor> singular_vectors(const Tensor& x) {
  const int64_t m = x.size(-2), n = x.size(-1), k = std::min(m, n);
  std::vector<int64_t> us(x.sizes().begin(), x.sizes().end() - 2), vs = us;
  us.insert(us.end(), {m, k});
  vs.insert(vs.end(), {k, n});
  const int64_t batch = m * n == 0 ? 0 : x.numel() / (m * n);
  std::vector<double> u(static_cast<size_t>(batch * m * k)), vh(static_cast<size_t>(batch * k * n));
  if (batch > 0 && k > 0) {
    if (x.device().type() != kCPU) metrics_impl::add("DataDependentSync");
    const Tensor h = x.to(kCPU).to(kFloat64).contiguous();
    const double* a = h.data_ptr<double>();
    std::vector<double> s(static_cast<size_t>(k));
    for (int64_t b = 0; b < batch; ++b)
      svd_rowmajor(a + b * m * n, m, n, u.data() + b * m * k, s.data(), vh.data() + b * k * n);
  }
  auto on_device = [&](const std::vector<double>& v, const std::vector<int64_t>& sizes) {
    return tensor(v, IntList(sizes)).to(x.dtype()).to(x.device());
  };
  return {on_device(u, us), on_device(vh, vs).transpose(-2, -1)};
}

// The singular values of x [..., m, n] as u_i^T x v_i: [..., k].
Tensor singular_values(const Tensor& x) {
  auto [u, v] = singular_vectors(x);
  return (u * matmul(x, v)).sum({-2});
}

// The two dims a matrix norm of t reduces, wrapped; they must differ.
std::pair<int64_t, int64_t> matrix_dims(const Tensor& t, IntList dim) {
  const int64_t r = wrap_dim(dim[0], t.dim(), "linalg.matrix_norm"),
                c = wrap_dim(dim[1], t.dim(), "linalg.matrix_norm");
  LT_CHECK(r != c, "linalg.matrix_norm: dim ", shape_str(dim),
           " must name two different dims of shape ", shape_str(t.sizes()));
  return {r, c};
}

// which: 0 the sum of t's singular values over dims r and c (the nuclear norm), 1 the largest
// (the spectral norm, ord 2), -1 the smallest (ord -2).
Tensor singular_value_norm(const Tensor& t, int which, int64_t r, int64_t c, bool keepdim) {
  LT_CHECK(is_floating(t.dtype()),
           "linalg.matrix_norm: singular values need a floating input, got ",
           dtype_name(t.dtype()));
  Tensor s = singular_values(movedim(t, {r, c}, {-2, -1}));
  LT_CHECK(which == 0 || s.size(-1) > 0, "linalg.matrix_norm: the ", which > 0 ? "2" : "-2",
           "-norm of a matrix of shape ", shape_str(t.sizes()), " with no elements is undefined");
  Tensor out = which == 0 ? s.sum({-1}) : which > 0 ? s.amax({-1}) : s.amin({-1});
  return keepdim ? out.unsqueeze(std::min(r, c)).unsqueeze(std::max(r, c)) : out;
}

}  // namespace

namespace linalg {

Tensor vector_norm(const Tensor& x, double ord, std::optional<std::vector<int64_t>> dim,
                   bool keepdim, std::optional<Dtype> dtype) {
  OpContext ctx("linalg.vector_norm");
  LT_CHECK(is_floating(dtype.value_or(x.dtype())), "linalg.vector_norm: expected a floating-point ",
           "input or dtype, got ", dtype_name(dtype.value_or(x.dtype())));
  Tensor t = dtype ? x.to(*dtype) : x;
  std::vector<int64_t> dims = dim.value_or(std::vector<int64_t>{});
  if (!dim) {  // all dims
    for (int64_t i = 0; i < t.dim(); ++i) dims.push_back(i);
  }
  if (ord == 0) return (t != 0).to(t.dtype()).sum(dims, keepdim);
  LT_CHECK(!std::isinf(ord) || t.numel() > 0, "linalg.vector_norm: the ", ord > 0 ? "inf" : "-inf",
           " norm of an empty tensor is undefined");
  if (ord < 0 && !std::isinf(ord)) return pow(sum(pow(abs(t), ord), dims, keepdim), 1.0 / ord);
  return lt::norm(t, ord, dims, keepdim);
}

namespace {
void check_matrix_dims(const Tensor& x, IntList dim) {
  LT_CHECK(x.dim() >= 2 && dim.size() == 2,
           "linalg.matrix_norm: expected a tensor of at least 2 dims and 2 dims to reduce, got "
           "shape ",
           shape_str(x.sizes()), " and dim ", shape_str(dim));
}
}  // namespace

Tensor matrix_norm(const Tensor& x, const std::string& ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<Dtype> dtype) {
  OpContext ctx("linalg.matrix_norm");
  LT_CHECK(ord == "fro" || ord == "nuc", "linalg.matrix_norm: ord \"", ord,
           "\" is not supported (\"fro\", \"nuc\" and the numeric orders 1, -1, 2, -2, inf, -inf "
           "are)");
  check_matrix_dims(x, dim);
  if (ord == "fro") return vector_norm(x, 2.0, dim, keepdim, dtype);
  const Tensor t = dtype ? x.to(*dtype) : x;
  const auto [r, c] = matrix_dims(t, dim);
  return singular_value_norm(t, 0, r, c, keepdim);
}

Tensor matrix_norm(const Tensor& x, double ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<Dtype> dtype) {
  OpContext ctx("linalg.matrix_norm");
  check_matrix_dims(x, dim);
  LT_CHECK(ord == 1 || ord == -1 || ord == 2 || ord == -2 || std::isinf(ord),
           "linalg.matrix_norm: ord ", ord,
           " is not supported (1, -1, 2, -2, inf, -inf, \"fro\" and \"nuc\" are)");
  const Tensor t = dtype ? x.to(*dtype) : x;
  const auto [r, c] = matrix_dims(t, dim);
  if (ord == 2 || ord == -2) return singular_value_norm(t, ord > 0 ? 1 : -1, r, c, keepdim);
  // 1 / -1: the largest / smallest column sum of |x| (sum over rows); inf / -inf: row sums.
  const bool cols = !std::isinf(ord);
  Tensor sums = abs(t).sum({cols ? r : c}, true);
  const int64_t other = cols ? c : r;
  Tensor out = ord > 0 ? sums.amax({other}, true) : sums.amin({other}, true);
  return keepdim ? out : out.squeeze(std::max(r, c)).squeeze(std::min(r, c));
}

Tensor norm(const Tensor& x, std::optional<double> ord, std::optional<std::vector<int64_t>> dim,
            bool keepdim, std::optional<Dtype> dtype) {
  OpContext ctx("linalg.norm");
  if (!ord) {  // the 2-norm of the flattened input, or of the vectors/matrices dim names
    if (dim && dim->size() == 2) return matrix_norm(x, "fro", *dim, keepdim, dtype);
    return vector_norm(x, 2.0, dim, keepdim, dtype);
  }
  const bool matrix = dim ? dim->size() == 2 : x.dim() == 2;
  if (matrix)
    return matrix_norm(x, *ord, dim.value_or(std::vector<int64_t>{-2, -1}), keepdim, dtype);
  LT_CHECK(dim || x.dim() == 1,
           "linalg.norm: a numeric ord needs a 1-d or 2-d input or dim, got "
           "shape ",
           shape_str(x.sizes()));
  return vector_norm(x, *ord, dim, keepdim, dtype);
}

Tensor svdvals(const Tensor& x) {
  OpContext ctx("linalg.svdvals");
  LT_CHECK(x.dim() >= 2 && is_floating(x.dtype()),
           "linalg.svdvals: expected a floating tensor of at least 2 dims, got ",
           dtype_name(x.dtype()), " of shape ", shape_str(x.sizes()));
  return singular_values(x);
}
Tensor norm(const Tensor& x, const std::string& ord, std::optional<std::vector<int64_t>> dim,
            bool keepdim, std::optional<Dtype> dtype) {
  OpContext ctx("linalg.norm");
  LT_CHECK(dim ? dim->size() == 2 : x.dim() == 2, "linalg.norm: ord \"", ord,
           "\" is a matrix norm: it needs a 2-d input or two dims, got shape ",
           shape_str(x.sizes()));
  return matrix_norm(x, ord, dim.value_or(std::vector<int64_t>{-2, -1}), keepdim, dtype);
}
}  // namespace linalg

Tensor nuclear_norm(const Tensor& x, bool keepdim) {
  return linalg::matrix_norm(x, "nuc", {-2, -1}, keepdim);
}
Tensor nuclear_norm(const Tensor& x, IntList dim, bool keepdim) {
  return linalg::matrix_norm(x, "nuc", std::vector<int64_t>(dim.begin(), dim.end()), keepdim);
}

}  // namespace lt
