// The lowering of one fusion cluster to a func.func on tensors: linalg.generic ops for the
// elementwise ops, reductions and movement, arith/math bodies, dynamic dims for shape-generic
// graphs (docs/ARCHITECTURE.md, "Dynamic shapes"). Used by mlir_backend.cpp.
#include "backend/mlir/cluster_lowering.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <vector>

#include "backend/mlir/dtype_lowering.h"
#include "backend/mlir/math_lowering.h"
#include "core/reshape_groups.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "ops/attrs.h"

namespace lt::backend {

using namespace mlir;

namespace {

class Lowering {
 public:
  Lowering(MLIRContext* ctx, OpBuilder& b, Location loc, const ir::DynamicShapes* dyn)
      : ctx_(ctx), b_(b), loc_(loc), dyn_(dyn) {}

  // A node's sizes: static ones as numbers, dynamic ones (dyn_) as ShapedType::kDynamic in `st`
  // and as run-time values in `dyn`.
  struct Shape {
    SmallVector<int64_t> st;
    SmallVector<Value> dyn;
    SmallVector<OpFoldResult> mixed(Builder& b) const {
      SmallVector<OpFoldResult> m;
      size_t k = 0;
      for (int64_t v : st)
        m.push_back(ShapedType::isDynamic(v) ? OpFoldResult(dyn[k++])
                                             : OpFoldResult(b.getIndexAttr(v)));
      return m;
    }
  };
  int32_t symbol(const ir::Node* n, size_t d) const { return dyn_ ? dyn_->size_symbol(n, d) : -1; }
  Shape shape_of(const ir::Node* n) {
    Shape s;
    for (size_t d = 0; d < n->meta.sizes.size(); ++d) {
      const int32_t y = symbol(n, d);
      s.st.push_back(y < 0 ? n->meta.sizes[d] : ShapedType::kDynamic);
      if (y >= 0) s.dyn.push_back(syms_.at(static_cast<size_t>(y)));
    }
    return s;
  }
  // Sizes for comparing shapes within the graph: a dynamic dim is its symbol as a negative
  // number (never 1: the guard keeps dynamic sizes >= 2).
  std::vector<int64_t> keyed(const ir::Node* n) const {
    std::vector<int64_t> s(n->meta.sizes.begin(), n->meta.sizes.end());
    for (size_t d = 0; d < s.size(); ++d)
      if (symbol(n, d) >= 0) s[d] = -2 - symbol(n, d);
    return s;
  }
  bool any_dynamic(const ir::Node* n) const {
    for (size_t d = 0; d < n->meta.sizes.size(); ++d)
      if (symbol(n, d) >= 0) return true;
    return false;
  }
  SmallVector<int64_t> static_sizes(const ir::Node* n) const {
    SmallVector<int64_t> s(n->meta.sizes.begin(), n->meta.sizes.end());
    for (size_t d = 0; d < s.size(); ++d)
      if (symbol(n, d) >= 0) s[d] = ShapedType::kDynamic;
    return s;
  }
  // A cluster's arguments hold bool as bytes (i8), which is how a bool tensor lies in memory;
  // its loops compute on i1. LLVM's vectorizer cannot load or store i1 vectors from byte
  // memory (a vector of i1 is bit-packed), so loops that read or wrote bool buffers as i1 ran
  // scalar: the dropout's where(mask, x / (1 - p), 0) on [128, 8, 2048] took 1.5 ms, its
  // mask's `ge` 0.45 ms (AVX-512 host).
  static Dtype stored(Dtype t) { return t == kBool ? kInt8 : t; }
  RankedTensorType tensor_of(const ir::Node* n, Dtype t) {
    return RankedTensorType::get(static_sizes(n), elem(t));
  }
  RankedTensorType input_of(const ir::Node* n) { return tensor_of(n, stored(n->meta.dtype)); }
  MemRefType memref_of(const ir::Node* n) {
    return MemRefType::get(static_sizes(n), elem(stored(n->meta.dtype)));
  }
  // A bool argument's bytes as i1 (their values are 0 or 1), and back: elementwise loops that
  // fuse into their readers and writers. Other dtypes pass through.
  Value from_storage(const ir::Node* n, Value v) { return bool_storage(n, v, false); }
  Value to_storage(const ir::Node* n, Value v) { return bool_storage(n, v, true); }
  Value bool_storage(const ir::Node* n, Value v, bool to_bytes) {
    if (n->meta.dtype != kBool) return v;
    const unsigned r = static_cast<unsigned>(n->meta.sizes.size());
    return generic(shape_of(n), to_bytes ? kInt8 : kBool, {v},
                   {AffineMap::getMultiDimIdentityMap(r, ctx_)},
                   [&](OpBuilder& b, ValueRange x) -> Value {
                     if (to_bytes) return arith::ExtUIOp::create(b, loc_, b.getI8Type(), x[0]);
                     return arith::TruncIOp::create(b, loc_, b.getI1Type(), x[0]);
                   });
  }
  // The symbols' values, loaded once at the function's entry from its sizes argument.
  void load_symbols(Value sizes) {
    for (size_t k = 0; dyn_ && k < dyn_->symbols(); ++k) {
      Value i = arith::ConstantIndexOp::create(b_, loc_, static_cast<int64_t>(k));
      Value v = memref::LoadOp::create(b_, loc_, sizes, ValueRange{i});
      syms_.push_back(arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), v));
    }
  }

