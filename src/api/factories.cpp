// Factories: from host data, constants, ranges and the counter-based random generators.
#include <cmath>
#include <cstring>
#include <limits>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/tensor_util.h"
#include "ops/attrs.h"
#include "ops/autograd_hooks.h"

namespace lt {
namespace {

Dtype default_for(const Scalar& v) {
  return v.is_floating() ? get_default_dtype() : (v.is_bool() ? kBool : kInt64);
}

void check_sizes(IntList sizes, const char* name) {
  for (int64_t s : sizes) LT_CHECK(s >= 0, name, ": negative size in ", shape_str(sizes));
}

// TensorOptions::requires_grad: the new tensor is a leaf that requires grad (through autograd's
// hook: autograd is a layer above the factories).
Tensor leaf(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) hook(autograd_hooks().set_requires_grad, "autograd.set_requires_grad")(t, true);
  return t;
}

// `name` is the user-facing factory (rand, randn, randint), for error messages.
Tensor random_op(const char* name, OpKind op, IntList sizes, const TensorOptions& o, Dtype dtype,
                 int64_t low = 0, int64_t high = 0) {
  check_sizes(sizes, name);
  auto [seed, offset] = next_random(numel_of(sizes));
  OpAttrs a;
  a.ints = sizes;
  a.dtype = dtype;
  RandomAttrs{static_cast<int64_t>(seed), static_cast<int64_t>(offset), low, high}.write(&a);
  return leaf(call_on(o.device(), op, a), o);
}

}  // namespace

template <typename T>
Tensor tensor(const std::vector<T>& data, IntList sizes) {
  for (int64_t s : sizes) LT_CHECK(s >= 0, "tensor: negative size in ", shape_str(sizes));
  LT_CHECK(numel_of(sizes) == static_cast<int64_t>(data.size()), "tensor: ", data.size(),
           " values do not fill shape ", shape_str(sizes), " (", numel_of(sizes), " elements)");
  Tensor t = make_eager(sizes, DtypeOf<T>::value);
  T* p = static_cast<T*>(t.raw_data_ptr());
  for (size_t i = 0; i < data.size(); ++i) p[i] = data[i];
  return t;
}
template Tensor tensor<float>(const std::vector<float>&, IntList);
template Tensor tensor<double>(const std::vector<double>&, IntList);
template Tensor tensor<int32_t>(const std::vector<int32_t>&, IntList);
template Tensor tensor<int64_t>(const std::vector<int64_t>&, IntList);
template Tensor tensor<bool>(const std::vector<bool>&, IntList);
template Tensor tensor<int8_t>(const std::vector<int8_t>&, IntList);
template Tensor tensor<Half>(const std::vector<Half>&, IntList);
template Tensor tensor<BFloat16>(const std::vector<BFloat16>&, IntList);
Tensor with_tensor_options(Tensor t, const TensorOptions& o) {
  if (o.has_dtype() && o.dtype() != t.dtype()) t = t.to(o.dtype());
  if (o.has_device() && o.device() != t.device()) t = t.to(o.device());
  return leaf(t, o);
}

Tensor tensor(const TensorData& data, const TensorOptions& o) {
  Tensor t;
  switch (data.kind()) {
    case TensorData::Kind::Bool:
      t = tensor(std::vector<bool>(data.ints().begin(), data.ints().end()), data.sizes());
      break;
    case TensorData::Kind::Int:
      t = tensor(data.ints(), data.sizes());
      break;
    case TensorData::Kind::Float:
      t = tensor(data.floats(), data.sizes()).to(get_default_dtype());
      break;
  }
  return with_tensor_options(t, o);
}

Tensor scalar_tensor(const Scalar& s, const TensorOptions& o) {
  return leaf(scalar_of(s, o.dtype_or(default_for(s)), o.device()), o);
}

namespace {
Tensor filled(IntList sizes, const Scalar& v, Dtype dtype, Device device, const char* name) {
  check_sizes(sizes, name);
  return scalar_of(v, dtype, device).expand(sizes).clone();
}
}  // namespace

Tensor full(IntList sizes, const Scalar& v, const TensorOptions& o) {
  return leaf(filled(sizes, v, o.dtype_or(default_for(v)), o.device(), "full"), o);
}
Tensor empty(IntList sizes, const TensorOptions& o) {
  return leaf(filled(sizes, 0, o.dtype(), o.device(), "empty"), o);
}
Tensor zeros(IntList sizes, const TensorOptions& o) {
  return leaf(filled(sizes, 0, o.dtype(), o.device(), "zeros"), o);
}
Tensor ones(IntList sizes, const TensorOptions& o) {
  return leaf(filled(sizes, 1, o.dtype(), o.device(), "ones"), o);
}

namespace {
TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& o) {
  if (!o) return t.options();
  TensorOptions r = *o;
  if (!r.has_device()) r = r.device(t.device());
  return r.has_dtype() ? r : r.dtype(t.dtype());
}
}  // namespace
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) { return zeros(t.sizes(), like(t, o)); }
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) { return ones(t.sizes(), like(t, o)); }
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) { return empty(t.sizes(), like(t, o)); }
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> o) {
  return full(t.sizes(), v, like(t, o));
}

