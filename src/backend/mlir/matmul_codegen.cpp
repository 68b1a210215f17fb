// Matmul by MLIR code generation: a transform-dialect schedule (the recipe measured in
// ../shared/notes/mlir-22.md) tiles linalg.matmul for threads (scf.forall -> OpenMP), cache
// blocks and register tiles sized from the target (target.h), vectorizes the register tile into
// outer products (FMAs), and after bufferization hoists the C tile's loads and stores out of the k
// loop.
#include "backend/mlir/matmul_codegen.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/mlir/disk_cache.h"
#include "backend/mlir/mlir_runtime.h"
#include "backend/mlir/parallel_loops.h"
#include "backend/mlir/target.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "core/storage.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/MemRefUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace lt::backend {
namespace {

using namespace mlir;

// Replaces every `key` in `text` by `value`.
std::string substitute(std::string text,
                       const std::vector<std::pair<std::string, std::string>>& kv) {
  for (const auto& [key, value] : kv)
    for (size_t p; (p = text.find(key)) != std::string::npos;) text.replace(p, key.size(), value);
  return text;
}

// The caller-owned-output calling convention of mlir_backend.cpp (../shared/notes/mlir-22.md).
// B arrives with rows of @LDB@ floats, of which the product reads the first n (b_rows below).
// @C0@ is C's start: zeros (C = A B), or C's own values (C += A B: the chunks of a k known only at
// run time, matmul_choice.cpp, add up in C).
const char* kPayloadText = R"(
func.func @mm(%a: tensor<@A@> {bufferization.writable = false},
              %bp: tensor<@BP@> {bufferization.writable = false},
              %out: memref<@C@>) attributes {llvm.emit_c_interface} {
  %b = tensor.extract_slice %bp[0, 0] [@K@, @N@] [1, 1] : tensor<@BP@> to tensor<@B@>
@C0@
  %r = linalg.matmul ins(%a, %b : tensor<@A@>, tensor<@B@>) outs(%c : tensor<@C@>)
      -> tensor<@C@>
  bufferization.materialize_in_destination %r in restrict writable %out
      : (tensor<@C@>, memref<@C@>) -> ()
  return
}
)";
const char* kZeroC = R"(  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<@C@>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<@C@>) -> tensor<@C@>)";
const char* kOwnC =
    "  %c = bufferization.to_tensor %out restrict writable : memref<@C@> to tensor<@C@>";

std::string payload(int64_t m, int64_t n, int64_t k, int64_t ldb, bool accumulate) {
  auto type = [](int64_t r, int64_t c) {
    return std::to_string(r) + "x" + std::to_string(c) + "xf32";
  };
  return substitute(kPayloadText, {{"@C0@", accumulate ? kOwnC : kZeroC},
                                   {"@A@", type(m, k)},
                                   {"@BP@", type(k, ldb)},
                                   {"@B@", type(k, n)},
                                   {"@C@", type(m, n)},
                                   {"@K@", std::to_string(k)},
                                   {"@N@", std::to_string(n)},
                                   {"@LDB@", std::to_string(ldb)}});
}

// The schedule: each part of the product (below) tiled for threads (scf.forall -> OpenMP), k
// in steps, then register tiles vectorized into outer products (FMAs).
const char* kPartText = R"(
    %t0_@P@, %forall_@P@ = transform.structured.tile_using_forall %part_@P@ tile_sizes [@TM@, @TN@]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t1_@P@, %l1_@P@ = transform.structured.tile_using_for %t0_@P@ tile_sizes [0, 0, @TK@]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t2_@P@, %l2_@P@:3 = transform.structured.tile_using_for %t1_@P@ tile_sizes [@RM@, @RN@, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                  !transform.any_op)
    transform.structured.vectorize %t2_@P@ {create_named_contraction} : !transform.any_op
)";
const char* kSplitText = R"(
    %split = transform.structured.split %part_ after @AT@ {dimension = 1} : !transform.any_op
    %part_0, %part_1 = transform.split_handle %split
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)";

