// Views and shape functions: view/reshape/permute/expand/slice family (views share storage),
// indexing, cat/stack/split/chunk/pad/repeat, and copy_.
#include <algorithm>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/kernels.h"
#include "ops/attrs.h"
#include "ops/autograd_hooks.h"

namespace lt {
namespace {
using K = OpKind;

Tensor reshape_to(const Tensor& t, IntList sizes) {
  OpAttrs a;
  a.ints = sizes;
  return call(K::Reshape, {t}, a);
}
Tensor slice_raw(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return call(K::Slice, {t}, SliceAttrs{dim, start, end, step}.attrs());
}
Tensor with_dim(const Tensor& t, K op, int64_t dim, ArrayRef<Tensor> in) {
  return call(op, in, DimAttrs{dim}.attrs());
}
}  // namespace

Tensor Tensor::view(IntList sizes) const {
  Dims s = infer_size(sizes, numel(), "view");
  const TensorImpl& i = *impl();  // lazy tensors keep the strides eager would have
  LT_CHECK(view_strides(i.sizes, i.strides, s).has_value(), "view: shape ", shape_str(s),
           " is not compatible with the input's layout (shape ", shape_str(i.sizes), ", strides ",
           shape_str(i.strides), "); use reshape instead");
  return reshape_to(*this, s);
}
Tensor Tensor::reshape(IntList sizes) const { return reshape_to(*this, infer_size(sizes, numel(), "reshape")); }
Tensor reshape(const Tensor& t, IntList sizes) { return t.reshape(sizes); }

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  const int64_t nd = dim();
  if (nd == 0) return reshape({1});
  start = wrap_dim(start, nd, "flatten");
  end = wrap_dim(end, nd, "flatten");
  LT_CHECK(start <= end, "flatten: start_dim ", start, " must not come after end_dim ", end);
  Dims s;
  for (int64_t d = 0; d < start; ++d) s.push_back(size(d));
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= size(d);
  s.push_back(m);
  for (int64_t d = end + 1; d < nd; ++d) s.push_back(size(d));
  return reshape_to(*this, s);
}
Tensor flatten(const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); }

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  Dims s(sizes());
  s.insert(d, 1);
  return reshape_to(*this, s);
}
Tensor unsqueeze(const Tensor& t, int64_t d) { return t.unsqueeze(d); }

Tensor Tensor::squeeze() const {
  Dims s;
  for (int64_t v : sizes())
    if (v != 1) s.push_back(v);
  return reshape_to(*this, s);
}
Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim(d, dim(), "squeeze");
  if (dim() == 0 || size(d) != 1) return reshape_to(*this, sizes());
  Dims s(sizes());
  s.erase(d);
  return reshape_to(*this, s);
}
Tensor squeeze(const Tensor& t) { return t.squeeze(); }
Tensor squeeze(const Tensor& t, int64_t d) { return t.squeeze(d); }

Tensor Tensor::permute(IntList dims) const {
  OpAttrs a;
  for (int64_t d : dims) a.ints.push_back(static_cast<size_t>(dims.size()) == static_cast<size_t>(dim()) ? wrap_dim(d, dim(), "permute") : d);
  return call(K::Permute, {*this}, a);
}
Tensor permute(const Tensor& t, IntList dims) { return t.permute(dims); }

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  const int64_t nd = dim();
  d0 = wrap_dim(d0, nd, "transpose");
  d1 = wrap_dim(d1, nd, "transpose");
  if (nd == 0) return permute({});
  Dims p;
  for (int64_t d = 0; d < nd; ++d) p.push_back(d);
  std::swap(p[d0], p[d1]);
  return permute(p);
}
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) { return t.transpose(d0, d1); }
Tensor Tensor::t() const {
  LT_CHECK(dim() <= 2, "t: expects a tensor with at most 2 dims, got shape ", shape_str(sizes()));
  return dim() < 2 ? permute(dim() == 1 ? IntList({0}) : IntList()) : transpose(0, 1);
}
Tensor t(const Tensor& x) { return x.t(); }

