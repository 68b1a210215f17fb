// Printing in PyTorch's Python style: tensor([[1.0000, 2.0000], ...]), rows wrapped at 80
// columns, summarized past 1000 elements, with the dtype named when it is not the default and the
// device when not cpu.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "core/shape.h"

namespace lt {
namespace {

constexpr int64_t kSummarizeAbove = 1000;  // PyTorch's threshold
constexpr int64_t kEdge = 3;               // edgeitems
constexpr int kLineWidth = 80;             // linewidth

// PyTorch's _Formatter: for floats, only the nonzero finite values choose between integer,
// fixed and scientific notation and set the column width.
struct Fmt {
  bool is_float = false, is_bool = false, int_mode = true, sci = false;
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
  std::string padded(double v) const {
    std::string s = one(v);
    return std::string(std::max<int>(0, width - static_cast<int>(s.size())), ' ') + s;
  }
};

Fmt make_fmt(Dtype dtype, const std::vector<double>& shown) {
  Fmt f;
  f.is_float = is_floating(dtype);
  f.is_bool = dtype == kBool;
  if (!f.is_float) {
    for (double v : shown) f.width = std::max<int>(f.width, static_cast<int>(f.one(v).size()));
    return f;
  }
  std::vector<double> nz;
  for (double v : shown)
    if (std::isfinite(v) && v != 0) nz.push_back(v);
  if (nz.empty()) return f;
  double mn = INFINITY, mx = 0;
  for (double v : nz) {
    mn = std::min(mn, std::fabs(v));
    mx = std::max(mx, std::fabs(v));
    if (v != std::ceil(v)) f.int_mode = false;
  }
  f.sci = mx / mn > 1000.0 || mx > 1.0e8 || (!f.int_mode && mn < 1.0e-4);
  for (double v : nz) f.width = std::max<int>(f.width, static_cast<int>(f.one(v).size()));
  return f;
}

// The indices along one dim that a (possibly summarized) print shows; -1 marks the "...".
std::vector<int64_t> shown_indices(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  const bool cut = summarize && n > 2 * kEdge;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdge) {
      idx.push_back(-1);
      i = n - kEdge;
    }
    idx.push_back(i);
  }
  return idx;
}

void collect(const std::vector<double>& vals, IntList sizes, int64_t dim, int64_t base,
             bool summarize, std::vector<double>& out) {
  if (dim == static_cast<int64_t>(sizes.size())) {
    out.push_back(vals[base]);
    return;
  }
  int64_t stride = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) stride *= sizes[d];
  for (int64_t i : shown_indices(sizes[dim], summarize))
    if (i >= 0) collect(vals, sizes, dim + 1, base + i * stride, summarize, out);
}

// PyTorch's _tensor_str_with_formatter / _vector_str.
std::string tensor_str(const std::vector<double>& vals, IntList sizes, int64_t dim, int64_t base,
                       int indent, bool summarize, const Fmt& f) {
  const int64_t nd = sizes.size();
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < nd; ++d) stride *= sizes[d];
  std::vector<std::string> parts;
  for (int64_t i : shown_indices(sizes[dim], summarize)) {
    if (i < 0)
      parts.push_back(dim == nd - 1 ? " ..." : "...");
    else if (dim == nd - 1)
      parts.push_back(f.padded(vals[base + i]));
    else
      parts.push_back(
          tensor_str(vals, sizes, dim + 1, base + i * stride, indent + 1, summarize, f));
  }
  std::string s = "[";
  if (dim == nd - 1) {
    const size_t per_line = std::max(1, (kLineWidth - indent) / (f.width + 2));
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k > 0) s += k % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      s += parts[k];
    }
  } else {
    const std::string sep = "," + std::string(nd - dim - 1, '\n') + std::string(indent + 1, ' ');
    for (size_t k = 0; k < parts.size(); ++k) s += (k > 0 ? sep : "") + parts[k];
  }
  return s + "]";
}

}  // namespace

std::string Tensor::toString() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined tensor ]";
  const std::string prefix = "tensor(";
  std::vector<double> vals = t.to(kCPU).to_vector<double>();
  const bool summarize = t.numel() > kSummarizeAbove;
  std::vector<double> shown;
  if (t.dim() == 0)
    shown = vals;
  else
    collect(vals, t.sizes(), 0, 0, summarize, shown);
  Fmt f = make_fmt(t.dtype(), shown);

  os << prefix;
  if (t.numel() == 0)
    os << "[]";
  else if (t.dim() == 0)
    os << f.padded(vals[0]);
  else
    os << tensor_str(vals, t.sizes(), 0, 0, static_cast<int>(prefix.size()), summarize, f);
  // Suffixes in PyTorch's order: device, then size (empty and not 1-d) and dtype.
  if (!t.device().is_cpu()) os << ", device='" << t.device().str() << "'";
  if (t.numel() == 0 && t.dim() != 1) {
    os << ", size=(";
    for (int64_t i = 0; i < t.dim(); ++i) os << (i ? ", " : "") << t.size(i);
    os << ")";
  }
  // Non-default dtypes are named; an empty tensor has no elements to tell int64 or bool by.
  const bool default_dtype =
      t.dtype() == kFloat32 || (t.numel() > 0 && (t.dtype() == kInt64 || t.dtype() == kBool));
  if (!default_dtype) os << ", dtype=torch." << dtype_name(t.dtype());
  return os << ')';
}

}  // namespace lt
