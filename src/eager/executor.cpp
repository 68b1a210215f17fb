#include "eager/executor.h"

#include "core/check.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "ops/attrs.h"
#include "ops/dist_hooks.h"

namespace lt {
namespace {

Tensor cast_to(const Tensor& t, Dtype d) {
  if (!t.defined() || t.dtype() == d) return t;
  Tensor c = make_eager(t.sizes(), d);
  copy_into(c, t);
  return c;
}

Tensor view_op(OpKind op, const Tensor& x, const OpAttrs& a, const OpMeta& m) {
  const TensorImpl& xi = I(x);
  switch (op) {
    case OpKind::Reshape: {
      if (auto st = view_strides(xi.sizes, xi.strides, m.sizes))
        return make_view(x, m.sizes, *st, xi.offset);
      Tensor c = make_eager(x.sizes(), x.dtype());
      copy_into(c, x);
      return make_view(c, m.sizes, contiguous_strides(m.sizes), 0);
    }
    case OpKind::Permute: {
      Dims st;
      for (int64_t d : a.ints) st.push_back(xi.strides[d]);
      return make_view(x, m.sizes, st, xi.offset);
    }
    case OpKind::Expand: {
      Dims st(m.sizes.size(), 0);
      size_t off = m.sizes.size() - xi.sizes.size();
      for (size_t d = 0; d < xi.sizes.size(); ++d)
        st[d + off] = xi.sizes[d] == 1 && m.sizes[d + off] != 1 ? 0 : xi.strides[d];
      return make_view(x, m.sizes, st, xi.offset);
    }
    case OpKind::Slice: {
      Dims st = xi.strides;
      const SliceAttrs s = SliceAttrs::of(a);
      int64_t off = xi.offset + (m.sizes[s.dim] > 0 ? s.start * st[s.dim] : 0);
      st[s.dim] *= s.step;
      return make_view(x, m.sizes, st, off);
    }
    default:
      throw_error("internal: ", op_name(op), " is not a view op");
  }
}

// Storage dtypes (int8, float16, bfloat16) reach no kernel: the op runs on its inputs widened to
// their compute dtypes, and a storage-dtype result is rounded back, once per op, as libtorch's
// CPU kernels do (they compute in float or int and round each result). Widening and rounding
// back are exact for the ops that only move values (cat, pad, gather, ...).
bool touches_storage_dtype(ArrayRef<Tensor> in, const OpMeta& m) {
  if (is_storage_dtype(m.dtype)) return true;
  for (const Tensor& t : in)
    if (t.defined() && is_storage_dtype(t.dtype())) return true;
  return false;
}

std::vector<Tensor> widened(ArrayRef<Tensor> in) {
  std::vector<Tensor> w;
  for (const Tensor& t : in) w.push_back(t.defined() ? cast_to(t, compute_dtype(t.dtype())) : t);
  return w;
}

OpMeta widened(const OpMeta& m) {
  OpMeta w = m;
  w.dtype = compute_dtype(m.dtype);
  w.compute = compute_dtype(m.compute);
  return w;
}

}  // namespace

void eager_execute_into(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m,
                        const Tensor& out) {
  if (op != OpKind::Cast && touches_storage_dtype(in, m)) {
    std::vector<Tensor> w = widened(in);
    copy_into(out, eager_execute(op, w, a, widened(m)));
    return;
  }
  switch (op_category(op)) {
    case OpCategory::EwUnary:
      if (op == OpKind::Cast)
        copy_into(out, in[0]);
      else if (op == OpKind::LogicalNot)
        unary_kernel(op, in[0], out);
      else
        unary_kernel(op, cast_to(in[0], m.compute), out);
      return;
    case OpCategory::EwBinary:
      binary_kernel(op, cast_to(in[0], m.compute), cast_to(in[1], m.compute), out);
      return;
    case OpCategory::EwTernary:
      where_kernel(in[0], cast_to(in[1], m.compute), cast_to(in[2], m.compute), out);
      return;
    default:
      throw_error("internal: ", op_name(op), " cannot write into a destination");
  }
}

Tensor eager_execute(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m) {
  switch (op) {
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::Slice:
      return view_op(op, in[0], a, m);
    case OpKind::Copy:
    case OpKind::Cast:
      break;
    default:
      if (touches_storage_dtype(in, m)) {
        std::vector<Tensor> w = widened(in);
        return cast_to(eager_execute(op, w, a, widened(m)), m.dtype);
      }
      break;
  }
  Tensor out = make_eager(m.sizes, m.dtype);
  switch (op_category(op)) {
    case OpCategory::EwUnary:
    case OpCategory::EwBinary:
    case OpCategory::EwTernary:
      eager_execute_into(op, in, a, m, out);
      break;
    case OpCategory::Reduction: {
      const ReduceAttrs r = ReduceAttrs::of(a);
      if (op_dtype_rule(op) == DtypeRule::Int64)  // argmax/argmin
        arg_reduce_kernel(op, in[0], r.dims.empty() ? 0 : r.dims[0], out);
      else
        reduce_kernel(op, cast_to(in[0], m.compute), r.dims, out);
    } break;
    case OpCategory::Movement:
      if (op == OpKind::Copy) {
        copy_into(out, in[0]);
      } else if (op == OpKind::SliceScatter) {
        copy_into(out, in[0]);
        copy_into(view_op(OpKind::Slice, out, a, infer_meta(OpKind::Slice, {out}, a)), in[1]);
      } else if (op == OpKind::Cat)
        cat_kernel(in, DimAttrs::of(a).dim, out);
      else if (op == OpKind::Pad)
        pad_kernel(in[0], PadAttrs::of(a).pads, PadAttrs::of(a).value, out);
      break;
    case OpCategory::Contraction:
      if (op == OpKind::Matmul)
        matmul_kernel(in[0], in[1], out);
      else if (op == OpKind::Argsort)
        argsort_kernel(in[0], SortAttrs::of(a).dim, SortAttrs::of(a).descending, out);
      else if (op == OpKind::Conv2d)
        conv2d_kernel(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), ConvAttrs::of(a), out);
      else if (op == OpKind::Conv2dGradInput)
        conv2d_grad_input_kernel(in[0], in[1], ConvAttrs::of(a), out);
      else if (op == OpKind::Conv2dGradWeight)
        conv2d_grad_weight_kernel(in[0], in[1], ConvAttrs::of(a), out);
      else if (op == OpKind::MaxPool2dGrad || op == OpKind::AvgPool2dGrad)
        pool2d_grad_kernel(op, in[0], in.size() > 1 ? in[1] : Tensor(), PoolAttrs::of(a), out);
      else
        pool2d_kernel(op, in[0], PoolAttrs::of(a), out);
      break;
    case OpCategory::Indexing:
      if (op == OpKind::Gather)
        gather_kernel(in[0], DimAttrs::of(a).dim, in[1], out);
      else if (op == OpKind::ScatterAdd || op == OpKind::Scatter)
        scatter_kernel(in[0], DimAttrs::of(a).dim, in[1], in[2], op == OpKind::ScatterAdd, out);
      else
        index_select_kernel(in[0], DimAttrs::of(a).dim, in[1], out);
      break;
    case OpCategory::Creation:
      if (op == OpKind::Scalar)
        fill_kernel(out, ScalarAttrs::of(a).value, ScalarAttrs::of(a).int_value);
      else
        iota_kernel(out);
      break;
    case OpCategory::Random: {
      const RandomAttrs r = RandomAttrs::of(a);
      random_kernel(op, static_cast<uint64_t>(r.seed), static_cast<uint64_t>(r.offset), r.low,
                    r.high, out);
    } break;
    case OpCategory::Collective:  // AllReduce: the process group reduces a fresh copy in place
      copy_into(out, in[0]);
      hook(dist_hooks().all_reduce, "dist.all_reduce")(out, AllReduceAttrs::of(a).op,
                                                       AllReduceAttrs::of(a).group);
      break;
  }
  return out;
}

}  // namespace lt