Tensor Tensor::expand(IntList sizes) const {
  OpAttrs a;
  a.ints = sizes;
  return call(K::Expand, {*this}, a);
}
Tensor Tensor::expand_as(const Tensor& o) const { return expand(o.sizes()); }
Tensor broadcast_to(const Tensor& t, IntList sizes) { return t.expand(sizes); }
std::vector<int64_t> broadcast_shapes(IntList a, IntList b) {
  return broadcast_shape(a, b, "broadcast_shapes").vec();
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  LT_CHECK(dim() > 0, "narrow: cannot narrow a 0-d tensor");
  d = wrap_dim(d, dim(), "narrow");
  const int64_t n = size(d);
  if (start < 0 && start >= -n) start += n;
  LT_CHECK(start >= 0 && length >= 0 && start + length <= n, "narrow: start ", start,
           " + length ", length, " exceeds dimension ", d, " of size ", n, " (shape ",
           shape_str(sizes()), ")");
  return slice_raw(*this, d, start, start + length, 1);
}
Tensor narrow(const Tensor& t, int64_t d, int64_t s, int64_t l) { return t.narrow(d, s, l); }

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  LT_CHECK(dim() > 0, "slice: cannot slice a 0-d tensor");
  d = wrap_dim(d, dim(), "slice");
  LT_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = size(d);
  auto norm = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  start = norm(start);
  end = std::max(start, norm(end));
  return slice_raw(*this, d, start, end, step);
}
Tensor slice(const Tensor& t, int64_t d, int64_t s, int64_t e, int64_t st) { return t.slice(d, s, e, st); }

Tensor Tensor::select(int64_t d, int64_t index) const {
  LT_CHECK(dim() > 0, "select: cannot select from a 0-d tensor");
  d = wrap_dim(d, dim(), "select");
  const int64_t n = size(d);
  LT_CHECK(index >= -n && index < n, "select: index ", index, " is out of range for dim ", d,
           " of size ", n, " (shape ", shape_str(sizes()), ")");
  if (index < 0) index += n;
  Dims s(sizes());
  s.erase(d);
  return reshape_to(slice_raw(*this, d, index, index + 1, 1), s);
}
Tensor select(const Tensor& t, int64_t d, int64_t i) { return t.select(d, i); }

Tensor Tensor::index_select(int64_t d, const Tensor& index) const {
  return with_dim(*this, K::IndexSelect, wrap_dim(d, dim(), "index_select"), {*this, index});
}
Tensor index_select(const Tensor& t, int64_t d, const Tensor& i) { return t.index_select(d, i); }
Tensor Tensor::gather(int64_t d, const Tensor& index) const {
  return with_dim(*this, K::Gather, wrap_dim(d, dim(), "gather"), {*this, index});
}
Tensor gather(const Tensor& t, int64_t d, const Tensor& i) { return t.gather(d, i); }
Tensor Tensor::scatter_add(int64_t d, const Tensor& index, const Tensor& src) const {
  return with_dim(*this, K::ScatterAdd, wrap_dim(d, dim(), "scatter_add"), {*this, index, src});
}
Tensor scatter_add(const Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
  return t.scatter_add(d, i, s);
}
Tensor Tensor::scatter(int64_t d, const Tensor& index, const Tensor& src) const {
  return with_dim(*this, K::Scatter, wrap_dim(d, dim(), "scatter"), {*this, index, src});
}
Tensor Tensor::scatter(int64_t d, const Tensor& index, const Scalar& value) const {
  return scatter(d, index, full(index.sizes(), value, options()));
}
Tensor scatter(const Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
  return t.scatter(d, i, s);
}
Tensor scatter(const Tensor& t, int64_t d, const Tensor& i, const Scalar& v) {
  return t.scatter(d, i, v);
}

std::vector<Tensor> Tensor::split(int64_t size_, int64_t d) const {
  LT_CHECK(dim() > 0, "split: cannot split a 0-d tensor");
  d = wrap_dim(d, dim(), "split");
  const int64_t n = size(d);
  LT_CHECK(size_ > 0 || (size_ == 0 && n == 0), "split: split_size must be positive, got ", size_);
  std::vector<Tensor> out;
  if (n == 0) return {narrow(d, 0, 0)};
  for (int64_t s = 0; s < n; s += size_) out.push_back(narrow(d, s, std::min(size_, n - s)));
  return out;
}
std::vector<Tensor> split(const Tensor& t, int64_t s, int64_t d) { return t.split(s, d); }
std::vector<Tensor> Tensor::chunk(int64_t n, int64_t d) const {
  LT_CHECK(n > 0, "chunk: number of chunks must be positive, got ", n);
  LT_CHECK(dim() > 0, "chunk: cannot chunk a 0-d tensor");
  d = wrap_dim(d, dim(), "chunk");
  int64_t per = (size(d) + n - 1) / n;
  return split(std::max<int64_t>(per, size(d) == 0 ? 0 : 1), d);
}
std::vector<Tensor> chunk(const Tensor& t, int64_t n, int64_t d) { return t.chunk(n, d); }

