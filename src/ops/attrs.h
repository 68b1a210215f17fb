// The named views of OpAttrs, one per op family (ops.def's rows name the view each op uses).
// This file is the only place that knows which OpAttrs field holds which attribute: kernels,
// shape rules, formulas, lowerings and printers read `SliceAttrs::of(a).start`, and callers
// build `SliceAttrs{dim, start, end, step}.attrs()` (or `.write(&a)` into attributes that
// also carry a dtype or device).
#pragma once
#include <cstdint>

#include "ops/registry.h"

namespace lt {

// A fresh OpAttrs holding one view's fields (each view's attrs()).
template <class View>
OpAttrs attrs_of(const View& v) {
  OpAttrs a;
  v.write(&a);
  return a;
}

// Slice, SliceScatter: a normalized slice (0 <= start <= end <= size, step >= 1).
struct SliceAttrs {
  int64_t dim = 0, start = 0, end = 0, step = 1;
  static SliceAttrs of(const OpAttrs& a) { return {a.i[0], a.i[1], a.i[2], a.i[3]}; }
  void write(OpAttrs* a) const { a->i[0] = dim, a->i[1] = start, a->i[2] = end, a->i[3] = step; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Cat, Gather, ScatterAdd, Scatter, IndexSelect: the dimension the op works along.
struct DimAttrs {
  int64_t dim = 0;
  static DimAttrs of(const OpAttrs& a) { return {a.i[0]}; }
  void write(OpAttrs* a) const { a->i[0] = dim; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Argsort: the dim (normalized) and the order.
struct SortAttrs {
  int64_t dim = 0;
  bool descending = false;
  static SortAttrs of(const OpAttrs& a) { return {a.i[0], a.flag}; }
  void write(OpAttrs* a) const { a->i[0] = dim, a->flag = descending; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Sum, Prod, Amax, Amin (dims sorted), Argmax, Argmin (dims = {dim}, or {} for all).
struct ReduceAttrs {
  Dims dims;
  bool keepdim = false;
  Dtype dtype = kFloat32;  // Sum/Prod: the accumulation and result dtype
  static ReduceAttrs of(const OpAttrs& a) { return {a.ints, a.flag, a.dtype}; }
  void write(OpAttrs* a) const { a->ints = dims, a->flag = keepdim, a->dtype = dtype; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Pad: pads as F.pad orders them (last dim first, before/after pairs), the fill value.
struct PadAttrs {
  Dims pads;
  double value = 0;
  static PadAttrs of(const OpAttrs& a) { return {a.ints, a.f}; }
  void write(OpAttrs* a) const { a->ints = pads, a->f = value; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Conv2d and its gradients. h, w: Conv2dGradInput's input extent, Conv2dGradWeight's kernel
// extent (unused by Conv2d).
struct ConvAttrs {
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t groups = 1, h = 0, w = 0;
  static ConvAttrs of(const OpAttrs& a) {
    return {a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.ints[4],
            a.ints[5], a.i[0],    a.i[1],    a.i[2]};
  }
  // The parameter list of lt::conv2d_grad_input / conv2d_grad_weight.
  Dims params() const { return {stride_h, stride_w, pad_h, pad_w, dil_h, dil_w}; }
  void write(OpAttrs* a) const {
    a->ints = params();
    a->i[0] = groups, a->i[1] = h, a->i[2] = w;
  }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// MaxPool2d, AvgPool2d and their gradients. dil: max pooling only; ceil_mode: the last window
// may start in the right padding's reach (PyTorch's rule); count_include_pad and divisor
// (0: none): avg pooling's divisor. h, w: AvgPool2dGrad's input extent.
struct PoolAttrs {
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t dil_h = 1, dil_w = 1, ceil_mode = 0, count_include_pad = 1, divisor = 0;
  int64_t h = 0, w = 0;
  static PoolAttrs of(const OpAttrs& a) {
    return {a.ints[0], a.ints[1], a.ints[2], a.ints[3],  a.ints[4], a.ints[5], a.ints[6],
            a.ints[7], a.ints[8], a.ints[9], a.ints[10], a.i[1],    a.i[2]};
  }
  // The parameter list of lt::max_pool2d_grad / avg_pool2d_grad.
  Dims params() const {
    return {kernel_h, kernel_w, stride_h,  stride_w,          pad_h,  pad_w,
            dil_h,    dil_w,    ceil_mode, count_include_pad, divisor};
  }
  void write(OpAttrs* a) const {
    a->ints = params();
    a->i[1] = h, a->i[2] = w;
  }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Scalar: a 0-d value; int_value holds integers exactly (value is their double).
struct ScalarAttrs {
  double value = 0;
  int64_t int_value = 0;
  static ScalarAttrs of(const OpAttrs& a) { return {a.f, a.i[0]}; }
  void write(OpAttrs* a) const { a->f = value, a->i[0] = int_value; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// Uniform, Normal, RandomInt: the Philox stream (seed, offset) and RandomInt's [low, high).
struct RandomAttrs {
  int64_t seed = 0, offset = 0, low = 0, high = 0;
  static RandomAttrs of(const OpAttrs& a) { return {a.i[0], a.i[1], a.i[2], a.i[3]}; }
  void write(OpAttrs* a) const { a->i[0] = seed, a->i[1] = offset, a->i[2] = low, a->i[3] = high; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

// AllReduce: the reduce op (ReduceCode) and the group (0 = the world).
struct AllReduceAttrs {
  int64_t op = 0, group = 0;
  static AllReduceAttrs of(const OpAttrs& a) { return {a.i[0], a.i[1]}; }
  void write(OpAttrs* a) const { a->i[0] = op, a->i[1] = group; }
  OpAttrs attrs() const { return attrs_of(*this); }
};

}  // namespace lt
