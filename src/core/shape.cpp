#include "core/shape.h"

#include <algorithm>

#include "core/check.h"

namespace lt {

std::string shape_str(IntList s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

bool is_contiguous_layout(IntList sizes, IntList strides) {
  int64_t expect = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expect) return false;
    expect *= sizes[i];
  }
  return true;
}

int64_t wrap_dim(int64_t d, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // 0-d tensors accept dim 0 and -1, like PyTorch
  LT_CHECK(d >= -n && d < n, op, ": dim ", d, " out of range for a tensor of dimension ", ndim,
           " (expected in [", -n, ", ", n - 1, "])");
  return d < 0 ? d + n : d;
}

Dims reduce_dims(IntList dims, int64_t ndim, const char* op) {
  Dims r;
  if (dims.empty()) {
    for (int64_t i = 0; i < ndim; ++i) r.push_back(i);
    return r;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    LT_CHECK(std::find(r.begin(), r.end(), w) == r.end(), op, ": dim ", d,
             " appears more than once in the list of dims");
    r.push_back(w);
  }
  std::sort(r.begin(), r.end());
  return r;
}

Dims broadcast_shape(IntList a, IntList b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Dims r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    LT_CHECK(x == y || x == 1 || y == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
             " cannot be broadcast (dim ", i, ": ", x, " vs ", y, ")");
    r[i] = x == 1 ? y : x;
  }
  return r;
}

Dims infer_size(IntList req, int64_t numel, const char* op) {
  Dims r(req);
  int64_t known = 1;
  int64_t infer = -1;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] == -1) {
      LT_CHECK(infer < 0, op, ": only one dimension can be inferred (-1) in ", shape_str(req));
      infer = static_cast<int64_t>(i);
    } else {
      LT_CHECK(r[i] >= 0, op, ": invalid size ", r[i], " in shape ", shape_str(req));
      known *= r[i];
    }
  }
  if (infer >= 0) {
    LT_CHECK(known != 0 && numel % known == 0, op, ": shape ", shape_str(req),
             " is invalid for input of size ", numel);
    r[infer] = numel / known;
  } else {
    LT_CHECK(known == numel, op, ": shape ", shape_str(req), " is invalid for input of size ",
             numel);
  }
  return r;
}

// PyTorch's computeStride: walks chunks of the old shape that are contiguous among themselves.
std::optional<Dims> view_strides(IntList old_sizes, IntList old_strides, IntList new_sizes) {
  Dims ns(new_sizes.size());
  if (old_sizes.empty()) {
    for (auto& s : ns) s = 1;
    return ns;
  }
  int64_t numel = numel_of(old_sizes);
  if (numel == 0) {
    if (old_sizes.equals(new_sizes)) return Dims(old_strides);
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; d--) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return ns;
}

}  // namespace lt
