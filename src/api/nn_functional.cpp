// Linear algebra and NN functions. Everything but the matmul/conv/pool primitives is a
// composite of registry primitives, so lazy graphs fuse across it and autograd needs no formula.
#include <cmath>
#include <limits>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "ops/attrs.h"

namespace lt {
namespace {
using K = OpKind;

Tensor as_float(const Tensor& t) { return is_floating(t.dtype()) ? t : t.to(kFloat32); }

Tensor pool(K op, const Tensor& x, IntList kernel, IntList stride, IntList padding,
            IntList dilation, bool ceil_mode, bool count_include_pad, int64_t divisor) {
  const char* name = op_name(op);
  LT_CHECK(x.dim() == 3 || x.dim() == 4, name, ": expected a 3-d or 4-d input, got shape ",
           shape_str(x.sizes()));
  Dims k = pair_of(kernel, name, "kernel_size");
  Dims s = pair_of(stride, name, "stride", k);
  Dims p = pair_of(padding, name, "padding");
  Dims d = pair_of(dilation, name, "dilation");
  const OpAttrs a =
      PoolAttrs{k[0],   k[1], s[0], s[1], p[0], p[1], d[0], d[1], ceil_mode, count_include_pad,
                divisor}
          .attrs();
  if (x.dim() == 3) return call(op, {x.unsqueeze(0)}, a).squeeze(0);
  return call(op, {x}, a);
}

// A 1-d pool of (N, C, L) or (C, L) as the 2-d pool of a height-1 image.
Dims one_by(IntList v, const char* name, const char* what, int64_t fill) {
  LT_CHECK(v.size() <= 1, name, ": ", what, " must be one int for a 1-d pool, got ", shape_str(v));
  return {fill, v.empty() ? -1 : v[0]};
}
Tensor pool1d(K op, const Tensor& x, IntList kernel, IntList stride, IntList padding,
              IntList dilation, bool ceil_mode, bool count_include_pad) {
  const char* name = op == K::MaxPool2d ? "max_pool1d" : "avg_pool1d";
  LT_CHECK(x.dim() == 2 || x.dim() == 3, name, ": expected a 2-d or 3-d input, got shape ",
           shape_str(x.sizes()));
  LT_CHECK(!kernel.empty(), name, ": kernel_size is required");
  Dims k = one_by(kernel, name, "kernel_size", 1);
  Dims s = stride.empty() ? k : one_by(stride, name, "stride", 1);
  Dims p = one_by(padding.empty() ? IntList({0}) : padding, name, "padding", 0);
  Dims d = one_by(dilation.empty() ? IntList({1}) : dilation, name, "dilation", 1);
  return pool(op, x.unsqueeze(-2), k, s, p, d, ceil_mode, count_include_pad, 0).squeeze(-2);
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  LT_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: both arguments need at least 1 dim, got shapes ",
           shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  // Checked here so that the message names the caller's shapes, not the unsqueezed 2-d ones.
  const int64_t k = a.size(-1), k2 = b.dim() == 1 ? b.size(0) : b.size(-2);
  LT_CHECK(k == k2, "matmul: shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()),
           " cannot be multiplied (", k, " != ", k2, ")");
  if (a.dim() == 1 && b.dim() == 1)
    return call(K::Matmul, {a.unsqueeze(0), b.unsqueeze(1)}).reshape({});
  if (b.dim() == 1) return call(K::Matmul, {a, b.unsqueeze(1)}).squeeze(-1);
  if (a.dim() == 1) return call(K::Matmul, {a.unsqueeze(0), b}).squeeze(-2);
  return call(K::Matmul, {a, b});
}
Tensor mm(const Tensor& a, const Tensor& b) {
  LT_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-d matrices, got shapes ",
           shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  return call(K::Matmul, {a, b});
}
Tensor bmm(const Tensor& a, const Tensor& b) {
  LT_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0),
           "bmm: expected 3-d tensors with equal batch sizes, got shapes ", shape_str(a.sizes()),
           " and ", shape_str(b.sizes()));
  return call(K::Matmul, {a, b});
}
Tensor Tensor::matmul(const Tensor& o) const { return lt::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return lt::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return lt::bmm(*this, o); }

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  OpContext ctx("linear");
  LT_CHECK(w.defined() && w.dim() == 2, "linear: expected a 2-d weight [out, in], got ",
           w.defined() ? shape_str(w.sizes()) : std::string("undefined"));
  LT_CHECK(x.dim() >= 1 && x.size(-1) == w.size(1), "linear: input ", shape_str(x.sizes()),
           " has ", x.dim() ? x.size(-1) : 0, " features but weight ", shape_str(w.sizes()),
           " expects ", w.size(1));
  Tensor y = matmul(x, w.t());
  return b.defined() ? y + b : y;
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride, IntList padding,
              IntList dilation, int64_t groups) {
  LT_CHECK(x.dim() == 3 || x.dim() == 4, "conv2d: expected a 3-d or 4-d input, got shape ",
           shape_str(x.sizes()));
  Dims s = pair_of(stride, "conv2d", "stride");
  Dims p = pair_of(padding, "conv2d", "padding");
  Dims d = pair_of(dilation, "conv2d", "dilation");
  LT_CHECK(s[0] > 0 && s[1] > 0 && d[0] > 0 && d[1] > 0 && p[0] >= 0 && p[1] >= 0,
           "conv2d: stride ", shape_str(s), " and dilation ", shape_str(d),
           " must be positive and padding ", shape_str(p), " non-negative");
  const OpAttrs a = ConvAttrs{s[0], s[1], p[0], p[1], d[0], d[1], groups}.attrs();
  Tensor xb = x.dim() == 3 ? x.unsqueeze(0) : x;
  Tensor y = b.defined() ? call(K::Conv2d, {xb, w, b}, a) : call(K::Conv2d, {xb, w}, a);
  return x.dim() == 3 ? y.squeeze(0) : y;
}
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride, IntList padding,
              IntList dilation, int64_t groups) {
  OpContext ctx("conv1d");
  LT_CHECK(x.dim() == 2 || x.dim() == 3, "conv1d: expected a 2-d or 3-d input, got shape ",
           shape_str(x.sizes()));
  LT_CHECK(w.dim() == 3, "conv1d: expected a 3-d weight [out, in / groups, k], got shape ",
           shape_str(w.sizes()));
  auto one = [](IntList v, const char* what) {
    LT_CHECK(v.size() == 1, "conv1d: ", what, " must be one int, got ", shape_str(v));
    return v[0];
  };
  const int64_t s = one(stride, "stride"), p = one(padding, "padding"),
                d = one(dilation, "dilation");
  return conv2d(x.unsqueeze(-2), w.unsqueeze(-2), b, {1, s}, {0, p}, {1, d}, groups).squeeze(-2);
}

