// Parallel JIT compilation of a graph's modules (see jit.h).
#include "backend/mlir/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>

#include "backend/mlir/mlir_runtime.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

namespace lt::backend {

using namespace mlir;

SplitModules split_functions(ModuleOp m, int parts, const std::vector<double>& weights) {
  std::vector<Operation*> fns;
  for (Operation& op : m.getBody()->getOperations()) fns.push_back(&op);
  const size_t n = std::max<size_t>(1, std::min<size_t>(fns.size(), std::max(parts, 1)));
  std::vector<size_t> order(fns.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weights.at(a) > weights.at(b); });
  SplitModules out;
  out.functions.resize(n);
  std::vector<double> load(n, 0.0);
  for (size_t i : order) {
    const size_t k = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[k] += weights.at(i);
    out.functions[k].push_back(i);
  }
  // The heaviest module first: the JIT's threads take them in this order.
  std::vector<size_t> bins(n);
  std::iota(bins.begin(), bins.end(), 0);
  std::stable_sort(bins.begin(), bins.end(), [&](size_t a, size_t b) { return load[a] > load[b]; });
  std::vector<std::vector<size_t>> sorted;
  for (size_t k : bins) sorted.push_back(std::move(out.functions[k]));
  out.functions = std::move(sorted);
  for (size_t k = 0; k < n; ++k) {
    out.modules.push_back(ModuleOp::create(m.getLoc()));
    std::sort(out.functions[k].begin(), out.functions[k].end());  // the order they had in `m`
    for (size_t i : out.functions[k])
      fns[i]->moveBefore(out.modules[k]->getBody(), out.modules[k]->getBody()->end());
  }
  return out;
}

namespace {

struct Part {
  std::unique_ptr<ExecutionEngine> engine;
  std::unordered_map<std::string, void (*)(void**)> symbols;
  double ms = 0;
  std::string error;
};

// One module: translate (under `translate_mu`: the context is single-threaded), optimize,
// generate code (at the first lookup), look up every name, dump the object if asked.
void compile_one(ModuleOp module, const std::vector<std::string>& names,
                 const llvm::orc::JITTargetMachineBuilder& tmb, const JitOptions& o,
                 const std::string& object, std::mutex& translate_mu, Part& out) {
  llvm::orc::JITTargetMachineBuilder builder = tmb;  // createTargetMachine is not const
  // The engine generates code at the target machine's level (its jitCodeGenOptLevel applies
  // only to a target machine of its own making).
  const llvm::CodeGenOptLevel level = o.quick            ? llvm::CodeGenOptLevel::None
                                      : o.opt_level >= 2 ? llvm::CodeGenOptLevel::Default
                                                         : llvm::CodeGenOptLevel::Less;
  builder.setCodeGenOptLevel(level);
  auto tm = builder.createTargetMachine();
  if (!tm) {
    out.error = "target machine: " + llvm::toString(tm.takeError());
    return;
  }
  llvm::TargetMachine* machine = tm->get();
  std::function<llvm::Error(llvm::Module*)> optimize;
  if (o.opt_level == 2 && !llvm_pipeline_text().empty())
    optimize = [machine](llvm::Module* m) { return run_llvm_pipeline(m, machine); };
  else
    optimize = makeOptimizingTransformer(o.opt_level, 0, machine);
  // The engine gives every function a packed wrapper (_mlir_<name>); only those of the names
  // looked up run. The others (the wrapper of each cluster's own function: its largest piece of
  // straight-line code, ~275 instructions for an Adam update) are dropped before the passes.
  auto transformer = [optimize, &names](llvm::Module* m) {
    std::vector<llvm::Function*> unused;
    for (llvm::Function& f : *m)
      if (!f.isDeclaration() && f.use_empty() && f.getName().starts_with("_mlir_") &&
          std::find(names.begin(), names.end(), f.getName().str()) == names.end())
        unused.push_back(&f);
    for (llvm::Function* f : unused) f->eraseFromParent();
    return optimize(m);
  };
  std::vector<llvm::StringRef> libs(o.shared_libs.begin(), o.shared_libs.end());
  ExecutionEngineOptions opts;
  opts.sharedLibPaths = libs;
  opts.transformer = transformer;
  opts.enableObjectDump = !object.empty();
  auto translate = [&translate_mu](Operation* op, llvm::LLVMContext& ctx) {
    std::lock_guard<std::mutex> lock(translate_mu);
    return translateModuleToLLVMIR(op, ctx);
  };
  opts.llvmModuleBuilder = translate;  // a function_ref: `translate` outlives the call
  auto created = ExecutionEngine::create(module, opts, std::move(*tm));
  if (!created) {
    out.error = llvm::toString(created.takeError());
    return;
  }
  out.engine = std::move(*created);
  for (const std::string& name : names) {
    auto fn = out.engine->lookup(name);
    if (!fn) {
      out.error = "lookup " + name + ": " + llvm::toString(fn.takeError());
      return;
    }
    out.symbols[name] = reinterpret_cast<void (*)(void**)>(*fn);
  }
  if (!object.empty()) out.engine->dumpToObjectFile(object);
}

}  // namespace

JitCode jit_compile(std::vector<OwningOpRef<ModuleOp>>& modules,
                    const std::vector<std::vector<std::string>>& names,
                    const llvm::orc::JITTargetMachineBuilder& tmb, const JitOptions& o) {
  const size_t n = modules.size();
  std::vector<Part> parts(n);
  std::vector<std::string> objects(n);
  if (!o.object_prefix.empty())
    for (size_t i = 0; i < n; ++i) objects[i] = o.object_prefix + "." + std::to_string(i) + ".o";
  std::mutex translate_mu;
  auto work = [&](size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      compile_one(*modules[i], names[i], tmb, o, objects[i], translate_mu, parts[i]);
    } catch (const std::exception& e) {
      parts[i].error = e.what();
    }
    parts[i].ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) work(i);
  };
  std::vector<std::thread> helpers;
  const size_t threads =
      std::min(static_cast<size_t>(std::max(o.threads, 1)), std::max<size_t>(n, 1));
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(take);
  take();
  for (std::thread& t : helpers) t.join();
  JitCode out;
  auto engines = std::make_shared<std::vector<std::unique_ptr<ExecutionEngine>>>();
  for (size_t i = 0; i < n; ++i) {
    if (!parts[i].error.empty() && out.error.empty()) out.error = parts[i].error;
    out.symbols.insert(parts[i].symbols.begin(), parts[i].symbols.end());
    out.ms.push_back(parts[i].ms);
    if (parts[i].engine) engines->push_back(std::move(parts[i].engine));
    if (!objects[i].empty() && parts[i].error.empty()) out.objects.push_back(objects[i]);
  }
  out.owner = engines;
  return out;
}

}  // namespace lt::backend
