// cat and pad: both are strided copies into windows of a fresh output.
#include <algorithm>

#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {

namespace {
Tensor window(const Tensor& t, int64_t dim, int64_t start, int64_t len) {
  const TensorImpl& i = I(t);
  Dims sizes = i.sizes;
  sizes[dim] = len;
  return make_view(t, sizes, i.strides, i.offset + start * i.strides[dim]);
}
}  // namespace

void cat_kernel(ArrayRef<Tensor> in, int64_t dim, const Tensor& out) {
  int64_t off = 0;
  for (const Tensor& t : in) {
    int64_t n = t.size(dim);
    if (n > 0 && out.numel() > 0) copy_into(window(out, dim, off, n), t);
    off += n;
  }
}

void pad_kernel(const Tensor& x, IntList pads, double value, const Tensor& out) {
  fill_kernel(out, value, static_cast<int64_t>(value));
  Tensor src = x, dst = out;
  const int64_t nd = x.dim();
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    int64_t d = nd - 1 - static_cast<int64_t>(k);
    int64_t l = pads[2 * k], r = pads[2 * k + 1];
    int64_t s0 = std::max<int64_t>(0, -l);
    int64_t s1 = x.size(d) - std::max<int64_t>(0, -r);
    int64_t len = std::max<int64_t>(0, s1 - s0);
    src = window(src, d, s0, len);
    dst = window(dst, d, std::max<int64_t>(0, l), len);
  }
  if (src.numel() > 0) copy_into(dst, src);
}

}  // namespace lt