namespace {
// conv1d/conv2d with padding "valid" or "same" (spatial dims `nd`). For "same", each spatial
// dim pads dilation * (k - 1) in all: half before and after, and an odd one more element after
// (a zero pad of the input, then the symmetric padding in the convolution).
Tensor conv_named_padding(const char* op, int64_t nd, const Tensor& x, const Tensor& w,
                          const Tensor& b, IntList stride, const std::string& padding,
                          IntList dilation, int64_t groups) {
  OpContext ctx(op);
  LT_CHECK(padding == "same" || padding == "valid", op,
           ": padding must be \"same\", \"valid\" or sizes, got \"", padding, "\"");
  auto conv = [&](const Tensor& in, IntList p) {
    return nd == 2 ? conv2d(in, w, b, stride, p, dilation, groups)
                   : conv1d(in, w, b, stride, p, dilation, groups);
  };
  const std::vector<int64_t> none(static_cast<size_t>(nd), 0);
  if (padding == "valid") return conv(x, none);
  for (int64_t s : stride)
    LT_CHECK(s == 1, op, ": padding \"same\" needs stride 1, got stride ", shape_str(stride));
  LT_CHECK(w.dim() == nd + 2, op, ": expected a ", nd + 2, "-d weight, got shape ",
           shape_str(w.sizes()));
  LT_CHECK(dilation.size() == 1 || static_cast<int64_t>(dilation.size()) == nd, op,
           ": dilation must be one int or ", nd, ", got ", shape_str(dilation));
  std::vector<int64_t> before(static_cast<size_t>(nd)), extra;  // extra: pad's (before, after)
  bool odd = false;
  for (int64_t i = nd - 1; i >= 0; --i) {  // pad() lists the last dim first
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(i)];
    const int64_t total = d * (w.size(2 + i) - 1);
    before[static_cast<size_t>(i)] = total / 2;
    extra.insert(extra.end(), {0, total % 2});
    odd = odd || total % 2;
  }
  return conv(odd ? pad(x, extra) : x, before);
}
}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
              const PaddingName& padding, IntList dilation, int64_t groups) {
  return conv_named_padding("conv2d", 2, x, w, b, stride, padding.value, dilation, groups);
}
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
              const PaddingName& padding, IntList dilation, int64_t groups) {
  return conv_named_padding("conv1d", 1, x, w, b, stride, padding.value, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
                        IntList padding, IntList output_padding, int64_t groups, IntList dilation) {
  OpContext ctx("conv_transpose2d");
  const char* name = "conv_transpose2d";
  LT_CHECK(x.dim() == 3 || x.dim() == 4, name, ": expected a 3-d or 4-d input, got shape ",
           shape_str(x.sizes()));
  LT_CHECK(w.defined() && w.dim() == 4, name,
           ": expected a 4-d weight [C_in, C_out / groups, kH, kW], got ",
           w.defined() ? shape_str(w.sizes()) : std::string("undefined"));
  LT_CHECK(is_floating(x.dtype()) && w.dtype() == x.dtype(), name,
           ": expected floating-point input and weight of one dtype, got ", dtype_name(x.dtype()),
           " and ", dtype_name(w.dtype()));
  Tensor xb = x.dim() == 3 ? x.unsqueeze(0) : x;
  const int64_t C = xb.size(1);
  LT_CHECK(groups >= 1 && C % groups == 0, name, ": groups ", groups,
           " must divide the input channels ", C);
  LT_CHECK(w.size(0) == C, name, ": input ", shape_str(x.sizes()), " has ", C,
           " channels but weight ", shape_str(w.sizes()), " expects ", w.size(0));
  Dims s = pair_of(stride, name, "stride"), p = pair_of(padding, name, "padding");
  Dims op = pair_of(output_padding, name, "output_padding"),
       d = pair_of(dilation, name, "dilation");
  Dims out(2);
  for (int i = 0; i < 2; ++i) {
    LT_CHECK(s[i] > 0 && d[i] > 0 && p[i] >= 0 && op[i] >= 0, name, ": stride ", shape_str(s),
             " and dilation ", shape_str(d), " must be positive, padding ", shape_str(p),
             " and output_padding ", shape_str(op), " non-negative");
    LT_CHECK(op[i] < s[i] || op[i] < d[i], name, ": output_padding ", shape_str(op),
             " must be smaller than the stride ", shape_str(s), " or the dilation ", shape_str(d));
    out[i] = (xb.size(2 + i) - 1) * s[i] - 2 * p[i] + d[i] * (w.size(2 + i) - 1) + op[i] + 1;
  }
  LT_CHECK(out[0] > 0 && out[1] > 0, name, ": input ", shape_str(x.sizes()), " with weight ",
           shape_str(w.sizes()), ", stride ", shape_str(s), " and padding ", shape_str(p),
           " gives the empty output extent ", shape_str(out));
  const int64_t c_out = w.size(1) * groups;
  if (b.defined())
    LT_CHECK(b.dim() == 1 && b.size(0) == c_out, name, ": bias of shape ", shape_str(b.sizes()),
             " does not match ", c_out, " output channels");
  Tensor y = conv2d_grad_input(xb, w, {s[0], s[1], p[0], p[1], d[0], d[1]}, groups, out[0], out[1]);
  if (b.defined()) y = y + b.reshape({1, c_out, 1, 1});
  return x.dim() == 3 ? y.squeeze(0) : y;
}
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& b, IntList stride,
                        IntList padding, IntList output_padding, int64_t groups, IntList dilation) {
  OpContext ctx("conv_transpose1d");
  LT_CHECK(x.dim() == 2 || x.dim() == 3,
           "conv_transpose1d: expected a 2-d or 3-d input, got shape ", shape_str(x.sizes()));
  LT_CHECK(w.defined() && w.dim() == 3,
           "conv_transpose1d: expected a 3-d weight [C_in, C_out / groups, k], got ",
           w.defined() ? shape_str(w.sizes()) : std::string("undefined"));
  auto one = [](IntList v, const char* what) {
    LT_CHECK(v.size() == 1, "conv_transpose1d: ", what, " must be one int, got ", shape_str(v));
    return v[0];
  };
  return conv_transpose2d(x.unsqueeze(-2), w.unsqueeze(-2), b, {1, one(stride, "stride")},
                          {0, one(padding, "padding")}, {0, one(output_padding, "output_padding")},
                          groups, {1, one(dilation, "dilation")})
      .squeeze(-2);
}
Tensor max_pool2d(const Tensor& x, IntList k, IntList s, IntList p, IntList d, bool ceil_mode) {
  return pool(K::MaxPool2d, x, k, s, p, d, ceil_mode, true, 0);
}
Tensor avg_pool2d(const Tensor& x, IntList k, IntList s, IntList p, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  LT_CHECK(!divisor_override || *divisor_override != 0, "avg_pool2d: divisor must be not zero");
  return pool(K::AvgPool2d, x, k, s, p, {1, 1}, ceil_mode, count_include_pad,
              divisor_override.value_or(0));
}
Tensor max_pool1d(const Tensor& x, IntList k, IntList s, IntList p, IntList d, bool ceil_mode) {
  return pool1d(K::MaxPool2d, x, k, s, p, d, ceil_mode, true);
}
Tensor avg_pool1d(const Tensor& x, IntList k, IntList s, IntList p, bool ceil_mode,
                  bool count_include_pad) {
  return pool1d(K::AvgPool2d, x, k, s, p, {1}, ceil_mode, count_include_pad);
}

