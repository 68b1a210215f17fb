// The lazy runtime's public controls: the barrier, targeted sync, debug dumps and metrics.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lt/device.h"
#include "lt/tensor.h"

namespace lt {

// Barrier: compiles (or finds in the cache) and runs one graph that computes every live
// tensor of the lazy device, then swaps each tensor's pending IR for its buffer.
// Execution is synchronous today; `wait` is accepted for API compatibility.
void mark_step(bool wait = false);
void mark_step(const Device& device, bool wait = false);
// Evaluates just these tensors (no buffer donation).
void sync(const std::vector<Tensor>& tensors);
// Returns when every launched graph has finished.
void wait_device_ops();

// The lazy device's compiler: "mlir" (the default, or LT_BACKEND) or "interp" (runs graphs
// with the eager kernels). Graphs compiled by each stay cached; switching does not recompile
// what the other already compiled.
void set_lazy_backend(const std::string& name);
std::string lazy_backend();

// Compiling in the background (LT_COMPILE=async, the default): a graph that misses the compile
// cache runs on the interpreter (the eager kernels) until its compiled code is ready, and a
// graph of a new structure starts compiling at its second run (a graph seen once never
// compiles). Results of the interpreted runs are eager's; compiled ones agree within the
// tolerances of compiled math. LT_COMPILE=sync makes every barrier wait for its compile.
// wait_for_compiles returns when every compile started so far has finished (benchmarks that
// time the compiled code, tests).
void wait_for_compiles();

// Forgets every compiled graph of this process (and the sizes seen per graph structure, so the
// next graph of each structure compiles specialized code again). The disk cache (LT_CACHE_DIR)
// stays. For benchmarks and tests that must start as a fresh process would.
void clear_compile_cache();

namespace debug {
// The pending IR graph behind these tensors, in the paper's Figure 1 text form.
std::string ir_text(const std::vector<Tensor>& tensors);
// The same graph as graphviz DOT.
std::string ir_dot(const std::vector<Tensor>& tensors);
}  // namespace debug

namespace metrics {
std::string report();
int64_t counter(const std::string& name);  // 0 if never counted (a timer: how many times)
double timer_ms(const std::string& name);  // total time of a timer (e.g. "ExecuteTime")
void reset();
}  // namespace metrics

}  // namespace lt
