// The per-host choice between a generated matmul kernel and OpenBLAS, by measurement: the
// kernel's register tile was tuned on an AVX-512 host, and on an AVX2-only host (16 vector
// registers) it spills and runs at a third of OpenBLAS's speed. So each shape is timed once per
// process, both ways, on the host that runs it, and the faster one is kept. Plain C++.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend/mlir/matmul_codegen.h"
#include "backend/mlir/target.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "core/storage.h"
#include "eager/kernels.h"
#include "ops/registry.h"

namespace lt::backend {
namespace {

double time_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

MatmulPolicy matmul_policy() {
  const std::string v = config::choice("LT_MLIR_MATMUL");
  if (v == "blas") return MatmulPolicy::kBlas;
  if (v == "codegen") return MatmulPolicy::kCodegen;
  return MatmulPolicy::kMeasure;
}

bool generated_matmul_wins(const CodegenMatmul& kernel, int64_t m, int64_t n, int64_t k,
                           std::string* why, bool* close_call, int64_t blas_k) {
  if (blas_k <= 0 || blas_k > k) blas_k = k;
  if (matmul_policy() == MatmulPolicy::kCodegen) {
    *why = "LT_MLIR_MATMUL=codegen";
    return true;
  }
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  auto gen = [&] { kernel.run(a.data(), b.data(), c.data()); };
  // As the library step it stands for runs it (blas_sgemm: single-threaded OpenBLAS, a big
  // product split over our threads). Calling cblas_sgemm on OpenBLAS's own pool had woken it,
  // and it spun through the next timings, the OpenMP threshold's measurement and the first
  // steps' trials (kernels at 2.4x their time, the MLP step at 1.9k steps/s instead of 3k).
  // (On the product's own depth, A's first m x blas_k and B's first blas_k rows.)
  auto blas = [&] { blas_sgemm(m, n, blas_k, a.data(), b.data(), c.data()); };
  // Each side warmed (page faults, thread pools) and then timed in a block of its own, keeping
  // its best time; few repetitions for big products (the measurement is paid once per shape and
  // process). The kernel's block comes first (when OpenBLAS ran on its own pthreads, they kept
  // spinning after a call much longer than libomp's workers, 1 ms, and a kernel timed between
  // OpenBLAS calls shared the cores with them: AVX2 path, 256x64x784, 0.27 ms against 0.12).
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int reps = flops > 4e9 ? 1 : flops > 2e8 ? 3 : 7;
  double tg = 1e300, tb = 1e300;
  gen();
  for (int r = 0; r < reps; ++r) tg = std::min(tg, time_ms(gen));
  blas();
  for (int r = 0; r < reps; ++r) tb = std::min(tb, time_ms(blas));
  const bool wins = tg < tb, close = !wins && tg <= kCloseCall * tb;
  if (close_call) *close_call = close;
  char buf[200];
  char depth[40] = "";
  if (blas_k != k) std::snprintf(depth, sizeof depth, " on depth %ld", long(blas_k));
  std::snprintf(buf, sizeof buf,
                "generated %.4f ms (%.1f GFLOP/s) vs OpenBLAS%s %.4f ms (%.1f GFLOP/s)", tg,
                flops / tg * 1e-6, depth, tb,
                flops * static_cast<double>(blas_k) / static_cast<double>(k) / tb * 1e-6);
  *why = buf;
  metrics_impl::add(wins ? "CodegenMatmulChosen" : "CodegenMatmulDeclined");
  if (close) metrics_impl::add("CodegenMatmulCloseCall");
  if (metrics_impl::debug_enabled()) {
    const CpuTarget& t = host_target();
    const RegisterTile reg = matmul_register_tile(t);
    std::fprintf(stderr, "lazytensor: matmul %ldx%ldx%ld on %s, %ldx%ld register tile: %s -> %s\n",
                 long(m), long(n), long(k), t.summary().c_str(), long(reg.rows), long(reg.cols),
                 buf,
                 wins    ? "generated kernel"
                 : close ? "OpenBLAS, a close call (the in-step trial decides)"
                         : "OpenBLAS");
  }
  return wins;
}

namespace {

// The rows of a chunk for C[rows, m] by a chunked kernel (chunked_matmul_kernels).
constexpr int64_t kBigChunk = 256;
int64_t chunk_rows(int64_t m) {
  const int64_t col_blocks = std::max<int64_t>(1, (m + 127) / 128);
  const int64_t want = 2 * static_cast<int64_t>(num_threads());
  return std::clamp<int64_t>(32 * ((want + col_blocks - 1) / col_blocks), 32, 256);
}

// k in chunks of kKChunk (a product whose k is known only at run time, in shape-generic code:
// a Linear's weight gradient, whose k is the batch): C[rows, m] is zeroed and each chunk's
// product added by a kernel compiled to add to C ([rows, kKChunk] x [kKChunk, m]); the k %
// kKChunk rest, and a k below one chunk, run OpenBLAS. A chunk of A's columns is copied into rows
// of its own (rows * kKChunk), unless it is all of A. An empty kernel where the tiles do not fit
// or OpenBLAS won the timing. (Adam MLP step at a batch of 64, generic code: 0.79 -> 0.66 ms.)
constexpr int64_t kKChunk = 64;

MatmulKernel k_chunked(int64_t rows, int64_t m) {
  if (!codegen_matmul_fits(rows, m, kKChunk)) return {};
  std::shared_ptr<const CodegenMatmul> c = codegen_matmul_cached(rows, m, kKChunk, true);
  if (!c->run || !c->chosen) return {};
  return {[c, rows, m](const float* x, const float* y, float* z, int64_t, int64_t k, int64_t) {
            if (k < kKChunk) {
              blas_sgemm(rows, m, k, x, y, z);
              return;
            }
            std::fill(z, z + rows * m, 0.0f);
            ScratchFloats part =
                k == kKChunk ? ScratchFloats(nullptr, cache_free) : scratch_floats(rows * kKChunk);
            int64_t c0 = 0;
            for (; c0 + kKChunk <= k; c0 += kKChunk) {
              const float* a = x;
              if (part) {
                copy_rows(x + c0, k, part.get(), kKChunk, rows, kKChunk);
                a = part.get();
              }
              c->run(a, y + c0 * m, z);
            }
            if (c0 < k)
              blas_gemm<float>(false, false, rows, m, k - c0, x + c0, k, y + c0 * m, m, 1.0f, z, m);
          },
          false, true};
}

// The columns of C in chunks of kNChunk (shape-generic code's x W^T with the rows of x dynamic,
// run transposed as C^T = W x^T, as specialized code runs it: W read as it lies, x^T copied, where
// C = x W^T would copy W^T whole, which the copy rule declines under 256 rows). C[rows, m] with m
// known at run time: per chunk, B's columns copied into a [k, kNChunk] buffer, the kernel's
// [rows, kNChunk] product copied into C's columns (no copy when m is one chunk); the rest of
// the columns, and an m below one chunk, on OpenBLAS. (Adam MLP step at a batch of 64, generic
// code: 0.66 -> 0.48-0.52 ms, specialized code 0.46-0.47; AVX-512 host.)
constexpr int64_t kNChunk = 64;

MatmulKernel n_chunked(int64_t rows, int64_t k) {
  if (!codegen_matmul_fits(rows, kNChunk, k)) return {};
  std::shared_ptr<const CodegenMatmul> c = codegen_matmul_cached(rows, kNChunk, k);
  if (!c->run || !c->chosen) return {};
  return {[c, rows, k](const float* x, const float* y, float* z, int64_t, int64_t, int64_t m) {
            if (m < kNChunk) {
              blas_sgemm(rows, m, k, x, y, z);
              return;
            }
            if (m == kNChunk) {
              c->run(x, y, z);
              return;
            }
            ScratchFloats bpart = scratch_floats(k * kNChunk),
                          cpart = scratch_floats(rows * kNChunk);
            float *pb = bpart.get(), *pc = cpart.get();
            int64_t j0 = 0;
            for (; j0 + kNChunk <= m; j0 += kNChunk) {
              copy_rows(y + j0, m, pb, kNChunk, k, kNChunk);
              c->run(x, pb, pc);
              copy_rows(pc, kNChunk, z + j0, m, rows, kNChunk);
            }
            if (j0 < m)
              blas_gemm<float>(false, false, rows, m - j0, k, x, k, y + j0, m, 0.0f, z + j0, m);
          },
          true, true};
}

bool transposed_view(const ir::Node* x) {
  return x->op == OpKind::Permute && x->meta.sizes.size() == 2 && x->attrs.ints.size() == 2 &&
         x->attrs.ints[0] == 1;
}

LibraryKernels library_kernels(const Schedule& s, const ir::DynamicShapes* dyn) {
  static const bool on = matmul_policy() != MatmulPolicy::kBlas;
  LibraryKernels ks;
  if (!on) return ks;
  auto dynamic = [&](const ir::Node* n, size_t d) { return dyn && dyn->size_symbol(n, d) >= 0; };
  for (const Schedule::Step& st : s.steps) {
    if (st.kind != Schedule::Kind::Library || st.node->op != OpKind::Matmul) continue;
    const ir::Node* n = st.node;
    const ir::Node *an = n->operands[0].get(), *bn = n->operands[1].get();
    const OpMeta& a = an->meta;
    const OpMeta& b = bn->meta;
    if (n->meta.dtype != kFloat32 || a.dtype != kFloat32 || b.dtype != kFloat32 ||
        b.sizes.size() != 2 || a.sizes.size() < 2)
      continue;
    const size_t r = a.sizes.size();
    if (r == 2 && (dynamic(an, 1) || dynamic(bn, 0)) && !dynamic(an, 0) && !dynamic(bn, 1)) {
      if (MatmulKernel kc = k_chunked(a.sizes[0], b.sizes[1])) {
        ks[n] = std::move(kc);
        metrics_impl::add("CodegenMatmulChunked");
        metrics_impl::add("CodegenMatmulSteps");
      }
      continue;
    }
    if (dynamic(an, r - 1) || dynamic(bn, 0) || dynamic(bn, 1)) continue;  // k or m at run time
    const int64_t k = a.sizes[r - 1], m = b.sizes[1];
    int64_t rows = 1;
    bool dynamic_rows = false;
    for (size_t d = 0; d + 1 < r; ++d) {
      rows *= a.sizes[d];
      dynamic_rows = dynamic_rows || dynamic(an, d);
    }
    if (b.sizes[0] != k) continue;
    if (dynamic_rows && r == 2 && transposed_view(bn) && !transposed_view(an)) {
      if (MatmulKernel kc = n_chunked(m, k)) {
        ks[n] = std::move(kc);
        metrics_impl::add("CodegenMatmulChunked");
        metrics_impl::add("CodegenMatmulTransposed");
        metrics_impl::add("CodegenMatmulSteps");
        continue;
      }
    }
    if (dynamic_rows) rows = chunk_rows(m);
    // A shape whose tiles fit only transposed (rows not divisible by the register tile, fewer
    // columns than it, or a column tail that is not whole vectors) runs as C^T = B^T A^T.
    // Where both fit, the one that copies less: the kernel takes row-major operands, so a B
    // that is the transposed view of a matrix (a Linear's forward, x W^T) is copied whole (k*m)
    // for C = A B, while C^T = B^T A^T reads that matrix as it lies and copies A (rows*k). The
    // MLP's 64x784 batch times W^T (784x256): 50k copied elements instead of 200k, and the
    // product on the kernel instead of OpenBLAS (whose copy rule, run_matmul, took it before).
    const bool fewer_copies = transposed_view(bn) && !transposed_view(an) && rows * k < k * m;
    const bool transposed = !dynamic_rows && r == 2 && codegen_matmul_fits(m, rows, k) &&
                            (!codegen_matmul_fits(rows, m, k) || fewer_copies);
    if (!transposed && !codegen_matmul_fits(rows, m, k)) continue;
    std::shared_ptr<const CodegenMatmul> c =
        transposed ? codegen_matmul_cached(m, rows, k) : codegen_matmul_cached(rows, m, k);
    // OpenBLAS was faster on this host; a close call still goes to the in-step trial, which
    // shape-generic code (chunked rows) does not run.
    if (!c->run || !(c->chosen || (c->close_call && !dyn))) continue;
    if (transposed) {
      ks[n] = {[c](const float* x, const float* y, float* z, int64_t, int64_t, int64_t) {
                 c->run(x, y, z);
               },
               true, c->chosen};
      metrics_impl::add("CodegenMatmulTransposed");
    } else if (!dynamic_rows) {
      ks[n] = {[c](const float* x, const float* y, float* z, int64_t, int64_t, int64_t) {
                 c->run(x, y, z);
               },
               false, c->chosen};
    } else {
      // Many rows run in chunks of kBigChunk first, on a kernel of their own where it fits and
      // won its timing: with m wide the small chunk is 32 rows, and each of its calls read all
      // of B again (the seqlen loop's x W1^T, [8S, 64] x [64, 2048]: 2.8 ms a run against 1.66
      // in specialized code; its step at S = 128 1.34x specialized code's, 1.11-1.14x with
      // chunks of 256; AVX-512 host).
      const int64_t chunk = rows;
      std::shared_ptr<const CodegenMatmul> big;
      if (chunk < kBigChunk && codegen_matmul_fits(kBigChunk, m, k)) {
        std::shared_ptr<const CodegenMatmul> b = codegen_matmul_cached(kBigChunk, m, k);
        if (b->run && b->chosen) big = std::move(b);
        if (big) metrics_impl::add("CodegenMatmulBigChunks");
      }
      ks[n] = {[c, big, chunk, m, k](const float* x, const float* y, float* z, int64_t all, int64_t,
                                     int64_t) {
        int64_t i = 0;
        if (big)
          for (; i + kBigChunk <= all; i += kBigChunk) big->run(x + i * k, y, z + i * m);
        for (; i + chunk <= all; i += chunk) c->run(x + i * k, y, z + i * m);
        if (i < all) blas_sgemm(all - i, m, k, x + i * k, y, z + i * m);
      }};
      metrics_impl::add("CodegenMatmulChunked");
    }
    metrics_impl::add("CodegenMatmulSteps");
  }
  return ks;
}

}  // namespace

// Library matmuls whose shape the generated kernel takes (matmul_codegen.h) run it instead of
// OpenBLAS where it was faster when timed on this host (matmul_choice.cpp): 1.5-2x faster on a
// Zen 5 with AVX-512, slower on an AVX2-only Zen 3 (docs/ARCHITECTURE.md, "Matmul: BLAS or
// generated code"). Float32, B 2-d (A's batch dims fold into rows). LT_MLIR_MATMUL=blas keeps
// OpenBLAS for all of them, =codegen the kernel wherever it fits.
LibraryKernels matmul_kernels(const Schedule& s) { return library_kernels(s, nullptr); }

LibraryKernels chunked_matmul_kernels(const Schedule& s, const ir::DynamicShapes& dyn) {
  return library_kernels(s, &dyn);
}

}  // namespace lt::backend
