// Recording: the lazy device's side of every op. A primitive becomes an IR node over its
// inputs' current values; view ops extend the view chain instead (they alias); scalars become
// constants (0 and 1) or run-time parameters; an op the backend cannot lower falls back to the
// eager kernel on materialized inputs. Also in-place substitution and the explicit transfers.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>

#include "backend/backend.h"
#include "core/check.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/shape.h"
#include "eager/executor.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "lazy/lazy_tensor.h"
#include "ops/attrs.h"
#include "ops/lazy_hooks.h"

namespace lt::lazy {
namespace {

// Ops that LT_FORCE_FALLBACK sends to the eager kernels (a table: checked on every op).
bool forced_fallback(OpKind op) {
  static const std::array<bool, kNumOps> forced = [] {
    std::array<bool, kNumOps> r{};
    const std::optional<std::string> e = config::text("LT_FORCE_FALLBACK");
    if (!e) return r;
    std::stringstream ss(*e);
    std::string name;
    while (std::getline(ss, name, ','))
      for (int k = 0; k < kNumOps; ++k)
        if (name == "all" || name == op_name(static_cast<OpKind>(k))) r[k] = true;
    return r;
  }();
  return forced[static_cast<int>(op)];
}

// Eager strides this view would have, so lazy views agree with eager about contiguity and
// about when reshape must copy.
Dims view_result_strides(OpKind op, const TensorImpl& x, const OpAttrs& a, const OpMeta& m,
                         bool* viewable) {
  *viewable = true;
  switch (op) {
    case OpKind::Reshape: {
      auto st = view_strides(x.sizes, x.strides, m.sizes);
      if (st) return *st;
      *viewable = false;
      return contiguous_strides(m.sizes);
    }
    case OpKind::Permute: {
      Dims st;
      for (int64_t d : a.ints) st.push_back(x.strides[d]);
      return st;
    }
    case OpKind::Expand: {
      Dims st(m.sizes.size(), 0);
      size_t off = m.sizes.size() - x.sizes.size();
      for (size_t d = 0; d < x.sizes.size(); ++d)
        st[d + off] = x.sizes[d] == 1 && m.sizes[d + off] != 1 ? 0 : x.strides[d];
      return st;
    }
    default: {  // Slice
      Dims st = x.strides;
      const SliceAttrs s = SliceAttrs::of(a);
      st[s.dim] *= s.step;
      return st;
    }
  }
}

Tensor make_view_tensor(const Tensor& base, OpKind op, const OpAttrs& a, const OpMeta& m,
                        Dims strides) {
  const LazyData& src = lazy_of(base);
  auto impl = new_impl();
  impl->sizes = m.sizes;
  impl->strides = std::move(strides);
  impl->numel = numel_of(m.sizes);
  impl->dtype = m.dtype;
  impl->device = base.device();
  auto ld = std::make_unique<LazyData>();
  ld->alias = src.alias;
  ld->views = src.views;
  ld->views.push_back(ViewStep{op, a, m, Dims(base.sizes()), base.dtype()});
  impl->lazy = std::move(ld);
  impl->version = base.impl()->version_counter();
  return Tensor(std::move(impl));
}

Tensor from_cpu(const Tensor& t, Device d);
Tensor adopt_cpu(Tensor&& t, Device d);
Tensor to_cpu(const Tensor& t);

Tensor fallback(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m) {
  metrics_impl::add(std::string("fallback::") + op_name(op));
  std::vector<Tensor> eager;
  for (const Tensor& t : in) eager.push_back(t.defined() && t.device().is_lazy() ? to_cpu(t) : t);
  Tensor r = eager_execute(op, eager, a, m);
  Device d = in.empty() ? a.device : in[0].device();
  return adopt_cpu(std::move(r), d);
}

// The value of `n` when it is device data or views (and copies) of it, computed eagerly;
// undefined otherwise (a value only the barrier computes).
Tensor known_value(const ir::Node* n, int depth = 0) {
  if (n->kind == ir::NodeKind::Data) return n->data;
  if (n->kind != ir::NodeKind::Op || n->n_operands != 1 || depth > 16 ||
      !(is_view_op(n->op) || n->op == OpKind::Copy))
    return Tensor();
  Tensor v = known_value(n->operands[0].get(), depth + 1);
  return v.defined() ? eager_execute(n->op, {v}, n->attrs, n->meta) : v;
}

// Indices already known at the call (labels and token ids moved to the device, and views of
// them) are range-checked there, so an out-of-range index throws at the user's line with the
// eager kernel's message, before anything is recorded. Computed indices are checked by the
// kernel at the barrier (graph_executor.cpp then keeps donation off and recovers).
Tensor known_tensor_value(const Tensor& t) {
  std::lock_guard<DeviceMutex> g(device_mutex());
  return known_value(value_of(t).get());
}

void check_known_index(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a) {
  Tensor idx = known_tensor_value(in[1]);
  if (idx.defined()) check_index_values(op, in[0], DimAttrs::of(a).dim, idx);
}

// A tensor whose computation failed at a barrier: using it throws that error again. Recording
// pays one relaxed load until some barrier has failed (g_any_failed_run, graph_executor.cpp).
void check_not_failed(ArrayRef<Tensor> in) {
  if (!g_any_failed_run.load(std::memory_order_relaxed)) return;
  for (const Tensor& t : in) {
    if (!t.defined() || !t.impl()->lazy) continue;
    const Alias& al = *lazy_of(t).alias;
    if (al.error) throw Error(*al.error);
  }
}

Tensor execute(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const OpMeta& m) {
  const Device dev = in.empty() ? a.device : in[0].device();
  check_not_failed(in);
  if (op_category(op) == OpCategory::Indexing) check_known_index(op, in, a);
  if (is_view_op(op)) {
    std::lock_guard<DeviceMutex> g(device_mutex());
    bool viewable = true;
    Dims st = view_result_strides(op, *in[0].impl(), a, m, &viewable);
    if (viewable) return make_view_tensor(in[0], op, a, m, std::move(st));
    // Eager would copy here (the layout does not allow a view): so does lazy.
    ir::NodePtr v = value_of(in[0]);
    OpMeta cm{Dims(in[0].sizes()), in[0].dtype(), in[0].dtype()};
    ir::NodePtr c = ir::make_op(OpKind::Copy, cm, OpAttrs{}, &v, 1);
    return make_lazy(ir::make_op(op, m, a, &c, 1), dev);
  }
  if (op == OpKind::Scalar) {
    const ScalarAttrs s = ScalarAttrs::of(a);
    bool special = s.value == 0.0 || s.value == 1.0;
    return make_lazy(special ? ir::make_const(a.dtype, s.value, s.int_value)
                             : ir::make_param(a.dtype, s.value, s.int_value),
                     dev);
  }
  if (forced_fallback(op) || !backend::active_backend().supports(op))
    return fallback(op, in, a, m);
  ir::NodePtr params[2];  // a random op's seed and offset
  ir::Node* ops[8];        // borrowed: the inputs' values, alive while the lock is held
  size_t n = 0;
  const OpAttrs* attrs = &a;
  OpAttrs random_attrs;
  Tensor out;
  {
    std::lock_guard<DeviceMutex> g(device_mutex());
    if (op_category(op) == OpCategory::Random) {
      // Seed and offset are run-time parameters: a new stream position never recompiles.
      RandomAttrs r = RandomAttrs::of(a);
      params[0] = ir::make_param(kInt64, static_cast<double>(r.seed), r.seed);
      params[1] = ir::make_param(kInt64, static_cast<double>(r.offset), r.offset);
      ops[n++] = params[0].get();
      ops[n++] = params[1].get();
      random_attrs = a;
      r.seed = r.offset = 0;
      r.write(&random_attrs);
      attrs = &random_attrs;
    }
    if (in.size() + n > 8) {
      std::vector<ir::Node*> many(ops, ops + n);
      for (const Tensor& t : in)
        if (t.defined()) many.push_back(value_of(t).get());
      out = make_lazy(ir::make_op(op, m, *attrs, many.data(), many.size()), dev);
    } else {
      for (const Tensor& t : in)
        if (t.defined()) ops[n++] = value_of(t).get();
      out = make_lazy(ir::make_op(op, m, *attrs, ops, n), dev);
    }
    note_recorded_op();
  }
  return out;
}

// A write through a chain with an expand (legal when the view repeats no memory location, e.g.
// x.expand({3, 4}).select(1, 2)) has no step-by-step inverse: an expanded element may be written
// through any one of its copies. So the base takes, for each of its elements, the view element
// that aliases it (found by running the chain eagerly on 0, 1, ..., n - 1), or keeps its value.
ir::NodePtr write_through_expand(const LazyData& d, ir::NodePtr v) {
  const Dims& base_sizes = d.views.front().in_sizes;
  const Dtype dt = d.views.front().in_dtype;
  const int64_t n = numel_of(base_sizes);
  Tensor pos = make_eager(base_sizes, kInt64);
  std::iota(pos.data_ptr<int64_t>(), pos.data_ptr<int64_t>() + n, int64_t{0});
  for (const ViewStep& s : d.views)
    pos = eager_execute(s.op, {pos}, s.attrs, OpMeta{s.meta.sizes, kInt64, kInt64});
  const int64_t m = pos.numel();
  if (m == 0) return d.alias->value;
  Tensor flat = make_eager({m}, kInt64), index = make_eager({n}, kInt64);
  Tensor mask = make_eager({n}, kBool);
  copy_into(reshape_view(flat, pos.sizes()), pos);
  const int64_t* f = flat.data_ptr<int64_t>();
  int64_t* ix = index.data_ptr<int64_t>();
  bool* mk = mask.data_ptr<bool>();
  std::fill_n(ix, n, 0);
  std::fill_n(mk, n, false);
  for (int64_t k = 0; k < m; ++k) {
    ix[f[k]] = k;
    mk[f[k]] = true;
  }
  auto reshaped = [dt](ir::NodePtr x, Dims sizes) {
    OpAttrs a;
    a.ints = sizes;
    return ir::make_op(OpKind::Reshape, OpMeta{sizes, dt, dt}, a, &x, 1);
  };
  ir::NodePtr gather[2] = {reshaped(std::move(v), Dims{m}), ir::make_data(index)};
  const OpMeta flat_meta{Dims{n}, dt, dt};
  ir::NodePtr where[3] = {ir::make_data(mask),
                          ir::make_op(OpKind::Gather, flat_meta, OpAttrs{}, gather, 2),
                          reshaped(d.alias->value, Dims{n})};
  return reshaped(ir::make_op(OpKind::Where, flat_meta, OpAttrs{}, where, 3), base_sizes);
}

// In-place: the destination's alias gets a new value; through views, the base is rebuilt
// with the inverse view ops (paper Figure 3).
void assign(Tensor& dst, const Tensor& value_t) {
  check_not_failed({value_t});
  std::lock_guard<DeviceMutex> g(device_mutex());
  LazyData& d = lazy_of(dst);
  ir::NodePtr v = value_of(value_t);
  if (d.views.empty()) {
    d.alias->value = std::move(v);
    d.alias->generation++;
    d.alias->error.reset();  // a whole new value: the failure is gone
    return;
  }
  if (std::any_of(d.views.begin(), d.views.end(),
                  [](const ViewStep& s) { return s.op == OpKind::Expand; })) {
    d.alias->value = write_through_expand(d, std::move(v));
    d.alias->generation++;
    return;
  }
  // Values of the chain's intermediate tensors, from the base down.
  std::vector<ir::NodePtr> chain{d.alias->value};
  for (size_t k = 0; k + 1 < d.views.size(); ++k) {
    const ViewStep& s = d.views[k];
    chain.push_back(ir::make_op(s.op, s.meta, s.attrs, &chain.back(), 1));
  }
  for (size_t k = d.views.size(); k-- > 0;) {
    const ViewStep& s = d.views[k];
    OpMeta in_meta{s.in_sizes, s.in_dtype, s.in_dtype};
    OpAttrs ia;
    switch (s.op) {
      case OpKind::Reshape:
        ia.ints = s.in_sizes;
        v = ir::make_op(OpKind::Reshape, in_meta, ia, &v, 1);
        break;
      case OpKind::Permute: {
        ia.ints = Dims(s.attrs.ints.size());
        for (size_t j = 0; j < s.attrs.ints.size(); ++j) ia.ints[s.attrs.ints[j]] = j;
        OpMeta pm{s.in_sizes, s.in_dtype, s.in_dtype};
        v = ir::make_op(OpKind::Permute, pm, ia, &v, 1);
        break;
      }
      case OpKind::Slice: {
        ir::NodePtr two[2] = {chain[k], v};
        v = ir::make_op(OpKind::SliceScatter, in_meta, s.attrs, two, 2);
        break;
      }
      default:
        throw_error("internal: cannot write through a ", op_name(s.op), " view");
    }
  }
  d.alias->value = std::move(v);
  d.alias->generation++;
}

Tensor from_cpu(const Tensor& t, Device d) {
  metrics_impl::add("TransferToDevice");
  Tensor c = make_eager(t.sizes(), t.dtype());
  copy_into(c, t);
  return make_lazy(ir::make_data(c), d);
}

// The buffer is the device's without a copy only where no one else can reach it: the sole
// handle, on the sole reference to storage it owns (not from_blob's caller memory), dense from
// its start and filling at least half of it past 4 KB (a small view of a large dead buffer is
// copied out), and no autograd state (the copy leaves that behind too).
Tensor adopt_cpu(Tensor&& t, Device d) {
  TensorImpl* impl = t.impl();
  const bool alone =
      t.impl_ptr().use_count() == 1 && impl->storage && impl->storage.use_count() == 1 &&
      impl->storage->owned && !impl->autograd && impl->offset == 0 && t.is_contiguous() &&
      impl->storage->nbytes <=
          std::max<size_t>(4096, 2 * static_cast<size_t>(impl->numel) * dtype_size(impl->dtype));
  if (!alone) return from_cpu(t, d);
  metrics_impl::add("TransferToDevice");
  metrics_impl::add("TransferAdopted");
  Tensor c = std::move(t);
  return make_lazy(ir::make_data(c), d);
}

// Materializes the tensor's alias, then applies its view chain eagerly and copies: the result
// never aliases a device buffer (a later donation must not show through).
Tensor to_cpu(const Tensor& t) {
  metrics_impl::add("TransferFromDevice");
  LazyData& ld = lazy_of(t);
  sync_aliases({ld.alias.get()}, false);
  Tensor e;
  std::vector<ViewStep> views;
  {
    std::lock_guard<DeviceMutex> g(device_mutex());
    e = ld.alias->value->data;
    views = ld.views;
  }
  for (const ViewStep& s : views) e = eager_execute(s.op, {e}, s.attrs, s.meta);
  Tensor c = make_eager(e.sizes(), e.dtype());
  copy_into(c, e);
  return c;
}

const bool g_installed = [] {
  LazyHooks& h = lazy_hooks();
  h.execute = &execute;
  h.assign = &assign;
  h.to_cpu = &to_cpu;
  h.from_cpu = &from_cpu;
  h.adopt_cpu = &adopt_cpu;
  h.known_value = &known_tensor_value;
  return true;
}();

}  // namespace
}  // namespace lt::lazy
