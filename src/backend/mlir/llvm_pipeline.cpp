// The LLVM half of compiling: the short pass pipeline our generated code goes through, with
// LtInterleave, which asks the loop vectorizer to interleave long loops and to vectorize short
// ones with a masked tail. Used by the backend
// (mlir_backend.cpp) and the generated matmul kernels (matmul_codegen.cpp). LLVM headers only.
#include <cstdlib>
#include <string>
#include <utility>

#include "backend/mlir/mlir_runtime.h"
#include "core/config.h"
#include "core/metrics.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

namespace lt::backend {
namespace {

// A fused loop body is one long dependency chain per element (chain8: exp, tanh, exp, two
// divisions: ~150 cycles), and LLVM's cost model interleaves only small bodies, so the core
// waited on one vector at a time: 43 ms on one thread, of which the out-of-order window hid
// little. Interleaving 8 vectors per iteration gives it independent work (chain8 2 threads
// 20.8 -> 9.3 ms; 4 gave 12.9). Applied to innermost loops whose trip count is unknown
// (OpenMP chunks, which only large loops get) or at least kMinTrip; shorter loops keep the cost
// model's count. LT_MLIR_INTERLEAVE sets the count (1 = off; the masked short loops below stay).
unsigned interleave_count() {
  static const unsigned n = [] {
    return static_cast<unsigned>(config::integer("LT_MLIR_INTERLEAVE"));
  }();
  return n;
}

// LLVM's O2 pipeline took ~1 s on an MLP training-step module (inlining, unrolling, SLP over
// 17 small functions) for code no faster than this short list, which keeps what our loops need:
// clean-up, loop-invariant motion and the loop vectorizer (the polynomial math vectorizes).
// gvn before instcombine: in an OpenMP-outlined loop body it forwards the captured memref
// fields, without which the vectorizer gave up (chain8 one thread: 337 ms -> 47 ms).
// Between the two halves, LtInterleave asks the vectorizer to interleave long loops.
// LT_LLVM_PIPELINE overrides the whole list ("" = LLVM's standard O2).
const char* kLlvmBeforeVectorize =
    "function(sroa,early-cse,gvn,instcombine<no-verify-fixpoint>,simplifycfg,"
    "loop-simplify,lcssa,loop-mssa(loop-rotate,licm),indvars,";
const char* kLlvmVectorize = "loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)";

// LtInterleave's smallest body without an accumulator (instructions) that it interleaves.
constexpr size_t kInterleaveMinBody = 30;
// Innermost loops of a constant trip count below this are vectorized with a masked tail.
constexpr unsigned kShortTrip = 16;

const std::string& llvm_pipeline() {
  static const std::string p = [] {
    const std::optional<std::string> e = config::text("LT_LLVM_PIPELINE");
    return e ? *e
             : std::string(kLlvmBeforeVectorize) + "lt-interleave<" +
                   std::to_string(interleave_count()) +
                   ";min-body=" + std::to_string(kInterleaveMinBody) +
                   ";masked-below=" + std::to_string(kShortTrip) + ">," + kLlvmVectorize;
  }();
  return p;
}

struct LtInterleave : llvm::PassInfoMixin<LtInterleave> {
  static constexpr unsigned kMinTrip = 256;
  // Whether the target masks loads and stores (AVX's vmaskmov, AVX-512's mask registers).
  // Without them (the SSE test path) a masked tail is scalarized lane by lane.
  bool masked_tails = false;
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
    if (f.isDeclaration()) return llvm::PreservedAnalyses::all();
    int64_t masked = 0;
    auto& li = fam.getResult<llvm::LoopAnalysis>(f);
    auto& se = fam.getResult<llvm::ScalarEvolutionAnalysis>(f);
    for (llvm::Loop* l : li.getLoopsInPreorder()) {
      if (!l->isInnermost()) continue;
      const unsigned trip = se.getSmallConstantTripCount(l);
      // A loop shorter than LLVM's threshold for tiny trip counts (16) is vectorized only
      // where no scalar remainder is left, which the cost model rarely takes, so the row loops
      // of a [rows, C] tensor with a short C (a classifier's softmax and its gradient:
      // `x - max` broadcast along the rows, then exp) ran one element at a time. Vectorized
      // with the tail masked (on AVX-512 one masked vector per row of up to 16), a compiled
      // softmax step (`softmax(x, 1)` then mark_step, cluster and barrier, LT_COMPILE=sync):
      // [64, 10] 11.8 -> 5.7 us, [256, 5] 17.3 -> 5.7, [2048, 10] 226 -> 42 on a 2-core Zen 5;
      // on its AVX2 path 9.3 -> 5.2, 9.5 -> 7.2 and 124 -> 90. Only loops inside another loop:
      // a short loop that runs once gains nanoseconds, and each masked loop costs LLVM about a
      // millisecond (compile_mlp_step, 6 such loops: 64-70 -> 70-94 ms, noisy; 9 with the
      // loops that run once).
      if (trip >= 2 && trip < kShortTrip) {
        if (masked_tails && l->getLoopDepth() > 1) {
          llvm::addStringMetadataToLoop(l, "llvm.loop.vectorize.enable", 1);
          llvm::addStringMetadataToLoop(l, "llvm.loop.vectorize.predicate.enable", 1);
          ++masked;
        }
        continue;
      }
      if (trip != 0 && trip < kMinTrip) continue;
      // Short bodies without a floating-point accumulator (an optimizer's update, a ReLU's
      // gradient: ~6-15 instructions) are bound by memory, not by a dependency chain, and keep
      // the cost model's count: 8 vectors per iteration made their code 8 times longer for
      // nothing (compile_mlp_step, whose 8 loops are all such, 83-101 -> 71-87 ms, AVX-512
      // host; chain8, softmax and layer_norm unchanged within noise). A reduction keeps 8
      // accumulators.
      size_t body = 0;
      for (llvm::BasicBlock* b : l->blocks()) body += b->size();
      bool reduction = false;
      for (llvm::PHINode& phi : l->getHeader()->phis())
        reduction = reduction || phi.getType()->isFPOrFPVectorTy();
      if (interleave_count() > 1 && (body >= kInterleaveMinBody || reduction))
        llvm::addStringMetadataToLoop(l, "llvm.loop.interleave.count", interleave_count());
      // And vectorize them even where that takes more runtime alias checks than the cost
      // model's 8: an optimizer update writes parameters and moments in place (donated buffers
      // carry no noalias), about 16 checks, and stayed scalar (Adam's MLP update cluster, Zen 3:
      // 1.10 -> 0.95 ms per step).
      llvm::addStringMetadataToLoop(l, "llvm.loop.vectorize.enable", 1);
    }
    if (masked > 0) lt::metrics_impl::add("MlirMaskedTailLoops", masked);
    return llvm::PreservedAnalyses::all();  // metadata only
  }
};

}  // namespace

const std::string& llvm_pipeline_text() { return llvm_pipeline(); }

llvm::Error run_llvm_pipeline(llvm::Module* m, llvm::TargetMachine* tm) {
  // Its share of LlvmJitTime (the rest is instruction selection and object emission).
  lt::metrics_impl::ScopedTimer timer("LlvmOptTime");
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  // The subtarget's features, with the CPU's implied ones and LT_CPU_FEATURES applied.
  const bool avx = tm && tm->getMCSubtargetInfo()->checkFeatures("+avx");
  pb.registerPipelineParsingCallback([avx](llvm::StringRef name, llvm::FunctionPassManager& fpm,
                                           llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
    if (!name.starts_with("lt-interleave")) return false;
    LtInterleave pass;  // the count is in the text for the disk cache's key
    pass.masked_tails = avx;
    fpm.addPass(std::move(pass));
    return true;
  });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (llvm::Error e = pb.parsePassPipeline(mpm, llvm_pipeline())) return e;
  mpm.run(*m, mam);
  return llvm::Error::success();
}

std::string cache_key(const std::string& prefix, const std::string& text) {
  const llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(text));
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return prefix + buf;
}

}  // namespace lt::backend
