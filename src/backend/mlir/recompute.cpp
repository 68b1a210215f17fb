// lt-recompute-cheap: lets linalg's elementwise fusion reach producers with several readers.
//
// linalg-fuse-elementwise-ops fuses a producer into its consumer only when the consumer is its
// one reader; otherwise the producer's tensor is written to memory and read back by every reader.
// In layer_norm, `x - mean` feeds both the variance and the normalized output: materialized, it
// cost a 16 MB write and two 16 MB reads at 4096x1024. When such a producer is cheap (a few arith
// ops, no division or math call) and each reader runs over as many iterations as the producer
// (so recomputing it costs no more than reading it), this pass gives every reader its own copy,
// which the fusion that follows then merges into the reader. The values are computed by the same
// operations, so results do not change. Measured (bench_lazy layer_norm/lt_mlir 4096x1024,
// medians of 3): 0.83 -> 0.55 ms together with the accumulator promotion in parallel_loops.cpp;
// alone it made things worse (8 ms), because the variance's reduction then also read the mean
// from an internal buffer, and LLVM gave up keeping the accumulator in a register.
#include <algorithm>

#include "backend/mlir/parallel_loops.h"
#include "core/metrics.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace lt::backend {
namespace {

using namespace mlir;

constexpr int kMaxBodyOps = 4;  // arith ops in the producer's body
constexpr int kMaxReaders = 4;  // each reader gets its own copy

int64_t iterations(linalg::GenericOp g) {
  int64_t n = 1;
  for (int64_t r : g.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(r)) return -1;
    n *= r;
  }
  return n;
}

// Whether reader `c` runs as many iterations as producer `g` (whose result it reads as `r`): equal
// counts where both are static; with dynamic sizes (shape-generic code), when `c` reads `r`
// through an identity map over as many loops (g's loops are r's dims).
bool same_iterations(linalg::GenericOp g, linalg::GenericOp c, Value r) {
  const int64_t n = iterations(g), m = iterations(c);
  if (n >= 0 && m >= 0) return n == m;
  if (c.getNumLoops() != g.getNumLoops()) return false;
  for (OpOperand& o : c->getOpOperands())
    if (o.get() == r && !c.getMatchingIndexingMap(&o).isIdentity()) return false;
  return true;
}

bool cheap(linalg::GenericOp g) {
  if (g.getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops())
    return false;
  int ops = 0;
  for (Operation& o : g.getRegion().front().without_terminator()) {
    if (o.getDialect() != o.getContext()->getLoadedDialect<arith::ArithDialect>()) return false;
    if (isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
            arith::RemUIOp>(o))
      return false;
    if (++ops > kMaxBodyOps) return false;
  }
  return true;
}

struct RecomputeCheapPass : PassWrapper<RecomputeCheapPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RecomputeCheapPass)
  StringRef getArgument() const final { return "lt-recompute-cheap"; }
  StringRef getDescription() const final {
    return "copy cheap elementwise producers per reader so that fusion can take them";
  }

  void runOnOperation() override {
    // An input read from an output's buffer (Cluster::donations) is overwritten by the output's
    // write: a copy of its reader placed after that write would read the new values. (A bool
    // input's byte-to-i1 conversion and its comparison, both cheap, were copied into a second
    // reader that ran after the comparison's own in-place store: logical_or(gt(x, b), y) read b
    // back as gt(x, b).) Such readers keep their one loop, which runs before the write.
    llvm::SmallPtrSet<Value, 8> written;
    getOperation().walk(
        [&](bufferization::MaterializeInDestinationOp m) { written.insert(m.getDest()); });
    auto reads_written = [&](linalg::GenericOp g) {
      return llvm::any_of(g.getDpsInputs(), [&](Value v) {
        auto t = v.getDefiningOp<bufferization::ToTensorOp>();
        return t && written.contains(t->getOperand(0));
      });
    };
    SmallVector<linalg::GenericOp> cands;
    getOperation().walk([&](linalg::GenericOp g) {
      if (cheap(g) && !reads_written(g)) cands.push_back(g);
    });
    // Readers first: copying a reader adds readers to its own producers, seen later.
    for (linalg::GenericOp g : llvm::reverse(cands)) {
      Value r = g.getResult(0);
      SmallVector<Operation*> readers;
      for (Operation* u : r.getUsers())
        if (!llvm::is_contained(readers, u)) readers.push_back(u);
      if (readers.size() < 2 || readers.size() > kMaxReaders) continue;
      const bool all_fusible = llvm::all_of(readers, [&](Operation* u) {
        auto c = dyn_cast<linalg::GenericOp>(u);
        return c && c->getBlock() == g->getBlock() && c.hasPureTensorSemantics() &&
               same_iterations(g, c, r);
      });
      if (!all_fusible) continue;
      for (size_t i = 1; i < readers.size(); ++i) {
        OpBuilder b(readers[i]);
        Operation* copy = b.clone(*g.getOperation());
        readers[i]->replaceUsesOfWith(r, copy->getResult(0));
      }
      lt::metrics_impl::add("MlirRecomputed", static_cast<int64_t>(readers.size() - 1));
    }
  }
};

