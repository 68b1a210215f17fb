// lt-parallel-outer: decides which loops of a compiled cluster run on several threads.
//
// convert-linalg-to-parallel-loops gives every linalg op one multi-dimensional scf.parallel over
// its parallel dimensions. Handed as they are to convert-scf-to-openmp, each would become a
// collapsed OpenMP loop (the index arithmetic of a collapsed loop defeats LLVM's vectorizer) and
// every small op would pay a fork/join. This pass keeps one OpenMP loop per op, over the
// outermost dimension only, and only where the op does enough work to repay waking a thread;
// the other dimensions become scf.for nests (vectorized by LLVM as before). With static shapes the
// work is known at compile time; in shape-generic code (dynamic sizes) a nest whose work is not
// keeps its threaded form, and the work, computed at run time from the bounds known before the
// nest, decides whether the threads join: `work >= threshold` (an arith.cmpi marked
// `lt.parallel_if`) becomes the OpenMP region's thread count, omp_get_max_threads() or 1, once
// convert-scf-to-openmp has made it (lt-omp-if, below; one copy of the loop, where an scf.if over
// two copies cost 15-30% more LLVM time for the same code; the region's `if` clause needs
// __kmpc_fork_call_if, which LLVM 14's libomp lacks). The threshold (inner iterations) is measured
// on the host (par_threshold.cpp) unless LT_MLIR_PAR_MIN sets it; the thread count is OpenMP's at
// run time (the backend sets it to LT_NUM_THREADS). Measured on the Zen 5 with the fixed threshold:
// bench_train, medians of 3: the MLP step (largest loop 200k iterations) ran 870
// steps/s with 32768, 930-990 with 262144 and 1000-1030 with no threads; the transformer step
// (loops of 0.5-2M) 7.75 / 7.36 / 6.42 steps/s, softmax 4096x1024 1.34 / 1.34 / 2.22 ms.
#include "backend/mlir/parallel_loops.h"

#include <cstdlib>

#include "backend/mlir/collapse_loops.h"
#include "backend/mlir/par_threshold.h"
#include "core/metrics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace lt::backend {
namespace {

using namespace mlir;

constexpr const char* kParallelIf = "lt.parallel_if";

int64_t trip_count(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub), s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0) return -1;
  return *u > *l ? (*u - *l + *s - 1) / *s : 0;
}

// Iterations of the deepest loop nest inside `op` (itself included); unknown bounds count as 1.
int64_t work_of(Operation* op) {
  int64_t inner = 1;
  for (Region& r : op->getRegions())
    for (Block& b : r)
      for (Operation& o : b) inner = std::max(inner, work_of(&o));
  int64_t trips = 1;
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    trips = trip_count(f.getLowerBound(), f.getUpperBound(), f.getStep());
  } else if (auto p = dyn_cast<scf::ParallelOp>(op)) {
    for (size_t i = 0; i < p.getNumLoops(); ++i) {
      int64_t t = trip_count(p.getLowerBound()[i], p.getUpperBound()[i], p.getStep()[i]);
      trips = t < 0 || trips < 0 ? -1 : trips * t;
    }
  }
  return std::max<int64_t>(trips, 1) * inner;
}

bool has_unknown_trips(Operation* op) {
  bool unknown = false;
  op->walk([&](Operation* o) {
    if (auto f = dyn_cast<scf::ForOp>(o))
      unknown = unknown || trip_count(f.getLowerBound(), f.getUpperBound(), f.getStep()) < 0;
    else if (auto p = dyn_cast<scf::ParallelOp>(o))
      for (size_t i = 0; i < p.getNumLoops(); ++i)
        unknown =
            unknown || trip_count(p.getLowerBound()[i], p.getUpperBound()[i], p.getStep()[i]) < 0;
  });
  return unknown;
}

// work_of() as a run-time value computed before `at`; a loop whose bounds are defined inside the
// nest counts as 1. Null: 1.
Value work_value(OpBuilder& b, Location loc, Operation* op, Operation* at, DominanceInfo& dom) {
  Value inner;
  for (Region& r : op->getRegions())
    for (Block& blk : r)
      for (Operation& o : blk) {
        if (o.getNumRegions() == 0) continue;
        Value w = work_value(b, loc, &o, at, dom);
        if (w) inner = inner ? Value(arith::MaxUIOp::create(b, loc, inner, w)) : w;
      }
  auto trips = [&](Value lb, Value ub, Value step) -> Value {
    const int64_t t = trip_count(lb, ub, step);
    if (t >= 0) return arith::ConstantIndexOp::create(b, loc, t);
    if (!dom.properlyDominates(lb, at) || !dom.properlyDominates(ub, at) ||
        !dom.properlyDominates(step, at))
      return Value();
    return arith::CeilDivSIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), step);
  };
  auto times = [&](Value a, Value c) -> Value {
    return !a ? c : !c ? a : Value(arith::MulIOp::create(b, loc, a, c));
  };
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    inner = times(trips(f.getLowerBound(), f.getUpperBound(), f.getStep()), inner);
  } else if (auto p = dyn_cast<scf::ParallelOp>(op)) {
    for (size_t i = 0; i < p.getNumLoops(); ++i)
      inner = times(trips(p.getLowerBound()[i], p.getUpperBound()[i], p.getStep()[i]), inner);
  }
  return inner;
}