  // A shape-generic graph's cluster whose sizes are all static reads no symbol: its loads go,
  // and the caller drops the symbols argument, so that the function is the static graph's
  // (compiled clusters are shared by their text). A caller passing the argument anyway is
  // harmless: the packed entry point reads only its own parameters.
  bool drop_unread_symbols() {
    for (Value s : syms_)
      if (!s.use_empty()) return false;
    for (Value s : syms_) {
      Operation* cast = s.getDefiningOp();
      Operation* load = cast->getOperand(0).getDefiningOp();
      Operation* index = load->getOperand(1).getDefiningOp();
      cast->erase();
      load->erase();
      if (index && index->use_empty()) index->erase();
    }
    syms_.clear();
    return true;
  }

  Type elem(Dtype t) { return element_type(b_, t); }
  RankedTensorType tensor(IntList sizes, Dtype t) {
    return RankedTensorType::get(llvm::ArrayRef<int64_t>(sizes.data(), sizes.size()), elem(t));
  }

  // Scalar conversion between dtypes (dtype_lowering.cpp).
  Value convert(OpBuilder& b, Value v, Dtype from, Dtype to) {
    return convert_dtype(b, loc_, v, from, to);
  }

  Value fconst(OpBuilder& b, Dtype t, double v) {
    return arith::ConstantOp::create(b, loc_, b.getFloatAttr(elem(t), v));
  }
  Value iconst(OpBuilder& b, Dtype t, int64_t v) {
    return arith::ConstantOp::create(b, loc_, b.getIntegerAttr(elem(t), v));
  }

  // out[i] = f(in0[map0(i)], ...): one linalg.generic with broadcasting maps.
  Value generic(const Shape& out, Dtype out_dtype, const std::vector<Value>& ins,
                const std::vector<AffineMap>& in_maps,
                const std::function<Value(OpBuilder&, ValueRange)>& body) {
    const unsigned R = out.st.size();
    Value init = tensor::EmptyOp::create(b_, loc_, out.st, elem(out_dtype), ValueRange(out.dyn));
    // A 0-d input of a loop over elements (a scalar such as Adam's step size or a learning
    // rate) is read once, before the loop, and enters its body as a value. As an operand it was
    // loaded at every element: once the loop was outlined for OpenMP its pointer had lost
    // `noalias`, so LLVM could not hoist the load past the loop's stores and left the whole
    // loop scalar (Adam's update, at a third of the vector speed).
    std::vector<Value> loop_ins;
    std::vector<AffineMap> maps;
    std::vector<Value> scalars(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      auto t = mlir::dyn_cast<RankedTensorType>(ins[i].getType());
      if (R > 0 && t && t.getRank() == 0) {
        scalars[i] = tensor::ExtractOp::create(b_, loc_, ins[i], ValueRange{});
      } else {
        loop_ins.push_back(ins[i]);
        maps.push_back(in_maps[i]);
      }
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(R, ctx_));
    std::vector<utils::IteratorType> iters(R, utils::IteratorType::parallel);
    auto op = linalg::GenericOp::create(
        b_, loc_, TypeRange{RankedTensorType::get(out.st, elem(out_dtype))}, ValueRange(loop_ins),
        ValueRange{init}, maps, iters, [&](OpBuilder& nb, Location, ValueRange args) {
          std::vector<Value> v;
          for (size_t i = 0, k = 0; i < ins.size(); ++i)
            v.push_back(scalars[i] ? scalars[i] : args[k++]);
          Value r = body(nb, ValueRange(v));
          linalg::YieldOp::create(nb, loc_, r);
        });
    return op.getResult(0);
  }

