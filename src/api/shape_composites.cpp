// Shape, indexing, scan and linear-algebra ops composed of the registry's primitives (views,
// cat, gather/scatter, matmul, elementwise), so each fuses on the lazy device and differentiates
// through its parts. Scans are Hillis-Steele: log2(n) shifted adds (or products) of the whole
// tensor, elementwise and exact for integers.
#include <algorithm>
#include <numeric>

#include "api/dispatch.h"
#include "api/shift.h"
#include "core/check.h"
#include "core/metrics.h"
#include "core/shape.h"
#include "lt/indexing.h"
#include "lt/ops.h"

namespace lt {

Tensor shifted(const Tensor& y, int64_t dim, int64_t k, double fill) {
  const int64_t n = y.size(dim);
  if (k >= n) return full_like(y, fill);
  std::vector<int64_t> zs(y.sizes().begin(), y.sizes().end());
  zs[dim] = k;
  return cat({full(IntList(zs), fill, y.options()), y.narrow(dim, 0, n - k)}, dim);
}

namespace {

// A [1, .., n, .., 1] view of a 1-d index over `dim`, expanded to `sizes`.
Tensor index_along(const Tensor& index, int64_t dim, IntList sizes) {
  std::vector<int64_t> shape(sizes.size(), 1);
  shape[dim] = index.numel();
  std::vector<int64_t> full(sizes.begin(), sizes.end());
  full[dim] = index.numel();
  return index.reshape(IntList(shape)).expand(IntList(full));
}

Tensor scan(const Tensor& x, int64_t dim, std::optional<Dtype> dtype, bool product,
            const char* op) {
  Tensor y = x;
  if (dtype)
    y = y.to(*dtype);
  else if (!is_floating(y.dtype()))
    y = y.to(kInt64);  // integer and bool scans accumulate in int64, as PyTorch's
  if (y.dim() == 0) return y.clone();
  const int64_t d = wrap_dim(dim, y.dim(), op);
  const int64_t n = y.size(d);
  for (int64_t k = 1; k < n; k *= 2)
    y = product ? y * shifted(y, d, k, 1.0) : y + shifted(y, d, k, 0.0);
  return n <= 1 ? y.clone() : y;
}

std::vector<Tensor> atleast(const std::vector<Tensor>& ts, int64_t rank) {
  std::vector<Tensor> r;
  for (const Tensor& t : ts) {
    Tensor u = t;
    if (rank >= 1 && u.dim() == 0) u = u.reshape({1});
    if (rank >= 2 && u.dim() == 1) u = u.unsqueeze(0);
    if (rank >= 3 && u.dim() == 2) u = u.unsqueeze(-1);
    r.push_back(u);
  }
  return r;
}

}  // namespace

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim(), "unbind");
  std::vector<Tensor> r;
  for (int64_t i = 0; i < t.size(d); ++i) r.push_back(t.select(d, i));
  return r;
}

std::vector<Tensor> split(const Tensor& t, IntList sizes, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim(), "split");
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  LT_CHECK(total == t.size(d), "split: sizes ", shape_str(sizes), " add up to ", total,
           ", but dim ", d, " of shape ", shape_str(t.sizes()), " has ", t.size(d));
  std::vector<Tensor> r;
  int64_t off = 0;
  for (int64_t s : sizes) {
    LT_CHECK(s >= 0, "split: negative size in ", shape_str(sizes));
    r.push_back(t.narrow(d, off, s));
    off += s;
  }
  return r;
}

std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim) {
  LT_CHECK(sections > 0, "tensor_split: sections must be positive, got ", sections);
  const int64_t d = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t n = t.size(d), base = n / sections, extra = n % sections;
  std::vector<Tensor> r;
  int64_t off = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);  // the first n % sections get one more
    r.push_back(t.narrow(d, off, len));
    off += len;
  }
  return r;
}

std::vector<Tensor> tensor_split(const Tensor& t, IntList indices, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t n = t.size(d);
  std::vector<Tensor> r;
  int64_t start = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t stop = i < indices.size() ? indices[i] : n;
    if (stop < 0) stop += n;
    stop = std::clamp<int64_t>(stop, 0, n);
    const int64_t s = std::min(start, n);
    r.push_back(t.narrow(d, s, std::max<int64_t>(stop - s, 0)));
    start = std::max(start, stop);
  }
  return r;
}

