// Shape arithmetic: broadcasting, strides, dim wrapping, view-compatibility, formatting.
#pragma once
#include <optional>
#include <string>

#include "core/dims.h"

namespace lt {

std::string shape_str(IntList s);  // "[2, 3]"
inline int64_t numel_of(IntList s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}
// Writes the contiguous strides of `sizes` to st[0..ndim) and returns the element count
// (inline and in place: every recorded op's result handle needs both).
inline int64_t write_contiguous_strides(IntList sizes, int64_t* st) {
  int64_t acc = 1, numel = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= sizes[i] > 1 ? sizes[i] : 1;
    numel *= sizes[i];
  }
  return numel;
}
inline Dims contiguous_strides(IntList sizes) {
  Dims st(sizes.size());
  write_contiguous_strides(sizes, st.data());
  return st;
}
bool is_contiguous_layout(IntList sizes, IntList strides);
// Wraps a possibly negative dim; `op` names the op in the error message.
int64_t wrap_dim(int64_t d, int64_t ndim, const char* op);
// Sorted, unique, wrapped dims; empty input means all dims.
Dims reduce_dims(IntList dims, int64_t ndim, const char* op);
Dims broadcast_shape(IntList a, IntList b, const char* op);
// Resolves one -1 in a requested shape against numel.
Dims infer_size(IntList req, int64_t numel, const char* op);
// Strides that let (sizes, strides) be viewed as new_sizes without copying, if any.
std::optional<Dims> view_strides(IntList sizes, IntList strides, IntList new_sizes);

}  // namespace lt