  // Map from output index space (rank R) into an input of `in` sizes broadcast to `out`.
  AffineMap broadcast_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    const unsigned R = out.size(), r = in.size();
    std::vector<AffineExpr> ex;
    for (unsigned j = 0; j < r; ++j) {
      unsigned d = j + (R - r);
      ex.push_back(in[j] == 1 && out[d] != 1 ? getAffineConstantExpr(0, ctx_)
                                             : getAffineDimExpr(d, ctx_));
    }
    return AffineMap::get(R, 0, ex, ctx_);
  }

  bool ok() const { return ok_; }

  Value lower(const ir::Node* n, const std::vector<Value>& args) {
    const OpMeta& m = n->meta;
    const OpKind op = n->op;
    std::vector<AffineMap> maps;
    switch (op_category(op)) {
      case OpCategory::EwUnary:
      case OpCategory::EwBinary:
      case OpCategory::EwTernary: {
        std::vector<Dtype> in_dt;
        for (uint32_t i = 0; i < n->n_operands; ++i) {
          maps.push_back(broadcast_map(keyed(n->operands[i].get()), keyed(n)));
          in_dt.push_back(n->operands[i]->meta.dtype);
        }
        return generic(shape_of(n), m.dtype, args, maps, [&](OpBuilder& b, ValueRange v) {
          Value r = scalar(b, n, v, in_dt);
          // A storage dtype's result: computed in its compute dtype, rounded here.
          return r.getType() == elem(m.dtype) ? r : convert(b, r, m.compute, m.dtype);
        });
      }
      case OpCategory::Reduction: {
        Value r = reduce(n, args[0]);
        if (!is_storage_dtype(m.dtype)) return r;
        return generic(shape_of(n), m.dtype, {r},
                       {AffineMap::getMultiDimIdentityMap(m.sizes.size(), ctx_)},
                       [&](OpBuilder& b, ValueRange v) {
                         return convert(b, v[0], compute_dtype(m.dtype), m.dtype);
                       });
      }
      case OpCategory::Movement:
        return movement(n, args[0]);
      default:
        ok_ = false;
        return args.empty() ? Value() : args[0];
    }
  }

 private:
  // The body of an elementwise op: inputs in their stored dtypes.
  Value scalar(OpBuilder& b, const ir::Node* n, ValueRange v, const std::vector<Dtype>& in_dt) {
    const OpKind op = n->op;
    const Dtype ct = n->meta.compute, ot = n->meta.dtype;
    const bool fl = is_floating(ct);
    if (op == OpKind::Cast) return convert(b, v[0], in_dt[0], ot);
    if (op == OpKind::LogicalNot) {
      Value x = convert(b, v[0], in_dt[0], kBool);
      return arith::XOrIOp::create(b, loc_, x, iconst(b, kBool, 1));
    }
    if (op == OpKind::Where) {
      Value a = convert(b, v[1], in_dt[1], ct), c = convert(b, v[2], in_dt[2], ct);
      return arith::SelectOp::create(b, loc_, v[0], a, c);
    }
    std::vector<Value> x;
    for (size_t i = 0; i < v.size(); ++i) x.push_back(convert(b, v[i], in_dt[i], ct));
    auto cmpf = [&](arith::CmpFPredicate p) -> Value {
      return arith::CmpFOp::create(b, loc_, p, x[0], x[1]);
    };
    auto cmpi = [&](arith::CmpIPredicate s, arith::CmpIPredicate u) -> Value {
      return arith::CmpIOp::create(b, loc_, ct == kBool ? u : s, x[0], x[1]);
    };
    using P = arith::CmpFPredicate;
    using Q = arith::CmpIPredicate;
    switch (op) {
      case OpKind::Neg:
        return fl ? Value(arith::NegFOp::create(b, loc_, x[0]))
                  : Value(arith::SubIOp::create(b, loc_, iconst(b, ct, 0), x[0]));
      case OpKind::Abs:
        if (fl) return math::AbsFOp::create(b, loc_, x[0]);
        if (ct == kBool) return x[0];
        return arith::SelectOp::create(
            b, loc_, arith::CmpIOp::create(b, loc_, Q::slt, x[0], iconst(b, ct, 0)),
            arith::SubIOp::create(b, loc_, iconst(b, ct, 0), x[0]), x[0]);
      case OpKind::Exp:
        return nan_passes(b, loc_, x[0], exp_f32(b, loc_, x[0]));
      case OpKind::Log:
        return log_f32(b, loc_, x[0]);
      case OpKind::Log1p:
        if (ct == kFloat64) return accurate_log1p(b, loc_, x[0]);
        return math::Log1pOp::create(b, loc_, x[0]);
      case OpKind::Expm1:
        if (ct == kFloat64) return accurate_expm1(b, loc_, x[0]);
        return nan_passes(b, loc_, x[0], math::ExpM1Op::create(b, loc_, x[0]));
      case OpKind::Sqrt:
        return math::SqrtOp::create(b, loc_, x[0]);
      case OpKind::Rsqrt:
        return arith::DivFOp::create(b, loc_, fconst(b, ct, 1.0),
                                     math::SqrtOp::create(b, loc_, x[0]));
      case OpKind::Sin:
        return math::SinOp::create(b, loc_, x[0]);
      case OpKind::Cos:
        return math::CosOp::create(b, loc_, x[0]);
      case OpKind::Tanh:
        return tanh_f32(b, loc_, x[0]);
      case OpKind::Sigmoid: {
        Value n = arith::NegFOp::create(b, loc_, x[0]);
        Value e = nan_passes(b, loc_, n, math::ExpOp::create(b, loc_, n));
        return arith::DivFOp::create(b, loc_, fconst(b, ct, 1.0),
                                     arith::AddFOp::create(b, loc_, fconst(b, ct, 1.0), e));
      }
      case OpKind::Relu:
        if (fl) {  // x < 0 ? 0 : x (NaN stays NaN, as the eager kernel)
          Value lt0 = arith::CmpFOp::create(b, loc_, P::OLT, x[0], fconst(b, ct, 0.0));
          return arith::SelectOp::create(b, loc_, lt0, fconst(b, ct, 0.0), x[0]);
        }
        return arith::MaxSIOp::create(b, loc_, x[0], iconst(b, ct, 0));
      case OpKind::Erf:
        return zero_passes(b, loc_, x[0], erf_f32(b, loc_, x[0]));
      case OpKind::Erfc:  // libm's, as eager (excluded from the polynomial approximations)
        return math::ErfcOp::create(b, loc_, x[0]);
      case OpKind::Atan:
        return math::AtanOp::create(b, loc_, x[0]);
      case OpKind::Sign: {
        Value pos = fl ? Value(arith::CmpFOp::create(b, loc_, P::OGT, x[0], fconst(b, ct, 0)))
                       : Value(arith::CmpIOp::create(b, loc_, Q::sgt, x[0], iconst(b, ct, 0)));
        Value neg = fl ? Value(arith::CmpFOp::create(b, loc_, P::OLT, x[0], fconst(b, ct, 0)))
                       : Value(arith::CmpIOp::create(b, loc_, Q::slt, x[0], iconst(b, ct, 0)));
        Value one = fl ? fconst(b, ct, 1) : iconst(b, ct, 1);
        Value mone = fl ? fconst(b, ct, -1) : iconst(b, ct, -1);
        Value zero = fl ? fconst(b, ct, 0) : iconst(b, ct, 0);
        return arith::SelectOp::create(b, loc_, pos, one,
                                       arith::SelectOp::create(b, loc_, neg, mone, zero));
      }
      case OpKind::Floor:
        return fl ? Value(math::FloorOp::create(b, loc_, x[0])) : x[0];
      case OpKind::Ceil:
        return fl ? Value(math::CeilOp::create(b, loc_, x[0])) : x[0];
      case OpKind::Round:
        return fl ? Value(math::RoundEvenOp::create(b, loc_, x[0])) : x[0];
      case OpKind::Reciprocal:
        return arith::DivFOp::create(b, loc_, fconst(b, ct, 1.0), x[0]);
      case OpKind::Add:
        if (ct == kBool) return arith::OrIOp::create(b, loc_, x[0], x[1]);
        return fl ? Value(arith::AddFOp::create(b, loc_, x[0], x[1]))
                  : Value(arith::AddIOp::create(b, loc_, x[0], x[1]));
      case OpKind::Sub:
        return fl ? Value(arith::SubFOp::create(b, loc_, x[0], x[1]))
                  : Value(arith::SubIOp::create(b, loc_, x[0], x[1]));
      case OpKind::Mul:
        if (ct == kBool) return arith::AndIOp::create(b, loc_, x[0], x[1]);
        return fl ? Value(arith::MulFOp::create(b, loc_, x[0], x[1]))
                  : Value(arith::MulIOp::create(b, loc_, x[0], x[1]));
      case OpKind::Div:
        return arith::DivFOp::create(b, loc_, x[0], x[1]);
      case OpKind::Pow:
        return math::PowFOp::create(b, loc_, x[0], x[1]);
      case OpKind::Maximum:
        if (ct == kBool) return arith::OrIOp::create(b, loc_, x[0], x[1]);
        return fl ? Value(arith::MaximumFOp::create(b, loc_, x[0], x[1]))
                  : Value(arith::MaxSIOp::create(b, loc_, x[0], x[1]));
      case OpKind::Minimum:
        if (ct == kBool) return arith::AndIOp::create(b, loc_, x[0], x[1]);
        return fl ? Value(arith::MinimumFOp::create(b, loc_, x[0], x[1]))
                  : Value(arith::MinSIOp::create(b, loc_, x[0], x[1]));
      case OpKind::Fmod: {
        if (fl) return arith::RemFOp::create(b, loc_, x[0], x[1]);
        // Divisors 0 (an error on eager when known) and -1 (INT_MIN % -1 traps) become 1,
        // giving 0: one unsigned test, d + 1 <= 1.
        Value one = iconst(b, ct, 1), d1 = arith::AddIOp::create(b, loc_, x[1], one);
        Value bad = arith::CmpIOp::create(b, loc_, Q::ule, d1, one);
        return arith::RemSIOp::create(b, loc_, x[0],
                                      arith::SelectOp::create(b, loc_, bad, one, x[1]));
      }
      case OpKind::Eq:
        return fl ? cmpf(P::OEQ) : cmpi(Q::eq, Q::eq);
      case OpKind::Ne:
        return fl ? cmpf(P::UNE) : cmpi(Q::ne, Q::ne);
      case OpKind::Lt:
        return fl ? cmpf(P::OLT) : cmpi(Q::slt, Q::ult);
      case OpKind::Le:
        return fl ? cmpf(P::OLE) : cmpi(Q::sle, Q::ule);
      case OpKind::Gt:
        return fl ? cmpf(P::OGT) : cmpi(Q::sgt, Q::ugt);
      case OpKind::Ge:
        return fl ? cmpf(P::OGE) : cmpi(Q::sge, Q::uge);
      case OpKind::LogicalAnd:
      case OpKind::LogicalOr: {
        Value a = convert(b, x[0], ct, kBool), c = convert(b, x[1], ct, kBool);
        return op == OpKind::LogicalAnd ? Value(arith::AndIOp::create(b, loc_, a, c))
                                        : Value(arith::OrIOp::create(b, loc_, a, c));
      }
      case OpKind::BitwiseNot:  // xor with all ones (true for bool)
        return arith::XOrIOp::create(b, loc_, x[0], iconst(b, ct, -1));
      case OpKind::BitwiseAnd:
        return arith::AndIOp::create(b, loc_, x[0], x[1]);
      case OpKind::BitwiseOr:
        return arith::OrIOp::create(b, loc_, x[0], x[1]);
      case OpKind::BitwiseXor:
        return arith::XOrIOp::create(b, loc_, x[0], x[1]);
      case OpKind::LeftShift:
      case OpKind::RightShift: {
        // LLVM's shifts are poison past the width: out-of-range amounts (as unsigned, so negative
        // ones too) give 0 to the left and the sign fill (a shift by width - 1) to the right.
        const int64_t bits = static_cast<int64_t>(dtype_size(ct) * 8);
        Value out_of_range = arith::CmpIOp::create(b, loc_, Q::uge, x[1], iconst(b, ct, bits));
        if (op == OpKind::LeftShift) {
          Value s = arith::ShLIOp::create(b, loc_, x[0], x[1]);
          return arith::SelectOp::create(b, loc_, out_of_range, iconst(b, ct, 0), s);
        }
        Value amount =
            arith::SelectOp::create(b, loc_, out_of_range, iconst(b, ct, bits - 1), x[1]);
        return arith::ShRSIOp::create(b, loc_, x[0], amount);
      }
      default:
        ok_ = false;
        return x[0];
    }
  }

  Value reduce(const ir::Node* n, Value in) {
    const ir::Node* src = n->operands[0].get();
    IntList in_sizes = src->meta.sizes;
    const unsigned R = in_sizes.size();
    const Dtype ct = compute_dtype(n->meta.dtype), it = src->meta.dtype;
    const bool fl = is_floating(ct);
    if (R == 0) {
      // A 0-d input: the reduction is the element itself. (As a generic of no loops whose
      // payload reads its init, linalg's elementwise fusion merged it into a consumer and
      // accumulated over the consumer's iteration space.)
      // A float sum still adds its identity: +0 + -0 is +0, as eager (and PyTorch) give.
      const bool add_zero = fl && n->op == OpKind::Sum;
      return generic(
          Shape{}, ct, {in}, {AffineMap::get(0, 0, {}, ctx_)}, [&](OpBuilder& b, ValueRange v) {
            Value x = convert(b, v[0], it, ct);
            return add_zero ? Value(arith::AddFOp::create(b, loc_, x, fconst(b, ct, 0.0))) : x;
          });
    }
    const ReduceAttrs ra = ReduceAttrs::of(n->attrs);
    auto reduced = [&](unsigned d) {
      return std::find(ra.dims.begin(), ra.dims.end(), static_cast<int64_t>(d)) != ra.dims.end();
    };
    // The loops run in the input's dim order, except when the innermost dim is reduced: then the
    // kept dims go outside the reduced ones (stable in each group). In input order, a reduction
    // over dims (0, 2, 3) of [N, C, H, W] (batch norm's statistics) had a reduced outermost loop,
    // so the nest ran on one thread, its innermost loop a chain of dependent adds over W; with
    // C outermost the loop over channels runs on threads. An innermost kept dim stays innermost:
    // there `acc[j] += x[i, j]` is contiguous and vectorizes without reassociation.
    std::vector<unsigned> order;  // loop i runs over input dim order[i]
    for (unsigned d = 0; d < R; ++d)
      if (!reduced(R - 1) || !reduced(d)) order.push_back(d);
    for (unsigned d = 0; d < R && reduced(R - 1); ++d)
      if (reduced(d)) order.push_back(d);
    std::vector<unsigned> loop_of(R);
    for (unsigned i = 0; i < R; ++i) loop_of[order[i]] = i;
    std::vector<AffineExpr> in_ex, out_ex;
    std::vector<utils::IteratorType> iters;
    for (unsigned i = 0; i < R; ++i)
      iters.push_back(reduced(order[i]) ? utils::IteratorType::reduction
                                        : utils::IteratorType::parallel);
    for (unsigned d = 0; d < R; ++d) {
      in_ex.push_back(getAffineDimExpr(loop_of[d], ctx_));
      if (!reduced(d))
        out_ex.push_back(getAffineDimExpr(loop_of[d], ctx_));
      else if (ra.keepdim)
        out_ex.push_back(getAffineConstantExpr(0, ctx_));
    }
    double fid = 0;
    int64_t iid = 0;
    switch (n->op) {
      case OpKind::Prod:
      case OpKind::All:
        fid = 1, iid = 1;
        break;
      case OpKind::Amax:
        fid = -INFINITY;
        iid = ct == kInt32 ? INT32_MIN : (ct == kBool ? 0 : INT64_MIN);
        break;
      case OpKind::Amin:
        fid = INFINITY;
        iid = ct == kInt32 ? INT32_MAX : (ct == kBool ? 1 : INT64_MAX);
        break;
      default:
        break;
    }
    Value idv = fl ? fconst(b_, ct, fid) : iconst(b_, ct, iid);
    const Shape os = shape_of(n);
    const RankedTensorType acc_type = RankedTensorType::get(os.st, elem(ct));
    // The accumulator is an allocation of its own, not tensor.empty: `cse` merged equal
    // fill(tensor.empty) inits of two reductions, and eliminate-empty-tensors then gave both
    // one destination buffer (two reductions of x and of f(x) both returned that of x).
    Value empty = bufferization::AllocTensorOp::create(b_, loc_, acc_type, ValueRange(os.dyn));
    Value init = linalg::FillOp::create(b_, loc_, ValueRange{idv}, ValueRange{empty}).getResult(0);
    std::vector<AffineMap> maps{AffineMap::get(R, 0, in_ex, ctx_),
                                AffineMap::get(R, 0, out_ex, ctx_)};
    const OpKind op = n->op;
    auto gen = linalg::GenericOp::create(
        b_, loc_, TypeRange{acc_type}, ValueRange{in}, ValueRange{init}, maps, iters,
        [&](OpBuilder& b, Location, ValueRange a) {
          Value x = convert(b, a[0], it, ct), acc = a[1];
          Value r;
          auto reassoc = arith::FastMathFlags::reassoc;
          switch (op) {
            case OpKind::Sum:
              if (fl) {
                auto f = arith::AddFOp::create(b, loc_, acc, x);
                f.setFastmath(reassoc);
                r = f;
              } else {
                r = ct == kBool ? Value(arith::OrIOp::create(b, loc_, acc, x))
                                : Value(arith::AddIOp::create(b, loc_, acc, x));
              }
              break;
            case OpKind::Prod:
              if (fl) {
                auto f = arith::MulFOp::create(b, loc_, acc, x);
                f.setFastmath(reassoc);
                r = f;
              } else {
                r = ct == kBool ? Value(arith::AndIOp::create(b, loc_, acc, x))
                                : Value(arith::MulIOp::create(b, loc_, acc, x));
              }
              break;
            case OpKind::Amax:
              r = fl            ? Value(arith::MaximumFOp::create(b, loc_, acc, x))
                  : ct == kBool ? Value(arith::OrIOp::create(b, loc_, acc, x))
                                : Value(arith::MaxSIOp::create(b, loc_, acc, x));
              break;
            case OpKind::Any:  // ct is bool: the input was converted with x != 0
              r = arith::OrIOp::create(b, loc_, acc, x);
              break;
            case OpKind::All:
              r = arith::AndIOp::create(b, loc_, acc, x);
              break;
            default:
              r = fl            ? Value(arith::MinimumFOp::create(b, loc_, acc, x))
                  : ct == kBool ? Value(arith::AndIOp::create(b, loc_, acc, x))
                                : Value(arith::MinSIOp::create(b, loc_, acc, x));
          }
          linalg::YieldOp::create(b, loc_, r);
        });
    return gen.getResult(0);
  }

  Value movement(const ir::Node* n, Value in) {
    const ir::Node* src = n->operands[0].get();
    const std::vector<int64_t> is = keyed(src), os = keyed(n);
    const unsigned R = os.size();
    const Dtype dt = n->meta.dtype;
    auto copy_with = [&](AffineMap map) {
      return generic(shape_of(n), dt, {in}, {map}, [](OpBuilder&, ValueRange v) { return v[0]; });
    };
    std::vector<AffineExpr> ex;
    switch (n->op) {
      case OpKind::Copy:
        return in;
      case OpKind::Expand:
        return copy_with(broadcast_map(is, os));
      case OpKind::Permute: {
        // A permute of a permute reads the first one's input once, through the composed map;
        // when they cancel (a weight's gradient through a Linear's transposed view, then the
        // view's backward), the input itself, with no strided copy in between.
        std::vector<int64_t> perm(n->attrs.ints.begin(), n->attrs.ints.end());
        auto inner = permuted_.find(in.getAsOpaquePointer());
        if (inner != permuted_.end()) {
          for (int64_t& p : perm) p = inner->second.second[static_cast<size_t>(p)];
          in = inner->second.first;
          bool identity = true;
          for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == int64_t(k);
          if (identity) return in;
        }
        ex.resize(R);
        for (unsigned k = 0; k < R; ++k) ex[perm[k]] = getAffineDimExpr(k, ctx_);
        Value out = copy_with(AffineMap::get(R, 0, ex, ctx_));
        permuted_[out.getAsOpaquePointer()] = {in, perm};
        return out;
      }
      case OpKind::Slice: {
        // tensor.extract_slice, not a generic with an offset map: a slice starting at 0 with
        // step 1 would give the identity map, and linalg would take the loop range from the
        // (larger) input. It also bufferizes to a view, without a copy.
        std::vector<OpFoldResult> off, step;
        const SliceAttrs sa = SliceAttrs::of(n->attrs);
        const int32_t start_sym = dyn_ ? dyn_->attr_symbol(n, 1) : -1;
        SmallVector<OpFoldResult> size = shape_of(n).mixed(b_);
        for (unsigned d = 0; d < R; ++d) {
          const bool sliced = static_cast<int64_t>(d) == sa.dim;
          off.push_back(sliced && start_sym >= 0
                            ? OpFoldResult(syms_.at(start_sym))
                            : OpFoldResult(b_.getIndexAttr(sliced ? sa.start : 0)));
          step.push_back(b_.getIndexAttr(sliced ? sa.step : 1));
        }
        return tensor::ExtractSliceOp::create(b_, loc_, in, off, size, step);
      }
      case OpKind::Reshape: {
        // Inserting or dropping size-1 dims is a projection; anything else walks the linear
        // index with floordiv/mod.
        std::vector<int64_t> a, c;
        std::vector<unsigned> cpos;
        for (int64_t v : is)
          if (v != 1) a.push_back(v);
        for (unsigned d = 0; d < R; ++d)
          if (os[d] != 1) c.push_back(os[d]), cpos.push_back(d);
        if (a == c) {
          size_t k = 0;
          for (int64_t v : is)
            ex.push_back(v == 1 ? getAffineConstantExpr(0, ctx_)
                                : getAffineDimExpr(cpos[k++], ctx_));
          return copy_with(AffineMap::get(R, 0, ex, ctx_));
        }
        // Dynamic sizes (no affine map can divide by them): a collapse to one dim and an
        // expansion to the result's sizes, which bufferize to views of the contiguous value.
        if (any_dynamic(src) || any_dynamic(n)) return reshape_dynamic(n, in);
        if (!reshape_groups(is, os, &ex)) {
          AffineExpr lin = getAffineConstantExpr(0, ctx_);
          for (unsigned d = 0; d < R; ++d) lin = lin * os[d] + getAffineDimExpr(d, ctx_);
          int64_t stride = 1;
          std::vector<AffineExpr> rev;
          for (size_t j = is.size(); j-- > 0;) {
            AffineExpr e = lin.floorDiv(stride);
            if (j > 0) e = e % is[j];
            rev.push_back(e);
            stride *= std::max<int64_t>(is[j], 1);
          }
          ex.assign(rev.rbegin(), rev.rend());
        }
        return copy_with(AffineMap::get(R, 0, ex, ctx_));
      }
      default:
        ok_ = false;
        return in;
    }
  }

  // A static reshape's map, group by group: dims of the input and of the output whose sizes
  // multiply to the same number walk a linear index of their own. [256, 8, 2048] read as
  // [2048, 2048] is (d0 floordiv 8, d0 mod 8, d1); the index of the whole value, (d0 * 2048 + d1)
  // floordiv 16384 and so on, hid from LLVM that d1 walks the last input dim contiguously, and a
  // select over it ran 15x slower. False where sizes are 0 (no groups).
  bool reshape_groups(IntList is, IntList os, std::vector<AffineExpr>* ex) {
    ex->assign(is.size(), getAffineConstantExpr(0, ctx_));
    return for_each_reshape_group(is, os, [&](size_t bi, size_t ei, size_t bj, size_t ej) {
      AffineExpr lin = getAffineConstantExpr(0, ctx_);
      for (size_t d = bj; d < ej; ++d)
        lin = lin * os[d] + getAffineDimExpr(static_cast<unsigned>(d), ctx_);
      int64_t stride = 1;
      for (size_t d = ei; d-- > bi;) {
        AffineExpr e = stride == 1 ? lin : lin.floorDiv(stride);
        if (d > bi) e = e % is[d];
        (*ex)[d] = e;
        stride *= is[d];
      }
    });
  }

  Value reshape_dynamic(const ir::Node* n, Value in) {
    const size_t r = n->operands[0]->meta.sizes.size(), R = n->meta.sizes.size();
    // expand-strided-metadata (MLIR 22) crashes on an expansion with two dynamic sizes in a
    // group (fusion turns a collapse into an expansion of its producer): those read the input
    // through the linear index instead.
    int dynamic_in = 0, dynamic_out = 0;
    for (size_t d = 0; d < r; ++d) dynamic_in += symbol(n->operands[0].get(), d) >= 0;
    for (size_t d = 0; d < R; ++d) dynamic_out += symbol(n, d) >= 0;
    if (dynamic_in > 1 || dynamic_out > 1) return reshape_gather(n, in);
    Value flat = in;
    if (r != 1) {
      ReassociationIndices all;
      for (size_t j = 0; j < r; ++j) all.push_back(static_cast<int64_t>(j));
      flat = tensor::CollapseShapeOp::create(b_, loc_, in, ArrayRef<ReassociationIndices>{all});
    }
    if (R == 1) return flat;
    ReassociationIndices all;
    for (size_t j = 0; j < R; ++j) all.push_back(static_cast<int64_t>(j));
    return tensor::ExpandShapeOp::create(b_, loc_, tensor_of(n, n->meta.dtype), flat,
                                         ArrayRef<ReassociationIndices>{all},
                                         shape_of(n).mixed(b_));
  }

  // out[i] = in[delinearize(linearize(i))], the sizes at run time.
  Value reshape_gather(const ir::Node* n, Value in) {
    const Shape os = shape_of(n), is = shape_of(n->operands[0].get());
    SmallVector<OpFoldResult> osz = os.mixed(b_), isz = is.mixed(b_);
    auto idx = [&](OpBuilder& b, OpFoldResult f) -> Value {
      if (auto v = dyn_cast<Value>(f)) return v;
      return arith::ConstantIndexOp::create(b, loc_,
                                            cast<IntegerAttr>(cast<Attribute>(f)).getInt());
    };
    return generic(os, n->meta.dtype, {}, {}, [&](OpBuilder& b, ValueRange) {
      Value lin = arith::ConstantIndexOp::create(b, loc_, 0);
      for (size_t d = 0; d < osz.size(); ++d) {
        Value i = linalg::IndexOp::create(b, loc_, static_cast<uint64_t>(d));
        lin =
            arith::AddIOp::create(b, loc_, arith::MulIOp::create(b, loc_, lin, idx(b, osz[d])), i);
      }
      SmallVector<Value> at(isz.size());
      for (size_t j = isz.size(); j-- > 0;) {
        Value e = idx(b, isz[j]);
        at[j] = j > 0 ? Value(arith::RemUIOp::create(b, loc_, lin, e)) : lin;
        if (j > 0) lin = arith::DivUIOp::create(b, loc_, lin, e);
      }
      return tensor::ExtractOp::create(b, loc_, in, at);
    });
  }

  MLIRContext* ctx_;
  // Values made by a Permute: its input and permutation (movement(): permutes compose).
  std::unordered_map<void*, std::pair<Value, std::vector<int64_t>>> permuted_;
  OpBuilder& b_;
  Location loc_;
  const ir::DynamicShapes* dyn_;
  std::vector<Value> syms_;  // load_symbols()
  bool ok_ = true;
};

}  // namespace

