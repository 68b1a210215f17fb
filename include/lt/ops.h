// Free functions of the tensor API: factories, elementwise math, reductions, shape ops, linear
// algebra and the NN functions. Everything here works on every device.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lt/reduction.h"
#include "lt/tensor.h"
#include "lt/tensor_data.h"

namespace lt {

// ---- factories
template <typename T>
Tensor tensor(const std::vector<T>& data, IntList sizes);
template <typename T>
Tensor tensor(const std::vector<T>& data) {
  return tensor<T>(data, {static_cast<int64_t>(data.size())});
}
// Braced values, as libtorch's torch::tensor: tensor({1, 2}) is int64, tensor({true}) bool,
// tensor({{1.5, 2}, {3, 4}}) float32 (2x2), tensor(2.5) a 0-d float32; `o` may set the dtype,
// device and requires_grad (as in every factory here that takes options).
Tensor tensor(const TensorData& data, const TensorOptions& o = {});
// t converted to o's dtype and device, and a leaf requiring grad if o says so.
Tensor with_tensor_options(Tensor t, const TensorOptions& o);
// A vector of values with options, as libtorch's tensor(ArrayRef<T>, options): T's dtype
// unless o sets one; a dtype or a device alone is options too. (A template in O, so that
// tensor(data, {0}) stays the sizes overload.)
template <typename T, typename O,
          std::enable_if_t<std::is_same_v<O, TensorOptions> || std::is_same_v<O, Dtype> ||
                               std::is_same_v<O, Device>,
                           int> = 0>
Tensor tensor(const std::vector<T>& data, const O& o) {
  return with_tensor_options(tensor<T>(data), TensorOptions(o));
}
Tensor scalar_tensor(const Scalar& s, const TensorOptions& o = {});
Tensor empty(IntList sizes, const TensorOptions& o = {});
Tensor zeros(IntList sizes, const TensorOptions& o = {});
Tensor ones(IntList sizes, const TensorOptions& o = {});
Tensor full(IntList sizes, const Scalar& v, const TensorOptions& o = {});
Tensor arange(const Scalar& end, const TensorOptions& o = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              const TensorOptions& o = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& o = {});
Tensor eye(int64_t n, const TensorOptions& o = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& o = {});
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> o = std::nullopt);
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt);
// Wraps caller memory without copying (cpu only); the caller keeps it alive.
Tensor from_blob(void* data, IntList sizes, const TensorOptions& o = {});
Tensor from_blob(void* data, IntList sizes, IntList strides, const TensorOptions& o = {});

// ---- random (counter-based Philox-4x32-10: a seed gives the same numbers on every device)
void manual_seed(uint64_t seed);
Tensor rand(IntList sizes, const TensorOptions& o = {});
Tensor randn(IntList sizes, const TensorOptions& o = {});
Tensor randint(int64_t low, int64_t high, IntList sizes, const TensorOptions& o = kInt64);
Tensor randint(int64_t high, IntList sizes, const TensorOptions& o = kInt64);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
Tensor bernoulli(const Tensor& like, double p);  // float 0/1 mask with P(1) = p

