#include "eager/tensor_util.h"

#include <cstring>

#include "core/check.h"
#include "core/shape.h"
#include "eager/kernels.h"

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

Tensor reshape_view(const Tensor& t, IntList sizes) {
  std::optional<Dims> st = view_strides(t.sizes(), t.strides(), sizes);
  LT_CHECK(st.has_value(), "internal: a kernel viewed ", shape_str(t.sizes()), " as ",
           shape_str(sizes), ", which needs a copy");
  return make_view(t, sizes, *st, t.storage_offset());
}

Tensor expand_view(const Tensor& t, IntList sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size()), lead = nd - t.dim();
  LT_CHECK(lead >= 0, "internal: a kernel expanded ", shape_str(t.sizes()), " to ",
           shape_str(sizes));
  Dims st(sizes.size(), 0);
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t s = t.size(d);
    LT_CHECK(s == sizes[lead + d] || s == 1, "internal: a kernel expanded ", shape_str(t.sizes()),
             " to ", shape_str(sizes));
    st[lead + d] = s == sizes[lead + d] ? t.stride(d) : 0;
  }
  return make_view(t, sizes, st, t.storage_offset());
}

Tensor permute_view(const Tensor& t, IntList perm) {
  Dims sizes, st;
  for (int64_t p : perm) {
    sizes.push_back(t.size(p));
    st.push_back(t.stride(p));
  }
  return make_view(t, sizes, st, t.storage_offset());
}

void read_values(const Tensor& t, Dtype as, void* out) {
  Tensor c = t;
  if (t.dtype() != as || !t.is_contiguous()) {
    c = make_eager(t.sizes(), as);
    copy_into(c, t);
  }
  if (c.numel() > 0) std::memcpy(out, c.raw_data_ptr(), c.numel() * dtype_size(as));
}

std::vector<int64_t> int64_values(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  read_values(t, kInt64, v.data());
  return v;
}

}  // namespace lt