// Rebuilds `p` as a 1-d scf.parallel over its first dimension (keep_parallel) or as a plain nest,
// with scf.for loops over the rest, and erases it.
void rebuild(scf::ParallelOp p, bool keep_parallel) {
  OpBuilder b(p);
  Location loc = p.getLoc();
  auto lbs = p.getLowerBound(), ubs = p.getUpperBound(), steps = p.getStep();
  auto ivs = p.getInductionVars();
  Block* body = p.getBody();
  auto nest = [&](OpBuilder& ob, size_t first, IRMapping& map) {
    scf::buildLoopNest(ob, loc, lbs.drop_front(first), ubs.drop_front(first),
                       steps.drop_front(first), [&](OpBuilder& ib, Location, ValueRange inner) {
                         for (size_t i = 0; i < inner.size(); ++i)
                           map.map(ivs[first + i], inner[i]);
                         for (Operation& o : body->without_terminator()) ib.clone(o, map);
                       });
  };
  if (keep_parallel) {
    scf::ParallelOp::create(b, loc, ValueRange{lbs[0]}, ValueRange{ubs[0]}, ValueRange{steps[0]},
                            [&](OpBuilder& ob, Location, ValueRange outer) {
                              IRMapping map;
                              map.map(ivs[0], outer[0]);
                              nest(ob, 1, map);
                            });
  } else {
    IRMapping map;
    nest(b, 0, map);
  }
  p.erase();
}

