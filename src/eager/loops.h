// The strided loop engine of the eager elementwise kernels (a small TensorIterator): operands
// share one broadcast shape, dims are coalesced, and the work is cut into contiguous index
// ranges for the threads; each range is walked as inner segments of (pointers, strides, count).
#pragma once
#include <array>

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "lt/tensor.h"

namespace lt {

constexpr int kMaxLoopDims = 16;

template <int N>
struct LoopSpec {
  int ndim = 0;
  int64_t sizes[kMaxLoopDims];
  int64_t strides[N][kMaxLoopDims];  // bytes, innermost dim last
  char* base[N];
  int64_t numel = 1;
};

// Operand 0 is the output. Inputs broadcast to `out`'s shape (stride 0 on expanded dims).
template <int N>
LoopSpec<N> make_loop(const std::array<const Tensor*, N>& ops) {
  LoopSpec<N> s;
  const TensorImpl& o = *ops[0]->impl();
  int nd = static_cast<int>(o.sizes.size());
  if (nd > kMaxLoopDims) throw Error("elementwise: more than 16 dims are not supported");
  int64_t tmp[N][kMaxLoopDims];
  for (int k = 0; k < N; ++k) {
    const TensorImpl& t = *ops[k]->impl();
    int off = nd - static_cast<int>(t.sizes.size());
    int64_t es = static_cast<int64_t>(dtype_size(t.dtype));
    for (int d = 0; d < nd; ++d) {
      int td = d - off;
      tmp[k][d] = (td < 0 || t.sizes[td] == 1) ? 0 : t.strides[td] * es;
    }
    s.base[k] = t.data();
  }
  // Coalesce: drop size-1 dims, merge d into d+1 when every operand is contiguous across them.
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    if (o.sizes[d] == 1) continue;
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k)
        if (s.strides[k][m - 1] != tmp[k][d] * o.sizes[d]) merge = false;
      if (merge) {
        s.sizes[m - 1] *= o.sizes[d];
        for (int k = 0; k < N; ++k) s.strides[k][m - 1] = tmp[k][d];
        continue;
      }
    }
    s.sizes[m] = o.sizes[d];
    for (int k = 0; k < N; ++k) s.strides[k][m] = tmp[k][d];
    ++m;
  }
  if (m == 0) {
    s.sizes[0] = 1;
    for (int k = 0; k < N; ++k) s.strides[k][0] = 0;
    m = 1;
  }
  s.ndim = m;
  s.numel = 1;
  for (int d = 0; d < m; ++d) s.numel *= s.sizes[d];
  return s;
}

// f(char* ptrs[N], const int64_t strides[N], int64_t count) for each inner segment.
template <int N, typename F>
void run_loop(const LoopSpec<N>& s, int64_t grain, const F& f) {
  const int inner = s.ndim - 1;
  parallel_for(s.numel, grain, [&](int64_t begin, int64_t end) {
    int64_t idx[kMaxLoopDims];
    int64_t rem = begin;
    for (int d = s.ndim - 1; d >= 0; --d) {
      idx[d] = rem % s.sizes[d];
      rem /= s.sizes[d];
    }
    int64_t inner_strides[N];
    for (int k = 0; k < N; ++k) inner_strides[k] = s.strides[k][inner];
    int64_t pos = begin;
    while (pos < end) {
      char* ptrs[N];
      for (int k = 0; k < N; ++k) {
        ptrs[k] = s.base[k];
        for (int d = 0; d < s.ndim; ++d) ptrs[k] += idx[d] * s.strides[k][d];
      }
      int64_t count = std::min(s.sizes[inner] - idx[inner], end - pos);
      f(ptrs, inner_strides, count);
      pos += count;
      idx[inner] += count;
      for (int d = inner; d > 0 && idx[d] == s.sizes[d]; --d) {
        idx[d] = 0;
        idx[d - 1]++;
      }
    }
  });
}

constexpr int64_t kElementwiseGrain = 32768;

}  // namespace lt