Tensor movedim(const Tensor& t, IntList source, IntList destination) {
  LT_CHECK(source.size() == destination.size(), "movedim: ", source.size(), " source dims but ",
           destination.size(), " destinations");
  const int64_t nd = t.dim();
  std::vector<int64_t> perm(nd, -1);
  std::vector<bool> used(nd, false), placed(nd, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], nd, "movedim"),
                  e = wrap_dim(destination[i], nd, "movedim");
    LT_CHECK(!used[s] && !placed[e], "movedim: repeated dim in ", shape_str(source), " or ",
             shape_str(destination));
    perm[e] = s;
    used[s] = placed[e] = true;
  }
  int64_t next = 0;
  for (int64_t e = 0; e < nd; ++e) {
    if (placed[e]) continue;
    while (used[next]) ++next;
    perm[e] = next++;
  }
  return t.permute(IntList(perm));
}
Tensor movedim(const Tensor& t, int64_t source, int64_t destination) {
  return movedim(t, IntList{source}, IntList{destination});
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& ts) {
  std::vector<int64_t> shape;
  for (const Tensor& t : ts) shape = broadcast_shapes(shape, t.sizes());
  std::vector<Tensor> r;
  for (const Tensor& t : ts) r.push_back(t.expand(shape));
  return r;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& ts, const std::string& indexing) {
  LT_CHECK(indexing == "ij" || indexing == "xy",
           "meshgrid: indexing must be \"ij\" or \"xy\", "
           "got \"",
           indexing, "\"");
  std::vector<int64_t> shape;
  for (const Tensor& t : ts) {
    LT_CHECK(t.dim() <= 1, "meshgrid: expects 0-d or 1-d tensors, got shape ",
             shape_str(t.sizes()));
    shape.push_back(t.numel());
  }
  const bool xy = indexing == "xy" && ts.size() >= 2;
  if (xy) std::swap(shape[0], shape[1]);
  std::vector<Tensor> r;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::vector<int64_t> view(ts.size(), 1);
    size_t at = i;
    if (xy && i < 2) at = 1 - i;
    view[at] = ts[i].numel();
    r.push_back(ts[i].reshape(IntList(view)).expand(IntList(shape)));
  }
  return r;
}

Tensor hstack(const std::vector<Tensor>& ts) {
  std::vector<Tensor> a = atleast(ts, 1);
  return cat(a, a.empty() || a[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& ts) { return cat(atleast(ts, 2), 0); }
Tensor dstack(const std::vector<Tensor>& ts) { return cat(atleast(ts, 3), 2); }

Tensor outer(const Tensor& a, const Tensor& b) {
  LT_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expects 1-d tensors, got ", shape_str(a.sizes()),
           " and ", shape_str(b.sizes()));
  return a.unsqueeze(1) * b.unsqueeze(0);
}
Tensor mv(const Tensor& m, const Tensor& v) {
  LT_CHECK(m.dim() == 2 && v.dim() == 1, "mv: expects a matrix and a vector, got ",
           shape_str(m.sizes()), " and ", shape_str(v.sizes()));
  return matmul(m, v);
}

namespace {
Tensor scaled_sum(const Tensor& input, const Tensor& prod, const Scalar& beta,
                  const Scalar& alpha) {
  Tensor p = alpha.to_double() == 1.0 ? prod : prod * alpha;
  if (beta.to_double() == 0.0) return p.expand(broadcast_shapes(input.sizes(), p.sizes()));
  return (beta.to_double() == 1.0 ? input : input * beta) + p;  // beta = 0 ignores NaN input
}
}  // namespace

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  LT_CHECK(m1.dim() == 2 && m2.dim() == 2, "addmm: expects matrices, got ", shape_str(m1.sizes()),
           " and ", shape_str(m2.sizes()));
  return scaled_sum(input, mm(m1, m2), beta, alpha);
}
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  return scaled_sum(input, bmm(b1, b2), beta, alpha);
}
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha) {
  return scaled_sum(input, bmm(b1, b2).sum(0), beta, alpha);
}

