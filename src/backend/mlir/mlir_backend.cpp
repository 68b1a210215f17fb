// The MLIR backend: each fusion cluster of a graph becomes one func.func on tensors (linalg
// generic ops, arith, math), fused by linalg-fuse-elementwise-ops, bufferized into caller-owned
// output buffers, lowered to LLVM with vectorizable polynomial math, and JIT-compiled; library
// steps (conv, pooling, indexing, ...) run the eager kernels between clusters, matmuls the
// generated kernels of matmul_codegen.cpp where their tiles fit, else OpenBLAS. MLIR includes
// live in src/backend/mlir/ only: here, our passes (parallel_loops.cpp, recompute.cpp),
// matmul_codegen.cpp, llvm_pipeline.cpp (the LLVM passes) and mlir_runtime.h.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/mlir/cluster_lowering.h"
#include "backend/mlir/disk_cache.h"
#include "backend/mlir/dtype_lowering.h"
#include "backend/mlir/executable.h"
#include "backend/mlir/jit.h"
#include "backend/mlir/math_lowering.h"
#include "backend/mlir/matmul_codegen.h"
#include "backend/mlir/mlir_runtime.h"
#include "backend/mlir/par_threshold.h"
#include "backend/mlir/parallel_loops.h"
#include "backend/mlir/partition.h"
#include "backend/mlir/target.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "ops/attrs.h"

namespace lt::backend {

using namespace mlir;

// ---- process-wide MLIR state (registration costs tens of ms: once)
MlirRuntime::MlirRuntime() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAllPasses();
  register_lt_mlir_passes();
  ctx = std::make_unique<MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  ctx->disableMultithreading();
}
MlirRuntime& mlir_runtime() {
  static MlirRuntime* r = new MlirRuntime();
  return *r;
}

namespace {

namespace M = lt::metrics_impl;

// Passes anchored on the builtin.module the PassManager runs on. Reduction inits stay named
// linalg.fill ops on their own allocations: generalized, a fill no longer reads its init, so
// canonicalize swapped the init for tensor.empty, cse merged equal fills, and two reductions
// accumulated into one buffer.
const char* kPipeline =
    "lt-recompute-cheap,linalg-fuse-elementwise-ops,lt-fuse-multi-use,"
    "canonicalize,cse,eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-deallocation-pipeline,func.func(convert-linalg-to-parallel-loops),lt-parallel-outer,"
    "convert-scf-to-openmp,lt-omp-if,expand-strided-metadata,lower-affine,finalize-memref-to-llvm{"
    "use-generic-functions=true},"
    "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
    "reconcile-unrealized-casts";

// Compiled clusters by their function's text (its name left out), for the process, under the
// MLIR context's lock. Graphs that differ in small ways share most clusters: the optimizer's
// first steps and the later ones, the training step and its last partial batch's generic code
// (the parameters' updates keep their sizes). An entry lives while an executable that runs its
// code does (the weak owner), so the cache follows the graph cache's evictions.
struct CompiledCluster {
  std::weak_ptr<void> owner;
  void (*fn)(void**) = nullptr;
};
std::unordered_map<std::string, CompiledCluster>& compiled_clusters() {
  static auto* m = new std::unordered_map<std::string, CompiledCluster>();
  return *m;
}

std::string cluster_key(func::FuncOp f) {
  const std::string name = f.getSymName().str();
  f.setSymName("cluster");
  std::string text;
  llvm::raw_string_ostream os(text);
  f->print(os, OpPrintingFlags().useLocalScope());  // not numbered across the whole module
  f.setSymName(name);
  return cache_key("", text);
}

class MlirBackend : public Backend {
 public:
  const char* name() const override { return "mlir"; }
  bool supports(OpKind) const override { return true; }  // library steps run the rest

  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return compile(g, nullptr, Tier::Full);
  }

  void prepare_background_compiles() override {
    mlir_runtime();
    host_target();
    par_threshold();  // a streaming loop timed on 1 and 2 threads: not beside other work
  }

  // Shape-generic code: dynamic dims in the types, sizes from the symbols argument; library
  // matmuls run OpenBLAS or, at the full tier, kernels chunked over a dynamic k (the generated
  // kernels' tiles are shape-specialized). Declined (nullptr) wherever the static path would
  // fall back, or when a cluster does not lower.
  std::unique_ptr<Executable> compile_generic(const ir::Graph& g,
                                              std::shared_ptr<ir::DynamicShapes> dyn,
                                              Tier tier) override {
    dyn->bind(g);
    return compile(g, std::move(dyn), tier);
  }

