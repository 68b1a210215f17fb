// Composites of issue 17's remaining functionals: im2col/col2im (F::unfold/F::fold) as index maps
// built on the host, masked_scatter, alpha_dropout and feature_alpha_dropout, embedding_bag. Each
// is written over primitives, so the lazy device fuses it and autograd needs no formula of its
// own.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"

namespace lt {
namespace {

// Where each (kernel offset, output position) pair reads in the zero-padded image, as one
// linear index [kk * l] (offset-major, as PyTorch orders im2col's rows): kk kernel elements, l
// sliding positions; `padding` per side and the padded extents.
struct Im2colMap {
  Tensor index;
  int64_t kk = 0, l = 0, pad_h = 0, pad_w = 0;
  Dims padding;
};
Im2colMap im2col_map(const char* op, int64_t h, int64_t w, IntList kernel, IntList dilation,
                     IntList padding, IntList stride, Device dev) {
  const Dims k = pair_of(kernel, op, "kernel_size"), d = pair_of(dilation, op, "dilation");
  const Dims p = pair_of(padding, op, "padding"), s = pair_of(stride, op, "stride");
  LT_CHECK(k[0] > 0 && k[1] > 0 && d[0] > 0 && d[1] > 0 && s[0] > 0 && s[1] > 0 && p[0] >= 0 &&
               p[1] >= 0,
           op, ": kernel_size ", shape_str(k), ", dilation ", shape_str(d), " and stride ",
           shape_str(s), " must be positive, padding ", shape_str(p), " non-negative");
  Im2colMap m;
  m.padding = p;
  m.pad_h = h + 2 * p[0], m.pad_w = w + 2 * p[1];
  const int64_t out_h = (m.pad_h - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const int64_t out_w = (m.pad_w - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  LT_CHECK(m.pad_h >= d[0] * (k[0] - 1) + 1 && m.pad_w >= d[1] * (k[1] - 1) + 1 && out_h > 0 &&
               out_w > 0,
           op, ": the dilated kernel ", shape_str(k), " (dilation ", shape_str(d),
           ") does not fit the padded extent [", m.pad_h, ", ", m.pad_w, "]");
  m.kk = k[0] * k[1], m.l = out_h * out_w;
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(m.kk * m.l));
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j)
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t ow = 0; ow < out_w; ++ow)
          idx.push_back((oh * s[0] + i * d[0]) * m.pad_w + ow * s[1] + j * d[1]);
  m.index = tensor(idx, {static_cast<int64_t>(idx.size())}).to(dev);
  return m;
}

}  // namespace

Tensor im2col(const Tensor& x, IntList kernel_size, IntList dilation, IntList padding,
              IntList stride) {
  OpContext ctx("unfold");
  LT_CHECK(x.dim() == 3 || x.dim() == 4, "unfold (im2col): expected a 3-d or 4-d input, got shape ",
           shape_str(x.sizes()));
  Tensor xb = x.dim() == 3 ? x.unsqueeze(0) : x;
  const int64_t n = xb.size(0), c = xb.size(1);
  const Im2colMap m = im2col_map("unfold (im2col)", xb.size(2), xb.size(3), kernel_size, dilation,
                                 padding, stride, x.device());
  const int64_t ph = m.padding[0], pw = m.padding[1];
  Tensor padded = (ph || pw) ? pad(xb, {pw, pw, ph, ph}) : xb;
  Tensor cols = padded.reshape({n, c, m.pad_h * m.pad_w})
                    .index_select(2, m.index)
                    .reshape({n, c * m.kk, m.l});
  return x.dim() == 3 ? cols.squeeze(0) : cols;
}