// ---- elementwise
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& b);
Tensor pow(const Scalar& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// fmod: a - trunc(a / b) * b, the sign of a (C's fmod); remainder: a - floor(a / b) * b, the sign
// of b (Python's %, and Tensor's operator%). Integer division by zero is an error when the
// divisor's values are known (eager, or lazy device data); a zero computed inside a lazy graph
// gives 0.
// Elementwise math composed of primitives (src/api/math_composites.cpp); integer inputs give
// the default floating dtype, as PyTorch's.
Tensor tan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor trunc(const Tensor& x);  // toward zero; integers unchanged
Tensor frac(const Tensor& x);   // x - trunc(x)
Tensor erfinv(const Tensor& x);  // the inverse of erf (float64 inside, rounded once)
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor sgn(const Tensor& x);  // sign, for real tensors
// NaN to `nan` (0), +-inf to `posinf`/`neginf` (the dtype's largest finite values).
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = 0.0,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor atan2(const Tensor& y, const Tensor& x);
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Scalar& b);
Tensor heaviside(const Tensor& x, const Tensor& values);  // values where x == 0
Tensor xlogy(const Tensor& x, const Tensor& y);           // 0 where x == 0 (unless y is NaN)
Tensor xlogy(const Tensor& x, const Scalar& y);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Bounds as tensors (broadcast); either may be absent.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max = std::nullopt);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor remainder(const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
// The elementwise unary ops of the registry (the U rows of lt/ops.def): lt::exp(t), ...
#define U(Name, ident, ...) Tensor ident(const Tensor& t);
#include "lt/ops.def"
#undef U
Tensor gelu(const Tensor& t, const std::string& approximate = "none");
Tensor silu(const Tensor& t);
Tensor square(const Tensor& t);
Tensor allclose_mask(const Tensor& a, const Tensor& b, double rtol, double atol);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
bool equal(const Tensor& a, const Tensor& b);  // same sizes and values (dtypes promote)

// ---- reductions
Tensor sum(const Tensor& t);
Tensor sum(const Tensor& t, IntList dims, bool keepdim = false);
Tensor mean(const Tensor& t);
Tensor mean(const Tensor& t, IntList dims, bool keepdim = false);
Tensor prod(const Tensor& t);
Tensor prod(const Tensor& t, IntList dims, bool keepdim = false);
Tensor amax(const Tensor& t, IntList dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, IntList dims = {}, bool keepdim = false);
// True where any element over dims is nonzero (NaN counts); false over an empty set.
Tensor any(const Tensor& t, IntList dims = {}, bool keepdim = false);
// True where every element over dims is nonzero (NaN counts); true over an empty set.
Tensor all(const Tensor& t, IntList dims = {}, bool keepdim = false);
Tensor max(const Tensor& t);
std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
// Sorting (src/api/sort.cpp), over the Argsort primitive: stable, NaN above every number.
// (values, indices) as libtorch; sort(x, stable, dim, descending) is libtorch's other overload.
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& t, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
Tensor msort(const Tensor& t);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
// The lower median (of an even count, the smaller middle value); NaN when the slice has one.
Tensor median(const Tensor& t);
std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
// Running maximum/minimum along dim and where it was attained (the latest position on ties).
std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
Tensor min(const Tensor& t);
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& t);
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& t);
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor var(const Tensor& t, IntList dims = {}, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& t, IntList dims = {}, bool unbiased = true, bool keepdim = false);
Tensor logsumexp(const Tensor& t, IntList dims, bool keepdim = false);
Tensor norm(const Tensor& t);
// The p-norm over dims (all dims when empty): p = 2, 1, +-inf directly; any other p (0 counts
// non-zeros, negative p) as linalg::vector_norm.
Tensor norm(const Tensor& t, double p, IntList dims = {}, bool keepdim = false);

