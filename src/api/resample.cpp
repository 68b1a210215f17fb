// Adaptive average and max pooling and interpolation (nearest, linear, bilinear), written as
// separable maps along each spatial dim: nearest is an index_select (exact, any dtype); linear
// weights and adaptive averages are a small [out, in] matrix applied by matmul, so both run on
// either device and differentiate through matmul/index_select. Weights and source positions follow
// PyTorch's formulas (area_pixel_compute_source_index and the adaptive start/end indices), in float
// as PyTorch computes them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"

namespace lt {
namespace {

// x with dim d (an index >= 2) mapped through m [out, in].
Tensor along(const Tensor& x, int64_t d, const std::vector<double>& m, int64_t out, int64_t in) {
  Tensor w = tensor(m, {out, in}).to(TensorOptions(x.dtype()).device(x.device()));
  return movedim(matmul(movedim(x, d, -1), w.t()), -1, d);
}

Tensor require_spatial(const Tensor& x, int64_t dims, const char* name) {
  LT_CHECK(x.dim() == dims + 2 || x.dim() == dims + 1, name, ": expected a ", dims + 1, "-d or ",
           dims + 2, "-d input, got shape ", shape_str(x.sizes()));
  LT_CHECK(is_floating(x.dtype()), name, ": expected a floating input, got ",
           dtype_name(x.dtype()));
  return x.dim() == dims + 1 ? x.unsqueeze(0) : x;
}

Tensor adaptive_avg(const Tensor& x0, IntList out, const char* name) {
  const int64_t k = static_cast<int64_t>(out.size());
  Tensor x = require_spatial(x0, k, name);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = 2 + j, in = x.size(d), o = out[j];
    LT_CHECK(o > 0 || (o == 0 && in == 0), name, ": output size must be positive, got ",
             shape_str(out));
    std::vector<double> m(static_cast<size_t>(o * in), 0.0);
    for (int64_t i = 0; i < o; ++i) {
      const int64_t s = (i * in) / o, e = ((i + 1) * in + o - 1) / o;
      for (int64_t c = s; c < e; ++c) m[i * in + c] = 1.0 / static_cast<double>(e - s);
    }
    x = along(x, d, m, o, in);
  }
  return x0.dim() == k + 1 ? x.squeeze(0) : x;
}

// PyTorch's source coordinate for output position i: align_corners maps the corner pixels onto
// each other, otherwise pixel centers, clamped at 0.
float source_index(int64_t i, int64_t in, int64_t out, bool align_corners,
                   std::optional<double> scale, bool cubic = false) {
  float s;
  if (align_corners)
    s = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  else
    s = scale ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
  if (align_corners) return s * static_cast<float>(i);
  const float src = s * (static_cast<float>(i) + 0.5f) - 0.5f;
  return src < 0 && !cubic ? 0.f : src;  // cubic keeps a negative position (its taps clamp)
}

// Bicubic's weights along one dim, PyTorch's (Keys' cubic convolution, A = -0.75, in float):
// four taps around floor(src), each clamped into the input.
void add_cubic_row(std::vector<double>& m, int64_t i, int64_t in, float src) {
  constexpr float a = -0.75f;
  auto inner = [&](float v) { return ((a + 2) * v - (a + 3)) * v * v + 1; };        // |v| <= 1
  auto outer = [&](float v) { return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a; };  // 1 < |v| < 2
  const float f = std::floor(src), t = src - f;
  const float w[4] = {outer(t + 1), inner(t), inner(1 - t), outer(2 - t)};
  for (int k = 0; k < 4; ++k) {
    const int64_t j = std::clamp<int64_t>(static_cast<int64_t>(f) - 1 + k, 0, in - 1);
    m[static_cast<size_t>(i * in + j)] += w[k];
  }
}

// Adaptive max pooling over the last k = out.size() dims: every output position's window (the
// adaptive start/end indices) gathered from the flattened plane by one index_select, padded to
// the largest window with repeats of its own first element (which cannot change the maximum),
// and its first maximum taken by argmax and gather, so the gradient goes to that element only,
// as PyTorch's. Returns (values, indices into the flattened plane).
std::tuple<Tensor, Tensor> adaptive_max(const Tensor& x0, IntList out, const char* name) {
  const int64_t k = static_cast<int64_t>(out.size());
  Tensor x = require_spatial(x0, k, name);
  std::vector<int64_t> in_sizes;
  int64_t plane = 1, positions = 1, window = 1;
  std::vector<std::vector<int64_t>> s(k), e(k);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t in = x.size(2 + j), o = out[j];
    LT_CHECK(o > 0 && in > 0, name, ": output size ", shape_str(out), " and input ",
             shape_str(x0.sizes()), " must be positive");
    int64_t widest = 0;
    for (int64_t i = 0; i < o; ++i) {
      s[j].push_back((i * in) / o);
      e[j].push_back(((i + 1) * in + o - 1) / o);
      widest = std::max(widest, e[j].back() - s[j].back());
    }
    in_sizes.push_back(in);
    plane *= in, positions *= o, window *= widest;
  }
  // idx[p * window + w]: for output position p (row-major), window element w (row-major within
  // the window, padded with the window's first element).
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(positions * window));
  for (int64_t p = 0; p < positions; ++p) {
    std::vector<int64_t> at(static_cast<size_t>(k));
    for (int64_t j = k - 1, r = p; j >= 0; --j)
      at[static_cast<size_t>(j)] = r % out[j], r /= out[j];
    std::vector<int64_t> cells = {0};
    for (int64_t j = 0; j < k; ++j) {
      std::vector<int64_t> next;
      for (int64_t c : cells)
        for (int64_t i = s[j][at[j]]; i < e[j][at[j]]; ++i) next.push_back(c * in_sizes[j] + i);
      cells = next;
    }
    for (int64_t w = 0; w < window; ++w)
      idx.push_back(cells[static_cast<size_t>(w) < cells.size() ? w : 0]);
  }
  Tensor table = tensor(idx, {positions, window}).to(x.device());
  const int64_t n = x.size(0), c = x.size(1);
  Tensor vals = x.reshape({n, c, plane})
                    .index_select(2, table.reshape({-1}))
                    .reshape({n, c, positions, window});
  Tensor best = vals.argmax(3, true);  // the first maximum, NaN above every number
  Tensor y = vals.gather(3, best).squeeze(3);
  Tensor where_in_plane = table.expand({n, c, positions, window}).gather(3, best).squeeze(3);
  std::vector<int64_t> shape = {n, c};
  shape.insert(shape.end(), out.begin(), out.end());
  y = y.reshape(shape);
  Tensor indices = where_in_plane.reshape(shape);
  if (x0.dim() == k + 1) return {y.squeeze(0), indices.squeeze(0)};
  return {y, indices};
}

}  // namespace