// lt-fuse-multi-use: merges an elementwise producer that several ops read into the first of
// them, keeping the producer's value as one more result of the merged loop, which the other
// readers then read.
//
// After linalg-fuse-elementwise-ops, a producer with several readers that is not cheap enough to
// recompute (lt-recompute-cheap) still runs as a loop of its own and writes its tensor to memory.
// Adam's update is the common case: the new moments m and v are outputs of the step and also feed
// the parameter's update, so it ran as three loops over each parameter (m, v, then w reading m
// and v back), 12 tensor passes where one loop needs 8. Here the producer's loop and its first
// reader's become one loop (linalg::fuseElementwiseOps, which yields the producer's value as an
// extra result), and every other reader takes that result: the producer is computed once, and
// its loop is gone (never recomputed after an in-place update has overwritten its inputs). Only
// where it costs nothing: both loops are parallel over the same iterations, the first reader
// reads the value once per iteration, through one operand with a permutation map, and every
// other reader comes after the merged loop in the same block.
struct FuseMultiUsePass : PassWrapper<FuseMultiUsePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseMultiUsePass)
  StringRef getArgument() const final { return "lt-fuse-multi-use"; }
  StringRef getDescription() const final {
    return "fuse elementwise producers with several readers into their first reader";
  }

  static bool elementwise(linalg::GenericOp g) {
    return g.hasPureTensorSemantics() && g.getNumParallelLoops() == g.getNumLoops();
  }

  // The operand of the producer's first reader to fuse through, or null.
  static OpOperand* candidate(linalg::GenericOp g) {
    if (!elementwise(g)) return nullptr;
    Operation* first = nullptr;
    for (Operation* u : g->getUsers()) {
      if (u->getBlock() != g->getBlock()) return nullptr;
      if (!first || u->isBeforeInBlock(first)) first = u;
    }
    auto c = dyn_cast_or_null<linalg::GenericOp>(first);
    if (!c || !elementwise(c)) return nullptr;
    for (Value r : g->getResults())
      if (!same_iterations(g, c, r)) return nullptr;
    // One operand: the merged loop reads no result of the producer it contains.
    OpOperand* through = nullptr;
    for (OpOperand& o : c->getOpOperands()) {
      if (o.get().getDefiningOp() != g.getOperation()) continue;
      if (through || !c.getMatchingIndexingMap(&o).isPermutation() ||
          !linalg::areElementwiseOpsFusable(&o))
        return nullptr;
      through = &o;
    }
    return through;
  }

  // One walk, then a worklist in program order: a merged loop is itself a producer with several
  // readers, so it goes to the back of the list; erased ops are skipped.
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation*> work;
    getOperation().walk([&](linalg::GenericOp g) { work.push_back(g); });
    llvm::SmallPtrSet<Operation*, 16> erased;
    int64_t fused = 0;
    for (size_t w = 0; w < work.size(); ++w) {
      if (erased.contains(work[w])) continue;
      auto g = cast<linalg::GenericOp>(work[w]);
      if (g->use_empty() || g->hasOneUse()) continue;
      OpOperand* o = candidate(g);
      if (!o) continue;
      Operation* consumer = o->getOwner();
      rewriter.setInsertionPoint(consumer);
      FailureOr<linalg::ElementwiseOpFusionResult> r = linalg::fuseElementwiseOps(rewriter, o);
      if (failed(r)) continue;
      for (auto [from, to] : r->replacements)
        rewriter.replaceUsesWithIf(from, to,
                                   [&](OpOperand& use) { return use.getOwner() != r->fusedOp; });
      for (Operation* dead : {consumer, g.getOperation()})
        if (dead->use_empty()) {
          erased.insert(dead);
          rewriter.eraseOp(dead);
        }
      erased.erase(r->fusedOp);  // (a new op at an erased one's address)
      work.push_back(r->fusedOp);
      ++fused;
    }
    if (fused) lt::metrics_impl::add("MlirMultiUseFused", fused);
  }
};

}  // namespace

void register_recompute_pass() {
  PassRegistration<RecomputeCheapPass>();
  PassRegistration<FuseMultiUsePass>();
}

}  // namespace lt::backend