 private:
  std::unique_ptr<Executable> compile(const ir::Graph& g, std::shared_ptr<ir::DynamicShapes> dyn,
                                      Tier tier) {
    const bool quick = tier == Tier::Quick;
    // Compile time grows with the graph while a huge unrolled trace gains little from fusion:
    // such graphs run on the interpreter (LT_MLIR_MAX_OPS, default 20000 ops).
    static const size_t max_ops = static_cast<size_t>(config::integer("LT_MLIR_MAX_OPS"));
    if (g.op_count > max_ops) {
      if (dyn) return nullptr;
      M::add("LargeGraphInterp");
      return make_interp_backend()->compile(g);
    }
    Schedule s = partition(g);
    LibraryKernels kernels =  // before taking the context's lock; quick: all OpenBLAS
        quick ? LibraryKernels{}
        : dyn ? chunked_matmul_kernels(s, *dyn)
              : matmul_kernels(s);
    if (!quick && !dyn) add_conv_kernels(s, &kernels);
    MlirRuntime& rt = mlir_runtime();
    std::lock_guard<std::mutex> lock(rt.mu);
    MLIRContext* ctx = rt.ctx.get();
    DiagnosticText diag_text(ctx);
    std::string& diag = diag_text.text;
    OwningOpRef<ModuleOp> module;
    bool built = false;
    // An op the lowering turns down becomes a library step: counted per op (MlirUnlowered::<op>),
    // named once under LT_DEBUG, and the graph partitioned again without it, so the rest of the
    // graph still compiles (never a whole-graph fallback for a missing case).
    for (int round = 0; round <= kNumOps && !built; ++round) {
      module = ModuleOp::create(UnknownLoc::get(ctx));
      built = true;
      const ir::Node* failed = nullptr;
      for (size_t k = 0; k < s.clusters.size() && built; ++k)
        built = build_cluster(ctx, *module, s.clusters[k], cluster_function(static_cast<int>(k)),
                              &failed, dyn.get());
      if (built || !failed || is_unlowered(failed->op) || dyn) break;
      mark_unlowered(failed->op);
      M::add(std::string("MlirUnlowered::") + op_name(failed->op));
      if (M::debug_enabled())
        std::fprintf(stderr, "lazytensor: MLIR does not lower %s; it runs as a library step\n",
                     op_name(failed->op));
      s = partition(g);
    }
    auto fail = [&](const char* stage) -> std::unique_ptr<Executable> {
      if (dyn) {
        if (M::debug_enabled())
          std::fprintf(stderr, "lazytensor: no shape-generic code (MLIR %s: %s)\n", stage,
                       diag.substr(0, 300).c_str());
        return nullptr;
      }
      M::add("CompileFallback");
      std::fprintf(stderr, "lazytensor: MLIR %s failed for graph %s; running it on interp (%s)\n",
                   stage, ir::hash_hex(g.key).c_str(), diag.substr(0, 300).c_str());
      return make_interp_backend()->compile(g);
    };
    if (!built || failed(verify(*module))) return fail("lowering");
    dump("before", *module);
    // The host, restricted by LT_CPU_FEATURES; position-independent code, so the object can also
    // be linked into the disk cache's shared library.
    llvm::orc::JITTargetMachineBuilder tmb = jit_target_builder();
    // LLVM dominates compile time; LT_LLVM_OPT (0-3, default 2) trades it against code speed.
    static const unsigned opt_level = static_cast<unsigned>(config::integer("LT_LLVM_OPT"));
    static const std::string pipeline = [] {
      const std::string e = config::text("LT_MLIR_PIPELINE").value_or("");  // experiments
      return e.empty() ? std::string(kPipeline) : e;
    }();
    // The disk cache: the key is everything the machine code depends on.
    const std::string cache_dir = disk_cache::dir();
    std::string cache_key;
    std::optional<disk_cache::CompileLock> compile_lock;  // held until the entry is stored
    if (!cache_dir.empty()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      module->print(os);
      os << "\n"
         << pipeline << "\n"
         << llvm_pipeline_text() << "\nopt " << opt_level << "\nLLVM " << LLVM_VERSION_STRING
         << "\ncpu " << tmb.getCPU() << " " << tmb.getFeatures().getString() << "\ntier "
         << (quick ? "quick" : "full") << "\nlt " << lt_mlir_passes_fingerprint()
         << " backend built " << __DATE__ << " " << __TIME__;  // our lowering changes too
      cache_key = backend::cache_key("", text);
      // A miss takes the key's lock and looks again: another process that compiled the same
      // graph meanwhile (or held the lock while we waited) has stored its entry by then.
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (disk_cache::Library lib = disk_cache::load(cache_dir, cache_key)) {
          auto exe = make_mlir_executable(
              g, s,
              [&](const std::string& name) {
                return reinterpret_cast<void (*)(void**)>(disk_cache::symbol(lib, name));
              },
              lib, kernels, dyn);
          if (exe) {
            M::add("DiskCacheHit");
            return exe;
          }
          disk_cache::discard(cache_dir, cache_key);
        }
        if (attempt == 0) {
          compile_lock.emplace(cache_dir, cache_key);
        }
      }
      M::add("DiskCacheMiss");
    }
    // Clusters compiled before for another graph (compiled_clusters) are taken from there and
    // left out of this compile; not under the disk cache, whose entry is the graph's whole code.
    static const bool reuse_flag = config::flag("LT_MLIR_REUSE_CLUSTERS");
    const bool reuse = reuse_flag && cache_dir.empty();
    std::unordered_map<std::string, void (*)(void**)> reused;  // entry name -> code
    std::vector<std::shared_ptr<void>> owners;                 // of the reused code
    std::vector<std::pair<std::string, std::string>> fresh;    // compiled now: entry name, key
    std::vector<double> weights;  // of the functions left in the module, in order
    std::unordered_map<std::string, std::string> first_entry;  // key -> entry compiled now
    std::unordered_map<std::string, std::string> equal_to;     // entry -> an equal one's
    {
      auto& known = compiled_clusters();
      for (auto it = known.begin(); it != known.end();)
        it = it->second.owner.expired() ? known.erase(it) : std::next(it);
      std::vector<func::FuncOp> fns;
      for (func::FuncOp f : module->getOps<func::FuncOp>()) fns.push_back(f);
      for (size_t k = 0; k < fns.size(); ++k) {  // function k is cluster k
        const std::string entry = cluster_entry(static_cast<int>(k));
        if (reuse) {
          const std::string key = cluster_key(fns[k]) + (quick ? "q" : "");
          auto it = known.find(key);
          if (std::shared_ptr<void> owner = it == known.end() ? nullptr : it->second.owner.lock()) {
            reused[entry] = it->second.fn;
            owners.push_back(std::move(owner));
            fns[k].erase();
            continue;
          }
          // The same function twice in this graph (the Adam updates of two weights of one
          // shape): compiled once, both entries call it.
          auto [first, added] = first_entry.emplace(key, entry);
          if (!added) {
            equal_to[entry] = first->second;
            fns[k].erase();
            continue;
          }
          fresh.emplace_back(entry, key);
        } else {
          fresh.emplace_back(entry, "");
        }
        weights.push_back(4.0 + static_cast<double>(s.clusters[k].nodes.size()));
      }
    }
    M::add("MlirClustersReused", static_cast<int64_t>(reused.size()));
    M::add("MlirClustersShared", static_cast<int64_t>(equal_to.size()));
    // Split into modules compiled on parallel threads (jit.h): LLVM's code generation is most
    // of the compile time and runs on one thread per module. The weights (nodes) predict LLVM's
    // time poorly (a one-op select over 17x256 took as long as a 525-op cross-entropy over
    // 17x10), so there are more modules than threads and each thread takes the next when it is
    // done; each module costs ~2-3 ms of its own (an engine, its target machine, the wrappers).
    static const int per_thread = static_cast<int>(config::integer("LT_JIT_MODULES_PER_THREAD"));
    SplitModules split = fresh.empty() && !reused.empty()
                             ? SplitModules{}
                             : split_functions(*module, compile_threads() * per_thread, weights);
    std::vector<OwningOpRef<ModuleOp>>& parts = split.modules;
    std::vector<std::vector<std::string>> names(parts.size());
    for (size_t i = 0; i < parts.size(); ++i)
      for (size_t k : split.functions[i]) names[i].push_back(fresh[k].first);
    {
      RewritePatternSet patterns(ctx);
      // sin/cos stay libm calls: MLIR's approximations reduce the argument in float32, which
      // is off by 1e-3 at |x| ~ 5e4 and turns sin(-0) into +0 (the fuzzer found both). So do
      // atan/atan2: MLIR's float32 polynomial is 40 ulp from libm at 0.658. erfc stays libm's
      // too: its tail (erfc(9) = 4e-37) is what the op is for.
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef op) {
        return !op.ends_with("sin") && !op.ends_with("cos") && !op.ends_with("atan") &&
               !op.ends_with("atan2") && !op.ends_with("erfc");
      });
      const FrozenRewritePatternSet math(std::move(patterns));
      M::ScopedTimer t("MlirPassTime");
      PassManager pm(ctx);
      if (failed(parsePassPipeline(pipeline, pm))) return fail("pass pipeline");
      for (OwningOpRef<ModuleOp>& part : parts) {
        if (failed(applyPatternsGreedily(*part, math))) return fail("math rewrite");
        if (failed(pm.run(*part))) return fail("pass pipeline");
        dump("after", *part);
      }
    }
    // memrefCopy: bufferization copies strided views (a slice to an output) through it.
    static const char* runner_utils = "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so";
    JitOptions jo;
    jo.opt_level = opt_level;
    jo.shared_libs = {runner_utils};
    jo.threads = compile_threads();
    jo.quick = quick;
    if (!cache_key.empty()) {
      llvm::sys::fs::create_directories(cache_dir);
      jo.object_prefix = cache_dir + "/" + cache_key + "." + std::to_string(::getpid()) + ".tmp";
    }
    std::unique_ptr<Executable> exe;
    JitCode code;
    {
      M::ScopedTimer jit_timer("LlvmJitTime");
      M::add("MlirJitModules", static_cast<int64_t>(parts.size()));
      if (!parts.empty()) code = jit_compile(parts, names, tmb, jo);
      if (!code.error.empty()) {
        diag += code.error;
        for (const std::string& o : code.objects) std::remove(o.c_str());
        return fail("JIT");
      }
      M::add("MlirClusters", static_cast<int64_t>(s.clusters.size()));
      if (M::debug_enabled()) {
        std::string line;
        for (size_t i = 0; i < code.ms.size(); ++i)
          line += (i ? " | " : "") + std::to_string(names[i].size()) + " fns " +
                  std::to_string(static_cast<int>(code.ms[i])) + " ms";
        if (!parts.empty())
          std::fprintf(stderr, "lazytensor: JIT %zu clusters as %zu modules on threads: %s\n",
                       fresh.size(), parts.size(), line.c_str());
        if (!reused.empty())
          std::fprintf(stderr, "lazytensor: %zu of %zu clusters reused from other graphs\n",
                       reused.size(), s.clusters.size());
        if (!equal_to.empty())
          std::fprintf(stderr, "lazytensor: %zu of %zu clusters equal to another in the graph\n",
                       equal_to.size(), s.clusters.size());
      }
      // The executable keeps the engines of its reused clusters alive as well as its own.
      std::shared_ptr<void> owner = code.owner;
      if (!owners.empty()) {
        owners.push_back(code.owner);
        owner = std::make_shared<std::vector<std::shared_ptr<void>>>(std::move(owners));
      }
      exe = make_mlir_executable(
          g, std::move(s),
          [&](const std::string& name) -> void (*)(void**) {
            auto e = equal_to.find(name);
            auto it = code.symbols.find(e == equal_to.end() ? name : e->second);
            if (it != code.symbols.end()) return it->second;
            auto r = reused.find(name);
            return r == reused.end() ? nullptr : r->second;
          },
          owner, kernels, dyn);
    }
    if (exe && code.owner)
      for (const auto& [entry, key] : fresh)
        if (!key.empty()) compiled_clusters()[key] = {code.owner, code.symbols.at(entry)};
    if (exe && !cache_key.empty())
      disk_cache::store(cache_dir, cache_key, code.objects, {runner_utils, LT_LIBOMP_PATH});
    else
      for (const std::string& o : code.objects) std::remove(o.c_str());
    if (!exe) return fail("symbol lookup");
    return exe;
  }

  static void dump(const char* when, ModuleOp m) {
    static const std::string path = config::text("LT_SAVE_IR").value_or("");
    static const std::string fmt = config::choice("LT_IR_FORMAT");
    if (path.empty() || fmt != "mlir") return;
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
    if (ec) return;
    os << "// MLIR " << when << " the pipeline\n";
    m.print(os);
    os << "\n";
  }
};

}  // namespace

std::unique_ptr<Backend> make_mlir_backend() { return std::make_unique<MlirBackend>(); }

}  // namespace lt::backend