namespace {
// cols - rows over x's last two dims ([n, 1] - [1, m] broadcast): which diagonal each element is
// on.
Tensor diagonal_index(int64_t n, int64_t m, Device d) {
  const TensorOptions o = TensorOptions(d).dtype(kInt64);
  return arange(m, o).unsqueeze(0) - arange(n, o).unsqueeze(1);
}
Tensor triangle(const char* op, const Tensor& x, bool lower, int64_t diagonal) {
  LT_CHECK(x.dim() >= 2, op, ": expects at least 2 dims, got shape ", shape_str(x.sizes()));
  Tensor k = diagonal_index(x.size(-2), x.size(-1), x.device());
  return where(lower ? k <= diagonal : k >= diagonal, x, zeros({}, x.options()));
}
}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, true, diagonal); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, false, diagonal); }

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t d1 = wrap_dim(dim1, x.dim(), "diagonal"), d2 = wrap_dim(dim2, x.dim(), "diagonal");
  LT_CHECK(d1 != d2, "diagonal: dim1 and dim2 are both ", d1);
  Tensor y = movedim(x, IntList{d1, d2}, IntList{-2, -1});
  const int64_t n = y.size(-2), m = y.size(-1);
  const int64_t r0 = offset < 0 ? std::min(-offset, n) : 0,
                c0 = offset > 0 ? std::min(offset, m) : 0;
  const int64_t len = std::max<int64_t>(0, std::min(n - r0, m - c0));
  y = y.narrow(-2, r0, len).narrow(-1, c0, len);
  std::vector<int64_t> lead(y.sizes().begin(), y.sizes().end() - 2);
  std::vector<int64_t> flat = lead;
  flat.push_back(len * len);
  Tensor f = y.reshape(IntList(flat));
  return len == 0 ? f : f.slice(-1, 0, len * len, len + 1);
}

Tensor diag(const Tensor& x, int64_t diagonal) {
  if (x.dim() == 2) return lt::diagonal(x, diagonal, 0, 1);
  LT_CHECK(x.dim() == 1, "diag: expects a 1-d or 2-d tensor, got shape ", shape_str(x.sizes()));
  const int64_t k = std::abs(diagonal), n = x.numel() + k;
  Tensor v = pad(x, {0, k});  // entry i of the diagonal, for row i (above) or column i (below)
  Tensor vals = diagonal >= 0 ? v.unsqueeze(1) : v.unsqueeze(0);
  return where(diagonal_index(n, n, x.device()) == diagonal, vals, zeros({}, x.options()));
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  LT_CHECK(x.dim() >= 1, "diag_embed: expects at least 1 dim, got a 0-d tensor");
  const int64_t r = x.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, r, "diag_embed"), d2 = wrap_dim(dim2, r, "diag_embed");
  LT_CHECK(d1 != d2, "diag_embed: dim1 and dim2 are both ", d1);
  const int64_t k = std::abs(offset), n = x.size(-1) + k;
  // As diag's: the last dim padded to n, entry i for row i (above) or column i (below).
  Tensor v = pad(x, {0, k});
  Tensor vals = offset >= 0 ? v.unsqueeze(-1) : v.unsqueeze(-2);
  Tensor m = where(diagonal_index(n, n, x.device()) == offset, vals, zeros({}, x.options()));
  return movedim(m, IntList{r - 2, r - 1}, IntList{d1, d2});
}

// Windows of `size` every `step` along dim, as a new last dim (libtorch's Tensor::unfold; a
// copy here, not a view: index_select of the window positions).
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "unfold");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  LT_CHECK(size >= 0 && size <= n, "unfold: size ", size, " is out of range for dim ", d,
           " of size ", n);
  LT_CHECK(step > 0, "unfold: step must be positive, got ", step);
  if (x.dim() == 0) return x.reshape({size});
  const int64_t windows = (n - size) / step + 1;
  const TensorOptions o = TensorOptions(x.device()).dtype(kInt64);
  Tensor at = (arange(windows, o).unsqueeze(1) * step + arange(size, o).unsqueeze(0)).reshape({-1});
  Tensor g = x.index_select(d, at);
  std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
  s[d] = windows;
  s.insert(s.begin() + d + 1, size);
  return movedim(g.reshape(IntList(s)), d + 1, -1);
}

