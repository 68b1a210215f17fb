// Tensor observation (item, copy_to_host) and conversion (to, clone, contiguous): these reach
// the lazy runtime or the dispatcher. The plain queries are in src/core/tensor_handle.cpp.
#include <cstring>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {

void Tensor::copy_to_host(Dtype t, void* out) const { read_values(to(kCPU), t, out); }

Scalar Tensor::item() const {
  LT_CHECK(numel() == 1, "item: a tensor with ", numel(), " elements (shape ", shape_str(sizes()),
           ") cannot be converted to a scalar");
  Tensor c = to(kCPU);
  const char* p = static_cast<const char*>(c.raw_data_ptr());
  switch (c.dtype()) {
    case kFloat32: return Scalar(*reinterpret_cast<const float*>(p));
    case kFloat64: return Scalar(*reinterpret_cast<const double*>(p));
    case kInt32: return Scalar(*reinterpret_cast<const int32_t*>(p));
    case kInt64: return Scalar(*reinterpret_cast<const int64_t*>(p));
    case kBool: return Scalar(*reinterpret_cast<const bool*>(p));
    case kInt8:
      return Scalar(*reinterpret_cast<const int8_t*>(p));
    case kFloat16:
      return Scalar(static_cast<float>(*reinterpret_cast<const Half*>(p)));
    case kBFloat16:
      return Scalar(static_cast<float>(*reinterpret_cast<const BFloat16*>(p)));
  }
  return Scalar();
}

Tensor::operator bool() const {
  LT_CHECK(numel() == 1, "bool: the truth value of a tensor with ", numel(),
           " elements is ambiguous (shape ", shape_str(sizes()), ")");
  return item().to<bool>();
}

Tensor Tensor::to(Device d) const& {
  Device cur = device();
  if (cur == d) return *this;
  if (cur.is_cpu() && d.is_cpu()) return *this;
  auto& h = lazy_hooks();
  auto to_cpu = hook(h.to_cpu, "lazy.to_cpu");
  auto from_cpu = hook(h.from_cpu, "lazy.from_cpu");
  if (cur.is_lazy() && d.is_cpu()) return to_cpu(*this);
  if (cur.is_cpu()) return from_cpu(*this, d);
  return from_cpu(to_cpu(*this), d);
}

Tensor Tensor::to(Device d) && {
  if (!defined() || !device().is_cpu() || !d.is_lazy())
    return static_cast<const Tensor&>(*this).to(d);
  // Left as it was unless its buffer is adopted; then it is empty (moved from).
  return hook(lazy_hooks().adopt_cpu, "lazy.adopt_cpu")(std::move(*this), d);
}

Tensor Tensor::to(Dtype t) const {
  if (dtype() == t) return *this;
  OpAttrs a;
  a.dtype = t;
  return call(OpKind::Cast, {*this}, a);
}

Tensor Tensor::to(Device d, Dtype t) const { return to(d).to(t); }
// As in libtorch, options that name no device keep the tensor's device (and with nothing
// to change, the result is the tensor itself, not a copy).
Tensor Tensor::to(const TensorOptions& o) const {
  Tensor r = o.has_device() ? to(o.device()) : *this;
  return o.has_dtype() ? r.to(o.dtype()) : r;
}

Tensor Tensor::clone() const { return call(OpKind::Copy, {*this}); }
Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

}  // namespace lt
