// lt::Tensor: a reference-counted handle to a tensor on some device (eager cpu or lazy).
// Copying a Tensor shares the same tensor, as in libtorch; views share storage with their base.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lt/array_ref.h"
#include "lt/device.h"
#include "lt/dtype.h"
#include "lt/error.h"
#include "lt/options.h"
#include "lt/scalar.h"

namespace lt {

struct TensorImpl;
namespace indexing {
class TensorIndex;
}
namespace autograd {
class Node;
}

struct Storage;

// A handle on the memory behind an eager tensor, as libtorch's c10::Storage is used: its size,
// its address, and whether two tensors share it.
class StorageRef {
 public:
  StorageRef() = default;
  explicit StorageRef(std::shared_ptr<Storage> s) : s_(std::move(s)) {}
  size_t nbytes() const;  // the capacity: allocations round up to a size bucket
  void* data() const;
  void* mutable_data() const { return data(); }
  bool is_alias_of(const StorageRef& o) const { return s_ && s_ == o.s_; }
  long use_count() const { return s_.use_count(); }
  explicit operator bool() const { return s_ != nullptr; }

 private:
  std::shared_ptr<Storage> s_;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  // Assigning to a named tensor rebinds the handle; assigning to a temporary writes through it,
  // as in libtorch: t[0] = x copies x into row 0 of t, t.index({...}) = 1 fills.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& src) &&;
  Tensor& operator=(Tensor&& src) &&;
  Tensor& operator=(const Scalar& v) &&;

  // ---- queries
  bool defined() const { return impl_ != nullptr; }
  IntList sizes() const;
  IntList strides() const;  // eager only
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  int64_t numel() const;
  Dtype dtype() const;
  Dtype scalar_type() const { return dtype(); }
  Device device() const;
  TensorOptions options() const { return TensorOptions(device()).dtype(dtype()); }
  int64_t storage_offset() const;
  size_t element_size() const { return dtype_size(dtype()); }
  bool is_contiguous() const;
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  Layout layout() const { return kStrided; }
  bool is_variable() const { return defined(); }  // libtorch: every tensor is a variable
  // Same sizes and the same values (an observation on a lazy device), as libtorch's equal.
  bool equal(const Tensor& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8) const;
  std::string toString() const;

  // ---- values (observation: on a lazy device these evaluate what they need)
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  template <typename T>
  T* data_ptr() const {
    check_data_ptr(DtypeOf<T>::value);
    return static_cast<T*>(raw_data_ptr());
  }
  void* raw_data_ptr() const;  // eager only: first element of this (possibly strided) view
  void* data_ptr() const { return raw_data_ptr(); }  // libtorch's untyped spelling
  template <typename T>
  std::vector<T> to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no data()
      std::vector<uint8_t> raw(static_cast<size_t>(numel()));
      copy_to_host(kBool, raw.data());
      return std::vector<bool>(raw.begin(), raw.end());
    } else {
      std::vector<T> out(static_cast<size_t>(numel()));
      copy_to_host(DtypeOf<T>::value, out.data());
      return out;
    }
  }
  template <typename T>
  std::vector<T> tolist() const {
    return to_vector<T>();
  }
  explicit operator bool() const;  // one-element tensors only, like Python's bool(t)

  // ---- conversion
  Tensor to(Device d) const&;
  // On a temporary (`make().to(dev)`, `std::move(t).to(dev)`): a cpu tensor that is the only
  // handle on its own dense buffer moves to the lazy device without a copy, and a named tensor
  // moved this way is left undefined. Otherwise as above, and the tensor is left as it was.
  Tensor to(Device d) &&;
  Tensor to(DeviceType d) const { return to(Device(d)); }  // t.to(kCPU)
  Tensor to(Dtype t) const;
  Tensor to(Device d, Dtype t) const;
  Tensor to(const TensorOptions& o) const;
  Tensor to(const char* device) const { return to(Device(device)); }  // t.to("cpu"), unambiguous
  Tensor clone() const;
  Tensor contiguous() const;
  Tensor cpu() const { return to(kCPU); }

  // ---- elementwise
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(const Scalar& e) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor tan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor exp2() const;
  Tensor trunc() const;
  Tensor frac() const;
  Tensor erfinv() const;
  Tensor& erfinv_() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor sgn() const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor atan2(const Tensor& x) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(const Scalar& o) const;
  Tensor remainder(const Tensor& o) const;
  Tensor remainder(const Scalar& o) const;
  // The elementwise unary ops of the registry (the U rows of lt/ops.def): t.exp(), ..., and
  // their in-place forms t.exp_(), ... (the result must cast to this tensor's dtype, as add_).