// ---- shape
Tensor reshape(const Tensor& t, IntList sizes);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor permute(const Tensor& t, IntList dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor t(const Tensor& t);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value);
// PyTorch's scatter_reduce: src's elements (as far as index reaches) reduced into t's at index
// along dim, reduce "sum", "prod", "mean" (integers: floor division), "amax" or "amin";
// include_self: t's own value takes part. amax/amin's gradient is shared
// evenly by the elements equal to the result, as PyTorch's.
Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t n, int64_t dim = 0);
Tensor pad(const Tensor& t, IntList pad, double value = 0);
// pad with a mode: (left, right) pairs from the last dim backwards, as PyTorch's F.pad; reflect
// mirrors without repeating the edge (each pad below the dim's size), replicate repeats the
// edge, circular wraps around (each pad at most the size). Constant takes `value`.
Tensor pad(const Tensor& t, IntList pad, PadMode mode, double value = 0);
// Shape, indexing, scan and linear-algebra composites (src/api/shape_composites.cpp).
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, IntList sizes, int64_t dim = 0);  // split_with_sizes
// `sections` nearly equal parts (the first n % sections one longer), or cut before `indices`.
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& t, IntList indices, int64_t dim = 0);
Tensor movedim(const Tensor& t, IntList source, IntList destination);
Tensor movedim(const Tensor& t, int64_t source, int64_t destination);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                             const std::string& indexing = "ij");
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor diag(const Tensor& x, int64_t diagonal = 0);  // 1-d: a matrix; 2-d: its diagonal
// x's last dim placed on the diagonal `offset` of dims (dim1, dim2) of a new tensor
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
Tensor narrow_copy(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor flip(const Tensor& x, IntList dims);
Tensor roll(const Tensor& x, IntList shifts, IntList dims = {});
Tensor repeat_interleave(const Tensor& x, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt);
// Element (slice) i repeated repeats[i] times (an int64 0-d or 1-d tensor; a data-dependent
// size: on the lazy device one sync, DataDependentSync). Without x: arange(n) repeated so.
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& repeats);
// The most frequent value of each slice along dim (of ties the smallest) and the last index
// where it occurs, as PyTorch's.
std::tuple<Tensor, Tensor> mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
Tensor take_along_dim(const Tensor& x, const Tensor& index,
                      std::optional<int64_t> dim = std::nullopt);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = 1);
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// x with every slice of `dim` named by the int64 index (0-d or 1-d; negative counts from the
// end) set to value (a Scalar, or a 0-d tensor, which then gets its gradient).
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value);
// dim split into `sizes` (one may be -1); a view where reshape gives one.
Tensor unflatten(const Tensor& x, int64_t dim, IntList sizes);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntList sizes, int64_t dim = 0);
// A data-dependent shape: on the lazy device it evaluates the mask (DataDependentSync).
Tensor masked_select(const Tensor& x, const Tensor& mask);
// The distinct values of x, sorted (x flattened), with what was asked: the inverse (for each
// element of x, its value's position in the result; x's shape) and each value's count; a tuple
// element not asked for is empty. libtorch's spellings: _unique2 (the same) and _unique (no
// counts). unique_consecutive keeps the first of each run of equal elements (of equal slices
// along dim when given; the inverse is then per slice). Data-dependent sizes: on the lazy device
// each is one sync (DataDependentSync).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false);
// The distinct slices of x along dim, in lexicographic order; the inverse maps each slice.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool sorted = true,
                                              bool return_inverse = false,
                                              bool return_counts = false);
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted = true,
                                            bool return_inverse = false,
                                            bool return_counts = false);
std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted = true,
                                   bool return_inverse = false);
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
Tensor count_nonzero(const Tensor& x, IntList dims = {});
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntList dims = {}, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntList dims = {}, bool unbiased = true,
                                    bool keepdim = false);
// Inclusive scans in log2(n) shifted adds/products: integers exact (accumulated in int64);
// floats summed in a tree order, so within log2(n) roundings of sum |x|, not bit-equal to a
// left-to-right loop.
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<Dtype> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<Dtype> dtype = std::nullopt);
Tensor repeat(const Tensor& t, IntList repeats);
Tensor broadcast_to(const Tensor& t, IntList sizes);
std::vector<int64_t> broadcast_shapes(IntList a, IntList b);

// ---- linear algebra and NN functions
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& m, const Tensor& v);
// 1-d products: dot and vdot (the same for real tensors) need equal sizes and one dtype; inner
// contracts the last dims ([.., k] and [.., k] -> a's leading dims then b's); 0-d multiplies.
Tensor dot(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);
Tensor inner(const Tensor& a, const Tensor& b);
// input + value * t1 * t2 and input + value * t1 / t2 (t1, t2 not both integers), broadcast.
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
// beta * input + alpha * (m1 @ m2); beta = 0 ignores input (NaN included), as PyTorch's.
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
              const Scalar& alpha = 1);  // the batch of products summed
Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t dim = 1, double eps = 1e-8);
Tensor pairwise_distance(const Tensor& a, const Tensor& b, double p = 2, double eps = 1e-6,
                         bool keepdim = false);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// libtorch's torch::batch_norm: input [N, C, ...] normalized per channel, then scaled by weight
// and shifted by bias ([C] each, or undefined). training: with the batch's mean and biased
// variance over every dim but C, and running_mean/running_var (when given) move towards the
// batch's mean and unbiased variance by `momentum`, in place; else with the running statistics.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled = false);
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {});
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b = {}, IntList stride = {1, 1},
              IntList padding = {0, 0}, IntList dilation = {1, 1}, int64_t groups = 1);
// [N, C, L] (or [C, L]) with weight [out, C / groups, k]: conv2d of a height-1 image.
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b = {}, IntList stride = {1},
              IntList padding = {0}, IntList dilation = {1}, int64_t groups = 1);