Tensor Tensor::repeat(IntList reps) const {
  LT_CHECK(static_cast<int64_t>(reps.size()) >= dim(), "repeat: got ", reps.size(),
           " repeats ", shape_str(reps), " for a tensor of shape ", shape_str(sizes()),
           " (need at least one per dim)");
  for (int64_t r : reps) LT_CHECK(r >= 0, "repeat: negative repeat ", r, " in ", shape_str(reps));
  Dims padded(reps.size() - dim(), 1);
  for (int64_t s : sizes()) padded.push_back(s);
  Dims inter, target, final_;
  for (size_t i = 0; i < reps.size(); ++i) {
    inter.push_back(1);
    inter.push_back(padded[i]);
    target.push_back(reps[i]);
    target.push_back(padded[i]);
    final_.push_back(reps[i] * padded[i]);
  }
  return reshape_to(*this, inter).expand(target).contiguous().reshape(final_);
}
Tensor repeat(const Tensor& t, IntList r) { return t.repeat(r); }

Tensor cat(const std::vector<Tensor>& ts, int64_t d) {
  LT_CHECK(!ts.empty(), "cat: expected a non-empty list of tensors");
  for (size_t i = 0; i < ts.size(); ++i)
    LT_CHECK(ts[i].defined() && ts[i].dim() > 0, "cat: tensor ", i,
             " is 0-d or undefined and cannot be concatenated");
  return with_dim(ts[0], K::Cat, wrap_dim(d, ts[0].dim(), "cat"), ts);
}
Tensor stack(const std::vector<Tensor>& ts, int64_t d) {
  LT_CHECK(!ts.empty(), "stack: expected a non-empty list of tensors");
  d = wrap_dim(d, ts[0].dim() + 1, "stack");
  std::vector<Tensor> u;
  for (size_t i = 0; i < ts.size(); ++i) {
    LT_CHECK(ts[i].sizes().equals(ts[0].sizes()), "stack: tensor ", i, " has shape ",
             shape_str(ts[i].sizes()), " but tensor 0 has shape ", shape_str(ts[0].sizes()),
             " (expected equal shapes)");
    u.push_back(ts[i].unsqueeze(d));
  }
  return cat(u, d);
}

Tensor slice_scatter(const Tensor& base, const Tensor& src, int64_t d, int64_t start,
                     int64_t end, int64_t step) {
  LT_CHECK(base.dim() > 0, "slice_scatter: cannot slice a 0-d tensor");
  d = wrap_dim(d, base.dim(), "slice_scatter");
  LT_CHECK(step > 0, "slice_scatter: step must be positive, got ", step);
  const int64_t n = base.size(d);
  auto norm = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  start = norm(start);
  end = std::max(start, norm(end));
  return call(K::SliceScatter, {base, src.dtype() == base.dtype() ? src : src.to(base.dtype())},
              SliceAttrs{d, start, end, step}.attrs());
}

Tensor pad(const Tensor& t, IntList pads, double value) {
  return call(K::Pad, {t}, PadAttrs{Dims(pads), value}.attrs());
}

Tensor& Tensor::copy_(const Tensor& src_in) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: it writes the tensor
  LT_CHECK(defined() && src_in.defined(), "copy_: undefined tensor");
  Dims b = broadcast_shape(sizes(), src_in.sizes(), "copy_");
  LT_CHECK(b == Dims(sizes()), "copy_: source of shape ", shape_str(src_in.sizes()),
           " cannot be broadcast to the destination shape ", shape_str(sizes()));
  check_writable(*this, "copy_");
  Tensor src = src_in.device() == device() ? src_in : src_in.to(device());
  // Tracked when src or *this requires grad (in grad mode): a leaf that requires grad is
  // refused, a non-leaf takes src's history (none for a constant: zero_, fill_).
  const bool track =
      any_autograd({*this, src}) && hook(autograd_hooks().needed, "autograd.needed")({*this, src});
  if (track) hook(autograd_hooks().check_inplace, "autograd.check_inplace")(*this);
  impl()->bump_version();
  if (track) {
    Tensor v = src.to(dtype()).expand(sizes()).clone();  // recorded: gradients reach src
    assign_value(self, v);
    impl()->autograd = v.impl()->autograd;
    return self;
  }
  if (device().is_lazy()) {
    hook(lazy_hooks().assign, "lazy.assign")(self, src.to(dtype()).expand(sizes()));
    return self;
  }
  if (src.impl()->storage == impl()->storage && !src.is_same(*this)) src = src.clone();
  copy_into(self, src);
  return self;
}

}  // namespace lt