Tensor softmax(const Tensor& t, int64_t dim) {
  OpContext ctx("softmax");
  if (is_storage_dtype(t.dtype()) && is_floating(t.dtype()))
    return in_compute_dtype(t, [&](const Tensor& t) { return softmax(t, dim); });
  Tensor x = as_float(t);
  dim = wrap_dim(dim, x.dim(), "softmax");
  if (x.numel() == 0) return x.clone();
  Tensor e = exp(x - without_history(amax(x, dim, true)));  // softmax ignores the shift
  return e / sum(e, dim, true);
}
Tensor log_softmax(const Tensor& t, int64_t dim) {
  OpContext ctx("log_softmax");
  if (is_storage_dtype(t.dtype()) && is_floating(t.dtype()))
    return in_compute_dtype(t, [&](const Tensor& t) { return log_softmax(t, dim); });
  Tensor x = as_float(t);
  dim = wrap_dim(dim, x.dim(), "log_softmax");
  if (x.numel() == 0) return x.clone();
  const LogSoftmaxParts p = log_softmax_parts(x, dim);
  return p.shifted - p.log_sum;
}
LogSoftmaxParts log_softmax_parts(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor s = x - without_history(amax(x, dim, true));  // log_softmax ignores the shift
  return {s, log(sum(exp(s), dim, keepdim))};
}
Tensor Tensor::softmax(int64_t d) const { return lt::softmax(*this, d); }
Tensor Tensor::log_softmax(int64_t d) const { return lt::log_softmax(*this, d); }