// Block sizes, chosen by a sweep (bench_lazy matmul_*/mlir_codegen and the shapes of a
// transformer layer; Zen 5, AVX-512, 2 threads): blocks of C of up to 32x128 per OpenMP
// iteration, k in steps of up to 128 (a 128x128 block of B stays in L2). The register tile
// comes from the target (matmul_register_tile). bench_lazy matmul_*/mlir_codegen, 2 threads:
// Zen 5 (AVX-512): 8x32 357 GFLOP/s at 512^3, 4x16 160, 8x64 spilled; Zen 3 (AVX2): 4x16 77,
// 2x32 73, 8x32 53 (spills), 8x16 49, 4x32 49. Tiles must divide what they tile (partial tiles
// did not vectorize), so each block size is the largest divisor of its dimension up to the cap
// that is a multiple of the register tile; the k step (the register tile's k is 1) any divisor.
constexpr int64_t kTileM = 32, kTileN = 128, kTileK = 128;

// C's columns: their largest multiple of the register tile (`main`, cut into blocks of
// `block`) and the rest (`tail`), which is split off and computed as one block whose register
// tile is as wide as the tail. (A Linear's weight gradient with 784 inputs is 256x784: 768
// columns in 8x32 register tiles and 16 in 8x16 ones. Without tails it ran transposed, C^T =
// B^T A^T, and each step copied C^T's 200k elements into the layout of the optimizer's loop.)
// Rows take no tail: rows are the batch, and a batch of a new odd size then compiled and timed
// kernels of its own for a product OpenBLAS serves as well (compile_mlp_step, whose batch
// changes each time: 67-71 -> 91-102 ms with row tails).
struct ColumnTiles {
  int64_t main = 0, block = 0, tail = 0;
};

struct Tiles {
  int64_t m = 0;  // the block of rows
  ColumnTiles n;
  int64_t k = 0;
  RegisterTile reg;
};

int64_t divisor_tile(int64_t size, int64_t cap, int64_t step) {
  for (int64_t d = cap - cap % step; d >= step; d -= step)
    if (size % d == 0) return d;
  return 0;
}

ColumnTiles column_tiles(int64_t size, int64_t cap, int64_t reg) {
  ColumnTiles d;
  d.tail = size % reg;
  d.main = size - d.tail;
  d.block = d.main > 0 ? divisor_tile(d.main, std::max(cap, reg), reg) : 0;
  return d;
}

// The row stride at which the kernel reads B. A register tile walks down a strip of B's columns,
// one row per k: with rows of a multiple of 4 KiB (n a multiple of 1024 floats) every row of the
// strip falls in the same L1 set (x86 L1 data caches of 32-48 KiB and 8-12 ways alias at 4 KiB)
// and in a page of its own, so the strip's 128 rows thrashed 8 ways: 1024^3 ran at 112-119
// GFLOP/s on the AVX2 path of a 2-core Zen 4 against 158-182 with 1008, 1040 or 1056 columns.
// Such a B is copied into rows padded by one cache line (run: ~2% of 1024^3's time; shape-generic
// code's chunks of rows each copy it).
int64_t b_rows(int64_t n) {
  constexpr int64_t kAlias = 4096 / sizeof(float), kLine = 64 / sizeof(float);
  return n % kAlias == 0 ? n + kLine : n;
}

Tiles tiles_for(int64_t m, int64_t n, int64_t k) {
  const RegisterTile reg = matmul_register_tile(host_target());
  if (m <= 0 || n <= 0 || k <= 0) return {0, {}, 0, reg};
  return {divisor_tile(m, std::max(kTileM, reg.rows), reg.rows), column_tiles(n, kTileN, reg.cols),
          divisor_tile(k, kTileK, 1), reg};
}

