// The Tensor handle's queries: sizes, strides, dtype, device, the data pointer. They read the
// TensorImpl only, so every layer may call them (the ops that dispatch are in src/api).
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "lt/tensor.h"

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

}  // namespace lt

namespace lt {

StorageRef Tensor::storage() const {
  const TensorImpl& i = checked(*this, "storage");
  LT_CHECK(i.device.is_cpu(), "storage: only cpu tensors have host storage (this one is on ",
           i.device.str(), "); call .to(\"cpu\") first");
  return StorageRef(i.storage);
}

size_t StorageRef::nbytes() const { return s_ ? s_->nbytes : 0; }
void* StorageRef::data() const { return s_ ? s_->data : nullptr; }

}  // namespace lt