Tensor layer_norm(const Tensor& x, IntList shape, const Tensor& w, const Tensor& b, double eps) {
  OpContext ctx("layer_norm");
  const int64_t k = static_cast<int64_t>(shape.size());
  bool ok = k >= 1 && k <= x.dim();
  for (int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == shape[i];
  LT_CHECK(ok, "layer_norm: normalized_shape ", shape_str(shape),
           " does not match the last dims of input shape ", shape_str(x.sizes()));
  if (w.defined())
    LT_CHECK(w.sizes().equals(shape), "layer_norm: weight ", shape_str(w.sizes()),
             " must have shape ", shape_str(shape));
  if (b.defined())
    LT_CHECK(b.sizes().equals(shape), "layer_norm: bias ", shape_str(b.sizes()),
             " must have shape ", shape_str(shape));
  Dims dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  return in_compute_dtype(x, [&](const Tensor& x) {
    Tensor mu = mean(x, dims, true);
    Tensor c = x - mu;
    Tensor y = c * rsqrt(mean(c * c, dims, true) + eps);
    if (w.defined()) y = y * w;
    if (b.defined()) y = y + b;
    return y;
  });
}

Tensor dropout(const Tensor& x, double p, bool train) {
  OpContext ctx("dropout");
  LT_CHECK(p >= 0 && p <= 1, "dropout: probability must be in [0, 1], got ", p);
  if (!train || p == 0) return x;
  if (p == 1) return x * 0.0;
  Tensor keep = rand_like(as_float(x)) >= p;
  return where(keep, x / (1.0 - p), 0.0);
}

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  OpContext ctx("embedding");
  LT_CHECK(weight.dim() == 2, "embedding: expected a 2-d weight [num, dim], got ",
           shape_str(weight.sizes()));
  Dims out(indices.sizes());
  out.push_back(weight.size(1));
  return index_select(weight, 0, indices.reshape({-1})).reshape(out);
}