Tensor pad(const Tensor& x, IntList pads, PadMode mode, double value) {
  if (mode == PadMode::Constant) return pad(x, pads, value);
  const char* name = mode == PadMode::Reflect     ? "pad (reflect)"
                     : mode == PadMode::Replicate ? "pad (replicate)"
                                                  : "pad (circular)";
  LT_CHECK(pads.size() % 2 == 0 && static_cast<int64_t>(pads.size()) / 2 <= x.dim(), name,
           ": expected (left, right) pairs for at most ", x.dim(), " dims, got ", shape_str(pads));
  Tensor y = x;
  for (size_t j = 0; j < pads.size() / 2; ++j) {
    const int64_t d = x.dim() - 1 - static_cast<int64_t>(j), n = y.size(d);
    const int64_t l = pads[2 * j], r = pads[2 * j + 1];
    LT_CHECK(l >= 0 && r >= 0, name, ": negative padding ", shape_str(pads), " is not supported");
    if (l == 0 && r == 0) continue;
    const int64_t limit = mode == PadMode::Reflect ? n - 1 : mode == PadMode::Circular ? n : -1;
    LT_CHECK(n > 0 && (limit < 0 || (l <= limit && r <= limit)), name, ": padding (", l, ", ", r,
             ") of dim ", d, " of size ", n, " must be at most ",
             mode == PadMode::Reflect ? "size - 1" : "the size");
    auto edge = [&](int64_t at, int64_t count) {
      std::vector<int64_t> s(y.sizes().begin(), y.sizes().end());
      s[d] = count;
      return y.narrow(d, at, 1).expand(IntList(s));
    };
    Tensor left, right;
    if (mode == PadMode::Reflect) {
      left = y.narrow(d, 1, l).flip({d});
      right = y.narrow(d, n - 1 - r, r).flip({d});
    } else if (mode == PadMode::Replicate) {
      left = edge(0, l);
      right = edge(n - 1, r);
    } else {
      left = y.narrow(d, n - l, l);
      right = y.narrow(d, 0, r);
    }
    y = cat({left, y, right}, d);
  }
  return y;
}

Tensor narrow_copy(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return x.narrow(dim, start, length).clone();
}

Tensor flip(const Tensor& x, IntList dims) {
  Tensor r = x;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, x.dim(), "flip");
    const int64_t n = x.size(d);
    if (n <= 1) continue;
    r = r.index_select(d, arange(n - 1, -1, -1, TensorOptions(x.device()).dtype(kInt64)));
  }
  return r.is_same(x) ? x.clone() : r;
}

Tensor roll(const Tensor& x, IntList shifts, IntList dims) {
  if (dims.empty()) {
    LT_CHECK(shifts.size() == 1, "roll: without dims, expects one shift, got ", shifts.size());
    return roll(x.flatten(), shifts, {0}).view(x.sizes());
  }
  LT_CHECK(shifts.size() == dims.size(), "roll: ", shifts.size(), " shifts for ", dims.size(),
           " dims");
  Tensor r = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], x.dim(), "roll");
    const int64_t n = x.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    r = cat({r.narrow(d, n - s, s), r.narrow(d, 0, n - s)}, d);
  }
  return r.is_same(x) ? x.clone() : r;
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  LT_CHECK(repeats >= 0, "repeat_interleave: repeats must be non-negative, got ", repeats);
  Tensor y = dim ? x : x.flatten();
  const int64_t d = dim ? wrap_dim(*dim, y.dim(), "repeat_interleave") : 0;
  if (y.dim() == 0) y = y.reshape({1});
  std::vector<int64_t> e(y.sizes().begin(), y.sizes().end());
  e.insert(e.begin() + d + 1, repeats);
  std::vector<int64_t> out(y.sizes().begin(), y.sizes().end());
  out[d] *= repeats;
  return y.unsqueeze(d + 1).expand(IntList(e)).reshape(IntList(out));
}

