// Recording backward nodes (the hooks every op calls), the tensor-level autograd methods and
// grad mode.
#include <algorithm>
#include <cctype>

#include "autograd/autograd.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"
#include "ops/autograd_hooks.h"

namespace lt {
namespace autograd {
namespace {

thread_local bool g_grad_enabled = true;

bool wants_grad(const Tensor& t) {
  Meta* m = meta_of(t);
  return m && m->requires_grad;
}

bool needed(ArrayRef<Tensor> in) {
  if (!g_grad_enabled) return false;
  for (const Tensor& t : in)
    if (t.defined() && wants_grad(t)) return true;
  return false;
}

// Whether the formula reads input i for a gradient that is wanted: a product's factor is read
// only for the other factor's gradient, a quotient's numerator only for the divisor's (so x * 2
// keeps nothing of x alive, and a second backward through it needs no retain_graph).
bool saved_is_used(const GradFn& fn, size_t i) {
  if (fn.op == OpKind::Mul) return fn.next[1 - i].active();
  if (fn.op == OpKind::Div && i == 0) return fn.next[1].active();
  if (fn.op == OpKind::Fmod) return fn.next[1].active();  // only b's gradient reads a and b
  return true;
}

void record(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const Tensor& out) {
  if (!differentiable(op) || !is_floating(out.dtype())) return;
  auto fn = std::make_shared<GradFn>();
  fn->op = op;
  fn->attrs = a;
  fn->out_sizes = Dims(out.sizes());
  fn->out_dtype = out.dtype();
  bool any = false;
  for (const Tensor& t : in) {
    fn->next.push_back(t.defined() && is_floating(t.dtype()) ? edge_of(t) : Edge{});
    any = any || fn->next.back().active();
    fn->in_sizes.push_back(t.defined() ? Dims(t.sizes()) : Dims());
    fn->in_dtypes.push_back(t.defined() ? t.dtype() : kFloat32);
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = in[i];
    bool keep = t.defined() && formula_reads(op, static_cast<int>(i)) && saved_is_used(*fn, i);
    fn->saved.push_back(keep ? detached(t) : Tensor());
    fn->saved_version.push_back(keep ? t.impl()->version_counter()->value : 0);
  }
  if (!any) return;
  if (formula_reads(op, 3)) {
    fn->out = detached(out);
    fn->out_version = out.impl()->version_counter()->value;
  }
  Meta& m = ensure_meta(out);
  m.requires_grad = true;
  m.grad_fn = std::move(fn);
}

void check_inplace(const Tensor& self) {
  Meta* m = meta_of(self);
  if (!g_grad_enabled || !m || !m->requires_grad) return;
  LT_CHECK(m->grad_fn, "in-place operation on a leaf tensor that requires grad (shape ",
           shape_str(self.sizes()), "); wrap it in lt::NoGradGuard or use an out-of-place op");
  // A write through a view changes its base (maybe a leaf), whose history would not see it.
  const OpKind op = m->grad_fn->op;
  LT_CHECK(
      op != OpKind::Slice && op != OpKind::Permute && op != OpKind::Reshape && op != OpKind::Expand,
      "in-place operation on the result of ", op_name(op), " (shape ", shape_str(self.sizes()),
      "), a view of a tensor that requires grad: autograd does not track writes through views; "
      "clone() it first or build the result out of place");
}

const bool g_installed = [] {
  AutogradHooks& h = autograd_hooks();
  h.needed = &needed;
  h.record = &record;
  h.check_inplace = &check_inplace;
  h.set_requires_grad = [](Tensor& t, bool r) { t.requires_grad_(r); };
  return true;
}();

}  // namespace

Edge edge_of(const Tensor& t) {
  Meta* m = meta_of(t);
  if (!m || !m->requires_grad) return {};
  if (m->grad_fn) return {m->grad_fn, nullptr, m->output_nr};
  return {nullptr, t.impl_ptr(), 0};
}

Tensor with_history(const Tensor& t, std::shared_ptr<GradFn> fn, uint32_t output_nr) {
  Tensor r = detached(t);
  Meta& m = ensure_meta(r);
  m.requires_grad = true;
  m.grad_fn = std::move(fn);
  m.output_nr = output_nr;
  return r;
}

std::string GradFn::name() const {
  if (custom) return custom_name(*this);
  std::string r;
  bool up = true;
  for (const char* c = op_name(op); *c; ++c) {
    if (*c == '_') {
      up = true;
      continue;
    }
    r += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
    up = false;
  }
  return r + "Backward0";
}

Meta* meta_of(const Tensor& t) { return static_cast<Meta*>(t.impl()->autograd.get()); }

Meta& ensure_meta(const Tensor& t) {
  if (!t.impl()->autograd) t.impl()->autograd = std::make_shared<Meta>();
  return *meta_of(t);
}

Tensor detached(const Tensor& t) {
  const TensorImpl& s = *t.impl();
  auto impl = new_impl();
  impl->sizes = s.sizes;
  impl->strides = s.strides;
  impl->offset = s.offset;
  impl->numel = s.numel;
  impl->dtype = s.dtype;
  impl->device = s.device;
  impl->wrapped_number = s.wrapped_number;
  impl->storage = s.storage;
  if (s.lazy) impl->lazy = s.lazy->clone();
  impl->version = t.impl()->version_counter();
  return Tensor(std::move(impl));
}

}  // namespace autograd

bool is_grad_enabled() { return autograd::g_grad_enabled; }
void set_grad_enabled(bool enabled) { autograd::g_grad_enabled = enabled; }

Tensor& Tensor::requires_grad_(bool r) const {
  LT_CHECK(!r || is_floating(dtype()), "requires_grad_: only floating-point tensors can require "
           "gradients (this one is ", dtype_name(dtype()), ")");
  autograd::Meta* m = autograd::meta_of(*this);
  LT_CHECK(!m || !m->grad_fn || r, "requires_grad_: cannot turn off gradients of a non-leaf "
           "tensor; use detach()");
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: it changes the tensor
  if (!r && !m) return self;
  autograd::ensure_meta(*this).requires_grad = r;
  return self;
}

bool Tensor::requires_grad() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return m && m->requires_grad;
}

