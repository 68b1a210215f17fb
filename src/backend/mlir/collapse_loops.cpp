// Collapsing loop pairs over contiguous memory (see collapse_loops.h).
#include "backend/mlir/collapse_loops.h"

#include <optional>

#include "core/metrics.h"
#include "llvm/ADT/MapVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace lt::backend {
namespace {

using namespace mlir;

// A loop from 0 in steps of 1.
bool from_zero_by_one(scf::ForOp f) {
  auto lb = getConstantIntValue(f.getLowerBound()), step = getConstantIntValue(f.getStep());
  return lb && step && *lb == 0 && *step == 1;
}

struct Access {
  Operation* op;
  Value memref;
  SmallVector<Value> idx;
};

std::optional<Access> access_of(Operation* op) {
  if (auto l = dyn_cast<memref::LoadOp>(op))
    return Access{op, l.getMemRef(), SmallVector<Value>(l.getIndices())};
  if (auto s = dyn_cast<memref::StoreOp>(op))
    return Access{op, s.getMemRef(), SmallVector<Value>(s.getIndices())};
  return std::nullopt;
}

// `outer` (for i < A) holding only `inner` (for j < B): one loop over k < A * B, or false when a
// use of i or j is anything but an (i, j) index pair of a contiguous memref with B in j's dim.
bool try_collapse(scf::ForOp outer) {
  Block* ob = outer.getBody();
  if (outer.getNumRegionIterArgs() != 0 || !llvm::hasSingleElement(ob->without_terminator()))
    return false;
  auto inner = dyn_cast<scf::ForOp>(ob->front());
  if (!inner || inner.getNumRegionIterArgs() != 0) return false;
  // The inner trip count is a constant (it must equal a static extent); the outer one may be a
  // run-time value (shape-generic code: a sequence length's loop around a head's 16 floats).
  const std::optional<int64_t> b = getConstantIntValue(inner.getUpperBound());
  if (!from_zero_by_one(outer) || !from_zero_by_one(inner) || !b || *b <= 0) return false;
  const Value i = outer.getInductionVar(), j = inner.getInductionVar();
  llvm::MapVector<Value, unsigned> views;  // memref -> position of i in its indices
  SmallVector<Access> uses;
  llvm::SmallPtrSet<Operation*, 16> seen;
  for (Value iv : {i, j})
    for (Operation* user : iv.getUsers()) {
      if (!seen.insert(user).second) continue;
      std::optional<Access> acc = access_of(user);
      if (!acc) return false;
      if (auto st = dyn_cast<memref::StoreOp>(user))
        if (st.getValueToStore() == i || st.getValueToStore() == j) return false;
      int pi = -1, pj = -1;
      for (unsigned d = 0; d < acc->idx.size(); ++d) {
        if (acc->idx[d] == i) pi = pi < 0 ? static_cast<int>(d) : -2;
        if (acc->idx[d] == j) pj = pj < 0 ? static_cast<int>(d) : -2;
      }
      if (pi < 0 || pj != pi + 1) return false;
      auto t = dyn_cast<MemRefType>(acc->memref.getType());
      if (!t || !t.getLayout().isIdentity() || t.isDynamicDim(pj) || t.getDimSize(pj) != *b ||
          !outer.isDefinedOutsideOfLoop(acc->memref))
        return false;
      auto [it, fresh] = views.insert({acc->memref, static_cast<unsigned>(pi)});
      if (!fresh && it->second != static_cast<unsigned>(pi)) return false;
      uses.push_back(*acc);
    }
  OpBuilder bld(outer);
  const Location loc = outer.getLoc();
  llvm::DenseMap<Value, Value> view_of;
  for (auto [m, p] : views) {
    SmallVector<ReassociationIndices> groups;
    const int64_t rank = cast<MemRefType>(m.getType()).getRank();
    for (int64_t d = 0; d < rank; ++d) {
      if (d == static_cast<int64_t>(p) + 1) continue;
      groups.push_back(d == static_cast<int64_t>(p) ? ReassociationIndices{d, d + 1}
                                                    : ReassociationIndices{d});
    }
    view_of[m] = memref::CollapseShapeOp::create(bld, loc, m, groups);
  }
  const std::optional<int64_t> a = getConstantIntValue(outer.getUpperBound());
  Value trips = a ? Value(arith::ConstantIndexOp::create(bld, loc, *a * *b))
                  : Value(arith::MulIOp::create(bld, loc, outer.getUpperBound(),
                                                arith::ConstantIndexOp::create(bld, loc, *b)));
  auto loop = scf::ForOp::create(bld, loc, arith::ConstantIndexOp::create(bld, loc, 0), trips,
                                 arith::ConstantIndexOp::create(bld, loc, 1));
  Block* nb = loop.getBody();
  Block* ib = inner.getBody();
  nb->getOperations().splice(Block::iterator(nb->getTerminator()), ib->getOperations(), ib->begin(),
                             Block::iterator(ib->getTerminator()));
  const Value k = loop.getInductionVar();
  for (Access& acc : uses) {
    const unsigned pos = views.lookup(acc.memref);  // i's index; j's follows it
    SmallVector<Value> idx;
    for (unsigned d = 0; d < acc.idx.size(); ++d)
      if (d == pos)
        idx.push_back(k);
      else if (d != pos + 1)
        idx.push_back(acc.idx[d]);
    OpBuilder ab(acc.op);
    const Value view = view_of[acc.memref];
    if (auto l = dyn_cast<memref::LoadOp>(acc.op))
      l.getResult().replaceAllUsesWith(memref::LoadOp::create(ab, acc.op->getLoc(), view, idx));
    else
      memref::StoreOp::create(ab, acc.op->getLoc(), cast<memref::StoreOp>(acc.op).getValueToStore(),
                              view, idx);
    acc.op->erase();
  }
  outer.erase();
  return true;
}

}  // namespace

int collapse_contiguous_loops(Operation* root) {
  // Innermost pairs first (post-order), so a collapsed loop can collapse again with its parent.
  SmallVector<scf::ForOp> pairs;
  root->walk([&](scf::ForOp f) {
    Block* b = f.getBody();
    if (llvm::hasSingleElement(b->without_terminator()) && isa<scf::ForOp>(b->front()))
      pairs.push_back(f);
  });
  int n = 0;
  for (scf::ForOp f : pairs) n += try_collapse(f) ? 1 : 0;
  if (n > 0) lt::metrics_impl::add("MlirCollapsedLoops", n);
  return n;
}

}  // namespace lt::backend