// Source index of each output position: the number of blocks that end at or before it (blocks
// end at cumsum(repeats)), counted by a scatter of ones at the ends and a running sum: O(total
// + n), where a comparison of every position with every end would be O(total * n).
Tensor repeat_interleave(const Tensor& repeats) {
  OpContext ctx("repeat_interleave");
  LT_CHECK(repeats.dim() <= 1 && repeats.dtype() == kInt64,
           "repeat_interleave: repeats must be a 0-d or 1-d int64 tensor, got ",
           dtype_name(repeats.dtype()), " of shape ", shape_str(repeats.sizes()));
  Tensor r = repeats.reshape({-1});
  const int64_t n = r.size(0);
  const TensorOptions longs = TensorOptions(r.device()).dtype(kInt64);
  if (n == 0) return zeros({0}, longs);
  if (r.device().type() != kCPU) metrics_impl::add("DataDependentSync");
  LT_CHECK(r.min().item<int64_t>() >= 0, "repeat_interleave: repeats must be non-negative");
  Tensor ends = cumsum(r, 0);
  const int64_t total = ends[n - 1].item<int64_t>();
  Tensor marks = zeros({total + 1}, longs).scatter_add(0, ends, ones({n}, longs));
  return cumsum(marks, 0).narrow(0, 0, total);
}
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  OpContext ctx("repeat_interleave");
  Tensor y = dim ? x : x.flatten();
  const int64_t d = dim ? wrap_dim(*dim, y.dim(), "repeat_interleave") : 0;
  if (y.dim() == 0) y = y.reshape({1});
  Tensor r = repeats.dim() == 0 ? repeats.expand({y.size(d)}) : repeats;
  LT_CHECK(r.dim() == 1 && r.size(0) == y.size(d), "repeat_interleave: repeats of shape ",
           shape_str(repeats.sizes()), " for dim ", d, " of size ", y.size(d));
  return y.index_select(d, repeat_interleave(r.to(y.device())));
}
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim) const {
  return lt::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::movedim(IntList source, IntList destination) const {
  return lt::movedim(*this, source, destination);
}

Tensor take_along_dim(const Tensor& x, const Tensor& index, std::optional<int64_t> dim) {
  if (!dim) return x.flatten().gather(0, index.flatten());
  LT_CHECK(x.dim() == index.dim(), "take_along_dim: input of shape ", shape_str(x.sizes()),
           " and indices of shape ", shape_str(index.sizes()), " need the same number of dims");
  const int64_t d = wrap_dim(*dim, x.dim(), "take_along_dim");
  std::vector<int64_t> xs(x.sizes().begin(), x.sizes().end()),
      is(index.sizes().begin(), index.sizes().end());
  xs[d] = is[d] = 1;
  std::vector<int64_t> b = broadcast_shapes(xs, is);
  std::vector<int64_t> bx(b.begin(), b.end()), bi(b.begin(), b.end());
  bx[d] = x.size(d);
  bi[d] = index.size(d);
  return x.expand(IntList(bx)).gather(d, index.expand(IntList(bi)));
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha) {
  const int64_t d = wrap_dim(dim, x.dim(), "index_add");
  LT_CHECK(index.dim() <= 1 && source.dim() == x.dim() && source.size(d) == index.numel(),
           "index_add: index of shape ", shape_str(index.sizes()), " and source of shape ",
           shape_str(source.sizes()), " do not fit dim ", d, " of shape ", shape_str(x.sizes()));
  Tensor s = alpha.to_double() == 1.0 ? source : source * alpha;
  return x.scatter_add(d, index_along(index, d, source.sizes()), s.to(x.dtype()));
}
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = wrap_dim(dim, x.dim(), "index_copy");
  LT_CHECK(index.dim() <= 1 && source.dim() == x.dim() && source.size(d) == index.numel(),
           "index_copy: index of shape ", shape_str(index.sizes()), " and source of shape ",
           shape_str(source.sizes()), " do not fit dim ", d, " of shape ", shape_str(x.sizes()));
  return x.scatter(d, index_along(index, d, source.sizes()), source.to(x.dtype()));
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  LT_CHECK(mask.dtype() == kBool, "masked_select: the mask must be bool, got ",
           dtype_name(mask.dtype()));
  std::vector<int64_t> s = broadcast_shapes(x.sizes(), mask.sizes());
  return x.expand(s).index({mask.expand(s)});
}