bool Tensor::is_leaf() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return !m || !m->grad_fn;
}

Tensor Tensor::grad() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return m ? m->grad : Tensor();
}

Tensor& Tensor::mutable_grad() { return autograd::ensure_meta(*this).grad; }

Tensor Tensor::detach() const { return autograd::detached(*this); }

Tensor& Tensor::detach_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: it changes the tensor
  if (autograd::Meta* m = autograd::meta_of(*this)) {
    m->grad_fn = nullptr;
    m->requires_grad = false;
    m->retains_grad = false;
  }
  return self;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return m ? m->grad_fn : nullptr;
}

const Tensor& Tensor::retain_grad() const {
  autograd::Meta* m = autograd::meta_of(*this);
  LT_CHECK(m && m->requires_grad, "retain_grad: the tensor (shape ", shape_str(sizes()),
           ") does not require grad");
  if (!m->grad_fn || m->retains_grad) return *this;  // a leaf keeps its .grad anyway
  m->retains_grad = true;
  auto& slots = m->grad_fn->retained;
  if (slots.size() <= m->output_nr) slots.resize(m->output_nr + 1);
  slots[m->output_nr] = impl()->autograd;
  return *this;
}

bool Tensor::retains_grad() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return m && m->retains_grad;
}

uint32_t Tensor::output_nr() const {
  autograd::Meta* m = autograd::meta_of(*this);
  return m ? m->output_nr : 0;
}

int64_t Tensor::_version() const { return impl()->version ? impl()->version->value : 0; }

void Tensor::set_data(const Tensor& new_data) {
  LT_CHECK(defined() && new_data.defined(), "set_data: undefined tensor");
  const TensorImpl& s = *new_data.impl();
  TensorImpl& d = *impl();
  d.sizes = s.sizes;
  d.strides = s.strides;
  d.offset = s.offset;
  d.numel = s.numel;
  d.dtype = s.dtype;
  d.device = s.device;
  d.storage = s.storage;
  d.lazy = s.lazy ? s.lazy->clone() : nullptr;
  d.version = new_data.impl()->version_counter();
  if (autograd::Meta* m = autograd::meta_of(*this))
    if (m->grad.defined() && (m->grad.device() != d.device || m->grad.dtype() != d.dtype))
      m->grad = Tensor();  // a gradient for the old placement no longer applies
}

}  // namespace lt

namespace lt {

const Tensor& Tensor::resize_(IntList new_sizes) const {
  LT_CHECK(defined(), "resize_: called on an undefined tensor");
  for (int64_t s : new_sizes) LT_CHECK(s >= 0, "resize_: negative size in ", shape_str(new_sizes));
  if (sizes().equals(new_sizes)) return *this;
  LT_CHECK(!requires_grad(), "resize_: cannot resize a tensor that requires grad (shape ",
           shape_str(sizes()), "); resize a detach()ed copy");
  Tensor r = zeros(new_sizes, options());
  const int64_t n = std::min(numel(), r.numel());
  if (n > 0) r.view({-1}).narrow(0, 0, n).copy_(reshape({-1}).narrow(0, 0, n));
  const_cast<Tensor&>(*this).set_data(r);
  return *this;
}

}  // namespace lt
