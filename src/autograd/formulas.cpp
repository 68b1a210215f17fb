// Gradient formulas, one per differentiable primitive, written in lt::Tensor ops (so they run
// on every device and lazy graphs fuse them). Composites need none: they differentiate
// through their primitives.
#include <cmath>

#include "autograd/autograd.h"
#include "core/check.h"
#include "lt/ops.h"
#include "ops/attrs.h"

namespace lt::autograd {
namespace {
using K = OpKind;

// Sums a broadcast gradient back to `sizes` (PyTorch's sum_to).
Tensor sum_to(const Tensor& g, IntList sizes) {
  if (g.sizes().equals(sizes)) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(sizes.size());
  Dims dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d < lead || (sizes[d - lead] == 1 && g.size(d) != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(IntList(dims), true);
  return r.reshape(sizes);
}

Tensor as_dtype(const Tensor& g, Dtype t) { return g.dtype() == t ? g : g.to(t); }

// The reduced output's gradient broadcast back over the input (reinserting dropped dims).
Tensor unreduce(const Tensor& g, const GradFn& f) {
  const ReduceAttrs r = ReduceAttrs::of(f.attrs);
  if (r.keepdim || f.in_sizes[0].size() == f.out_sizes.size()) return g.expand(f.in_sizes[0]);
  Dims keep = f.in_sizes[0];
  for (int64_t d : r.dims) keep[d] = 1;
  return g.reshape(keep).expand(f.in_sizes[0]);
}
// The saved output y, shaped to broadcast against x.
Tensor unreduce_out(const GradFn& f, const Tensor& y) {
  const ReduceAttrs r = ReduceAttrs::of(f.attrs);
  if (r.keepdim || f.in_sizes[0].size() == f.out_sizes.size()) return y;
  Dims keep = f.in_sizes[0];
  for (int64_t d : r.dims) keep[d] = 1;
  return y.reshape(keep);
}

Tensor slice_scatter(const Tensor& base, const Tensor& src, const OpAttrs& a);

}  // namespace

std::vector<Tensor> apply_formula(const GradFn& f, const std::vector<Tensor>& s, const Tensor& y,
                                  const Tensor& g) {
  const OpAttrs& a = f.attrs;
  auto in_dtype = [&](size_t i) { return f.in_dtypes[i]; };
  auto fit = [&](const Tensor& t, size_t i) {  // broadcast-reduce and cast to input i
    return as_dtype(sum_to(t, f.in_sizes[i]), in_dtype(i));
  };
  switch (f.op) {
    // ---- unary
    case K::Neg: return {-g};
    case K::Abs: return {g * sign(s[0])};
    case K::Exp: return {g * y};
    case K::Log: return {g / s[0]};
    case K::Log1p: return {g / (s[0] + 1.0)};
    case K::Expm1: return {g * (y + 1.0)};
    case K::Sqrt: return {g * 0.5 / y};
    case K::Rsqrt: return {g * -0.5 * y * y * y};
    case K::Sin: return {g * cos(s[0])};
    case K::Cos: return {-g * sin(s[0])};
    case K::Tanh: return {g * (1.0 - y * y)};
    case K::Sigmoid: return {g * y * (1.0 - y)};
    case K::Relu: return {where(s[0] > 0.0, g, 0.0)};
    case K::Erf: return {g * (2.0 / std::sqrt(M_PI)) * exp(-(s[0] * s[0]))};
    case K::Erfc:
      return {g * (-2.0 / std::sqrt(M_PI)) * exp(-(s[0] * s[0]))};
    case K::Atan: return {g / (s[0] * s[0] + 1.0)};
    case K::Reciprocal: return {-g * y * y};
    case K::Cast: return {as_dtype(g, in_dtype(0))};
    // ---- binary
    case K::Add: return {fit(g, 0), fit(g, 1)};
    case K::Sub: return {fit(g, 0), fit(-g, 1)};
    // A factor not saved (record.cpp: saved_is_used) belongs to an input needing no gradient.
    case K::Mul:
      return {s[1].defined() ? fit(g * s[1], 0) : Tensor(),
              s[0].defined() ? fit(g * s[0], 1) : Tensor()};
    case K::Div:
      return {fit(g / s[1], 0), s[0].defined() ? fit(-g * s[0] / (s[1] * s[1]), 1) : Tensor()};
    case K::Pow: {
      // e - 1 against a one of e's own dtype: when e is a wrapped number (x.pow(1.0 / 3)),
      // e - 1.0 would be wrapped - wrapped, computed in the default dtype (float32), which
      // rounded the float64 gradient's exponent.
      const Tensor one = ones({}, TensorOptions(s[1].device()).dtype(s[1].dtype()));
      Tensor ga = g * s[1] * pow(s[0], s[1] - one);
      Tensor gb = g * y * log(where(s[0] > 0.0, s[0], 1.0));
      return {fit(ga, 0), fit(gb, 1)};
    }
    case K::Maximum:
    case K::Minimum: {  // ties split the gradient evenly, as PyTorch
      Tensor win = f.op == K::Maximum ? (s[0] > s[1]) : (s[0] < s[1]);
      Tensor tie = s[0] == s[1];
      Tensor wa = where(win, 1.0, where(tie, 0.5, 0.0));
      return {fit(g * wa, 0), fit(g * (1.0 - wa), 1)};
    }
    case K::Fmod: {  // d/da = 1, d/db = -trunc(a / b)
      Tensor gb;
      if (s[0].defined()) {
        Tensor q = s[0] / s[1];
        gb = fit(-g * where(q < 0.0, ceil(q), floor(q)), 1);
      }
      return {fit(g, 0), gb};
    }
    case K::Where: return {Tensor(), fit(where(s[0], g, 0.0), 1), fit(where(s[0], 0.0, g), 2)};
    // ---- reductions
    case K::Sum: return {as_dtype(unreduce(g, f), in_dtype(0))};
    case K::Prod: {  // the product of the other elements of the group, without dividing by 0
      Tensor zero = s[0] == 0.0;
      Tensor zeros_in_group = zero.sum(IntList(a.ints), true);
      Tensor nonzero = where(zero, 1.0, s[0]);
      Tensor p = nonzero.prod(IntList(a.ints), true);  // of the group's nonzero elements
      Tensor others =
          where(zeros_in_group == 0, p / nonzero, where(zero && zeros_in_group == 1, p, 0.0));
      return {unreduce(g, f) * others};
    }
    case K::Amax:
    case K::Amin: {  // evenly among the elements that attain the extreme
      Tensor mask = (s[0] == unreduce_out(f, y)).to(g.dtype());
      Tensor count = mask.sum(IntList(ReduceAttrs::of(a).dims), true);
      return {unreduce(g, f) * mask / count};
    }
    // ---- movement
    case K::Reshape: return {g.reshape(f.in_sizes[0])};
    case K::Permute: {
      Dims inv(a.ints.size());
      for (size_t j = 0; j < a.ints.size(); ++j) inv[a.ints[j]] = static_cast<int64_t>(j);
      return {g.permute(inv)};
    }
    case K::Expand: return {sum_to(g, f.in_sizes[0])};
    case K::Slice: return {slice_scatter(zeros(f.in_sizes[0], g.options()), g, a)};
    case K::SliceScatter: {
      const SliceAttrs sl = SliceAttrs::of(a);
      Tensor part = g.slice(sl.dim, sl.start, sl.end, sl.step);
      return {slice_scatter(g, zeros_like(part), a), part};
    }
    case K::Copy: return {g};
    case K::Cat: {
      std::vector<Tensor> r;
      int64_t off = 0;
      const int64_t d = DimAttrs::of(a).dim;
      for (size_t i = 0; i < f.in_sizes.size(); ++i) {
        int64_t n = f.in_sizes[i][d];
        r.push_back(as_dtype(g.narrow(d, off, n), in_dtype(i)));
        off += n;
      }
      return r;
    }
    case K::Pad: {
      Dims neg;
      for (int64_t p : PadAttrs::of(a).pads) neg.push_back(-p);
      return {pad(g, neg)};
    }
    // ---- contractions
    case K::Matmul: {
      Tensor ga = matmul(g, s[1].transpose(-2, -1));
      // B's gradient in B's own layout: a Linear's B is the transpose of its contiguous weight,
      // so A^T G computed row-major is the weight's gradient transposed, and every reader of it
      // (the optimizer's fused update) walked it with a stride (MLP step on the lazy device:
      // 28% of its time in that loop). (G^T A)^T is the same values with the weight's layout;
      // libtorch's mm backward does likewise.
      const bool b_transposed = s[1].dim() == 2 && s[1].size(0) > 1 && s[1].size(1) > 1 &&
                                s[1].stride(0) == 1 && s[1].stride(1) == s[1].size(0);
      // B without batch dims (a Linear layer's weight) against a batched A: the sum over the
      // batch of A_i^T G_i is one product of the stacked rows, A^T G. Computed per batch
      // element and then summed, the intermediate was batch times B's size (a transformer's
      // feed-forward weight: [128, 256, 1024], 128 MB, the step's peak memory).
      const IntList bs = f.in_sizes[1];
      int64_t b_batch = 1;
      for (size_t d = 0; d + 2 < bs.size(); ++d) b_batch *= bs[d];
      if (s[0].dim() > 2 && b_batch == 1) {
        const int64_t k = s[0].size(-1), n = g.size(-1);
        Tensor a2 = s[0].reshape({s[0].numel() / std::max<int64_t>(k, 1), k});
        Tensor g2 = g.reshape({g.numel() / std::max<int64_t>(n, 1), n});
        Tensor gb = b_transposed ? matmul(g2.transpose(0, 1), a2).transpose(0, 1)
                                 : matmul(a2.transpose(0, 1), g2);
        return {sum_to(ga, f.in_sizes[0]), b_transposed ? gb : gb.reshape(bs)};
      }
      if (b_transposed && s[0].dim() == 2 && g.dim() == 2)
        return {ga, matmul(g.transpose(0, 1), s[0]).transpose(0, 1)};
      Tensor gb = matmul(s[0].transpose(-2, -1), g);
      return {sum_to(ga, f.in_sizes[0]), sum_to(gb, f.in_sizes[1])};
    }
    case K::Conv2d: {
      const Tensor &x = s[0], &w = s[1];
      std::vector<Tensor> r(3);
      const ConvAttrs c = ConvAttrs::of(a);
      r[0] = conv2d_grad_input(g, w, c.params(), c.groups, x.size(2), x.size(3));
      r[1] = conv2d_grad_weight(g, x, c.params(), c.groups, w.size(2), w.size(3));
      if (f.in_sizes.size() > 2) r[2] = g.sum({0, 2, 3});
      return r;
    }
    case K::Conv2dGradInput: {  // (g, w) -> conv2d's input gradient: conv_transpose2d
      const Tensor &x = s[0], &w = s[1];
      const ConvAttrs c = ConvAttrs::of(a);
      // conv2d of the output gradient gives x's extent, or one more row or column where
      // output_padding reached a whole stride (allowed while it is below the dilation).
      Tensor gx = conv2d(g, w, {}, {c.stride_h, c.stride_w}, {c.pad_h, c.pad_w}, {c.dil_h, c.dil_w},
                         c.groups);
      gx = gx.narrow(2, 0, x.size(2)).narrow(3, 0, x.size(3));
      return {gx, conv2d_grad_weight(x, g, c.params(), c.groups, w.size(2), w.size(3))};
    }
    case K::MaxPool2d: return {max_pool2d_grad(g, s[0], PoolAttrs::of(a).params())};
    case K::AvgPool2d:
      return {avg_pool2d_grad(g, PoolAttrs::of(a).params(), f.in_sizes[0][2], f.in_sizes[0][3])};
    // ---- indexing
    case K::Gather:
      return {zeros(f.in_sizes[0], g.options()).scatter_add(DimAttrs::of(a).dim, s[1], g)};
    case K::ScatterAdd: return {g, Tensor(), g.gather(DimAttrs::of(a).dim, s[1])};
    case K::Scatter:  // the overwritten elements of x get no gradient
      return {g.scatter(DimAttrs::of(a).dim, s[1], 0), Tensor(),
              g.gather(DimAttrs::of(a).dim, s[1])};
    case K::IndexSelect: {
      Dims shape(g.dim(), 1);
      const int64_t d = DimAttrs::of(a).dim;
      if (g.dim() > 0) shape[d] = g.size(d);
      Tensor idx = s[1].reshape(g.dim() > 0 ? IntList(shape) : IntList()).expand(g.sizes());
      return {zeros(f.in_sizes[0], g.options()).scatter_add(d, idx, g)};
    }
    default:
      throw_error("backward: no gradient formula for ", op_name(f.op));
  }
}

namespace {
Tensor slice_scatter(const Tensor& base, const Tensor& src, const OpAttrs& a) {
  const SliceAttrs s = SliceAttrs::of(a);
  return lt::slice_scatter(base, src, s.dim, s.start, s.end, s.step);
}
}  // namespace

}  // namespace lt::autograd