// max_pool2d's values (the primitive: its kernels and gradient) and where each came from: every
// window's cells as flat plane indices (cells in the padding point at a -inf appended to the
// plane), read without history, and the first maximum's index taken, as PyTorch's kernel does.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x0, IntList kernel, IntList stride,
                                                   IntList padding, IntList dilation,
                                                   bool ceil_mode) {
  const char* name = "max_pool2d_with_indices";
  OpContext ctx(name);
  Tensor y = max_pool2d(x0, kernel, stride, padding, dilation, ceil_mode);
  Tensor x = require_spatial(x0, 2, name);
  const Dims k = pair_of(kernel, name, "kernel_size"), s = pair_of(stride, name, "stride", k),
             p = pair_of(padding, name, "padding"), d = pair_of(dilation, name, "dilation");
  const int64_t h = x.size(2), w = x.size(3), oh = y.size(-2), ow = y.size(-1), plane = h * w;
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(oh * ow * k[0] * k[1]));
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t b = 0; b < k[1]; ++b) {
          const int64_t r = i * s[0] - p[0] + a * d[0], c = j * s[1] - p[1] + b * d[1];
          idx.push_back(r >= 0 && r < h && c >= 0 && c < w ? r * w + c : plane);
        }
  const int64_t n = x.size(0), ch = x.size(1), positions = oh * ow, window = k[0] * k[1];
  Tensor table = tensor(idx, {positions, window}).to(x.device());
  Tensor flat =
      without_history(cat({x.reshape({n, ch, plane}),
                           full({n, ch, 1}, -std::numeric_limits<double>::infinity(), x.options())},
                          2));
  Tensor best = flat.index_select(2, table.reshape({-1}))
                    .reshape({n, ch, positions, window})
                    .argmax(3, true);  // the first maximum, NaN above every number
  Tensor indices =
      table.expand({n, ch, positions, window}).gather(3, best).reshape({n, ch, oh, ow});
  return {y, x0.dim() == 3 ? indices.squeeze(0) : indices};
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, IntList kernel, IntList stride,
                                                   IntList padding, IntList dilation,
                                                   bool ceil_mode) {
  OpContext ctx("max_pool1d_with_indices");
  LT_CHECK(x.dim() == 2 || x.dim() == 3,
           "max_pool1d_with_indices: expected a 2-d or 3-d input, got shape ",
           shape_str(x.sizes()));
  auto one = [](IntList v, const char* what, int64_t fill) {
    LT_CHECK(v.size() <= 1, "max_pool1d_with_indices: ", what, " must be one int, got ",
             shape_str(v));
    return std::vector<int64_t>{fill, v.empty() ? -1 : v[0]};
  };
  LT_CHECK(!kernel.empty(), "max_pool1d_with_indices: kernel_size is required");
  const std::vector<int64_t> k = one(kernel, "kernel_size", 1),
                             s = stride.empty() ? k : one(stride, "stride", 1),
                             p = one(padding.empty() ? IntList({0}) : padding, "padding", 0),
                             d = one(dilation.empty() ? IntList({1}) : dilation, "dilation", 1);
  auto [y, i] = max_pool2d_with_indices(x.unsqueeze(-2), k, s, p, d, ceil_mode);
  return {y.squeeze(-2), i.squeeze(-2)};
}

