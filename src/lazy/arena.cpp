// The DeviceContextArena: the live aliases of the lazy device, as an intrusive list in
// creation order (no allocation per tensor; deterministic order for cache keys).
#include <atomic>
#include <chrono>
#include <thread>

#include "core/check.h"
#include "core/shape.h"
#include "lazy/lazy_tensor.h"

namespace lt::lazy {
namespace {
Alias* g_head = nullptr;
Alias* g_tail = nullptr;
}  // namespace

DeviceMutex& device_mutex() {
  static DeviceMutex* m = new DeviceMutex();
  return *m;
}

void DeviceMutex::lock_slow(const void* me) {
  for (int spins = 0;; ++spins) {
    const void* none = nullptr;
    if (owner_.load(std::memory_order_relaxed) == nullptr &&
        owner_.compare_exchange_weak(none, me, std::memory_order_acquire)) {
      depth_ = 1;
      return;
    }
    // The holder may be compiling for seconds: back off from spinning to sleeping.
    if (spins < 64)
      __builtin_ia32_pause();
    else if (spins < 1024)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Alias* arena_head() { return g_head; }

std::shared_ptr<Alias> new_alias(ir::NodePtr value) {
  auto a = std::allocate_shared<Alias>(pool::Allocator<Alias>());
  a->value = std::move(value);
  std::lock_guard<DeviceMutex> g(device_mutex());
  a->prev = g_tail;
  if (g_tail)
    g_tail->next = a.get();
  else
    g_head = a.get();
  g_tail = a.get();
  return a;
}

Alias::~Alias() {
  std::lock_guard<DeviceMutex> g(device_mutex());
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
  auto impl = new_impl();
  impl->sizes = value->meta.sizes;
  impl->strides = impl->sizes;  // room for ndim entries, overwritten with eager's layout
  impl->numel = write_contiguous_strides(impl->sizes, impl->strides.data());
  impl->dtype = value->meta.dtype;
  impl->device = d;
  auto ld = std::make_unique<LazyData>();
  ld->alias = new_alias(std::move(value));
  impl->lazy = std::move(ld);
  return Tensor(std::move(impl));
}

const ir::NodePtr& value_of_views(const Tensor& t) {
  LazyData& ld = lazy_of(t);
  if (ld.views.empty()) return ld.alias->value;
  if (ld.cached && ld.cached_gen == ld.alias->generation) return ld.cached;
  ir::NodePtr v = ld.alias->value;
  for (const ViewStep& s : ld.views) v = ir::make_op(s.op, s.meta, s.attrs, &v, 1);
  ld.cached = std::move(v);
  ld.cached_gen = ld.alias->generation;
  return ld.cached;
}

}  // namespace lt::lazy
