// gather, scatter_add, scatter, index_select. Index values are checked before any write, so an
// out-of-range index throws lt::Error and leaves the output untouched.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/check.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {
namespace {

// As in PyTorch, gather, scatter_add, index_select (and embedding, nll_loss and cross_entropy,
// which use them) take indices in [0, size): a negative index is out of range, not wrapped.
std::vector<int64_t> read_index(const Tensor& index, int64_t bound, int64_t dim, const char* op) {
  std::vector<int64_t> v = int64_values(index);
  for (int64_t i : v)
    LT_CHECK(i >= 0 && i < bound, op, ": index ", i, " is out of bounds for dim ", dim,
             " with size ", bound);
  return v;
}

// Calls f(linear position in `sizes`, coordinates) for every element of `sizes`.
template <typename F>
void for_each_coord(IntList sizes, F f) {
  const int64_t nd = sizes.size();
  const int64_t n = numel_of(sizes);
  Dims c(nd, 0);
  for (int64_t pos = 0; pos < n; ++pos) {
    f(pos, c.data());
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++c[d] < sizes[d]) break;
      c[d] = 0;
    }
  }
}

// Element offsets of a tensor at coordinates whose `dim` coordinate is replaced by `at`
// (dim < 0, or a 0-d tensor: none is), from strides read once: the per-element calls to
// Tensor::stride and Tensor::dim made a [64, 10] gather (a classifier's loss) 2 us and its
// scatter_add 3.5 us.
class Offsets {
 public:
  Offsets(const Tensor& t, int64_t dim)
      : st_(t.strides()), dim_(dim < static_cast<int64_t>(st_.size()) ? dim : -1) {}
  int64_t at(const int64_t* c, int64_t at) const {
    int64_t o = 0;
    for (size_t d = 0; d < st_.size(); ++d) o += c[d] * st_[d];
    return dim_ < 0 ? o : o + (at - c[dim_]) * st_[static_cast<size_t>(dim_)];
  }

 private:
  Dims st_;
  int64_t dim_;  // -1: none
};

}  // namespace

void check_index_values(OpKind op, const Tensor& x, int64_t dim, const Tensor& index) {
  (void)read_index(index, x.dim() ? x.size(dim) : 1, dim, op_name(op));
}

void gather_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  auto idx = read_index(index, x.dim() ? x.size(dim) : 1, dim, "gather");  // even if empty
  if (out.numel() == 0) return;
  LT_DISPATCH(x.dtype(), T, {
    const T* px = static_cast<const T*>(x.raw_data_ptr());
    T* po = static_cast<T*>(out.raw_data_ptr());
    if (x.dim() == 1 && out.is_contiguous()) {  // a lookup (2M entries: 39 -> 5.9 ms)
      const int64_t st = x.strides()[0];
      parallel_for(out.numel(), 65536, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) po[i] = px[idx[static_cast<size_t>(i)] * st];
      });
      return;
    }
    const Offsets ox(x, dim);
    for_each_coord(index.sizes(), [&](int64_t pos, const int64_t* c) {
      po[pos] = px[ox.at(c, idx[static_cast<size_t>(pos)])];
    });
  });
}

void scatter_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                    bool accumulate, const Tensor& out) {
  auto idx =
      read_index(index, x.dim() ? x.size(dim) : 1, dim, accumulate ? "scatter_add" : "scatter");
  copy_into(out, x);
  if (index.numel() == 0) return;
  LT_DISPATCH(x.dtype(), T, {
    const T* ps = static_cast<const T*>(src.raw_data_ptr());
    T* po = static_cast<T*>(out.raw_data_ptr());
    const Offsets oo(out, dim), os(src, -1);
    for_each_coord(index.sizes(), [&](int64_t pos, const int64_t* c) {
      T& o = po[oo.at(c, idx[static_cast<size_t>(pos)])];
      const T v = ps[os.at(c, 0)];
      o = accumulate ? static_cast<T>(o + v) : v;
    });
  });
}

void index_select_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t bound = x.dim() ? x.size(dim) : 1;
  auto idx = read_index(index, bound, dim, "index_select");  // even if the output is empty
  if (out.numel() == 0) return;
  if (x.dim() == 0) {
    copy_into(out, x);
    return;
  }
  Tensor xc = dense(x);
  const int64_t inner = xc.numel() / std::max<int64_t>(1, bound) /
                        std::max<int64_t>(1, numel_of(IntList(x.sizes().data(), dim)));
  const int64_t outer = numel_of(IntList(x.sizes().data(), dim));
  const size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(xc.raw_data_ptr());
  char* po = static_cast<char*>(out.raw_data_ptr());
  const int64_t m = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      std::memcpy(po + ((o * m + j) * inner) * es, px + ((o * bound + idx[j]) * inner) * es,
                  inner * es);
}

}  // namespace lt

namespace lt {

// Each slice along dim sorted by std::stable_sort of its positions: equal values keep their
// order (PyTorch's stable=true, a valid answer for stable=false too); NaN sorts above every
// number, so it comes last ascending and first descending, as in PyTorch.
void argsort_kernel(const Tensor& x, int64_t dim, bool descending, const Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t slices = x.numel() / n;
  Tensor xd = dense(x);
  int64_t* po = static_cast<int64_t*>(out.raw_data_ptr());
  LT_DISPATCH(x.dtype(), T, {
    const T* px = static_cast<const T*>(xd.raw_data_ptr());
    parallel_for(slices, std::max<int64_t>(1, 4096 / n), [&](int64_t b, int64_t e) {
      std::vector<int64_t> perm(static_cast<size_t>(n));
      for (int64_t s = b; s < e; ++s) {
        const int64_t base = (s / inner) * n * inner + s % inner;
        auto key = [&](int64_t k) { return px[base + k * inner]; };
        for (int64_t k = 0; k < n; ++k) perm[k] = k;
        auto above = [](T u, T v) {  // u sorts after v ascending
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(u)) return !std::isnan(v);
            if (std::isnan(v)) return false;
          }
          return v < u;
        };
        if (descending)
          std::stable_sort(perm.begin(), perm.end(),
                           [&](int64_t i, int64_t j) { return above(key(i), key(j)); });
        else
          std::stable_sort(perm.begin(), perm.end(),
                           [&](int64_t i, int64_t j) { return above(key(j), key(i)); });
        for (int64_t k = 0; k < n; ++k) po[base + k * inner] = perm[k];
      }
    });
  });
}

}  // namespace lt