Tensor col2im(const Tensor& x, IntList output_size, IntList kernel_size, IntList dilation,
              IntList padding, IntList stride) {
  OpContext ctx("fold");
  LT_CHECK(x.dim() == 2 || x.dim() == 3, "fold (col2im): expected a 2-d or 3-d input, got shape ",
           shape_str(x.sizes()));
  const Dims out = pair_of(output_size, "fold (col2im)", "output_size");
  Tensor xb = x.dim() == 2 ? x.unsqueeze(0) : x;
  const Im2colMap m = im2col_map("fold (col2im)", out[0], out[1], kernel_size, dilation, padding,
                                 stride, x.device());
  const int64_t l = m.l, kk = m.kk;
  LT_CHECK(xb.size(1) % kk == 0 && xb.size(2) == l, "fold (col2im): input ", shape_str(x.sizes()),
           " must be [N, C x ", kk, " (the kernel's elements), ", l,
           " (the sliding positions)] for output_size ", shape_str(out));
  const int64_t n = xb.size(0), c = xb.size(1) / kk;
  Tensor img = zeros({n, c, m.pad_h * m.pad_w}, xb.options())
                   .index_add(2, m.index, xb.reshape({n, c, kk * l}))
                   .reshape({n, c, m.pad_h, m.pad_w})
                   .narrow(2, m.padding[0], out[0])
                   .narrow(3, m.padding[1], out[1]);
  return x.dim() == 2 ? img.squeeze(0) : img;
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  OpContext ctx("masked_scatter");
  LT_CHECK(mask.dtype() == kBool, "masked_scatter: expected a bool mask, got ",
           dtype_name(mask.dtype()));
  LT_CHECK(source.dtype() == x.dtype(), "masked_scatter: source is ", dtype_name(source.dtype()),
           " but self is ", dtype_name(x.dtype()));
  const Dims shape = broadcast_shape(x.sizes(), mask.sizes(), "masked_scatter");
  LT_CHECK(IntList(shape) == x.sizes(), "masked_scatter: mask ", shape_str(mask.sizes()),
           " does not broadcast to self ", shape_str(x.sizes()));
  if (x.numel() == 0) return x.clone();
  Tensor m = mask.expand(x.sizes());
  // The k-th true element (in row-major order) takes source's k-th element.
  Tensor k = cumsum(m.reshape({-1}).to(kInt64), 0) - 1;
  if (x.device().is_cpu()) {  // the count is known here; on lazy it would cost a sync
    const int64_t need = m.sum().item<int64_t>();
    LT_CHECK(need <= source.numel(), "masked_scatter: the mask selects ", need,
             " elements but source ", shape_str(source.sizes()), " has ", source.numel());
  }
  if (source.numel() == 0) return x.clone();  // nothing selected (checked above on cpu)
  Tensor taken = source.reshape({-1}).index_select(0, k.clamp(0, source.numel() - 1));
  return where(m, taken.reshape(x.sizes()), x);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return lt::masked_scatter(*this, mask, source);
}

namespace {
// PyTorch's alpha dropout: kept values become a x + alpha a p, dropped ones alpha a (p - 1), with
// a = 1 / sqrt((alpha^2 p + 1)(1 - p)), which keeps a SELU-normalized input at mean 0 and
// variance 1. `noise_shape`: one draw per element, or per channel (feature_alpha_dropout).
Tensor alpha_dropout_impl(const char* op, const Tensor& x, double p, bool train,
                          const Dims& noise_shape) {
  LT_CHECK(p >= 0 && p <= 1, op, ": probability must be in [0, 1], got ", p);
  LT_CHECK(is_floating(x.dtype()), op, ": expected a floating-point input, got ",
           dtype_name(x.dtype()));
  if (!train || p == 0 || x.numel() == 0) return x;
  if (p == 1) return x * 0.0;
  constexpr double kAlpha = 1.7580993408473766;  // SELU's scale times its alpha
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  Tensor keep = rand(noise_shape, TensorOptions(x.device())) >= p;
  return where(keep, x * a + kAlpha * a * p, kAlpha * a * (p - 1));
}
}  // namespace

Tensor alpha_dropout(const Tensor& x, double p, bool train) {
  OpContext ctx("alpha_dropout");
  return alpha_dropout_impl("alpha_dropout", x, p, train, Dims(x.sizes()));
}

