// The DeviceContextArena: the live aliases of the lazy device, as an intrusive list in
// creation order (no allocation per tensor; deterministic order for cache keys).
#include <atomic>

#include "core/check.h"
#include "core/shape.h"
#include "lazy/lazy_tensor.h"

namespace lt::lazy {
namespace {
Alias* g_head = nullptr;
Alias* g_tail = nullptr;
std::atomic<uint64_t> g_next_id{1};
}  // namespace

std::recursive_mutex& device_mutex() {
  static std::recursive_mutex* m = new std::recursive_mutex();
  return *m;
}

Alias* arena_head() { return g_head; }

std::shared_ptr<Alias> new_alias(ir::NodePtr value) {
  auto a = std::make_shared<Alias>();
  a->id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  a->value = std::move(value);
  std::lock_guard<std::recursive_mutex> g(device_mutex());
  a->prev = g_tail;
  if (g_tail)
    g_tail->next = a.get();
  else
    g_head = a.get();
  g_tail = a.get();
  return a;
}

Alias::~Alias() {
  std::lock_guard<std::recursive_mutex> g(device_mutex());
  if (prev)
    prev->next = next;
  else if (g_head == this)
    g_head = next;
  if (next)
    next->prev = prev;
  else if (g_tail == this)
    g_tail = prev;
}

LazyData& lazy_of(const Tensor& t) {
  LT_CHECK(t.defined() && t.device().is_lazy() && t.impl()->lazy, "internal: not a lazy tensor");
  return static_cast<LazyData&>(*t.impl()->lazy);
}

Tensor make_lazy(ir::NodePtr value, Device d) {
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = value->meta.sizes;
  impl->strides = contiguous_strides(impl->sizes);
  impl->numel = numel_of(impl->sizes);
  impl->dtype = value->meta.dtype;
  impl->device = d;
  auto ld = std::make_unique<LazyData>();
  ld->alias = new_alias(std::move(value));
  impl->lazy = std::move(ld);
  return Tensor(std::move(impl));
}

ir::NodePtr value_of(const Tensor& t) {
  LazyData& ld = lazy_of(t);
  if (ld.views.empty()) return ld.alias->value;
  if (ld.cached && ld.cached_gen == ld.alias->generation) return ld.cached;
  ir::NodePtr v = ld.alias->value;
  for (const ViewStep& s : ld.views) v = ir::make_op(s.op, s.meta, s.attrs, &v, 1);
  ld.cached = v;
  ld.cached_gen = ld.alias->generation;
  return v;
}

}  // namespace lt::lazy
