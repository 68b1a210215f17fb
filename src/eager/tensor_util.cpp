#include "eager/tensor_util.h"

#include "core/shape.h"

namespace lt {

Tensor make_eager(IntList sizes, Dtype dtype) {
  auto impl = new_impl();
  impl->sizes = Dims(sizes);
  impl->strides = contiguous_strides(sizes);
  impl->numel = numel_of(sizes);
  impl->dtype = dtype;
  impl->device = kCPU;
  impl->storage = allocate_storage(static_cast<size_t>(impl->numel) * dtype_size(dtype));
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset) {
  auto impl = new_impl();
  impl->sizes = Dims(sizes);
  impl->strides = Dims(strides);
  impl->numel = numel_of(sizes);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->device = base.device();
  impl->storage = base.impl()->storage;
  impl->version = base.impl()->version_counter();
  return Tensor(std::move(impl));
}

}  // namespace lt