// libtorch's padding by name: "valid" (none) or "same" (each output as large as its input;
// stride 1 only; an odd total padding puts its extra element after the input, as PyTorch's).
// A string literal or std::string, never a braced list: conv1d(x, w, {}, {2}, {0}) stays sizes.
struct PaddingName {
  template <size_t N>
  PaddingName(const char (&s)[N]) : value(s) {}
  template <typename S, typename = std::enable_if_t<std::is_same_v<S, std::string>>>
  PaddingName(const S& s) : value(s) {}  // a template: no conversion from {0}
  std::string value;
};
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
              const PaddingName& padding, IntList dilation = {1, 1}, int64_t groups = 1);
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
              const PaddingName& padding, IntList dilation = {1}, int64_t groups = 1);
// einsum as torch.einsum: "bij,bjk->bik", an implicit output ("ij,jk"), "..." broadcast dims,
// repeated subscripts (diagonals), any number of operands (contracted left to right by bmm).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

// im2col / col2im (F::unfold / F::fold): x [N, C, H, W] (or [C, H, W]) -> [N, C kH kW, L], the
// values under each sliding window (L positions, zero padding), and back, summing overlaps.
Tensor im2col(const Tensor& x, IntList kernel_size, IntList dilation = {1, 1},
              IntList padding = {0, 0}, IntList stride = {1, 1});
Tensor col2im(const Tensor& x, IntList output_size, IntList kernel_size, IntList dilation = {1, 1},
              IntList padding = {0, 0}, IntList stride = {1, 1});
// The bags of embeddings of `input`: a 2-d input is one bag per row; a 1-d input is split into
// bags at `offsets` (bag b is input[offsets[b] : offsets[b + 1]]; with include_last_offset the
// last offset ends the last bag). Each bag's rows of `weight` are summed (scaled by
// per_sample_weights, sum mode only), averaged or maxed; entries equal to padding_idx are left
// out, and an empty bag gives zeros. Returns [bags, embedding_dim].
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = {},
                     EmbeddingBagMode mode = EmbeddingBagMode::Mean,
                     const Tensor& per_sample_weights = {}, bool include_last_offset = false,
                     std::optional<int64_t> padding_idx = std::nullopt);
// Alpha dropout keeps a SELU-normalized input at mean 0 and variance 1; the feature form drops
// whole channels of [N, C, ...].
Tensor alpha_dropout(const Tensor& x, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train);
// self's elements where mask (broadcast to self) is true, taken in order from source. On the
// cpu device a source with too few elements is an error; on lazy (where counting would cost a
// sync) the last element of source is repeated.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);

// The transposed convolutions (conv2d's adjoint in its input), libtorch's argument order: x
// [N, C_in, H, W] (or unbatched), weight [C_in, C_out / groups, kH, kW], output extent
// (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1, output_padding below the
// stride or the dilation.
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b = {},
                        IntList stride = {1, 1}, IntList padding = {0, 0},
                        IntList output_padding = {0, 0}, int64_t groups = 1,
                        IntList dilation = {1, 1});
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& b = {},
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        int64_t groups = 1, IntList dilation = {1});
// Pooling with libtorch's arguments (stride defaults to the kernel). ceil_mode: PyTorch's
// output size rule; avg: count_include_pad and divisor_override as PyTorch's.
Tensor max_pool2d(const Tensor& x, IntList kernel, IntList stride = {}, IntList padding = {0, 0},
                  IntList dilation = {1, 1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& x, IntList kernel, IntList stride = {}, IntList padding = {0, 0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
// Adaptive average pooling: output windows [floor(i * in / out), ceil((i + 1) * in / out)).
Tensor adaptive_avg_pool1d(const Tensor& x, IntList output_size);
Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size);
// (values, indices into each flattened input plane): the first maximum of each adaptive window,
// which alone takes the gradient, as PyTorch's.
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& x, IntList output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, IntList output_size);
// max_pool2d/max_pool1d and, for each output, the index of its maximum in the flattened input
// plane (H * W, or L): libtorch's return_indices (the first maximum of a window; NaN wins).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntList kernel,
                                                   IntList stride = {}, IntList padding = {0, 0},
                                                   IntList dilation = {1, 1},
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, IntList kernel,
                                                   IntList stride = {}, IntList padding = {0},
                                                   IntList dilation = {1}, bool ceil_mode = false);
