// Reductions over any set of dims. The input is seen as [kept, reduced] rows (reduced dims
// innermost) or as [reduced, kept] columns when the reduced dims lead; other layouts are
// first copied into the row layout.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/check.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <typename T>
struct SumOp {
  static Acc<T> init() { return Acc<T>(0); }
  static Acc<T> step(Acc<T> a, T v) { return a + v; }
};
template <typename T>
struct ProdOp {
  static Acc<T> init() { return Acc<T>(1); }
  static Acc<T> step(Acc<T> a, T v) {
    if constexpr (std::is_same_v<T, bool>)
      return a && v;
    else
      return a * v;
  }
};
template <typename T, bool kMax>
struct ExtremeOp {
  static Acc<T> init() {
    if constexpr (std::is_floating_point_v<T>)
      return kMax ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::infinity();
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  static Acc<T> step(Acc<T> a, T v) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
    }
    return kMax ? (v > a ? v : a) : (v < a ? v : a);
  }
};

template <typename T>
struct AnyOp {
  static Acc<T> init() { return Acc<T>(0); }
  static Acc<T> step(Acc<T> a, T v) { return a || v != T(0); }
};

template <typename T>
struct AllOp {
  static Acc<T> init() { return Acc<T>(1); }
  static Acc<T> step(Acc<T> a, T v) { return a && v != T(0); }
};

// rows: x is [K, R] contiguous; out[k] = fold(x[k, :])
template <typename T, typename Op>
void reduce_rows(const T* x, int64_t K, int64_t R, T* out) {
  parallel_for(K, std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const T* row = x + k * R;
      if constexpr (std::is_same_v<Op, SumOp<T>> && std::is_floating_point_v<T>) {
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t r = 0;
        for (; r + 8 <= R; r += 8)
          for (int j = 0; j < 8; ++j) acc[j] += row[r + j];
        double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; r < R; ++r) s += row[r];
        out[k] = static_cast<T>(s);
      } else {
        Acc<T> a = Op::init();
        for (int64_t r = 0; r < R; ++r) a = Op::step(a, row[r]);
        out[k] = static_cast<T>(a);
      }
    }
  });
}

// columns: x is [R, K] contiguous; out[k] = fold(x[:, k])
template <typename T, typename Op>
void reduce_cols(const T* x, int64_t R, int64_t K, T* out) {
  parallel_for(K, 4096, [&](int64_t b, int64_t e) {
    std::vector<Acc<T>> acc(e - b, Op::init());
    for (int64_t r = 0; r < R; ++r) {
      const T* row = x + r * K;
      for (int64_t k = b; k < e; ++k) acc[k - b] = Op::step(acc[k - b], row[k]);
    }
    for (int64_t k = b; k < e; ++k) out[k] = static_cast<T>(acc[k - b]);
  });
}

// outer and inner: x is [R1, K, R2] contiguous; out[k] = fold(x[:, k, :]), rows of R2 in
// place (batch norm's sums over dims 0, 2, 3 of [N, C, H, W] copied the tensor into [C, N, H, W]
// rows first).
template <typename T, typename Op>
void reduce_outer_inner(const T* x, int64_t R1, int64_t K, int64_t R2, T* out) {
  parallel_for(K, std::max<int64_t>(1, 32768 / (R1 * R2)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      if constexpr (std::is_same_v<Op, SumOp<T>> && std::is_floating_point_v<T>) {
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, tail = 0;
        for (int64_t r1 = 0; r1 < R1; ++r1) {
          const T* row = x + (r1 * K + k) * R2;
          int64_t r = 0;
          for (; r + 8 <= R2; r += 8)
            for (int j = 0; j < 8; ++j) acc[j] += row[r + j];
          for (; r < R2; ++r) tail += row[r];
        }
        out[k] = static_cast<T>(
            (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) +
            tail);
      } else {
        Acc<T> a = Op::init();
        for (int64_t r1 = 0; r1 < R1; ++r1) {
          const T* row = x + (r1 * K + k) * R2;
          for (int64_t r = 0; r < R2; ++r) a = Op::step(a, row[r]);
        }
        out[k] = static_cast<T>(a);
      }
    }
  });
}