Tensor adaptive_avg_pool1d(const Tensor& x, IntList output_size) {
  LT_CHECK(output_size.size() == 1, "adaptive_avg_pool1d: output_size must be one int, got ",
           shape_str(output_size));
  return adaptive_avg(x, output_size, "adaptive_avg_pool1d");
}
Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size) {
  LT_CHECK(output_size.size() == 2 || output_size.size() == 1,
           "adaptive_avg_pool2d: output_size must be 1 or 2 ints, got ", shape_str(output_size));
  std::vector<int64_t> o(output_size.begin(), output_size.end());
  if (o.size() == 1) o.push_back(o[0]);
  return adaptive_avg(x, IntList(o), "adaptive_avg_pool2d");
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& x, IntList output_size) {
  OpContext ctx("adaptive_max_pool1d");
  LT_CHECK(output_size.size() == 1, "adaptive_max_pool1d: output_size must be one int, got ",
           shape_str(output_size));
  return adaptive_max(x, output_size, "adaptive_max_pool1d");
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, IntList output_size) {
  OpContext ctx("adaptive_max_pool2d");
  return adaptive_max(x, pair_of(output_size, "adaptive_max_pool2d", "output_size"),
                      "adaptive_max_pool2d");
}

Tensor interpolate(const Tensor& x0, IntList size, const std::vector<double>& scale_factor,
                   InterpolateMode mode, std::optional<bool> align_corners) {
  const char* name = "interpolate";
  LT_CHECK(x0.dim() >= 3 && x0.dim() <= 5, name,
           ": expected a 3-d, 4-d or 5-d input [N, C, ...], got ", shape_str(x0.sizes()));
  const int64_t k = x0.dim() - 2;
  LT_CHECK(size.empty() != scale_factor.empty(), name,
           ": give exactly one of size and scale_factor");
  const bool nearest = mode == InterpolateMode::Nearest || mode == InterpolateMode::NearestExact;
  const bool cubic = mode == InterpolateMode::Bicubic && k == 2;
  const InterpolateMode linear = k == 1   ? InterpolateMode::Linear
                                 : k == 2 ? InterpolateMode::Bilinear
                                          : InterpolateMode::Trilinear;
  LT_CHECK(nearest || cubic || mode == InterpolateMode::Area || mode == linear, name, ": mode ",
           interpolate_mode_name(mode), " does not apply to a ", x0.dim(),
           "-d input (nearest, nearest-exact, area, and linear for 3-d, bilinear and bicubic "
           "for 4-d, trilinear for 5-d, are supported)");
  LT_CHECK(nearest || is_floating(x0.dtype()), name, ": ", interpolate_mode_name(mode),
           " needs a floating input, got ", dtype_name(x0.dtype()));
  LT_CHECK(!align_corners || !(nearest || mode == InterpolateMode::Area), name,
           ": align_corners applies only to linear modes");
  const int64_t given = static_cast<int64_t>(size.empty() ? scale_factor.size() : size.size());
  LT_CHECK(given == k || given == 1, name, ": expected ", k, " (or 1) sizes or scale factors for ",
           shape_str(x0.sizes()), ", got ", given);
  Tensor x = x0;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = 2 + j, in = x.size(d);
    std::optional<double> scale;
    int64_t out;
    if (!size.empty()) {
      out = size[given == 1 ? 0 : j];
    } else {
      scale = scale_factor[given == 1 ? 0 : j];
      LT_CHECK(*scale > 0, name, ": scale_factor must be positive, got ", *scale);
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * *scale));
    }
    LT_CHECK(out > 0 && in > 0, name, ": input ", shape_str(x0.sizes()), " and output size ", out,
             " must be positive");
    if (mode == InterpolateMode::Area) {  // PyTorch's area: an adaptive average, one dim at a time
      Tensor y = movedim(x, d, -1);
      std::vector<int64_t> s(y.sizes().begin(), y.sizes().end());
      s.back() = out;
      x = movedim(adaptive_avg_pool1d(y.reshape({-1, 1, in}), {out}).reshape(IntList(s)), -1, d);
      continue;
    }
    if (nearest) {  // floor(i * in / out) (exact: floor((i + 0.5) * in / out)), in float as PyTorch
      const float s = scale ? static_cast<float>(1.0 / *scale)
                            : static_cast<float>(in) / static_cast<float>(out);
      const float half = mode == InterpolateMode::NearestExact ? 0.5f : 0.f;
      std::vector<int64_t> idx(static_cast<size_t>(out));
      for (int64_t i = 0; i < out; ++i)
        idx[i] =
            std::min(static_cast<int64_t>(std::floor((static_cast<float>(i) + half) * s)), in - 1);
      x = x.index_select(d, tensor(idx).to(x.device()));
      continue;
    }
    std::vector<double> m(static_cast<size_t>(out * in), 0.0);
    for (int64_t i = 0; cubic && i < out; ++i)
      add_cubic_row(m, i, in, source_index(i, in, out, align_corners.value_or(false), scale, true));
    for (int64_t i = 0; !cubic && i < out; ++i) {
      const float src = source_index(i, in, out, align_corners.value_or(false), scale);
      const int64_t i0 = static_cast<int64_t>(src), i1 = i0 + (i0 < in - 1 ? 1 : 0);
      const float l1 = src - static_cast<float>(i0), l0 = 1.f - l1;
      m[i * in + i0] += l0;
      m[i * in + i1] += l1;
    }
    x = along(x, d, m, out, in);
  }
  return x;
}

const char* interpolate_mode_name(InterpolateMode m) {
  switch (m) {
    case InterpolateMode::Nearest:
      return "nearest";
    case InterpolateMode::Linear:
      return "linear";
    case InterpolateMode::Bilinear:
      return "bilinear";
    case InterpolateMode::Bicubic:
      return "bicubic";
    case InterpolateMode::Trilinear:
      return "trilinear";
    case InterpolateMode::Area:
      return "area";
    case InterpolateMode::NearestExact:
      return "nearest-exact";
  }
  return "?";
}

}  // namespace lt
