// Dtype names, device parsing and the thread count.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "core/check.h"
#include "core/config.h"
#include "core/parallel.h"
#include "lt/device.h"
#include "lt/dtype.h"

namespace lt {

namespace {
std::atomic<Dtype> g_default_dtype{kFloat32};
}

Dtype get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(Dtype t) {
  LT_CHECK(t == kFloat32 || t == kFloat64,
           "set_default_dtype: only float32 and float64 can be the default, got ", dtype_name(t));
  g_default_dtype.store(t, std::memory_order_relaxed);
}

size_t dtype_size(Dtype t) {
  switch (t) {
    case kBool: return 1;
    case kInt32: return 4;
    case kInt64: return 8;
    case kFloat32: return 4;
    case kFloat64: return 8;
    case kInt8:
      return 1;
    case kFloat16:
      return 2;
    case kBFloat16:
      return 2;
  }
  return 0;
}

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b || b == kBool) return a;
  if (a == kBool) return b;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa && dtype_size(a) == dtype_size(b)) return kFloat32;  // float16 with bfloat16
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

const char* dtype_name(Dtype t) {
  switch (t) {
    case kBool: return "bool";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kFloat32: return "float32";
    case kFloat64: return "float64";
    case kInt8:
      return "int8";
    case kFloat16:
      return "float16";
    case kBFloat16:
      return "bfloat16";
  }
  return "?";
}

const char* dtype_short(Dtype t) {
  switch (t) {
    case kBool: return "pred";
    case kInt32: return "s32";
    case kInt64: return "s64";
    case kFloat32: return "f32";
    case kFloat64: return "f64";
    case kInt8:
      return "s8";
    case kFloat16:
      return "f16";
    case kBFloat16:
      return "bf16";
  }
  return "?";
}

Device::Device(const std::string& spec) : type_(DeviceType::CPU), index_(0) {
  std::string name = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    LT_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos,
             "Device: invalid device index in \"", spec, "\"");
    index_ = std::stoi(idx);
  }
  if (name == "cpu")
    type_ = DeviceType::CPU;
  else if (name == "lazy")
    type_ = DeviceType::Lazy;
  else
    throw_error("Device: unknown device \"", spec, "\" (expected \"cpu\" or \"lazy\")");
}

std::string Device::str() const {
  std::string s = type_ == DeviceType::CPU ? "cpu" : "lazy";
  if (index_ != 0) s += ":" + std::to_string(index_);
  return s;
}

namespace {
int initial_threads() {
  // Runs before the first parallel region, so before libomp reads its settings: idle OpenMP
  // workers spin for 1 ms (libomp's default is 200 ms) and then sleep. A short spin keeps the
  // fork of the next kernel cheap (an MLP step: 700 steps/s with sleeping workers, 1150 with
  // this) without starving OpenBLAS's threads or another process on a 2-core machine. The
  // user's KMP_BLOCKTIME or OMP_WAIT_POLICY wins.
  if (!config::text("KMP_BLOCKTIME") && !config::text("OMP_WAIT_POLICY"))
    setenv("KMP_BLOCKTIME", "1", 0);
  if (const int64_t n = config::integer_at_load("LT_NUM_THREADS"); n > 0) return static_cast<int>(n);
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}
// A function-local static: other translation units ask for the count during static init.
int& threads_slot() {
  static int n = initial_threads();
  return n;
}
}  // namespace

int num_threads() { return threads_slot(); }

namespace {
std::atomic<bool> g_lent{false};  // one background compile worker: lent or not
}
int run_threads() {
  return std::max(1, threads_slot() - (g_lent.load(std::memory_order_relaxed) ? 1 : 0));
}
void lend_core(bool on) { g_lent.store(on, std::memory_order_relaxed); }
void set_core_num_threads(int n) { threads_slot() = n > 0 ? n : 1; }

}  // namespace lt