// The transform script: the matmul, split into its main and tail columns when it has a tail
// (transform.structured.split), each part scheduled with its own tiles.
std::string schedule_text(const Tiles& t) {
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string body =
      "    %part_ = transform.structured.match ops{[\"linalg.matmul\"]} in %root\n"
      "        : (!transform.any_op) -> !transform.any_op\n";
  auto part = [&](const std::string& p, bool tail) {
    body += substitute(kPartText, {{"@P@", p},
                                   {"@TM@", str(t.m)},
                                   {"@TN@", str(tail ? t.n.tail : t.n.block)},
                                   {"@TK@", str(t.k)},
                                   {"@RM@", str(t.reg.rows)},
                                   {"@RN@", str(tail ? t.n.tail : t.reg.cols)}});
  };
  if (t.n.tail == 0) {
    part("", false);
  } else {
    body += substitute(kSplitText, {{"@AT@", str(t.n.main)}});
    part("0", false);
    part("1", true);
  }
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: !transform.any_op "
         "{transform.readonly}) {\n" +
         body +
         "    %f = transform.structured.match ops{[\"func.func\"]} in %root\n"
         "        : (!transform.any_op) -> !transform.any_op\n"
         "    transform.apply_patterns to %f {\n"
         "      transform.apply_patterns.vector.lower_contraction lowering_strategy = "
         "\"outerproduct\"\n"
         "      transform.apply_patterns.canonicalization\n"
         "    } : !transform.any_op\n"
         "    transform.yield\n"
         "  }\n"
         "}\n";
}

const char* kBufferize =
    "canonicalize,cse,eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,cse,fold-memref-alias-ops,canonicalize,cse";
const char* kLower =
    "convert-vector-to-scf{full-unroll=true},func.func(convert-linalg-to-loops),"
    "func.func(scf-forall-to-parallel),convert-scf-to-openmp,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-scf-to-cf,convert-vector-to-llvm,convert-to-llvm,"
    "reconcile-unrealized-casts";

// C = A B through the packed entry point of @mm (its three memref arguments expanded: base,
// aligned, offset, sizes[2], strides[2] each); `code` keeps the compiled code alive. A B read
// with padded rows (ldb > n) is copied into a buffer of that layout first.
std::function<void(const float*, const float*, float*)> packed_call(void (*packed)(void**),
                                                                    std::shared_ptr<void> code,
                                                                    int64_t m, int64_t n, int64_t k,
                                                                    int64_t ldb) {
  auto call = [packed, m, n, k, ldb](const float* a, const float* b, float* c) {
    struct Desc {
      float* base;
      float* aligned;
      int64_t offset, sizes[2], strides[2];
    };
    Desc da{const_cast<float*>(a), const_cast<float*>(a), 0, {m, k}, {k, 1}};
    Desc db{const_cast<float*>(b), const_cast<float*>(b), 0, {k, ldb}, {ldb, 1}};
    Desc dc{c, c, 0, {m, n}, {n, 1}};
    void* args[21];
    int i = 0;
    for (Desc* d : {&da, &db, &dc}) {
      args[i++] = &d->base;
      args[i++] = &d->aligned;
      args[i++] = &d->offset;
      args[i++] = &d->sizes[0];
      args[i++] = &d->sizes[1];
      args[i++] = &d->strides[0];
      args[i++] = &d->strides[1];
    }
    packed(args);
  };
  if (ldb == n) return [call, code](const float* a, const float* b, float* c) { call(a, b, c); };
  return [call, code, n, k, ldb](const float* a, const float* b, float* c) {
    ScratchFloats padded = scratch_floats(k * ldb);
    copy_rows(b, n, padded.get(), ldb, k, n);
    call(a, padded.get(), c);
  };
}

}  // namespace

void copy_rows(const float* src, int64_t src_ld, float* dst, int64_t dst_ld, int64_t rows,
               int64_t cols) {
  parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      std::memcpy(dst + r * dst_ld, src + r * src_ld, static_cast<size_t>(cols) * sizeof(float));
  });
}