Tensor count_nonzero(const Tensor& x, IntList dims) { return (x != 0).sum(dims).to(kInt64); }

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntList dims, bool unbiased, bool keepdim) {
  return {var(x, dims, unbiased, keepdim), mean(x, dims, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntList dims, bool unbiased, bool keepdim) {
  return {sqrt(var(x, dims, unbiased, keepdim)), mean(x, dims, keepdim)};
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<Dtype> dtype) {
  return scan(x, dim, dtype, false, "cumsum");
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<Dtype> dtype) {
  return scan(x, dim, dtype, true, "cumprod");
}

Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t dim, double eps) {
  Tensor num = (a * b).sum({dim});
  Tensor den = ((a * a).sum({dim}) * (b * b).sum({dim})).clamp_min(eps * eps).sqrt();
  return num / den;
}
Tensor pairwise_distance(const Tensor& a, const Tensor& b, double p, double eps, bool keepdim) {
  Tensor d = a - b + eps;
  return norm(d, p, {-1}, keepdim);
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  LT_CHECK(x.dim() >= 2 && num_groups > 0 && x.size(1) % num_groups == 0,
           "group_norm: ", x.dim() >= 2 ? x.size(1) : 0, " channels (shape ", shape_str(x.sizes()),
           ") do not divide into ", num_groups, " groups");
  const int64_t n = x.size(0), c = x.size(1);
  return in_compute_dtype(x, [&](const Tensor& x) {
    Tensor g = x.reshape({n, num_groups, -1});
    Tensor mu = g.mean({2}, true);
    Tensor v = var(g, {2}, false, true);
    Tensor y = ((g - mu) * (v + eps).rsqrt()).reshape(x.sizes());
    std::vector<int64_t> ch(x.dim(), 1);
    ch[1] = c;
    if (weight.defined()) y = y * weight.reshape(IntList(ch));
    if (bias.defined()) y = y + bias.reshape(IntList(ch));
    return y;
  });
}

namespace {
// x's last three dims [a, b, c] viewed as `split` (five sizes), permuted by `perm` (of those
// five) and merged into `out` (three sizes): how pixel_(un)shuffle move pixels.
Tensor regroup(const Tensor& x, std::initializer_list<int64_t> split,
               std::initializer_list<int64_t> perm, std::initializer_list<int64_t> out) {
  std::vector<int64_t> lead(x.sizes().begin(), x.sizes().end() - 3);
  const int64_t b = static_cast<int64_t>(lead.size());
  std::vector<int64_t> s = lead, p, o = lead;
  s.insert(s.end(), split);
  for (int64_t i = 0; i < b; ++i) p.push_back(i);
  for (int64_t v : perm) p.push_back(b + v);
  o.insert(o.end(), out);
  return x.reshape(IntList(s)).permute(IntList(p)).reshape(IntList(o));
}
}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  LT_CHECK(x.dim() >= 3 && r > 0 && x.size(-3) % (r * r) == 0,
           "pixel_shuffle: ", x.dim() >= 3 ? x.size(-3) : 0, " channels (shape ",
           shape_str(x.sizes()), ") are not divisible by upscale_factor^2 = ", r * r);
  const int64_t c = x.size(-3) / (r * r), h = x.size(-2), w = x.size(-1);
  return regroup(x, {c, r, r, h, w}, {0, 3, 1, 4, 2}, {c, h * r, w * r});
}
Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
  LT_CHECK(x.dim() >= 3 && r > 0 && x.size(-2) % r == 0 && x.size(-1) % r == 0,
           "pixel_unshuffle: height and width (shape ", shape_str(x.sizes()),
           ") must be divisible by downscale_factor = ", r);
  const int64_t c = x.size(-3), h = x.size(-2) / r, w = x.size(-1) / r;
  return regroup(x, {c, h, r, w, r}, {0, 2, 4, 1, 3}, {c * r * r, h, w});
}

std::vector<Tensor> Tensor::split(IntList sizes, int64_t dim) const {
  return lt::split(*this, sizes, dim);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return lt::unbind(*this, dim); }
Tensor Tensor::movedim(int64_t s, int64_t d) const { return lt::movedim(*this, s, d); }
Tensor Tensor::tril(int64_t k) const { return lt::tril(*this, k); }
Tensor Tensor::triu(int64_t k) const { return lt::triu(*this, k); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return lt::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const {
  return lt::unfold(*this, dim, size, step);
}
Tensor Tensor::narrow_copy(int64_t dim, int64_t start, int64_t length) const {
  return lt::narrow_copy(*this, dim, start, length);
}
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return lt::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::flip(IntList dims) const { return lt::flip(*this, dims); }
Tensor Tensor::roll(IntList shifts, IntList dims) const { return lt::roll(*this, shifts, dims); }
Tensor Tensor::cumsum(int64_t dim, std::optional<Dtype> dtype) const {
  return lt::cumsum(*this, dim, dtype);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<Dtype> dtype) const {
  return lt::cumprod(*this, dim, dtype);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return lt::masked_select(*this, mask); }
Tensor Tensor::outer(const Tensor& o) const { return lt::outer(*this, o); }

}  // namespace lt
