// Lazy tensor state (paper §4). Every lazy tensor points at an Alias: the storage it shares
// with its views, whose current value is an IR node (pending) or a device-data leaf
// (materialized). A view adds the chain of view ops from the alias's value to itself, so
// reading a view re-derives it from the current base, and an in-place write through a view
// rebuilds the base with the inverse view ops.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>  // std::lock_guard
#include <string>
#include <vector>

#include "core/pool.h"
#include "core/tensor_impl.h"
#include "ir/node.h"

namespace lt::lazy {

struct Alias {
  Alias() noexcept {}  // no zeroing pass before the initializers (see TensorImpl)
  ir::NodePtr value;
  uint64_t generation = 0;
  // Set when the barrier that computed `value` failed: reading or using the tensor throws this
  // message again; later barriers skip it. A whole new value (assign) clears it.
  std::shared_ptr<const std::string> error;
  // Intrusive list of the device's live aliases (the DeviceContextArena), in creation order.
  Alias* prev = nullptr;
  Alias* next = nullptr;
  ~Alias();
};

struct ViewStep {
  OpKind op;
  OpAttrs attrs;
  OpMeta meta;    // result of this step
  Dims in_sizes;  // sizes of this step's input
  Dtype in_dtype;
};

struct LazyData final : LazyPayload, pool::Pooled {
  std::shared_ptr<Alias> alias;
  std::vector<ViewStep> views;
  ir::NodePtr cached;  // value of the view chain for alias->generation == cached_gen
  uint64_t cached_gen = ~uint64_t{0};
  std::unique_ptr<LazyPayload> clone() const override {
    auto c = std::make_unique<LazyData>();
    c->alias = alias;
    c->views = views;
    return c;
  }
};

// The device's lock: guards alias values, the arena list and graph execution. Recursive
// (a sync runs inside recording paths); uncontended it is one compare-and-swap, because every
// recorded op takes it.
class DeviceMutex {
 public:
  void lock() {
    const void* me = self();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    const void* none = nullptr;
    if (owner_.compare_exchange_strong(none, me, std::memory_order_acquire)) {
      depth_ = 1;
      return;
    }
    lock_slow(me);
  }
  void unlock() {
    if (--depth_ == 0) owner_.store(nullptr, std::memory_order_release);
  }

 private:
  static const void* self() {  // a per-thread address
    __attribute__((tls_model("initial-exec"))) static thread_local char tag;
    return &tag;
  }
  void lock_slow(const void* me);
  std::atomic<const void*> owner_{nullptr};
  int64_t depth_ = 0;  // touched only by the owner
};
DeviceMutex& device_mutex();

// Arena: register/unregister live aliases; `for_each_alias` walks them in creation order.
std::shared_ptr<Alias> new_alias(ir::NodePtr value);
template <typename F>
void for_each_alias(F f);
Alias* arena_head();

LazyData& lazy_of(const Tensor& t);
// The tensor's current value (applying its view chain). Caller holds device_mutex().
// The reference stays valid while the lock is held and the tensor is alive.
const ir::NodePtr& value_of_views(const Tensor& t);  // general case: applies the view chain
inline const ir::NodePtr& value_of(const Tensor& t) {
  const auto* ld = static_cast<const LazyData*>(t.impl() ? t.impl()->lazy.get() : nullptr);
  if (ld && ld->views.empty()) return ld->alias->value;  // a plain tensor: its alias's value
  return value_of_views(t);
}
// A new lazy tensor whose alias holds `value` (contiguous, no views).
Tensor make_lazy(ir::NodePtr value, Device d);

// Graph execution (graph_executor.cpp). Caller holds nothing.
void sync_aliases(const std::vector<Alias*>& aliases, bool barrier);
// Drops the in-memory compile cache and the shape history of every graph structure.
void clear_compile_cache();
// Set once any alias has been marked failed (Alias::error): until then recording skips the check.
extern std::atomic<bool> g_any_failed_run;
void note_recorded_op();

template <typename F>
void for_each_alias(F f) {
  for (Alias* a = arena_head(); a; a = a->next) f(a);
}

}  // namespace lt::lazy