bool build_cluster(MLIRContext* ctx, ModuleOp module, const Cluster& c, const std::string& name,
                   const ir::Node** failed, const ir::DynamicShapes* dyn) {
  OpBuilder b(ctx);
  Location loc = b.getUnknownLoc();
  Lowering low(ctx, b, loc, dyn);
  std::vector<Type> args;
  for (const ir::Node* n : c.inputs) args.push_back(low.input_of(n));
  for (const ir::Node* n : c.outputs) args.push_back(low.memref_of(n));
  if (dyn) args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI64Type()));
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, name, FunctionType::get(ctx, args, {}));
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  for (size_t i = 0; i < c.inputs.size(); ++i)
    fn.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
  // Outputs are fresh buffers and inputs are only read: no written buffer aliases another
  // argument. Telling LLVM so lets it keep a reduction's accumulator in a register (and then
  // vectorize the loop) instead of storing it at every step. The exception: an output that may
  // be written into a donated input's buffer (Cluster::donations), and that input.
  std::vector<bool> may_alias(args.size(), false);
  for (auto [i, o] : c.donations) may_alias[i] = may_alias[c.inputs.size() + o] = true;
  for (size_t i = 0; i < args.size(); ++i)
    if (!may_alias[i]) fn.setArgAttr(i, "llvm.noalias", UnitAttr::get(ctx));
  Block* entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  if (dyn) low.load_symbols(entry->getArgument(static_cast<unsigned>(args.size() - 1)));
  std::unordered_map<const ir::Node*, Value> val;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    val[c.inputs[i]] = low.from_storage(c.inputs[i], entry->getArgument(i));
  // Cluster::donations: the input is read from the output's buffer (the run put it there).
  // Bufferization then computes the chain in that buffer, reading each element just before
  // writing it, through one pointer.
  for (auto [i, o] : c.donations) {
    Value out = entry->getArgument(static_cast<unsigned>(c.inputs.size() + o));
    auto mt = mlir::cast<MemRefType>(out.getType());
    Value t = bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(mt.getShape(), mt.getElementType()), out,
        /*restrict=*/true, /*writable=*/false);
    Type want = entry->getArgument(static_cast<unsigned>(i)).getType();
    if (t.getType() != want) t = tensor::CastOp::create(b, loc, want, t);
    val[c.inputs[i]] = low.from_storage(c.inputs[i], t);
  }
  auto value_of = [&](const ir::Node* n) -> Value {
    auto it = val.find(n);
    if (it != val.end()) return it->second;
    // A Const leaf: an inline 0-d constant.
    RankedTensorType t = low.tensor({}, n->meta.dtype);
    Attribute a = is_floating(n->meta.dtype)
                      ? Attribute(b.getFloatAttr(t.getElementType(), n->param_f))
                      : Attribute(b.getIntegerAttr(t.getElementType(), n->param_i));
    Value v = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(t, a));
    val[n] = v;
    return v;
  };
  for (const ir::Node* n : c.nodes) {
    if (lowering_disabled(n->op)) {
      *failed = n;
      return false;
    }
    std::vector<Value> ops;
    for (uint32_t i = 0; i < n->n_operands; ++i) ops.push_back(value_of(n->operands[i].get()));
    val[n] = low.lower(n, ops);
    if (!low.ok()) {
      *failed = n;
      return false;
    }
  }
  for (size_t i = 0; i < c.outputs.size(); ++i)
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), low.to_storage(c.outputs[i], val.at(c.outputs[i])),
        entry->getArgument(c.inputs.size() + i), true, true);
  func::ReturnOp::create(b, loc);
  if (dyn && low.drop_unread_symbols() &&
      mlir::failed(fn.eraseArgument(static_cast<unsigned>(args.size() - 1))))
    return false;
  return true;
}

}  // namespace lt::backend