template <typename T, typename Op>
void reduce_typed(const Tensor& x, IntList dims, const Tensor& out) {
  const int64_t nd = x.dim();
  int64_t R = 1, K = 1;
  Dims perm;
  for (int64_t d = 0; d < nd; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
      perm.push_back(d);
      K *= x.size(d);
    }
  for (int64_t d : dims) {
    perm.push_back(d);
    R *= x.size(d);
  }
  T* o = static_cast<T*>(out.raw_data_ptr());
  if (K == 0) return;
  if (R == 0) {
    for (int64_t k = 0; k < K; ++k) o[k] = static_cast<T>(Op::init());
    return;
  }
  if (x.is_contiguous()) {
    bool leading = true;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != static_cast<int64_t>(i)) leading = false;
    if (leading && !dims.empty() && K > 1) {
      reduce_cols<T, Op>(static_cast<const T*>(x.raw_data_ptr()), R, K, o);
      return;
    }
    // Reduced dims 0 .. a - 1 and b .. nd - 1 with 0 < a < b < nd (sorted, no repeats).
    std::vector<int64_t> sorted(dims.begin(), dims.end());
    std::sort(sorted.begin(), sorted.end());
    int64_t a = 0;
    while (a < static_cast<int64_t>(sorted.size()) && sorted[a] == a) ++a;
    const int64_t inner = static_cast<int64_t>(sorted.size()) - a;
    bool trailing = a > 0 && inner > 0;
    for (int64_t i = a; trailing && i < static_cast<int64_t>(sorted.size()); ++i)
      trailing = sorted[i] == nd - (static_cast<int64_t>(sorted.size()) - i);
    if (trailing && sorted[a] > a) {
      int64_t R1 = 1;
      for (int64_t d = 0; d < a; ++d) R1 *= x.size(d);
      reduce_outer_inner<T, Op>(static_cast<const T*>(x.raw_data_ptr()), R1, K, R / R1, o);
      return;
    }
  }
  Tensor xp = permute_view(x, perm);
  xp = dense(xp);
  reduce_rows<T, Op>(static_cast<const T*>(xp.raw_data_ptr()), K, R, o);
}

template <typename T, bool kMax>
void arg_typed(const Tensor& x, int64_t dim, const Tensor& out) {
  Tensor xp = x;
  if (x.dim() > 0) {
    Dims perm;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (d != dim) perm.push_back(d);
    perm.push_back(dim);
    xp = permute_view(x, perm);
  }
  xp = dense(xp);
  const int64_t R = x.dim() > 0 ? x.size(dim) : 1;
  const int64_t K = R ? xp.numel() / R : 0;
  const T* px = static_cast<const T*>(xp.raw_data_ptr());
  int64_t* po = static_cast<int64_t*>(out.raw_data_ptr());
  parallel_for(K, std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const T* row = px + k * R;
      int64_t best = 0;
      T bv = row[0];
      for (int64_t r = 1; r < R; ++r) {
        T v = row[r];
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(bv)) break;
          if (std::isnan(v)) {
            best = r;
            break;
          }
        }
        if (kMax ? v > bv : v < bv) {
          bv = v;
          best = r;
        }
      }
      po[k] = best;
    }
  });
}

}  // namespace

void reduce_kernel(OpKind op, const Tensor& x, IntList dims, const Tensor& out) {
  LT_DISPATCH(x.dtype(), T, {
    switch (op) {
      case OpKind::Sum: reduce_typed<T, SumOp<T>>(x, dims, out); break;
      case OpKind::Prod: reduce_typed<T, ProdOp<T>>(x, dims, out); break;
      case OpKind::Amax: reduce_typed<T, ExtremeOp<T, true>>(x, dims, out); break;
      case OpKind::Amin: reduce_typed<T, ExtremeOp<T, false>>(x, dims, out); break;
      case OpKind::Any: reduce_typed<T, AnyOp<T>>(x, dims, out); break;
      case OpKind::All: reduce_typed<T, AllOp<T>>(x, dims, out); break;
      default: throw_error("internal: reduce kernel for ", op_name(op));
    }
  });
}

void arg_reduce_kernel(OpKind op, const Tensor& x, int64_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH(x.dtype(), T, {
    if (op == OpKind::Argmax)
      arg_typed<T, true>(x, dim, out);
    else
      arg_typed<T, false>(x, dim, out);
  });
}

}  // namespace lt