// Resizing of [N, C, L], [N, C, H, W] or [N, C, D, H, W] by size or scale_factor: nearest and
// nearest-exact (any dtype), area, linear (3-d), bilinear or bicubic (4-d), trilinear (5-d), with
// or without align_corners, as PyTorch's F.interpolate.
Tensor interpolate(const Tensor& x, IntList size, const std::vector<double>& scale_factor = {},
                   InterpolateMode mode = InterpolateMode::Nearest,
                   std::optional<bool> align_corners = std::nullopt);
const char* interpolate_mode_name(InterpolateMode m);
Tensor max_pool1d(const Tensor& x, IntList kernel, IntList stride = {}, IntList padding = {0},
                  IntList dilation = {1}, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& x, IntList kernel, IntList stride = {}, IntList padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);
Tensor layer_norm(const Tensor& x, IntList normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor dropout(const Tensor& x, double p, bool train);
Tensor embedding(const Tensor& indices, const Tensor& weight);
Tensor one_hot(const Tensor& indices, int64_t num_classes);
// feature_dropout (alias dropout2d): zeroes whole channels of [N, C, ...] (or [C, H, W]).
Tensor feature_dropout(const Tensor& x, double p, bool train);
Tensor dropout2d(const Tensor& x, double p, bool train);

// ---- activations (composites; x > 0 picks the linear branch, as PyTorch's)
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
Tensor selu(const Tensor& x);
Tensor celu(const Tensor& x, double alpha = 1.0);
// x where beta * x > threshold, else log1p(exp(beta * x)) / beta.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor log_sigmoid(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor relu6(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor threshold(const Tensor& x, double threshold, double value);
Tensor glu(const Tensor& x, int64_t dim = -1);
Tensor softmin(const Tensor& x, int64_t dim);

// ---- losses. `reduction` is Reduction::None, Mean or Sum (or torch::kNone, kMean, kSum).
// Class-index targets may be [N] for input [N, C] or [N, d...] for [N, C, d...]; a target equal
// to ignore_index contributes nothing, and the mean divides by the summed weights of the rest.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, double label_smoothing = 0.0);
// Probability targets (floating, the input's shape) are also accepted.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const Tensor& weight,
                     int64_t reduction = Reduction::Mean, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& weight = {},
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& a, const Tensor& b, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& a, const Tensor& b, int64_t reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& a, const Tensor& b, int64_t reduction = Reduction::Mean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& a, const Tensor& b, int64_t reduction = Reduction::Mean,
                  double delta = 1.0);
// Ranking and embedding losses (PyTorch's definitions): max(0, -y (x1 - x2) + margin);
// 1 - cos(x1, x2) where y = 1 and max(0, cos - margin) where y = -1, cos over the last dim of
// [N, D] (or [D]) inputs; max(0, margin + d(a, p) - d(a, n)) with pairwise p-norm distances
// (swap: d(a, n) becomes min(d(a, n), d(p, n))).
Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                           double margin = 0.0, int64_t reduction = Reduction::Mean);
Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                             double margin = 0.0, int64_t reduction = Reduction::Mean);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2.0, double eps = 1e-6,
                           bool swap = false, int64_t reduction = Reduction::Mean);
// Probabilities in [0, 1]; each log is clamped at -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& x, const Tensor& y, const Tensor& weight = {},
                            int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y, const Tensor& weight = {},
                                        int64_t reduction = Reduction::Mean,
                                        const Tensor& pos_weight = {});
// input holds log-probabilities; target probabilities (or log-probabilities with log_target).
// Reduction::BatchMean (torch::kBatchMean) divides the sum by the batch size.
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
              bool log_target = false);
// Connectionist temporal classification: log_probs [T, N, C] (or [T, C]), targets padded [N, S]
// (or [S]) or concatenated [sum(target_lengths)]; lengths as lists or integer tensors (host
// tensors are checked; device tensors stay on the device, except for concatenated targets,
// whose lengths are read: a sync point on lazy). Mean divides each loss by its target length,
// then averages. zero_infinity: impossible alignments give 0 and no gradient. The gradient with
// respect to log_probs is PyTorch's (that of the logits of a log_softmax).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntList input_lengths,
                IntList target_lengths, int64_t blank = 0, int64_t reduction = Reduction::Mean,
                bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0,
                int64_t reduction = Reduction::Mean, bool zero_infinity = false);
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = {}, double dropout_p = 0,
                                    bool is_causal = false);