Tensor feature_alpha_dropout(const Tensor& x, double p, bool train) {
  OpContext ctx("feature_alpha_dropout");
  LT_CHECK(x.dim() >= 2, "feature_alpha_dropout: expected an input [N, C, ...], got shape ",
           shape_str(x.sizes()));
  Dims noise(x.sizes());
  for (size_t i = 2; i < noise.size(); ++i) noise[i] = 1;
  return alpha_dropout_impl("feature_alpha_dropout", x, p, train, noise);
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                     EmbeddingBagMode mode, const Tensor& per_sample_weights,
                     bool include_last_offset, std::optional<int64_t> padding_idx) {
  OpContext ctx("embedding_bag");
  const char* name = "embedding_bag";
  LT_CHECK(weight.dim() == 2, name, ": expected a 2-d weight [num, dim], got ",
           shape_str(weight.sizes()));
  LT_CHECK(!is_floating(input.dtype()) && input.dtype() != kBool, name,
           ": expected integer indices, got ", dtype_name(input.dtype()));
  LT_CHECK(input.dim() == 1 || input.dim() == 2, name, ": expected a 1-d or 2-d input, got shape ",
           shape_str(input.sizes()));
  LT_CHECK(!per_sample_weights.defined() || mode == EmbeddingBagMode::Sum, name,
           ": per_sample_weights are only supported in sum mode (torch::kSum)");
  if (per_sample_weights.defined())
    LT_CHECK(per_sample_weights.sizes() == input.sizes(), name, ": per_sample_weights ",
             shape_str(per_sample_weights.sizes()), " must have the input's shape ",
             shape_str(input.sizes()));
  const int64_t n = weight.size(0), dim = weight.size(1);
  const TensorOptions io = TensorOptions(input.device()).dtype(kInt64);
  Tensor flat = input.to(kInt64).reshape({-1});
  Tensor keep;  // [numel]: entries that count (padding_idx ones do not)
  if (padding_idx) {
    const int64_t p = *padding_idx < 0 ? *padding_idx + n : *padding_idx;
    LT_CHECK(p >= 0 && p < n, name, ": padding_idx ", *padding_idx, " is out of range for ", n,
             " embeddings");
    keep = flat != p;
  }
  Tensor rows = weight.index_select(0, flat);  // [numel, dim]
  if (per_sample_weights.defined()) rows = rows * per_sample_weights.reshape({-1, 1});
  // member [bags, numel]: entry i belongs to bag b.
  Tensor member;
  if (input.dim() == 2) {
    LT_CHECK(!offsets.defined(), name, ": offsets are only for a 1-d input; got a 2-d input ",
             shape_str(input.sizes()));
    const int64_t bags = input.size(0), len = input.size(1);
    Tensor start = (arange(bags, io) * len).unsqueeze(1), pos = arange(bags * len, io).unsqueeze(0);
    member = (pos >= start) & (pos < start + len);
  } else {
    LT_CHECK(offsets.defined() && offsets.dim() == 1 && !is_floating(offsets.dtype()), name,
             ": a 1-d input needs 1-d integer offsets, got ",
             offsets.defined() ? shape_str(offsets.sizes()) : std::string("none"));
    const int64_t bags = offsets.size(0) - (include_last_offset ? 1 : 0);
    LT_CHECK(bags >= 0, name, ": include_last_offset needs at least one offset");
    // Bag b spans [bounds[b], bounds[b + 1]); without include_last_offset the input's end
    // closes the last bag.
    Tensor bounds = offsets.to(kInt64);
    if (!include_last_offset) bounds = cat({bounds, full({1}, input.size(0), io)});
    Tensor start = bounds.narrow(0, 0, bags).unsqueeze(1);
    Tensor end = bounds.narrow(0, 1, bags).unsqueeze(1);
    Tensor pos = arange(input.size(0), io).unsqueeze(0);
    member = (pos >= start) & (pos < end);
  }
  if (keep.defined()) member = member & keep.unsqueeze(0);
  if (member.size(1) == 0) return zeros({member.size(0), dim}, weight.options());
  if (mode == EmbeddingBagMode::Max) {
    Tensor vals =
        where(member.unsqueeze(2), rows.unsqueeze(0), -std::numeric_limits<double>::infinity());
    Tensor best = vals.amax(1);  // [bags, dim]; an empty bag gives -inf
    return where(member.any(1).unsqueeze(1), best, 0.0);
  }
  const Tensor m = member.to(weight.dtype());
  Tensor sum = matmul(m, rows);
  if (mode == EmbeddingBagMode::Sum) return sum;
  return sum / m.sum(1, true).clamp_min(1.0);
}

}  // namespace lt
