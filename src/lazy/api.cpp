// The public lazy-runtime functions of include/lt/lazy.h.
#include "backend/backend.h"
#include "core/check.h"
#include "core/metrics.h"
#include "ir/graph.h"
#include "lazy/background_compile.h"
#include "lazy/lazy_tensor.h"
#include "lt/lazy.h"

namespace lt {

void mark_step(bool wait) { mark_step(Device("lazy"), wait); }

void mark_step(const Device& device, bool) {
  LT_CHECK(device.is_lazy(), "mark_step: expected the lazy device, got ", device.str());
  metrics_impl::add("MarkStep");
  std::vector<lazy::Alias*> all;
  std::lock_guard<lazy::DeviceMutex> lock(lazy::device_mutex());
  lazy::for_each_alias([&](lazy::Alias* a) { all.push_back(a); });
  lazy::sync_aliases(all, true);
}

void sync(const std::vector<Tensor>& tensors) {
  std::vector<lazy::Alias*> aliases;
  std::lock_guard<lazy::DeviceMutex> lock(lazy::device_mutex());
  for (const Tensor& t : tensors)
    if (t.defined() && t.device().is_lazy()) aliases.push_back(lazy::lazy_of(t).alias.get());
  lazy::sync_aliases(aliases, false);
}

void wait_device_ops() {}  // graphs run synchronously: nothing is in flight here

void set_lazy_backend(const std::string& name) {
  std::lock_guard<lazy::DeviceMutex> lock(lazy::device_mutex());  // not while a graph runs
  backend::set_active_backend(name);
}

std::string lazy_backend() { return backend::active_backend().name(); }

void wait_for_compiles() { lazy::wait_for_background_compiles(); }  // no lock: none needed

void clear_compile_cache() {
  std::lock_guard<lazy::DeviceMutex> lock(lazy::device_mutex());  // not while a graph runs
  lazy::clear_compile_cache();
}

namespace {
ir::Graph pending_graph(const std::vector<Tensor>& tensors) {
  std::vector<ir::NodePtr> roots;
  std::lock_guard<lazy::DeviceMutex> lock(lazy::device_mutex());
  for (const Tensor& t : tensors) {
    LT_CHECK(t.defined() && t.device().is_lazy(), "ir_text: expected lazy tensors, got a ",
             t.defined() ? t.device().str() : std::string("undefined"), " tensor");
    roots.push_back(lazy::value_of(t));
  }
  return ir::build_graph(std::move(roots));
}
}  // namespace

namespace debug {
std::string ir_text(const std::vector<Tensor>& tensors) { return ir::to_text(pending_graph(tensors)); }
std::string ir_dot(const std::vector<Tensor>& tensors) { return ir::to_dot(pending_graph(tensors)); }
}  // namespace debug

namespace metrics {
std::string report() { return metrics_impl::report(); }
int64_t counter(const std::string& name) { return metrics_impl::get(name); }
double timer_ms(const std::string& name) {
  return static_cast<double>(metrics_impl::total_ns(name)) / 1e6;
}
void reset() { metrics_impl::reset(); }
}  // namespace metrics

}  // namespace lt
