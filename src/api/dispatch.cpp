#include "api/dispatch.h"

#include <array>
#include <mutex>
#include <string>

#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/executor.h"
#include "eager/kernels.h"
#include "ops/attrs.h"
#include "ops/autograd_hooks.h"

namespace lt {
namespace {

// True when `t` shares memory with `dst` but is not the very same view of it.
bool partial_overlap(const Tensor& dst, const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu()) return false;
  const TensorImpl &a = *dst.impl(), &b = *t.impl();
  if (a.storage != b.storage) return false;
  return !(a.offset == b.offset && a.sizes == b.sizes && a.strides == b.strides &&
           a.dtype == b.dtype);
}

struct RandomState {
  std::mutex mu;
  uint64_t seed = 0x2545F4914F6CDD1Dull;
  uint64_t offset = 0;
};
RandomState& rng() {
  static RandomState r;
  return r;
}

}  // namespace

bool can_cast(Dtype from, Dtype to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

Tensor call(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  Device dev = kCPU;
  bool first = true;
  for (const Tensor& t : in) {
    const TensorImpl* i = t.impl();
    if (!i) {
      LT_CHECK(op == OpKind::Conv2d, op_name(op), ": got an undefined tensor");
      continue;
    }
    if (first) {
      dev = i->device;
      first = false;
    } else if (i->device != dev && !i->wrapped_number) {
      throw_error(op_name(op), ": tensors on ", dev.str(), " and ", i->device.str(),
                  "; transfer explicitly with .to()");
    }
  }
  OpMeta m = infer_meta(op, in, a);
  Tensor r = dev.is_lazy() ? hook(lazy_hooks().execute, "lazy.execute")(op, in, a, m)
                           : eager_execute(op, in, a, m);
  if (any_autograd(in) && hook(autograd_hooks().needed, "autograd.needed")(in))
    hook(autograd_hooks().record, "autograd.record")(op, in, a, r);
  return r;
}

Tensor& write_back(const Tensor& self, const Tensor& result, const char* op) {
  LT_CHECK(result.sizes().vec() == self.sizes().vec(), op, ": result shape ",
           shape_str(result.sizes()), " does not match the destination shape ",
           shape_str(self.sizes()));
  LT_CHECK(can_cast(result.dtype(), self.dtype()), op, ": result type ", dtype_name(result.dtype()),
           " can't be cast to the destination type ", dtype_name(self.dtype()));
  return self.copy_(result);
}

Tensor without_history(Tensor fresh) {
  fresh.impl()->autograd = nullptr;
  return fresh;
}

Tensor known_values(const Tensor& t) {
  if (!t.defined() || !t.device().is_lazy()) return t;
  return hook(lazy_hooks().known_value, "lazy.known_value")(t);
}

Tensor call_on(Device d, OpKind op, const OpAttrs& a) {
  OpAttrs b = a;
  b.device = d;
  OpMeta m = infer_meta(op, {}, b);
  if (d.is_lazy()) {
    return hook(lazy_hooks().execute, "lazy.execute")(op, {}, b, m);
  }
  return eager_execute(op, {}, b, m);
}

Tensor scalar_of(const Scalar& s, Dtype t, Device d) {
  OpAttrs a;
  a.dtype = t;
  ScalarAttrs{s.to_double(), s.is_floating() ? static_cast<int64_t>(s.to_double()) : s.to_int()}
      .write(&a);
  return call_on(d, OpKind::Scalar, a);
}

Tensor wrap_scalar(const Scalar& s, Device d) {
  Tensor t = scalar_of(s, s.dtype(), d);
  t.impl()->wrapped_number = true;
  return t;
}

void check_writable(const Tensor& t, const char* what, const char* suffix) {
  const TensorImpl& i = *t.impl();
  for (size_t d = 0; d < i.sizes.size(); ++d)
    LT_CHECK(i.sizes[d] <= 1 || i.strides[d] != 0, what, suffix, ": the destination of shape ",
             shape_str(i.sizes), " is an expanded view (dim ", d,
             " repeats one memory location); clone it before writing");
}

void assign_value(Tensor& self, const Tensor& v) {
  if (self.device().is_lazy())
    hook(lazy_hooks().assign, "lazy.assign")(self, v);
  else
    copy_into(self, v);
}

Tensor& inplace(OpKind op, const Tensor& target, ArrayRef<Tensor> in, const OpAttrs& a) {
  // In-place methods are const, as libtorch's: they write the tensor, not the handle.
  Tensor& self = const_cast<Tensor&>(target);
  OpMeta m = infer_meta(op, in, a);
  const char* name = op_name(op);
  static const std::array<std::string, kNumOps> names = [] {
    std::array<std::string, kNumOps> r;
    for (int k = 0; k < kNumOps; ++k) r[k] = std::string(op_name(static_cast<OpKind>(k))) + "_";
    return r;
  }();
  OpContext ctx(names[static_cast<int>(op)].c_str());  // errors below name e.g. "sub_"
  check_writable(self, name, "_");
  LT_CHECK(m.sizes == Dims(self.sizes()), name, "_: result shape ", shape_str(m.sizes),
           " does not match the destination shape ", shape_str(self.sizes()));
  LT_CHECK(can_cast(m.dtype, self.dtype()), name, "_: result type ", dtype_name(m.dtype),
           " can't be cast to the destination type ", dtype_name(self.dtype()));
  for (const Tensor& t : in)
    if (t.defined() && t.device() != self.device() && !t.impl()->wrapped_number)
      throw_error(name, "_: tensors on ", self.device().str(), " and ", t.device().str(),
                  "; transfer explicitly with .to()");
  const bool track = any_autograd(in) && hook(autograd_hooks().needed, "autograd.needed")(in);
  // before anything is written
  if (track) hook(autograd_hooks().check_inplace, "autograd.check_inplace")(self);
  self.impl()->bump_version();
  if (track) {
    // Out of place with history, then the value and the history move into self. The op reads
    // a copy of self, so a formula that saves its input keeps the old value, not the storage
    // about to be overwritten.
    std::vector<Tensor> args(in.begin(), in.end());
    for (Tensor& t : args)
      if (t.is_same(self)) t = self.clone();
    Tensor v = call(op, args, a);
    assign_value(self, v.dtype() == self.dtype() ? v : v.to(self.dtype()));
    self.impl()->autograd = v.impl()->autograd;
    self.impl()->bump_version();  // values this op saved from other views of self are stale
    return self;
  }
  if (self.device().is_lazy()) {
    Tensor v = call(op, in, a);
    hook(lazy_hooks().assign, "lazy.assign")(self,
                                             v.dtype() == self.dtype() ? v : v.to(self.dtype()));
    return self;
  }
  bool overlap = false;
  for (const Tensor& t : in) overlap = overlap || partial_overlap(self, t);
  if (!overlap && m.dtype == self.dtype() && is_elementwise(op)) {
    eager_execute_into(op, in, a, m, self);
  } else {
    Tensor v = eager_execute(op, in, a, m);
    copy_into(self, v);
  }
  return self;
}

std::pair<uint64_t, uint64_t> next_random(int64_t n) {
  RandomState& r = rng();
  std::lock_guard<std::mutex> g(r.mu);
  auto res = std::make_pair(r.seed, r.offset);
  r.offset += static_cast<uint64_t>(n) + 1;  // >= counters any random op uses
  return res;
}

void manual_seed(uint64_t seed) {
  RandomState& r = rng();
  std::lock_guard<std::mutex> g(r.mu);
  r.seed = seed;
  r.offset = 0;
}

Dims pair_of(IntList v, const char* op, const char* what, IntList fallback) {
  if (v.empty() && !fallback.empty()) return Dims(fallback);
  LT_CHECK(v.size() == 1 || v.size() == 2, op, ": ", what, " must have 1 or 2 values, got ",
           shape_str(v));
  return v.size() == 1 ? Dims{v[0], v[0]} : Dims(v);
}

}  // namespace lt