// A reduction lowered by linalg is `for k: acc[i] = acc[i] + f(x[i, k], ...)`, a load and a store
// of the accumulator at every step. LLVM keeps acc[i] in a register (and then vectorizes) only
// if it can prove that no other access in the loop touches it; a buffer allocated inside the
// function (the accumulator, and any other temporary the loop reads, e.g. layer_norm's mean
// broadcast over the row) is a pointer it knows nothing about, so the loop stayed scalar, one
// store per element. Here, for an innermost scf.for that loads and then stores one memref at
// loop-invariant indices and touches that memref nowhere else, the value is carried in an
// iter_arg: one load before the loop, one store after. Safe for our code because bufferization
// gave each linalg op's output a buffer of its own that none of its inputs share.
void promote_accumulators(scf::ForOp loop) {
  Block* body = loop.getBody();
  SmallVector<std::pair<memref::LoadOp, memref::StoreOp>> pairs;
  for (Operation& op : *body) {
    auto st = dyn_cast<memref::StoreOp>(op);
    if (!st) continue;
    Value m = st.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(m) ||
        !llvm::all_of(st.getIndices(), [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    memref::LoadOp ld;
    bool other = false;
    loop.walk([&](Operation* o) {
      if (o == st.getOperation() || !llvm::is_contained(o->getOperands(), m)) return;
      auto l = dyn_cast<memref::LoadOp>(o);
      if (l && !ld && l->getBlock() == body && l->isBeforeInBlock(st) &&
          l.getIndices() == st.getIndices())
        ld = l;
      else
        other = true;
    });
    if (ld && !other) pairs.push_back({ld, st});
  }
  if (pairs.empty()) return;
  IRRewriter rw(loop.getContext());
  rw.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (auto [ld, st] : pairs)
    inits.push_back(memref::LoadOp::create(rw, loop.getLoc(), ld.getMemRef(), ld.getIndices()));
  const unsigned first = loop.getNumRegionIterArgs();
  auto replaced = loop.replaceWithAdditionalYields(
      rw, inits, false, [&](OpBuilder&, Location, ArrayRef<BlockArgument>) {
        SmallVector<Value> ys;
        for (auto [ld, st] : pairs) ys.push_back(st.getValueToStore());
        return ys;
      });
  if (failed(replaced)) return;
  lt::metrics_impl::add("MlirPromotedAccumulators", static_cast<int64_t>(pairs.size()));
  auto nl = cast<scf::ForOp>(replaced->getOperation());
  rw.setInsertionPointAfter(nl);
  for (size_t i = 0; i < pairs.size(); ++i) {
    auto [ld, st] = pairs[i];
    rw.replaceAllUsesWith(ld.getResult(), nl.getRegionIterArgs()[first + i]);
    memref::StoreOp::create(rw, nl.getLoc(), nl.getResult(first + i), st.getMemRef(),
                            st.getIndices());
    rw.eraseOp(st);
    rw.eraseOp(ld);
  }
}

int64_t par_min() { return par_threshold(); }

struct ParallelOuterPass : PassWrapper<ParallelOuterPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelOuterPass)
  StringRef getArgument() const final { return "lt-parallel-outer"; }
  StringRef getDescription() const final {
    return "one OpenMP-ready scf.parallel per loop nest, outermost dimension, large nests only";
  }
  void getDependentDialects(DialectRegistry& r) const override {
    r.insert<scf::SCFDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    const int64_t min_work = par_min();
    // Inner parallel loops first (post-order), so each outer one sees plain loops inside.
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp p) { loops.push_back(p); });
    for (scf::ParallelOp p : loops) {
      if (!p.getInitVals().empty()) continue;  // reductions: not produced by linalg lowering
      bool outermost = !p->getParentOfType<scf::ParallelOp>();
      int64_t t0 = trip_count(p.getLowerBound()[0], p.getUpperBound()[0], p.getStep()[0]);
      if (outermost && min_work >= 0 && t0 != 0 && t0 != 1 && has_unknown_trips(p)) {
        decide_at_run_time(p, min_work);
        continue;
      }
      bool par = outermost && min_work >= 0 && t0 >= 2 && work_of(p) >= min_work;
      rebuild(p, par);
    }
    collapse_contiguous_loops(getOperation());
    SmallVector<scf::ForOp> fors;
    getOperation().walk([&](scf::ForOp f) {
      bool innermost = true;
      f.getBody()->walk([&](scf::ForOp) { innermost = false; });
      if (innermost) fors.push_back(f);
    });
    for (scf::ForOp f : fors) promote_accumulators(f);
  }

  static void decide_at_run_time(scf::ParallelOp p, int64_t min_work) {
    OpBuilder b(p);
    Location loc = p.getLoc();
    DominanceInfo dom(p->getParentOp());
    Value w = work_value(b, loc, p, p, dom);
    if (!w) {  // nothing known before the nest: as the static rule with unknown bounds
      rebuild(p, false);
      return;
    }
    auto big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, w,
                                     arith::ConstantIndexOp::create(b, loc, min_work));
    big->setAttr(kParallelIf, UnitAttr::get(p.getContext()));
    rebuild(p, true);  // right after the condition
    lt::metrics_impl::add("MlirRuntimeParallelChoice");
  }
};

// The marked condition before an omp.parallel (in its block, with no other omp.parallel in
// between) sets its thread count: all of OpenMP's, or one.
struct OmpIfPass : PassWrapper<OmpIfPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OmpIfPass)
  StringRef getArgument() const final { return "lt-omp-if"; }
  StringRef getDescription() const final {
    return "the run-time thread choice of lt-parallel-outer as the OpenMP region's thread count";
  }
  void getDependentDialects(DialectRegistry& r) const override {
    r.insert<omp::OpenMPDialect, func::FuncDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext* ctx = module.getContext();
    const char* kMax = "omp_get_max_threads";
    auto i32 = IntegerType::get(ctx, 32);
    module.walk([&](Block* block) {
      Operation* pending = nullptr;
      for (Operation& op : *block) {
        if (op.hasAttr(kParallelIf)) {
          op.removeAttr(kParallelIf);
          pending = &op;
          continue;
        }
        auto par = dyn_cast<omp::ParallelOp>(op);
        if (!par || !pending) continue;
        if (!module.lookupSymbol<func::FuncOp>(kMax)) {
          OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
          func::FuncOp::create(mb, module.getLoc(), kMax, FunctionType::get(ctx, {}, {i32}))
              .setPrivate();
        }
        OpBuilder b(par);
        Location loc = par.getLoc();
        Value all = func::CallOp::create(b, loc, kMax, TypeRange{i32}, ValueRange{}).getResult(0);
        Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
        Value n = arith::SelectOp::create(b, loc, pending->getResult(0), all, one);
        par.getNumThreadsMutable().assign(n);
        pending = nullptr;
      }
    });
  }
};

}  // namespace

void register_lt_mlir_passes() {
  PassRegistration<ParallelOuterPass>();
  PassRegistration<OmpIfPass>();
  register_recompute_pass();
}

std::string lt_mlir_passes_fingerprint() {
  return "par_min " + std::to_string(par_min()) + " built " __DATE__ " " __TIME__;
}

}  // namespace lt::backend
