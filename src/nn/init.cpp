// torch::nn::init (lt/nn/init.h). Random fills use the tensor's own uniform_/normal_ (lt's
// seeded generator, on the tensor's device); eye_, dirac_ and orthogonal_ compute their values
// on the host and copy them in.
#include "lt/nn/init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"

namespace lt::nn::init {
namespace {

void check_defined(const Tensor& t, const char* op) {
  LT_CHECK(t.defined(), "nn::init::", op, ": the tensor is undefined");
}

// Writes host values (row-major, the tensor's shape) into the tensor, keeping its identity.
Tensor assign(Tensor& t, const std::vector<double>& v) {
  NoGradGuard g;
  t.copy_(lt::tensor(v, t.sizes()).to(t.dtype()).to(t.device()));
  return t;
}

double fan(const Tensor& t, FanMode mode) {
  auto [in, out] = _calculate_fan_in_and_fan_out(t);
  return static_cast<double>(mode == FanMode::FanIn ? in : out);
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU:
      return std::sqrt(2.0 / (1 + param * param));
    default:
      return 1.0;  // linear, the convolutions, sigmoid
  }
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  check_defined(tensor, "_calculate_fan_in_and_fan_out");
  LT_CHECK(tensor.dim() >= 2, "nn::init: fan in and fan out can not be computed for a tensor of ",
           tensor.dim(), " dims (", shape_str(tensor.sizes()), "); it needs 2 or more");
  int64_t field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) field *= tensor.size(d);
  return {tensor.size(1) * field, tensor.size(0) * field};
}

Tensor constant_(Tensor tensor, const Scalar& value) {
  check_defined(tensor, "constant_");
  NoGradGuard g;
  tensor.fill_(value);
  return tensor;
}
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor uniform_(Tensor tensor, double low, double high) {
  check_defined(tensor, "uniform_");
  NoGradGuard g;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_defined(tensor, "normal_");
  NoGradGuard g;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor eye_(Tensor matrix) {
  check_defined(matrix, "eye_");
  LT_CHECK(matrix.dim() == 2, "nn::init::eye_: expected a 2-d tensor, got ",
           shape_str(matrix.sizes()));
  const int64_t r = matrix.size(0), c = matrix.size(1);
  std::vector<double> v(static_cast<size_t>(r * c), 0.0);
  for (int64_t i = 0; i < std::min(r, c); ++i) v[static_cast<size_t>(i * c + i)] = 1;
  return assign(matrix, v);
}

Tensor dirac_(Tensor tensor) {
  check_defined(tensor, "dirac_");
  LT_CHECK(tensor.dim() >= 3 && tensor.dim() <= 5, "nn::init::dirac_: expected a 3-, 4- or 5-d ",
           "convolution weight, got ", shape_str(tensor.sizes()));
  std::vector<double> v(static_cast<size_t>(tensor.numel()), 0.0);
  const int64_t out = tensor.size(0), in = tensor.size(1);
  int64_t per_in = 1, center = 0;  // elements per (out, in) pair; the centre's offset there
  for (int64_t d = 2; d < tensor.dim(); ++d) {
    center = center * tensor.size(d) + tensor.size(d) / 2;
    per_in *= tensor.size(d);
  }
  for (int64_t i = 0; i < std::min(out, in); ++i)
    v[static_cast<size_t>((i * in + i) * per_in + center)] = 1;
  return assign(tensor, v);
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  check_defined(tensor, "xavier_uniform_");
  auto [in, out] = _calculate_fan_in_and_fan_out(tensor);
  const double a = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  check_defined(tensor, "xavier_normal_");
  auto [in, out] = _calculate_fan_in_and_fan_out(tensor);
  return normal_(std::move(tensor), 0, gain * std::sqrt(2.0 / static_cast<double>(in + out)));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_defined(tensor, "kaiming_uniform_");
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan(tensor, mode));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  check_defined(tensor, "kaiming_normal_");
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan(tensor, mode));
  return normal_(std::move(tensor), 0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  check_defined(tensor, "orthogonal_");
  LT_CHECK(tensor.dim() >= 2,
           "nn::init::orthogonal_: only tensors with 2 or more dims are "
           "supported, got ",
           shape_str(tensor.sizes()));
  const int64_t rows = tensor.size(0), cols = tensor.numel() / std::max<int64_t>(rows, 1);
  if (tensor.numel() == 0) return tensor;
  // A normal draw as a tall matrix A [m, n] (m >= n; transposed when rows < cols).
  const bool transposed = rows < cols;
  const int64_t m = transposed ? cols : rows, n = transposed ? rows : cols;
  std::vector<double> flat = lt::randn({rows, cols}).to(kFloat64).to_vector<double>();
  std::vector<double> a(static_cast<size_t>(m * n));  // column-major: a[j * m + i] = A[i, j]
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double x = flat[static_cast<size_t>(i * cols + j)];
      if (transposed)
        a[static_cast<size_t>(i * m + j)] = x;  // A = flat^T: A[j, i]
      else
        a[static_cast<size_t>(j * m + i)] = x;
    }
  // Modified Gram-Schmidt (twice, for orthogonality to rounding): Q's columns in place and
  // R's diagonal; Q times sign(diag R) is the QR factor PyTorch's orthogonal_ uses.
  for (int64_t j = 0; j < n; ++j) {
    double* q = &a[static_cast<size_t>(j * m)];
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t k = 0; k < j; ++k) {
        const double* p = &a[static_cast<size_t>(k * m)];
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += p[i] * q[i];
        for (int64_t i = 0; i < m; ++i) q[i] -= dot * p[i];
      }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += q[i] * q[i];
    norm = std::sqrt(norm);
    LT_CHECK(norm > 0, "nn::init::orthogonal_: the random draw was rank deficient");
    for (int64_t i = 0; i < m; ++i) q[i] /= norm;  // R's diagonal is +norm: no sign change
  }
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      v[static_cast<size_t>(i * cols + j)] =
          gain *
          (transposed ? a[static_cast<size_t>(i * m + j)] : a[static_cast<size_t>(j * m + i)]);
  return assign(tensor, v);
}

}  // namespace lt::nn::init
