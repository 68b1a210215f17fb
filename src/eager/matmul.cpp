// matmul through OpenBLAS: operands whose last two dims are row- or column-major go to
// cblas_?gemm without a copy (transposed views become Trans); batch dims broadcast.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>

#include "core/check.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

extern "C" void openblas_set_num_threads(int);
// OpenBLAS's pthreads build exports it (its fork handler calls it); weak: another build of the
// library may lack it.
extern "C" void blas_thread_shutdown_(void) __attribute__((weak));

namespace lt {
namespace {

struct MatLayout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;
};

MatLayout layout_of(int64_t rows, int64_t cols, int64_t srow, int64_t scol) {
  // A size-1 dim's stride is never used and may be anything (contiguous() keeps it as is).
  if (cols == 1) scol = 1;
  if (rows == 1) srow = std::max<int64_t>(1, cols);
  MatLayout l;
  if (scol == 1 && (rows == 1 || srow >= std::max<int64_t>(1, cols))) {
    l = {true, CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : srow};
  } else if (srow == 1 && (cols == 1 || scol >= std::max<int64_t>(1, rows))) {
    l = {true, CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : scol};
  }
  return l;
}

// One thread pool, ours: OpenBLAS always runs single-threaded, and a product big enough for
// several threads is split into parts (rows of C, or columns when it has few rows), one per
// thread of ours. OpenBLAS's own pool, once woken, kept its pthreads spinning ~2^28 cycles after
// each call against our OpenMP workers on a 2-core machine (which spun back for 1 ms), and its
// thread count was one process-wide setting that each call had to set. Split in parts, a product
// runs as fast as on OpenBLAS's threads (AVX-512 host, 2 threads: 1024^3 7.73 against 7.71 ms,
// 512^3 1.00 against 0.98-1.52 ms).
// Each part is at least kPartFlops: at most ~5 us even at 200 GFLOP/s a thread (more than any
// host's per-thread peak), so a part outweighs the fork/join (1.5-5 us, par_threshold.cpp)
// wherever the product is split. The rule was "under 2^27 flops, one thread": an MLP's products
// at a batch of 64 (26 Mflop) then ran on one thread (AVX-512 host, interleaved:
// mlp_step/lt_eager 930-958 -> 1450-1590 steps/s, mlp_step/lt_mlir 2.21-2.29k -> 2.51-2.59k;
// the transformer, LSTM, ResNet and char-LM steps unchanged within noise).
constexpr int64_t kPartFlops = int64_t{1} << 20;

// OpenBLAS's own threads are never used: its count is set to one once, at load, and the pool its
// initializer started is shut down. Left alone, those threads spun on sched_yield for the first
// ~0.1 s of every process, and whatever was timed then shared a core with them: on a 2-core VM the
// compiled loops' thread threshold (par_threshold.cpp) measured a fork/join of 38 us in half the
// runs and kept every loop serial for the process. With a count of one OpenBLAS never restarts
// them.
const bool g_blas_single_threaded = [] {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_) blas_thread_shutdown_();
  return true;
}();

}  // namespace

template <typename T>
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  auto call = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const T* ap = a + (ta ? r0 : r0 * lda);
    const T* bp = b + (tb ? c0 * ldb : c0);
    const auto A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, A, B, r1 - r0, c1 - c0, k, 1.0f, ap, lda, bp, ldb, beta,
                  c + r0 * ldc + c0, ldc);
    else
      cblas_dgemm(CblasRowMajor, A, B, r1 - r0, c1 - c0, k, 1.0, ap, lda, bp, ldb, beta,
                  c + r0 * ldc + c0, ldc);
  };
  const int64_t threads =
      omp_in_parallel() ? 1 : std::min<int64_t>({run_threads(), m * n, 2 * m * n * k / kPartFlops});
  if (threads <= 1) {
    call(0, m, 0, n);
    return;
  }
  const bool by_rows = m >= 8 * threads || m >= n;
  parallel_for(threads, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      if (by_rows)
        call(m * t / threads, m * (t + 1) / threads, 0, n);
      else
        call(0, m, n * t / threads, n * (t + 1) / threads);
    }
  });
}
template void blas_gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                               const float*, int64_t, float, float*, int64_t);
template void blas_gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                                const double*, int64_t, double, double*, int64_t);