Tensor one_hot(const Tensor& indices, int64_t n) {
  OpContext ctx("one_hot");
  LT_CHECK(!is_floating(indices.dtype()), "one_hot: expected integer class indices, got ",
           dtype_name(indices.dtype()));
  LT_CHECK(n > 0, "one_hot: num_classes must be positive, got ", n);
  if (indices.numel() > 0) {
    // As PyTorch does, the class range is read at the call (on the lazy device a computed
    // index tensor is observed: one small graph).
    Tensor v = known_values(indices);
    if (!v.defined()) v = indices;
    const int64_t lo = v.min().item().to<int64_t>(), hi = v.max().item().to<int64_t>();
    LT_CHECK(lo >= 0, "one_hot: class values must be non-negative, got ", lo);
    LT_CHECK(hi < n, "one_hot: class value ", hi, " is out of range for num_classes ", n);
  }
  return eq(indices.unsqueeze(-1), arange(n, TensorOptions(indices.device()).dtype(kInt64)))
      .to(kInt64);
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, double dropout_p, bool is_causal) {
  OpContext ctx("scaled_dot_product_attention");
  LT_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2 && q.size(-1) == k.size(-1) &&
               k.size(-2) == v.size(-2),
           "scaled_dot_product_attention: q ", shape_str(q.sizes()), ", k ", shape_str(k.sizes()),
           ", v ", shape_str(v.sizes()), " must be [..., L, E], [..., S, E], [..., S, Ev]");
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor s = matmul(q, k.transpose(-2, -1)) * scale;
  const double ninf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    TensorOptions o = TensorOptions(q.device()).dtype(kInt64);
    Tensor allowed = arange(q.size(-2), o).unsqueeze(1) >= arange(k.size(-2), o).unsqueeze(0);
    s = where(allowed, s, ninf);
  }
  if (mask.defined()) s = mask.dtype() == kBool ? where(mask, s, ninf) : s + mask;
  Tensor p = softmax(s, -1);
  if (dropout_p > 0) p = dropout(p, dropout_p, true);
  return matmul(p, v);
}

namespace {
// params: {stride_h, stride_w, pad_h, pad_w, dil_h, dil_w} (conv2d's order).
ConvAttrs conv_attrs(IntList p, int64_t groups, int64_t h, int64_t w) {
  LT_CHECK(p.size() == 6, "conv2d backward: expected 6 conv parameters, got ", p.size());
  return {p[0], p[1], p[2], p[3], p[4], p[5], groups, h, w};
}
// params: PoolAttrs::params() (kernel, stride, padding, dilation, ceil_mode, count_include_pad,
// divisor), or its first 6 (the rest default).
PoolAttrs pool_attrs(IntList p, int64_t h, int64_t w) {
  LT_CHECK(p.size() == 6 || p.size() == 11,
           "pool2d backward: expected 6 or 11 pooling parameters, got ", p.size());
  if (p.size() == 6) return {p[0], p[1], p[2], p[3], p[4], p[5], 1, 1, 0, 1, 0, h, w};
  return {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], h, w};
}
}  // namespace

Tensor conv2d_grad_input(const Tensor& g, const Tensor& w, IntList params, int64_t groups,
                         int64_t in_h, int64_t in_w) {
  return call(K::Conv2dGradInput, {g, w}, conv_attrs(params, groups, in_h, in_w).attrs());
}

Tensor conv2d_grad_weight(const Tensor& g, const Tensor& x, IntList params, int64_t groups,
                          int64_t k_h, int64_t k_w) {
  return call(K::Conv2dGradWeight, {g, x}, conv_attrs(params, groups, k_h, k_w).attrs());
}

Tensor max_pool2d_grad(const Tensor& g, const Tensor& x, IntList params) {
  return call(K::MaxPool2dGrad, {g, x}, pool_attrs(params, 0, 0).attrs());
}

Tensor avg_pool2d_grad(const Tensor& g, IntList params, int64_t in_h, int64_t in_w) {
  return call(K::AvgPool2dGrad, {g}, pool_attrs(params, in_h, in_w).attrs());
}

}  // namespace lt