// ---- backward building blocks (autograd uses them; also usable directly)
// base with base.slice(dim, start, end, step) replaced by src.
Tensor slice_scatter(const Tensor& base, const Tensor& src, int64_t dim, int64_t start,
                     int64_t end, int64_t step = 1);
// params = {stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w} as conv2d's.
Tensor conv2d_grad_input(const Tensor& grad, const Tensor& w, IntList params, int64_t groups,
                         int64_t in_h, int64_t in_w);
Tensor conv2d_grad_weight(const Tensor& grad, const Tensor& x, IntList params, int64_t groups,
                          int64_t k_h, int64_t k_w);
// params = {kh, kw, sh, sw, ph, pw}.
Tensor max_pool2d_grad(const Tensor& grad, const Tensor& x, IntList params);
Tensor avg_pool2d_grad(const Tensor& grad, IntList params, int64_t in_h, int64_t in_w);

// ---- operators
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);  // remainder
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator%(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&&(const Tensor& a, const Tensor& b);
Tensor operator||(const Tensor& a, const Tensor& b);
Tensor operator!(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
// Bitwise ops of integer and bool tensors (src/api/bitwise.cpp); floats are an error.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Scalar& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Scalar& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Scalar& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Scalar& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, const Scalar& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Scalar& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Scalar& b);
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator<<(const Tensor& a, const Scalar& b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, const Scalar& b);
Tensor operator~(const Tensor& a);
Tensor& operator&=(Tensor& a, const Tensor& b);
Tensor& operator&=(Tensor& a, const Scalar& b);
Tensor& operator|=(Tensor& a, const Tensor& b);
Tensor& operator|=(Tensor& a, const Scalar& b);
Tensor& operator^=(Tensor& a, const Tensor& b);
Tensor& operator^=(Tensor& a, const Scalar& b);
Tensor& operator<<=(Tensor& a, const Tensor& b);
Tensor& operator<<=(Tensor& a, const Scalar& b);
Tensor& operator>>=(Tensor& a, const Tensor& b);
Tensor& operator>>=(Tensor& a, const Scalar& b);

// ---- runtime settings
void set_num_threads(int n);  // kernels and BLAS; default LT_NUM_THREADS or all cores
int get_num_threads();

// torch::linalg's norms. vector_norm: ord any real or +-inf (0 counts non-zeros), over `dim`
// (all dims by default). matrix_norm: "fro", 1, -1 (column sums), inf, -inf (row sums) over two
// dims, and the singular-value orders "nuc", 2, -2. norm: vector_norm or matrix_norm by the
// number of dims, as PyTorch's. svdvals: the singular values [..., min(m, n)], descending.
// Singular values are LAPACK's, on the host: on the lazy device a sync (DataDependentSync).
namespace linalg {
Tensor vector_norm(const Tensor& x, double ord = 2.0,
                   std::optional<std::vector<int64_t>> dim = std::nullopt, bool keepdim = false,
                   std::optional<Dtype> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& x, const std::string& ord = "fro",
                   std::vector<int64_t> dim = {-2, -1}, bool keepdim = false,
                   std::optional<Dtype> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& x, double ord, std::vector<int64_t> dim = {-2, -1},
                   bool keepdim = false, std::optional<Dtype> dtype = std::nullopt);
Tensor norm(const Tensor& x, std::optional<double> ord = std::nullopt,
            std::optional<std::vector<int64_t>> dim = std::nullopt, bool keepdim = false,
            std::optional<Dtype> dtype = std::nullopt);
Tensor norm(const Tensor& x, const std::string& ord,
            std::optional<std::vector<int64_t>> dim = std::nullopt, bool keepdim = false,
            std::optional<Dtype> dtype = std::nullopt);
Tensor svdvals(const Tensor& x);
}  // namespace linalg
// The sum of the singular values over the last two dims (or `dim`).
Tensor nuclear_norm(const Tensor& x, bool keepdim = false);
Tensor nuclear_norm(const Tensor& x, IntList dim, bool keepdim = false);

}  // namespace lt