namespace {

template <typename T>
void gemm(MatLayout la, MatLayout lb, int64_t n, int64_t m, int64_t k, const T* a, const T* b,
          T* c) {
  blas_gemm<T>(la.trans == CblasTrans, lb.trans == CblasTrans, n, m, k, a, la.ld, b, lb.ld, T(0), c,
               m);
}

template <typename T>
void naive_mm(int64_t n, int64_t m, int64_t k, const T* a, int64_t sar, int64_t sac, const T* b,
              int64_t sbr, int64_t sbc, T* c) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a[i * sar + p * sac] * b[p * sbr + j * sbc];
      c[i * m + j] = acc;
    }
}

template <typename T>
void matmul_typed(Tensor a, Tensor b, const Tensor& out) {
  const int64_t nd = out.dim();
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  T* o = static_cast<T*>(out.raw_data_ptr());
  if (out.numel() == 0) return;
  if (k == 0) {
    std::fill(o, o + out.numel(), T(0));
    return;
  }
  IntList os = out.sizes();
  Dims batch(IntList(os.data(), nd - 2));
  const int64_t B = numel_of(batch);
  // Fold a's batch into its rows when b has no real batch and a is row-contiguous: one gemm.
  bool b_shared = true;
  for (int64_t d = 0; d < b.dim() - 2; ++d)
    if (b.size(d) != 1) b_shared = false;
  bool two_d = nd == 2;
  // A strided a (a transposed view) whose matrices are tiny is copied first: one product of a
  // copy beats a call per matrix. ResNet's adaptive average pooling, [64, 96, 7, 7] x [7, 1]
  // through a transposed view, made 6144 calls of a few hundred ns each (2.3 ms a step).
  if (B > 1 && b_shared && a.dim() == nd && !a.is_contiguous() && 2 * n * m * k <= 16384)
    a = dense(a);
  if (B > 1 && b_shared && a.is_contiguous() && a.dim() == nd) {
    a = reshape_view(a, {B * n, k});
    b = reshape_view(b, {k, m});
    two_d = true;
  }
  auto expand_to = [&](const Tensor& t) {
    Dims s = batch;
    s.push_back(t.size(-2));
    s.push_back(t.size(-1));
    return expand_view(t, s);
  };
  Tensor ae = two_d ? a : expand_to(a);
  Tensor be = two_d ? b : expand_to(b);
  const int64_t rows = ae.size(-2);
  const int64_t batches = two_d ? 1 : B;
  const int64_t bnd = ae.dim() - 2;
  MatLayout la = layout_of(rows, k, ae.stride(-2), ae.stride(-1));
  MatLayout lb = layout_of(k, m, be.stride(-2), be.stride(-1));
  if constexpr (std::is_floating_point_v<T>) {
    if (!la.ok) {
      ae = dense(ae);
      la = layout_of(rows, k, ae.stride(-2), ae.stride(-1));
    }
    if (!lb.ok) {
      be = dense(be);
      lb = layout_of(k, m, be.stride(-2), be.stride(-1));
    }
  }
  const T* abase = static_cast<const T*>(ae.raw_data_ptr());
  const T* bbase = static_cast<const T*>(be.raw_data_ptr());
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t bi = b0; bi < b1; ++bi) {
      int64_t oa = 0, ob = 0, rem = bi;
      for (int64_t d = bnd - 1; d >= 0; --d) {
        int64_t idx = rem % batch[d];
        rem /= batch[d];
        oa += idx * ae.stride(d);
        ob += idx * be.stride(d);
      }
      T* c = o + bi * rows * m;
      if constexpr (std::is_floating_point_v<T>)
        gemm<T>(la, lb, rows, m, k, abase + oa, bbase + ob, c);
      else
        naive_mm<T>(rows, m, k, abase + oa, ae.stride(-2), ae.stride(-1), bbase + ob, be.stride(-2),
                    be.stride(-1), c);
    }
  };
  // Batches of products too small to give each thread a part (attention's per-head products)
  // run on our threads, a share of the batches each, instead of one after another while our
  // OpenMP workers spun. Bigger products are split themselves, batch by batch.
  if (batches > 1 && 2 * rows * m * k < kPartFlops * run_threads()) {
    parallel_for(batches, 1, run);
  } else {
    run(0, batches);
  }
}

}  // namespace

void matmul_kernel(const Tensor& a, const Tensor& b, const Tensor& out) {
  switch (a.dtype()) {
    case kFloat32: return matmul_typed<float>(a, b, out);
    case kFloat64: return matmul_typed<double>(a, b, out);
    case kInt32: return matmul_typed<int32_t>(a, b, out);
    case kInt64: return matmul_typed<int64_t>(a, b, out);
    default: throw_error("matmul: not supported for ", dtype_name(a.dtype()));
  }
}

void blas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  blas_gemm<float>(false, false, m, n, k, a, k, b, n, 0.0f, c, n);
}

}  // namespace lt