Tensor arange(const Scalar& end, const TensorOptions& o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  LT_CHECK(st != 0, "arange: step must be nonzero");
  LT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: range [", s, ", ", e,
           ") is inconsistent with the sign of step ", st);
  bool fl = start.is_floating() || end.is_floating() || step.is_floating();
  Dtype dt = o.dtype_or(fl ? get_default_dtype() : kInt64);
  auto n = static_cast<int64_t>(std::ceil((e - s) / st));
  OpAttrs a;
  a.ints = {n};
  a.dtype = is_floating(dt) ? kFloat64 : kInt64;
  Tensor i = call_on(o.device(), OpKind::Iota, a);
  if (is_floating(dt)) return leaf((i * st + s).to(dt), o);
  return leaf((i * step.to_int() + start.to_int()).to(dt), o);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& o) {
  LT_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  OpAttrs a;
  a.ints = {steps};
  a.dtype = kFloat64;
  Tensor i = call_on(o.device(), OpKind::Iota, a);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  return leaf((i * step + start).to(o.dtype()), o);
}

Tensor eye(int64_t n, const TensorOptions& o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, const TensorOptions& o) {
  LT_CHECK(n >= 0 && m >= 0, "eye: sizes must be non-negative, got ", n, " and ", m);
  TensorOptions io = TensorOptions(o.device()).dtype(kInt64);
  return leaf((arange(n, io).unsqueeze(1) == arange(m, io).unsqueeze(0)).to(o.dtype()), o);
}

Tensor from_blob(void* data, IntList sizes, const TensorOptions& o) {
  return from_blob(data, sizes, contiguous_strides(sizes), o);
}
Tensor from_blob(void* data, IntList sizes, IntList strides, const TensorOptions& o) {
  LT_CHECK(o.device().is_cpu(), "from_blob: wraps host memory, so the device must be cpu (got ",
           o.device().str(), "); call .to() afterwards");
  LT_CHECK(sizes.size() == strides.size(), "from_blob: sizes ", shape_str(sizes), " and strides ",
           shape_str(strides), " differ in length");
  auto impl = new_impl();
  impl->sizes = Dims(sizes);
  impl->strides = Dims(strides);
  impl->numel = numel_of(sizes);
  impl->dtype = o.dtype();
  impl->device = kCPU;
  int64_t span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
  impl->storage = wrap_storage(data, static_cast<size_t>(span) * dtype_size(o.dtype()));
  return leaf(Tensor(std::move(impl)), o);
}

Tensor rand(IntList sizes, const TensorOptions& o) {
  return random_op("rand", OpKind::Uniform, sizes, o, o.dtype());
}
Tensor randn(IntList sizes, const TensorOptions& o) {
  return random_op("randn", OpKind::Normal, sizes, o, o.dtype());
}
Tensor randint(int64_t low, int64_t high, IntList sizes, const TensorOptions& o) {
  LT_CHECK(low < high, "randint: low ", low, " must be less than high ", high);
  return random_op("randint", OpKind::RandomInt, sizes, o, o.dtype_or(kInt64), low, high);
}
Tensor randint(int64_t high, IntList sizes, const TensorOptions& o) {
  return randint(0, high, sizes, o);
}
Tensor rand_like(const Tensor& t) { return rand(t.sizes(), t.options()); }
Tensor randn_like(const Tensor& t) { return randn(t.sizes(), t.options()); }
Tensor bernoulli(const Tensor& like_t, double p) {
  LT_CHECK(p >= 0 && p <= 1, "bernoulli: p must be in [0, 1], got ", p);
  Dtype d = is_floating(like_t.dtype()) ? like_t.dtype() : get_default_dtype();
  return (rand(like_t.sizes(), TensorOptions(like_t.device()).dtype(d)) < p).to(d);
}

}  // namespace lt

namespace lt {
namespace {
// The largest integer a dtype holds with every smaller one (random_()'s default bound).
int64_t exact_int_max(Dtype t) {
  switch (t) {
    case kBool:
      return 1;
    case kInt8:
      return std::numeric_limits<int8_t>::max();
    case kInt32:
      return std::numeric_limits<int32_t>::max();
    case kInt64:
      return std::numeric_limits<int64_t>::max() - 1;
    case kFloat16:
      return int64_t{1} << 11;
    case kBFloat16:
      return int64_t{1} << 8;
    case kFloat32:
      return int64_t{1} << 24;
    default:
      return int64_t{1} << 53;
  }
}
}  // namespace

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to) const {
  const int64_t max = exact_int_max(dtype());
  const int64_t hi = to ? *to : max + 1;
  LT_CHECK(from < hi, "random_: expects from < to, got from=", from, " to=", hi);
  LT_CHECK(from >= -max - 1 && hi - 1 <= max, "random_: [", from, ", ", hi,
           ") is out of the range of ", dtype_name(dtype()), " (up to ", max, ")");
  return copy_(randint(from, hi, sizes(), TensorOptions(device()).dtype(kInt64)));
}
Tensor& Tensor::random_(int64_t to) const { return random_(0, to); }
Tensor& Tensor::random_() const { return random_(0, std::nullopt); }

Tensor& Tensor::uniform_(double from, double to) const {
  LT_CHECK(from <= to, "uniform_: expects from <= to, got from=", from, " to=", to);
  LT_CHECK(is_floating(dtype()), "uniform_: needs a floating tensor, got ", dtype_name(dtype()));
  return copy_(rand(sizes(), options()) * (to - from) + from);
}

Tensor& Tensor::normal_(double mean, double std) const {
  LT_CHECK(std >= 0, "normal_: expects std >= 0, got ", std);
  LT_CHECK(is_floating(dtype()), "normal_: needs a floating tensor, got ", dtype_name(dtype()));
  return copy_(randn(sizes(), options()) * std + mean);
}

}  // namespace lt
