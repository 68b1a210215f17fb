#include "ops/shape_rules.h"

#include <algorithm>

#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "ops/attrs.h"
#include "ops/dist_hooks.h"

namespace lt {
namespace {

// c10's combine_categories for the real dtypes.
int combine(int higher, int lower) {  // -1 = undefined
  if (higher < 0) return lower;
  if (lower < 0) return higher;
  Dtype h = static_cast<Dtype>(higher), l = static_cast<Dtype>(lower);
  if (is_floating(h)) return higher;
  if (h == kBool || is_floating(l)) return static_cast<int>(promote_types(h, l));
  return higher;
}

std::string shapes_of(ArrayRef<Tensor> in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) s += " and ";
    s += shape_str(in[i].sizes());
  }
  return s;
}

Dims reduced_sizes(IntList sizes, IntList dims, bool keepdim) {
  Dims out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    bool red = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
    if (!red)
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// Positions of a window sliding over a span: floor((span - window) / stride) + 1 as in PyTorch,
// so 0 when the window is larger than the span (C++ division would truncate that to 1).
int64_t window_out(int64_t span, int64_t window, int64_t stride) {
  return span < window ? 0 : (span - window) / stride + 1;
}

// PyTorch's pooling_output_shape: with ceil_mode the count rounds up, but the last window must
// start inside the input or its left padding.
int64_t pool_out(int64_t in, int64_t eff_kernel, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t span = in + 2 * pad - eff_kernel;
  if (span < 0) return 0;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

OpMeta unary(OpKind op, const Tensor& x, const OpAttrs& a) {
  OpMeta m{Dims(x.sizes()), x.dtype(), x.dtype()};
  const char* name = op_name(op);
  switch (op_dtype_rule(op)) {
    case DtypeRule::AttrDtype:
      m.dtype = a.dtype;
      break;
    case DtypeRule::ToBool:
      m.dtype = kBool;
      break;
    case DtypeRule::Float:
      if (!is_floating(x.dtype())) m.dtype = m.compute = get_default_dtype();
      break;
    case DtypeRule::SameNoBool:
      LT_CHECK(x.dtype() != kBool, name, ": not supported for bool tensors (shape ",
               shape_str(x.sizes()), "); use logical_not or cast first");
      break;
    case DtypeRule::Integral:
      LT_CHECK(!is_floating(x.dtype()), name, ": expected an integer or bool tensor, got ",
               dtype_name(x.dtype()), " (shape ", shape_str(x.sizes()), ")");
      break;
    default:
      break;
  }
  return m;
}

OpMeta binary(OpKind op, ArrayRef<Tensor> in) {
  const char* name = op_name(op);
  OpMeta m;
  const TensorImpl *x = in[0].impl(), *y = in[1].impl();
  if (x && y && x->dtype == y->dtype && x->sizes == y->sizes && !x->wrapped_number &&
      !y->wrapped_number) {
    m.sizes = x->sizes;  // the common case, decided without the general rules
    m.compute = x->dtype;
  } else {
    m.sizes = broadcast_shape(in[0].sizes(), in[1].sizes(), name);
    m.compute = result_type(in);
  }
  m.dtype = m.compute;
  switch (op_dtype_rule(op)) {
    case DtypeRule::ToBool:
      m.dtype = kBool;
      break;
    case DtypeRule::PromoteFloat:
      if (!is_floating(m.compute)) m.dtype = m.compute = get_default_dtype();
      break;
    case DtypeRule::PromoteNoBool:
      if (m.compute == kBool)
        throw_error(name, ": bool tensors (shapes ", shapes_of(in),
                    ") are not supported; use logical_xor or logical_not");
      break;
    case DtypeRule::PromotePow:
      if (m.compute == kBool) m.dtype = m.compute = kInt64;
      break;
    case DtypeRule::PromoteIntegral:
    case DtypeRule::PromoteShift:
      LT_CHECK(!is_floating(m.compute), name, ": expected integer or bool operands, got ",
               dtype_name(in[0].dtype()), " and ", dtype_name(in[1].dtype()), " (shapes ",
               shapes_of(in), ")");
      LT_CHECK(m.compute != kBool || op_dtype_rule(op) != DtypeRule::PromoteShift, name,
               ": not supported for bool tensors (shapes ", shapes_of(in), ")");
      break;
    default:
      break;
  }
  return m;
}

OpMeta reduction(OpKind op, const Tensor& x, const OpAttrs& attrs) {
  const char* name = op_name(op);
  const ReduceAttrs a = ReduceAttrs::of(attrs);
  OpMeta m;
  const DtypeRule rule = op_dtype_rule(op);
  if (rule == DtypeRule::Int64) {  // argmax/argmin
    LT_CHECK(x.dtype() != kBool, name, ": not supported for bool tensors");
    int64_t d = a.dims.empty() ? 0 : a.dims[0];
    LT_CHECK(x.dim() == 0 || x.size(d) > 0, name, ": cannot take the ", name,
             " of an empty dimension (shape ", shape_str(x.sizes()), ", dim ", d, ")");
    m.sizes = x.dim() == 0 ? Dims() : reduced_sizes(x.sizes(), a.dims, a.keepdim);
    m.dtype = kInt64;
    m.compute = x.dtype();
    return m;
  }
  m.sizes = reduced_sizes(x.sizes(), a.dims, a.keepdim);
  if (rule == DtypeRule::Same) {  // amax/amin: a value of the input
    for (int64_t d : a.dims)
      LT_CHECK(x.size(d) > 0, name, ": cannot reduce over a zero-size dimension (shape ",
               shape_str(x.sizes()), ", dim ", d, ")");
    m.dtype = m.compute = x.dtype();
    return m;
  }
  if (rule == DtypeRule::ToBool) {  // any: reduces the input seen as bool (x != 0)
    m.dtype = m.compute = kBool;
    return m;
  }
  m.dtype = m.compute = a.dtype;
  return m;
}

OpMeta movement(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  const Tensor& x = in[0];
  OpMeta m{Dims(), x.dtype(), x.dtype()};
  const int64_t nd = x.dim();
  switch (op) {
    case OpKind::Reshape:
      LT_CHECK(numel_of(a.ints) == x.numel(), "reshape: shape ", shape_str(a.ints),
               " is invalid for input of size ", x.numel(), " (shape ", shape_str(x.sizes()), ")");
      m.sizes = a.ints;
      break;
    case OpKind::Permute: {
      LT_CHECK(static_cast<int64_t>(a.ints.size()) == nd, "permute: got ", a.ints.size(), " dims ",
               shape_str(a.ints), " for a tensor of shape ", shape_str(x.sizes()));
      std::vector<bool> seen(nd, false);
      for (int64_t d : a.ints) {
        LT_CHECK(d >= 0 && d < nd && !seen[d], "permute: dims ", shape_str(a.ints),
                 " are not a permutation of 0..", nd - 1);
        seen[d] = true;
        m.sizes.push_back(x.size(d));
      }
      break;
    }
    case OpKind::Expand: {
      LT_CHECK(static_cast<int64_t>(a.ints.size()) >= nd, "expand: target ", shape_str(a.ints),
               " has fewer dims than the tensor ", shape_str(x.sizes()));
      size_t off = a.ints.size() - nd;
      m.sizes = a.ints;
      for (size_t i = 0; i < a.ints.size(); ++i) {
        int64_t want = a.ints[i];
        if (i < off) {
          LT_CHECK(want >= 0, "expand: size ", want, " is invalid in ", shape_str(a.ints));
          continue;
        }
        int64_t have = x.size(i - off);
        if (want == -1) want = m.sizes[i] = have;
        LT_CHECK(want == have || have == 1, "expand: cannot expand ", shape_str(x.sizes()), " to ",
                 shape_str(a.ints), " (dim ", i, ": ", have, " -> ", want, ")");
      }
      break;
    }
    case OpKind::Slice: {
      m.sizes = Dims(x.sizes());
      const SliceAttrs s = SliceAttrs::of(a);
      m.sizes[s.dim] = s.end > s.start ? (s.end - s.start + s.step - 1) / s.step : 0;
      break;
    }
    case OpKind::SliceScatter: {
      m.sizes = Dims(x.sizes());
      m.dtype = m.compute = x.dtype();
      Dims want = m.sizes;
      const SliceAttrs s = SliceAttrs::of(a);
      want[s.dim] = s.end > s.start ? (s.end - s.start + s.step - 1) / s.step : 0;
      LT_CHECK(want == Dims(in[1].sizes()), "slice_scatter: src ", shape_str(in[1].sizes()),
               " does not match the slice shape ", shape_str(want));
      break;
    }
    case OpKind::Copy:
      m.sizes = Dims(x.sizes());
      break;
    case OpKind::Cat: {
      const int64_t d = DimAttrs::of(a).dim;
      m.sizes = Dims(x.sizes());
      m.sizes[d] = 0;
      m.dtype = m.compute = result_type(in);
      for (size_t t = 0; t < in.size(); ++t) {
        LT_CHECK(in[t].dim() == nd, "cat: tensor ", t, " has shape ", shape_str(in[t].sizes()),
                 " but tensor 0 has shape ", shape_str(x.sizes()), " (expected the same rank)");
        for (int64_t j = 0; j < nd; ++j)
          LT_CHECK(j == d || in[t].size(j) == x.size(j), "cat: tensor ", t, " has shape ",
                   shape_str(in[t].sizes()), " but tensor 0 has shape ", shape_str(x.sizes()),
                   " (sizes must match except in dim ", d, ")");
        m.sizes[d] += in[t].size(d);
      }
      break;
    }
    case OpKind::Pad: {
      const Dims pads = PadAttrs::of(a).pads;
      LT_CHECK(pads.size() % 2 == 0 && static_cast<int64_t>(pads.size()) <= 2 * nd, "pad: padding ",
               shape_str(pads), " must have an even length of at most ", 2 * nd,
               " for a tensor of shape ", shape_str(x.sizes()));
      m.sizes = Dims(x.sizes());
      for (size_t k = 0; k < pads.size() / 2; ++k) {
        int64_t d = nd - 1 - static_cast<int64_t>(k);
        m.sizes[d] += pads[2 * k] + pads[2 * k + 1];
        LT_CHECK(m.sizes[d] >= 0, "pad: padding ", shape_str(pads), " makes dim ", d, " of shape ",
                 shape_str(x.sizes()), " negative");
      }
      break;
    }
    default:
      break;
  }
  return m;
}

OpMeta contraction(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  const Tensor& x = in[0];
  OpMeta m{Dims(), x.dtype(), x.dtype()};
  const char* name = op_name(op);
  switch (op) {  // backward primitives: internal, called with shapes autograd derived
    case OpKind::Conv2dGradInput: {
      const ConvAttrs c = ConvAttrs::of(a);
      m.sizes = {x.size(0), in[1].size(1) * c.groups, c.h, c.w};
      return m;
    }
    case OpKind::Conv2dGradWeight: {
      const ConvAttrs c = ConvAttrs::of(a);
      m.sizes = {x.size(1), in[1].size(1) / c.groups, c.h, c.w};
      return m;
    }
    case OpKind::MaxPool2dGrad:
      m.sizes = Dims(in[1].sizes());
      return m;
    case OpKind::Argsort: {
      const int64_t d = SortAttrs::of(a).dim;
      LT_CHECK(d >= 0 && d < std::max<int64_t>(x.dim(), 1), name, ": dim ", d,
               " out of range for shape ", shape_str(x.sizes()));
      m.sizes = Dims(x.sizes());
      m.dtype = kInt64;
      return m;
    }
    case OpKind::AvgPool2dGrad: {
      const PoolAttrs p = PoolAttrs::of(a);
      m.sizes = {x.size(0), x.size(1), p.h, p.w};
      return m;
    }
    default:
      break;
  }
  if (op == OpKind::Matmul) {
    const Tensor& y = in[1];
    LT_CHECK(x.dim() >= 2 && y.dim() >= 2, "matmul: expected operands of rank >= 2, got ",
             shapes_of(in));
    int64_t n = x.size(-2), k = x.size(-1), k2 = y.size(-2), p = y.size(-1);
    LT_CHECK(k == k2, "matmul: shapes ", shape_str(x.sizes()), " and ", shape_str(y.sizes()),
             " cannot be multiplied (", k, " != ", k2, ")");
    LT_CHECK(x.dtype() == y.dtype(), "matmul: expected both operands to have the same dtype, got ",
             dtype_name(x.dtype()), " and ", dtype_name(y.dtype()));
    LT_CHECK(x.dtype() != kBool, "matmul: not supported for bool tensors");
    IntList xs = x.sizes(), ys = y.sizes();
    m.sizes = broadcast_shape(IntList(xs.data(), xs.size() - 2), IntList(ys.data(), ys.size() - 2),
                              "matmul (batch dims)");
    m.sizes.push_back(n);
    m.sizes.push_back(p);
    return m;
  }
  LT_CHECK(is_floating(x.dtype()), name, ": expected a floating-point input, got ",
           dtype_name(x.dtype()));
  LT_CHECK(x.dim() == 4, name, ": expected a 4-d input [N, C, H, W], got shape ",
           shape_str(x.sizes()));
  if (op == OpKind::Conv2d) {
    const Tensor& w = in[1];
    const ConvAttrs c = ConvAttrs::of(a);
    const int64_t g = c.groups;
    LT_CHECK(w.dim() == 4, "conv2d: expected a 4-d weight [O, C/groups, kH, kW], got ",
             shape_str(w.sizes()));
    LT_CHECK(w.dtype() == x.dtype(), "conv2d: input is ", dtype_name(x.dtype()), " but weight is ",
             dtype_name(w.dtype()));
    LT_CHECK(g >= 1 && x.size(1) % g == 0 && w.size(0) % g == 0, "conv2d: groups ", g,
             " must divide input channels ", x.size(1), " and output channels ", w.size(0));
    LT_CHECK(w.size(1) * g == x.size(1), "conv2d: input ", shape_str(x.sizes()), " has ", x.size(1),
             " channels but weight ", shape_str(w.sizes()), " expects ", w.size(1) * g, " (",
             w.size(1), " x groups ", g, ")");
    if (in.size() > 2 && in[2].defined())
      LT_CHECK(in[2].dim() == 1 && in[2].size(0) == w.size(0), "conv2d: bias of shape ",
               shape_str(in[2].sizes()), " does not match ", w.size(0), " output channels");
    int64_t oh = window_out(x.size(2) + 2 * c.pad_h, c.dil_h * (w.size(2) - 1) + 1, c.stride_h);
    int64_t ow = window_out(x.size(3) + 2 * c.pad_w, c.dil_w * (w.size(3) - 1) + 1, c.stride_w);
    LT_CHECK(oh > 0 && ow > 0, "conv2d: kernel ", shape_str(w.sizes()),
             " is larger than the padded input ", shape_str(x.sizes()));
    m.sizes = {x.size(0), w.size(0), oh, ow};
    return m;
  }
  const PoolAttrs p = PoolAttrs::of(a);
  LT_CHECK(p.kernel_h > 0 && p.kernel_w > 0 && p.stride_h > 0 && p.stride_w > 0 && p.dil_h > 0 &&
               p.dil_w > 0,
           name, ": kernel ", p.kernel_h, "x", p.kernel_w, ", stride ", p.stride_h, "x", p.stride_w,
           " and dilation ", p.dil_h, "x", p.dil_w, " must be positive");
  // PyTorch's limit: padding at most half the effective (dilated) kernel.
  const int64_t ekh = p.dil_h * (p.kernel_h - 1) + 1, ekw = p.dil_w * (p.kernel_w - 1) + 1;
  LT_CHECK(p.pad_h >= 0 && p.pad_w >= 0 && p.pad_h * 2 <= ekh && p.pad_w * 2 <= ekw, name,
           ": padding ", p.pad_h, "x", p.pad_w, " must be at most half the kernel ", ekh, "x", ekw);
  int64_t oh = pool_out(x.size(2), ekh, p.pad_h, p.stride_h, p.ceil_mode);
  int64_t ow = pool_out(x.size(3), ekw, p.pad_w, p.stride_w, p.ceil_mode);
  LT_CHECK(oh > 0 && ow > 0, name, ": kernel ", ekh, "x", ekw, " is larger than the padded input ",
           shape_str(x.sizes()));
  m.sizes = {x.size(0), x.size(1), oh, ow};
  return m;
}

OpMeta index_op(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  const char* name = op_name(op);
  const int64_t d = DimAttrs::of(a).dim;
  OpMeta m{Dims(), x.dtype(), x.dtype()};
  LT_CHECK(idx.dtype() == kInt64 || idx.dtype() == kInt32, name,
           ": expected an int64 or int32 index tensor, got ", dtype_name(idx.dtype()));
  if (op == OpKind::IndexSelect) {
    LT_CHECK(idx.dim() <= 1, name, ": index must be 0-d or 1-d, got shape ",
             shape_str(idx.sizes()));
    m.sizes = Dims(x.sizes());
    if (x.dim() > 0) m.sizes[d] = idx.numel();
    return m;
  }
  LT_CHECK(idx.dim() == x.dim(), name, ": index ", shape_str(idx.sizes()),
           " must have the same rank as the input ", shape_str(x.sizes()));
  for (int64_t j = 0; j < x.dim(); ++j)
    LT_CHECK(j == d || idx.size(j) <= x.size(j), name, ": index ", shape_str(idx.sizes()),
             " is larger than the input ", shape_str(x.sizes()), " in dim ", j);
  if (op == OpKind::Gather) {
    m.sizes = Dims(idx.sizes());
    return m;
  }
  const Tensor& src = in[2];
  LT_CHECK(src.dtype() == x.dtype(), name, ": src is ", dtype_name(src.dtype()), " but self is ",
           dtype_name(x.dtype()));
  LT_CHECK(src.dim() == idx.dim(), name, ": src ", shape_str(src.sizes()),
           " must have the same rank as index ", shape_str(idx.sizes()));
  for (int64_t j = 0; j < idx.dim(); ++j)
    LT_CHECK(idx.size(j) <= src.size(j), name, ": index ", shape_str(idx.sizes()),
             " is larger than src ", shape_str(src.sizes()), " in dim ", j);
  m.sizes = Dims(x.sizes());
  return m;
}

// AllReduce: same shape and dtype on every rank; the dtypes the process group can reduce.
OpMeta collective(OpKind op, const Tensor& x, const OpAttrs& a) {
  const char* name = op_name(op);
  const Dtype d = x.dtype();
  LT_CHECK(d == kFloat32 || d == kFloat64 || d == kInt32 || d == kInt64, name,
           ": expected float32, float64, int32 or int64, got ", dtype_name(d), " (shape ",
           shape_str(x.sizes()), ")");
  const int64_t code = AllReduceAttrs::of(a).op;
  LT_CHECK(code >= 0 && code < kNumReduceCodes, name, ": unknown reduce op ", code);
  LT_CHECK(code != static_cast<int64_t>(ReduceCode::Mean) || is_floating(d), name,
           ": mean needs a floating dtype, got ", dtype_name(d));
  return OpMeta{Dims(x.sizes()), d, d};
}

}  // namespace

Dtype result_type(ArrayRef<Tensor> in) {
  int dim_r = -1, zero_r = -1, wrapped_r = -1;
  for (const Tensor& t : in) {
    if (!t.defined()) continue;
    Dtype cur = t.dtype();
    int* slot = &zero_r;
    if (t.impl()->wrapped_number) {
      slot = &wrapped_r;
      if (is_floating(cur)) cur = get_default_dtype();
    } else if (t.dim() > 0) {
      slot = &dim_r;
    }
    *slot = *slot < 0 ? static_cast<int>(cur)
                      : static_cast<int>(promote_types(static_cast<Dtype>(*slot), cur));
  }
  int r = combine(dim_r, combine(zero_r, wrapped_r));
  return r < 0 ? get_default_dtype() : static_cast<Dtype>(r);
}

namespace {
OpMeta meta_by_category(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  switch (op_category(op)) {
    case OpCategory::EwUnary:
      return unary(op, in[0], a);
    case OpCategory::EwBinary:
      return binary(op, in);
    case OpCategory::EwTernary: {
      LT_CHECK(in[0].dtype() == kBool, "where: expected a bool condition, got ",
               dtype_name(in[0].dtype()), " (shape ", shape_str(in[0].sizes()), ")");
      OpMeta m;
      m.sizes = broadcast_shape(broadcast_shape(in[0].sizes(), in[1].sizes(), "where"),
                                in[2].sizes(), "where");
      m.dtype = m.compute = result_type(ArrayRef<Tensor>(in.data() + 1, 2));
      return m;
    }
    case OpCategory::Reduction:
      return reduction(op, in[0], a);
    case OpCategory::Movement:
      return movement(op, in, a);
    case OpCategory::Contraction:
      return contraction(op, in, a);
    case OpCategory::Indexing:
      return index_op(op, in, a);
    case OpCategory::Creation:
    case OpCategory::Random: {
      OpMeta m{Dims(), a.dtype, a.dtype};
      if (op == OpKind::Iota || op == OpKind::Uniform || op == OpKind::Normal ||
          op == OpKind::RandomInt)
        m.sizes = a.ints;
      for (int64_t s : m.sizes)
        LT_CHECK(s >= 0, op_name(op), ": negative size in ", shape_str(m.sizes));
      if (op == OpKind::Uniform || op == OpKind::Normal)
        LT_CHECK(is_floating(a.dtype), op_name(op), ": expected a floating dtype, got ",
                 dtype_name(a.dtype));
      return m;
    }
    case OpCategory::Collective:
      return collective(op, in[0], a);
  }
  return {};
}
}  // namespace

OpMeta infer_meta(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  OpMeta m = meta_by_category(op, in, a);
  m.compute = compute_dtype(m.compute);  // storage dtypes compute wider (see dtype.h)
  return m;
}

}  // namespace lt
