// Tensor queries, observation and conversion.
#include <cstring>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {

namespace {
const TensorImpl& checked(const Tensor& t, const char* what) {
  LT_CHECK(t.defined(), what, ": called on an undefined tensor");
  return *t.impl();
}
}  // namespace

IntList Tensor::sizes() const { return checked(*this, "sizes").sizes; }
IntList Tensor::strides() const {
  return checked(*this, "strides").strides;  // lazy: the strides eager would have
}
int64_t Tensor::dim() const { return static_cast<int64_t>(checked(*this, "dim").sizes.size()); }
int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }
int64_t Tensor::numel() const { return checked(*this, "numel").numel; }
Dtype Tensor::dtype() const { return checked(*this, "dtype").dtype; }
Device Tensor::device() const { return checked(*this, "device").device; }
int64_t Tensor::storage_offset() const { return checked(*this, "storage_offset").offset; }

bool Tensor::is_contiguous() const {
  const TensorImpl& i = checked(*this, "is_contiguous");
  return is_contiguous_layout(i.sizes, i.strides);  // lazy tensors keep eager-equivalent strides
}

void* Tensor::raw_data_ptr() const {
  const TensorImpl& i = checked(*this, "data_ptr");
  LT_CHECK(i.device.is_cpu(), "data_ptr: only for cpu tensors (this one is on ", i.device.str(),
           "); call .to(\"cpu\") first");
  return i.data();
}

void Tensor::check_data_ptr(Dtype t) const {
  LT_CHECK(dtype() == t, "data_ptr: the tensor is ", dtype_name(dtype()), " but ", dtype_name(t),
           " was requested");
}

void Tensor::copy_to_host(Dtype t, void* out) const {
  Tensor c = to(kCPU);
  if (c.dtype() != t || !c.is_contiguous()) {
    Tensor d = make_eager(c.sizes(), t);
    copy_into(d, c);
    c = d;
  }
  if (c.numel() > 0) std::memcpy(out, c.raw_data_ptr(), c.numel() * dtype_size(t));
}

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
  }
  return Scalar();
}

Tensor::operator bool() const {
  LT_CHECK(numel() == 1, "bool: the truth value of a tensor with ", numel(),
           " elements is ambiguous (shape ", shape_str(sizes()), ")");
  return item().to<bool>();
}

Tensor Tensor::to(Device d) const {
  Device cur = device();
  if (cur == d) return *this;
  if (cur.is_cpu() && d.is_cpu()) return *this;
  auto& h = lazy_hooks();
  if (cur.is_lazy() && d.is_cpu()) return h.to_cpu(*this);
  if (cur.is_cpu()) return h.from_cpu(*this, d);
  return h.from_cpu(h.to_cpu(*this), d);
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