#define U(Name, ident, ...) \
  Tensor ident() const;     \
  Tensor& ident##_() const;
#include "lt/ops.def"
#undef U
  Tensor gelu(const std::string& approximate = "none") const;
  Tensor silu() const;
  Tensor square() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }
  // Bounds as tensors (broadcast against self).
  Tensor clamp(const std::optional<Tensor>& min,
               const std::optional<Tensor>& max = std::nullopt) const;
  Tensor clamp_min(const Tensor& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Tensor& max) const { return clamp(std::nullopt, max); }
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor where(const Tensor& cond, const Tensor& other) const;  // cond ? *this : other

  // ---- in place (the result keeps this tensor's dtype and shape)
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& o) const;
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Scalar& o) const;
  Tensor& mul_(const Tensor& o) const;
  Tensor& mul_(const Scalar& o) const;
  Tensor& div_(const Tensor& o) const;
  Tensor& div_(const Scalar& o) const;
  Tensor& zero_() const;
  Tensor& fill_(const Scalar& v) const;
  Tensor& copy_(const Tensor& src) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(const std::optional<Tensor>& min,
                 const std::optional<Tensor>& max = std::nullopt) const;
  // bitwise (src/api/bitwise.cpp); bitwise_not() and bitwise_not_() come from the op table
#define LT_BITWISE_METHODS(name)          \
  Tensor name(const Tensor& o) const;     \
  Tensor name(const Scalar& o) const;     \
  Tensor& name##_(const Tensor& o) const; \
  Tensor& name##_(const Scalar& o) const;
  LT_BITWISE_METHODS(bitwise_and)
  LT_BITWISE_METHODS(bitwise_or)
  LT_BITWISE_METHODS(bitwise_xor)
  LT_BITWISE_METHODS(bitwise_left_shift)
  LT_BITWISE_METHODS(bitwise_right_shift)