bool codegen_matmul_fits(int64_t m, int64_t n, int64_t k) {
  // k >= 32: with a short k each register tile's C loads and stores are not amortized (an MLP's
  // 64x256x10: 8 us vs BLAS 4 us); from k = 32 on the kernel won (784x256x64: 1.7x).
  // A column tail must be whole vectors: a narrower one did not fill its registers.
  const Tiles t = tiles_for(m, n, k);
  return t.m > 0 && t.n.main > 0 && t.k > 0 && k >= kCodegenMinDepth &&
         t.n.tail % host_target().float_lanes() == 0;
}

CodegenMatmul compile_codegen_matmul(int64_t m, int64_t n, int64_t k, bool accumulate) {
  CodegenMatmul out;
  if (!codegen_matmul_fits(m, n, k)) {
    const RegisterTile reg = matmul_register_tile(host_target());
    out.error = "shape " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                ": the schedule needs m % " + std::to_string(reg.rows) +
                " == 0, n >= " + std::to_string(reg.cols) + " with a tail of whole " +
                std::to_string(host_target().float_lanes()) +
                "-float vectors, and k >= " + std::to_string(kCodegenMinDepth);
    return out;
  }
  const auto t0 = std::chrono::steady_clock::now();
  MlirRuntime& rt = mlir_runtime();
  std::lock_guard<std::mutex> lock(rt.mu);
  MLIRContext* ctx = rt.ctx.get();
  DiagnosticText diag_text(ctx);
  std::string& diag = diag_text.text;
  auto fail = [&](const char* stage) {
    out.error = std::string(stage) + ": " + diag.substr(0, 500);
    return out;
  };
  llvm::orc::JITTargetMachineBuilder tmb = jit_target_builder();  // PIC: the disk cache links it
  // The disk cache (LT_CACHE_DIR), keyed like the backend's graphs: everything the machine code
  // depends on. A hit skips MLIR and LLVM.
  const std::string dir = disk_cache::dir();
  std::string key;
  std::optional<disk_cache::CompileLock> compile_lock;  // held until the entry is stored
  const std::string payload_text = payload(m, n, k, b_rows(n), accumulate);
  if (!dir.empty()) {
    const std::string text = payload_text + schedule_text(tiles_for(m, n, k)) + kBufferize +
                             kLower + llvm_pipeline_text() + "\nLLVM " + LLVM_VERSION_STRING +
                             "\ncpu " + tmb.getCPU() + " " + tmb.getFeatures().getString() +
                             "\nlt " + lt_mlir_passes_fingerprint();
    key = cache_key("mm", text);
    out.cache_key = key;
    for (int attempt = 0; attempt < 2; ++attempt) {  // as the backend's graphs: a miss locks
      if (disk_cache::Library lib = disk_cache::load(dir, key)) {
        if (auto* f = reinterpret_cast<void (*)(void**)>(disk_cache::symbol(lib, "_mlir_mm"))) {
          lt::metrics_impl::add("DiskCacheHit");
          out.run = packed_call(f, lib, m, n, k, b_rows(n));
          out.compile_ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          return out;
        }
        disk_cache::discard(dir, key);
      }
      if (attempt == 0) {
        compile_lock.emplace(dir, key);
      }
    }
    lt::metrics_impl::add("DiskCacheMiss");
  }
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(payload_text, ctx);
  OwningOpRef<ModuleOp> schedule =
      parseSourceString<ModuleOp>(schedule_text(tiles_for(m, n, k)), ctx);
  if (!module || !schedule) return fail("parse");
  Operation* entry = transform::detail::findTransformEntryPoint(
      *schedule, *schedule, transform::TransformDialect::kTransformEntryPointSymbolName);
  if (!entry || failed(transform::applyTransformNamedSequence(*module, entry, *schedule,
                                                              transform::TransformOptions())))
    return fail("transform schedule");
  {
    PassManager pm(ctx);
    if (failed(parsePassPipeline(kBufferize, pm)) || failed(pm.run(*module)))
      return fail("bufferize");
  }
  module->walk([](func::FuncOp f) { linalg::hoistRedundantVectorTransfers(f); });
  {
    PassManager pm(ctx);
    if (failed(parsePassPipeline(kLower, pm)) || failed(pm.run(*module))) return fail("lower");
  }
  auto tm = tmb.createTargetMachine();
  if (!tm) {
    diag = llvm::toString(tm.takeError());
    return fail("target machine");
  }
  ExecutionEngineOptions opts;
  // opts.transformer is a function_ref: the callable must outlive ExecutionEngine::create.
  std::function<llvm::Error(llvm::Module*)> transformer = [machine = tm->get()](llvm::Module* mod) {
    return run_llvm_pipeline(mod, machine);
  };
  opts.transformer = transformer;
  opts.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Default;
  opts.enableObjectDump = !key.empty();
  auto created = ExecutionEngine::create(*module, opts, std::move(*tm));
  if (!created) {
    diag = llvm::toString(created.takeError()) + "; " + diag;
    return fail("JIT");
  }
  std::shared_ptr<ExecutionEngine> engine = std::move(*created);
  auto fn = engine->lookupPacked("mm");
  if (!fn) {
    diag = llvm::toString(fn.takeError());
    return fail("lookup");
  }
  out.run = packed_call(*fn, engine, m, n, k, b_rows(n));
  lt::metrics_impl::add("CodegenMatmulCompiles");
  if (!key.empty()) {
    const std::string obj = dir + "/" + key + "." + std::to_string(::getpid()) + ".tmp.o";
    llvm::sys::fs::create_directories(dir);
    engine->dumpToObjectFile(obj);
    disk_cache::store(dir, key, {obj}, {LT_LIBOMP_PATH});
  }
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::shared_ptr<const CodegenMatmul> codegen_matmul_cached(int64_t m, int64_t n, int64_t k,
                                                           bool accumulate, int64_t blas_k) {
  static std::mutex mu;
  static auto* cache = new std::map<std::array<int64_t, 5>, std::shared_ptr<const CodegenMatmul>>();
  std::lock_guard<std::mutex> lock(mu);
  if (blas_k <= 0 || blas_k > k) blas_k = k;
  auto& slot = (*cache)[{m, n, k, accumulate ? 1 : 0, blas_k}];
  if (!slot) {
    auto c = std::make_shared<CodegenMatmul>(compile_codegen_matmul(m, n, k, accumulate));
    if (!c->run) {
      lt::metrics_impl::add("CodegenMatmulFailed");
      std::fprintf(
          stderr, "lazytensor: MLIR matmul codegen failed for %ldx%ldx%ld%s; using BLAS (%s)\n",
          long(m), long(n), long(k), accumulate ? " (accumulating)" : "", c->error.c_str());
    } else {
      // The decision depends on the host (in the kernel's key: CPU, features, schedule) and on
      // the thread count both sides run with.
      const std::string dir = disk_cache::dir();
      const bool measure = matmul_policy() == MatmulPolicy::kMeasure;
      const std::string note_key = dir.empty() || c->cache_key.empty() || !measure
                                       ? ""
                                       : c->cache_key + "-threads" + std::to_string(num_threads()) +
                                             (blas_k == k ? "" : "-blask" + std::to_string(blas_k));
      std::string note;
      if (!note_key.empty() && disk_cache::load_note(dir, note_key, &note) && note.size() > 2 &&
          (note[0] == '0' || note[0] == '1' || note[0] == '2')) {
        c->chosen = note[0] == '1';
        c->close_call = note[0] == '2';
        c->choice = note.substr(2) + " (timed by an earlier process: LT_CACHE_DIR)";
        lt::metrics_impl::add("CodegenMatmulChoiceCached");
      } else {
        c->chosen = generated_matmul_wins(*c, m, n, k, &c->choice, &c->close_call, blas_k);
        if (!note_key.empty())  // 1: chosen, 2: a close call, 0: OpenBLAS
          disk_cache::store_note(dir, note_key,
                                 std::string(c->chosen       ? "1 "
                                             : c->close_call ? "2 "
                                                             : "0 ") +
                                     c->choice);
      }
    }
    slot = std::move(c);
  }
  return slot;
}

}  // namespace lt::backend
