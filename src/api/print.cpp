// Printing in PyTorch's Python style: tensor([[1.0000, 2.0000], ...]), summarized past 1000
// elements, with the dtype named when it is not the default and the device when not cpu.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <vector>

#include "api/dispatch.h"
#include "core/shape.h"

namespace lt {
namespace {

struct Fmt {
  bool is_float = false, is_bool = false, int_mode = false, sci = false;
  int width = 1;
  std::string one(double v) const {
    char buf[64];
    if (is_bool) return v != 0 ? "True" : "False";
    if (!is_float) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else if (std::isnan(v)) {
      return "nan";
    } else if (std::isinf(v)) {
      return v > 0 ? "inf" : "-inf";
    } else if (sci) {
      std::snprintf(buf, sizeof buf, "%.4e", v);
    } else if (int_mode) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.4f", v);
    }
    return buf;
  }
};

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdge = 3;

void emit(std::ostream& os, const std::vector<double>& vals, IntList sizes, const Fmt& f,
          int64_t dim, int64_t base, int indent, bool summarize) {
  const int64_t nd = sizes.size();
  if (dim == nd) {
    std::string s = f.one(vals[base]);
    os << std::string(std::max<int>(0, f.width - static_cast<int>(s.size())), ' ') << s;
    return;
  }
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < nd; ++d) stride *= sizes[d];
  const int64_t n = sizes[dim];
  os << '[';
  bool first = true;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdge && i == kEdge) {
      os << ",";
      if (dim == nd - 1) os << " ...";
      else os << "\n" << std::string(indent + 1, ' ') << "...";
      i = n - kEdge - 1;
      continue;
    }
    if (!first) {
      os << ',';
      if (dim == nd - 1) os << ' ';
      else os << std::string(static_cast<size_t>(nd - dim - 1), '\n') << std::string(indent + 1, ' ');
    }
    first = false;
    emit(os, vals, sizes, f, dim + 1, base + i * stride, indent + 1, summarize);
  }
  os << ']';
}

}  // namespace

std::string Tensor::toString() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined tensor ]";
  Tensor c = t.to(kCPU);
  std::vector<double> vals = c.to_vector<double>();
  Fmt f;
  f.is_float = is_floating(t.dtype());
  f.is_bool = t.dtype() == kBool;
  bool summarize = t.numel() > kSummarizeAbove;
  if (f.is_float) {
    f.int_mode = true;
    double mx = 0, mn = INFINITY;
    for (double v : vals) {
      if (!std::isfinite(v)) continue;
      if (v != std::nearbyint(v)) f.int_mode = false;
      double a = std::fabs(v);
      mx = std::max(mx, a);
      if (a > 0) mn = std::min(mn, a);
    }
    f.sci = mx >= 1e8 || (mn < 1e-4 && !f.int_mode) || (mx / mn > 1000 && !f.int_mode && mn < 1e-3);
  }
  for (double v : vals) f.width = std::max<int>(f.width, static_cast<int>(f.one(v).size()));
  const char* prefix = "tensor(";
  os << prefix;
  if (t.dim() == 0) {
    os << f.one(vals.empty() ? 0 : vals[0]);
  } else if (t.numel() == 0) {
    os << "[]";
  } else {
    emit(os, vals, t.sizes(), f, 0, 0, 7, summarize);
  }
  if (t.numel() == 0 && t.dim() != 1) {
    os << ", size=(";
    for (int64_t i = 0; i < t.dim(); ++i) os << (i ? ", " : "") << t.size(i);
    os << (t.dim() == 1 ? ",)" : ")");
  }
  if (!t.device().is_cpu()) os << ", device='" << t.device().str() << "'";
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool)
    os << ", dtype=" << dtype_name(t.dtype());
  return os << ')';
}

}  // namespace lt