#undef LT_BITWISE_METHODS
  // Random fills, drawn as the factories draw (seeded by manual_seed): integers in [from, to)
  // (to defaults to the largest value the dtype holds exactly, 2^24 for float32), uniform in
  // [from, to), normal(mean, std).
  Tensor& random_(int64_t from, std::optional<int64_t> to) const;
  Tensor& random_(int64_t to) const;
  Tensor& random_() const;
  Tensor& uniform_(double from = 0, double to = 1) const;
  Tensor& normal_(double mean = 0, double std = 1) const;
  // New sizes, keeping the leading elements (in row-major order) that fit; new ones are zero.
  const Tensor& resize_(IntList sizes) const;
  // The buffer behind an eager tensor (shared by its views).
  StorageRef storage() const;

  // ---- reductions
  Tensor sum() const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor sum(IntList dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor mean(IntList dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  Tensor prod(IntList dims, bool keepdim = false) const;
  Tensor amax() const;
  Tensor amax(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntList dims, bool keepdim = false) const;
  Tensor amin() const;
  Tensor amin(int64_t dim, bool keepdim = false) const;
  Tensor amin(IntList dims, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor any(IntList dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor all(IntList dims, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1,
                                  bool descending = false) const;
  Tensor msort() const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var(IntList dims, bool unbiased = true, bool keepdim = false) const;
  Tensor var(int dim, bool unbiased = true, bool keepdim = false) const {  // t.var(0): a dim
    return var(static_cast<int64_t>(dim), unbiased, keepdim);
  }
  Tensor std(bool unbiased = true) const;
  Tensor std(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(IntList dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(int dim, bool unbiased = true, bool keepdim = false) const {  // t.std(0): a dim
    return std(static_cast<int64_t>(dim), unbiased, keepdim);
  }
  Tensor logsumexp(IntList dims, bool keepdim = false) const;
  Tensor norm() const;
  Tensor norm(double p, IntList dims = {}, bool keepdim = false) const;

  // ---- shape and views (view-returning ops alias this tensor's storage)
  Tensor view(IntList sizes) const;
  Tensor reshape(IntList sizes) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor permute(IntList dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor expand(IntList sizes) const;
  Tensor expand_as(const Tensor& o) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true) const;
  // libtorch's indexing (lt/indexing.h): integers, Slice, None, Ellipsis, bool, integer and
  // bool tensors. Basic indices give a view; tensor indices gather into a new tensor.
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  // Writes v (broadcast, converted to this dtype) where index() would read; accumulate adds,
  // and duplicate tensor indices then add up (without it the last write wins).
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& v,
                     bool accumulate = false) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& v,
                     bool accumulate = false) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& v) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& v) const;
  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor operator[](const Tensor& index) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& v) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& v) const;  // v: a 0-d tensor
  Tensor& masked_fill_(const Tensor& mask, const Scalar& v) const;
  Tensor& masked_fill_(const Tensor& mask, const Tensor& v) const;
  Tensor nonzero() const;
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntList sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  Tensor narrow_copy(int64_t dim, int64_t start, int64_t length) const;
  Tensor flip(IntList dims) const;
  Tensor roll(IntList shifts, IntList dims = {}) const;
  Tensor cumsum(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor outer(const Tensor& o) const;
  // libtorch's method spellings of ops above (src/api/libtorch_extras.cpp); an in-place form
  // writes the result into this tensor, whose dtype must hold it (as add_).
  Tensor dot(const Tensor& o) const;
  Tensor vdot(const Tensor& o) const;
  Tensor inner(const Tensor& o) const;
  Tensor mv(const Tensor& v) const;
  Tensor addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor& addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
                 const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                 const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                const Scalar& alpha = 1) const;
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                     const Scalar& alpha = 1) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, bool include_self = true) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor take_along_dim(const Tensor& index, std::optional<int64_t> dim = std::nullopt) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor count_nonzero(IntList dims = {}) const;
  Tensor count_nonzero(int64_t dim) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor xlogy(const Tensor& y) const;
  Tensor xlogy(const Scalar& y) const;
  Tensor copysign(const Tensor& o) const;
  Tensor copysign(const Scalar& o) const;
  Tensor heaviside(const Tensor& values) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntList indices, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntList sizes, int64_t dim = 0) const;
  Tensor unflatten(int64_t dim, IntList sizes) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor movedim(IntList source, IntList destination) const;
  std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
      bool return_inverse = false, bool return_counts = false,
      std::optional<int64_t> dim = std::nullopt) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight) const;
  Tensor& lerp_(const Tensor& end, const Tensor& weight) const;
  std::vector<Tensor> chunk(int64_t n, int64_t dim = 0) const;
  Tensor repeat(IntList repeats) const;

  // ---- linear algebra, nn
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // ---- autograd
  Tensor& requires_grad_(bool requires_grad = true) const;
  bool requires_grad() const;
  bool is_leaf() const;
  // Reverse-mode gradients of this tensor (a scalar, or with `gradient` of its shape) into the
  // .grad() of every leaf that requires grad (and of tensors that called retain_grad()). Without
  // retain_graph (default: create_graph) the values saved for the gradient are freed, and a
  // second backward through the same ops is an error, as in libtorch; create_graph records the
  // backward computation, for higher-order gradients.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // The backward node that produced this tensor; null for leaves and tensors without history.
  std::shared_ptr<autograd::Node> grad_fn() const;
  // Makes backward() fill .grad() of this non-leaf tensor too.
  const Tensor& retain_grad() const;
  bool retains_grad() const;
  uint32_t output_nr() const;  // which output of grad_fn() this tensor is
  int64_t _version() const;    // in-place writes so far to this tensor and its views
  Tensor grad() const;     // undefined until a backward reaches this leaf
  Tensor& mutable_grad();  // e.g. t.mutable_grad() = Tensor() to drop it
  Tensor detach() const;   // same data, no history
  Tensor& detach_() const;  // drops this tensor's history in place (a leaf, not requiring grad)
  Tensor data() const { return detach(); }  // libtorch's .data(): the values, no history
  Tensor& set_requires_grad(bool r) const { return requires_grad_(r); }
  // Makes this tensor (and every handle on it) hold new_data's value, device and dtype,
  // keeping its autograd identity (how Module::to moves parameters).
  void set_data(const Tensor& new_data);

  TensorImpl* impl() const { return impl_.get(); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }  // libtorch's spelling
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  void check_data_ptr(Dtype t) const;
  void copy_to_host(Dtype t, void* out) const;

  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace lt
