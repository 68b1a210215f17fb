#include "core/config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/check.h"

namespace lt::config {
namespace {

enum class Type { Text, Int, Real, Flag, Choice };

struct Var {
  const char* name;
  Type type;
  const char* dflt;  // as text; "" = none
  double lo, hi;     // Int/Real range
  const char* choices;  // Choice: values separated by '|'
  const char* help;
};

constexpr double kInf = 1e300;

// clang-format off
constexpr Var kVars[] = {
  {"LT_BACKEND", Type::Choice, "mlir", 0, 0, "mlir|interp", "the lazy device's compiler (lt::set_lazy_backend switches at run time)"},
  {"LT_NUM_THREADS", Type::Int, "", 1, 4096, "", "threads for kernels, compiled code and OpenBLAS (default: the cores)"},
  {"LT_DEBUG", Type::Flag, "0", 0, 0, "", "print why each graph compiled, the matmul choices and the target"},
  {"LT_METRICS", Type::Flag, "0", 0, 0, "", "print the metrics report when the process exits"},
  {"LT_PROFILE", Type::Flag, "0", 0, 0, "", "time each step of compiled graphs; print the heaviest when the process exits"},
  {"LT_SAVE_IR", Type::Text, "", 0, 0, "", "append every compiled graph to this file"},
  {"LT_IR_FORMAT", Type::Choice, "text", 0, 0, "text|dot|mlir", "the format LT_SAVE_IR writes"},
  {"LT_FORCE_FALLBACK", Type::Text, "", 0, 0, "", "op1,op2 or all: run these ops on the eager kernels (lazy fallback)"},
  {"LT_MAX_PENDING_OPS", Type::Int, "200000", 1, kInf, "", "pending lazy ops before an automatic barrier"},
  {"LT_HUGE_PAGES", Type::Flag, "1", 0, 0, "", "host blocks of 8 MiB or more ask for transparent huge pages (madvise; 0: never)"},
  {"LT_CACHE_SIZE", Type::Int, "1024", 1, kInf, "", "compiled graphs kept in memory (LRU)"},
  {"LT_CACHE_DIR", Type::Text, "", 0, 0, "", "keep compiled graphs and measured choices on disk in this directory"},
  {"LT_CACHE_LOCK_WAIT", Type::Real, "600", 0, kInf, "", "seconds to wait for another process compiling the same graph"},
  {"LT_COMPILE", Type::Choice, "async", 0, 0, "async|sync", "async: a graph runs on interp while it compiles on a background thread, and a graph seen once is never compiled (sync: the barrier waits for each compile)"},
  {"LT_QUICK_TIER", Type::Choice, "tiered", 0, 0, "tiered|off|only", "shape-generic code: tiered: a background compile makes quick code first (LLVM's fast code generation, OpenBLAS matmuls), then full code once the quick code has run LT_TIER_UP times as long as its compile; off: full code only; only: quick code only, also with LT_COMPILE=sync"},
  {"LT_TIER_UP", Type::Real, "", 0, kInf, "", "tiered generic code: the full compile starts when the quick code has run this many times as long as its own compile took (default: 24 / LT_NUM_THREADS; 0: at its first run)"},
  {"LT_SHAPE_BUCKETS", Type::Text, "", 0, 0, "", "pow2 or a list such as 64,128,256: a graph whose size changed pads that size up to its bucket and runs the bucket's static code (masks keep results exact; a graph that cannot be padded exactly gets shape-generic code)"},
  {"LT_DYNAMIC_SHAPES", Type::Choice, "auto", 0, 0, "auto|off", "graphs that differ only in sizes share shape-generic code once a size has changed (off: one compile per shape)"},
  {"LT_MLIR_MAX_OPS", Type::Int, "20000", 1, kInf, "", "graphs with more ops run on interp instead of compiling"},
  {"LT_MLIR_MATMUL", Type::Choice, "measure", 0, 0, "measure|blas|codegen", "generated matmul kernels: timed against OpenBLAS, never, or always"},
  {"LT_MLIR_PAR_MIN", Type::Int, "", 0, kInf, "", "inner iterations a loop nest needs to run on threads (default: measured)"},
  {"LT_MLIR_INTERLEAVE", Type::Int, "8", 1, 16, "", "vectors per iteration of long compiled loops (1 = the cost model's choice)"},
  {"LT_MLIR_REUSE_CLUSTERS", Type::Flag, "1", 0, 0, "", "a cluster compiled for one graph serves every later graph with the same cluster (0: each graph compiles all of its clusters)"},
  {"LT_MLIR_FUSE_REDUCTIONS", Type::Flag, "1", 0, 0, "", "fuse reductions into compiled clusters (0: library steps)"},
  {"LT_MLIR_DISABLE_LOWERING", Type::Text, "", 0, 0, "", "test only: op1,op2 lose their MLIR lowering (become library steps)"},
  {"LT_MLIR_PIPELINE", Type::Text, "", 0, 0, "", "experiments: the MLIR pass pipeline instead of the built-in one"},
  {"LT_LLVM_OPT", Type::Int, "2", 0, 3, "", "LLVM code generation level"},
  {"LT_JIT_MODULES_PER_THREAD", Type::Int, "2", 1, 8, "", "modules a graph's functions are split into per JIT thread (the threads take them largest first)"},
  {"LT_LLVM_PIPELINE", Type::Text, "", 0, 0, "", "experiments: the LLVM pass pipeline (\"\" = LLVM's O2)"},
  {"LT_CPU_FEATURES", Type::Text, "", 0, 0, "", "restrict the JIT target, LLVM style: -avx512f (the AVX2 path), -avx (SSE)"},
  {"LT_FASHION_MNIST_DIR", Type::Text, "", 0, 0, "", "Fashion-MNIST files (default: Debian's dataset-fashion-mnist)"},
  {"RANK", Type::Int, "0", 0, 1 << 20, "", "lt::dist: this process's rank"},
  {"WORLD_SIZE", Type::Int, "1", 1, 1 << 20, "", "lt::dist: the number of ranks"},
  {"MASTER_ADDR", Type::Text, "127.0.0.1", 0, 0, "", "lt::dist: the rendezvous host"},
  {"MASTER_PORT", Type::Int, "29500", 0, 65535, "", "lt::dist: the rendezvous port"},
  {"LT_DIST_TIMEOUT", Type::Real, "60", 0, kInf, "", "lt::dist: seconds for the rendezvous and each collective"},
  {"LT_DIST_TOKEN", Type::Text, "", 0, 0, "", "lt::dist: shared secret the rendezvous store requires of every rank"},
  {"LT_DIST_STORE", Type::Text, "", 0, 0, "", "lt::dist: rendezvous through this file instead of TCP"},
  {"LT_DIST_IFNAME", Type::Text, "", 0, 0, "", "lt::dist: network interface for Gloo (default GLOO_SOCKET_IFNAME)"},
  {"GLOO_SOCKET_IFNAME", Type::Text, "", 0, 0, "", "lt::dist: Gloo's own interface variable"},
  {"KMP_BLOCKTIME", Type::Text, "", 0, 0, "", "libomp's spin time; unset, lazytensor sets 1 ms (OMP_WAIT_POLICY also keeps libomp's)"},
  {"OMP_WAIT_POLICY", Type::Text, "", 0, 0, "", "libomp's wait policy (see KMP_BLOCKTIME)"},
};
// clang-format on

const Var& var(const char* name) {
  for (const Var& v : kVars)
    if (std::strcmp(v.name, name) == 0) return v;
  throw_error("internal: environment variable ", name, " is not in the config table");
}

const char* type_name(Type t) {
  switch (t) {
    case Type::Text: return "text";
    case Type::Int: return "integer";
    case Type::Real: return "number";
    case Type::Flag: return "0|1";
    case Type::Choice: return "choice";
  }
  return "?";
}

// The value to parse: the environment's, else the default; "" when neither.
std::string value_of(const Var& v) {
  const char* e = std::getenv(v.name);
  return e && *e ? std::string(e) : std::string(v.dflt);
}

std::string range_of(const Var& v) {
  std::ostringstream os;
  if (v.hi >= kInf)
    os << "of at least " << v.lo;
  else
    os << "from " << v.lo << " to " << v.hi;
  return os.str();
}

}  // namespace

std::optional<std::string> text(const char* name) {
  const Var& v = var(name);
  const char* e = std::getenv(name);
  if (e) return std::string(e);
  if (*v.dflt) return std::string(v.dflt);
  return std::nullopt;
}

int64_t integer(const char* name) {
  const Var& v = var(name);
  const std::string s = value_of(v);
  if (s.empty()) return 0;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  LT_CHECK(errno == 0 && end && *end == '\0' && x >= v.lo && x <= v.hi, name, "=", s,
           ": expected an integer ", range_of(v), " (", v.help, ")");
  return x;
}

double real(const char* name) {
  const Var& v = var(name);
  const std::string s = value_of(v);
  if (s.empty()) return 0;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  LT_CHECK(errno == 0 && end && *end == '\0' && std::isfinite(x) && x >= v.lo && x <= v.hi, name,
           "=", s, ": expected a number ", range_of(v), " (", v.help, ")");
  return x;
}

bool flag(const char* name) {
  const Var& v = var(name);
  const std::string s = value_of(v);
  if (s == "1" || s == "true" || s == "on" || s == "yes") return true;
  if (s == "0" || s == "false" || s == "off" || s == "no" || s.empty()) return false;
  throw_error(name, "=", s, ": expected 0 or 1 (", v.help, ")");
}

std::string choice(const char* name) {
  const Var& v = var(name);
  const std::string s = value_of(v);
  std::stringstream ss(v.choices);
  for (std::string c; std::getline(ss, c, '|');)
    if (c == s) return s;
  throw_error(name, "=", s, ": expected one of ", v.choices, " (", v.help, ")");
}

bool is_set(const char* name) {
  var(name);
  return std::getenv(name) != nullptr;
}

namespace {
// Static initialization cannot catch: print the error and exit instead of terminating.
template <class F>
auto or_exit(F read) {
  try {
    return read();
  } catch (const Error& e) {
    std::fprintf(stderr, "lazytensor: %s\n", e.what());
    std::exit(2);
  }
}
}  // namespace

int64_t integer_at_load(const char* name) {
  return or_exit([name] { return integer(name); });
}
bool flag_at_load(const char* name) {
  return or_exit([name] { return flag(name); });
}

std::string help_table() {
  std::ostringstream os;
  os << "| variable | type | default | meaning |\n|---|---|---|---|\n";
  for (const Var& v : kVars) {
    os << "| `" << v.name << "` | ";
    if (v.type == Type::Choice) {
      std::string c = v.choices;
      for (size_t i = 0; (i = c.find('|', i)) != std::string::npos; i += 2) c.replace(i, 1, ", ");
      os << c;
    } else
      os << type_name(v.type);
    os << " | " << (*v.dflt ? v.dflt : "") << " | " << v.help << " |\n";
  }
  return os.str();
}

}  // namespace lt::config
