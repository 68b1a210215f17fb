// Loss functions with libtorch's reductions, class weights and ignore_index. Each is a composite
// of registry primitives, so it fuses into the lazy step and autograd needs no formula.
#include <cmath>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"

namespace lt {
namespace {

const char* reduction_name(int64_t r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::BatchMean:
      return "batchmean";
    default:
      return "?";
  }
}

// Reduces per-element losses; batchmean only where the caller allows it (kl_div).
Tensor reduce(const Tensor& loss, int64_t r, const char* op, bool batchmean_ok = false) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Mean:
      return loss.mean();
    case Reduction::Sum:
      return loss.sum();
    case Reduction::BatchMean:
      if (batchmean_ok) return loss.dim() == 0 ? loss.sum() : loss.sum() / double(loss.size(0));
      break;
    default:
      break;
  }
  LT_CHECK(false, op, ": reduction must be none, mean or sum", batchmean_ok ? " or batchmean" : "",
           ", got ", r, " (", reduction_name(r), ")");
  return loss;
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  LT_CHECK(a.sizes().equals(b.sizes()), op, ": input ", shape_str(a.sizes()), " and target ",
           shape_str(b.sizes()), " must have the same shape");
}

void check_floating(const Tensor& t, const char* op, const char* what) {
  LT_CHECK(is_floating(t.dtype()), op, ": expected a floating-point ", what, ", got ",
           dtype_name(t.dtype()));
}

void check_weight(const Tensor& weight, int64_t c, const char* op) {
  if (weight.defined())
    LT_CHECK(weight.dim() == 1 && weight.size(0) == c, op, ": weight must be [", c,
             "] (one per class), got ", shape_str(weight.sizes()));
}

// The input at each sample's target class, shared by nll_loss and cross_entropy. `x` is
// [N, C, d...] log-probabilities, `t` the [N, d...] targets.
struct ClassPick {
  Tensor picked;  // x at each target class (0 where ignored): [N, d...]
  Tensor w;       // each sample's class weight (0 where ignored); undefined: all 1
  Tensor keep;    // float 1 where the target is not ignore_index; undefined: none ignored
  // The per-sample losses -w * picked, and their mean over the summed weights, as PyTorch's.
  Tensor losses() const { return w.defined() ? -(picked * w) : -picked; }
  Tensor mean(const Tensor& loss) const { return w.defined() ? loss.sum() / w.sum() : loss.mean(); }
};

ClassPick pick_classes(const Tensor& x, const Tensor& t, const Tensor& weight, int64_t ignore_index,
                       const char* op) {
  LT_CHECK(t.dtype() == kInt64 || t.dtype() == kInt32, op,
           ": expected integer class indices as targets, got ", dtype_name(t.dtype()));
  std::vector<int64_t> want = x.sizes().vec();
  want.erase(want.begin() + 1);
  LT_CHECK(t.sizes().equals(want), op, ": input ", shape_str(x.sizes()),
           " expects targets of shape ", shape_str(want), ", got ", shape_str(t.sizes()));
  const int64_t c = x.size(1);
  // Targets whose values are known at the call (on lazy: labels moved to the device) are
  // checked here, so that a bad label throws at the user's line naming this op. When none is
  // ignore_index they index directly: the graph has no mask (the training step's usual case).
  bool masked = true;
  Tensor known = known_values(t);
  if (known.defined()) {
    masked = false;
    for (int64_t v : known.to(kInt64).contiguous().to_vector<int64_t>()) {
      LT_CHECK(v == ignore_index || (v >= 0 && v < c), op, ": target index ", v,
               " is out of bounds for ", c, " classes (ignore_index ", ignore_index, ")");
      masked |= v == ignore_index;
    }
  }
  auto class_weights = [&](const Tensor& idx) {
    return index_select(weight, 0, idx.reshape({-1})).reshape(idx.sizes());
  };
  if (!masked) {
    return {gather(x, 1, t.unsqueeze(1)).squeeze(1),
            weight.defined() ? class_weights(t) : Tensor(), Tensor()};
  }
  // Computed targets are range-checked by the gather kernel at the barrier.
  Tensor keep = t != ignore_index;
  Tensor safe = where(keep, t, 0).to(kInt64);  // a valid index where ignored
  Tensor picked = where(keep, gather(x, 1, safe.unsqueeze(1)).squeeze(1), 0.0);
  Tensor keep_f = keep.to(x.dtype());
  return {picked, weight.defined() ? class_weights(safe) * keep_f : keep_f, keep_f};
}

// x [N, C, d...] or [C] (no batch), targets to match.
std::pair<Tensor, Tensor> with_batch(const Tensor& x, const Tensor& t, const char* op) {
  LT_CHECK(x.dim() >= 1, op, ": expected input [N, C, ...] or [C], got ", shape_str(x.sizes()));
  if (x.dim() == 1) return {x.unsqueeze(0), t.dim() == 0 ? t.unsqueeze(0) : t};
  return {x, t};
}

}  // namespace

Tensor nll_loss(const Tensor& lp, const Tensor& targets, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  OpContext ctx("nll_loss");
  check_floating(lp, "nll_loss", "input (log-probabilities)");
  auto [x, t] = with_batch(lp, targets, "nll_loss");
  check_weight(weight, x.size(1), "nll_loss");
  ClassPick p = pick_classes(x, t, weight, ignore_index, "nll_loss");
  Tensor loss = p.losses();
  if (reduction == Reduction::Mean) return p.mean(loss);
  Tensor r = reduce(loss, reduction, "nll_loss");
  return lp.dim() == 1 && reduction == Reduction::None ? r.squeeze(0) : r;
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double smoothing) {
  OpContext ctx("cross_entropy");
  check_floating(logits, "cross_entropy", "input (logits)");
  LT_CHECK(smoothing >= 0 && smoothing <= 1,
           "cross_entropy: label_smoothing must be in [0, 1], got ", smoothing);
  auto [x, t] = with_batch(logits, targets, "cross_entropy");
  const int64_t c = x.size(1);
  check_weight(weight, c, "cross_entropy");
  std::vector<int64_t> wshape(static_cast<size_t>(x.dim()), 1);
  wshape[1] = c;
  Tensor wc = weight.defined() ? weight.reshape(wshape) : Tensor();
  if (is_floating(targets.dtype())) {  // class probabilities, [N, C, d...]
    LT_CHECK(targets.sizes().equals(logits.sizes()), "cross_entropy: probability targets ",
             shape_str(targets.sizes()), " must match the input ", shape_str(logits.sizes()));
    Tensor lsm = log_softmax(x, 1);
    Tensor prob = t * (1.0 - smoothing) + smoothing / static_cast<double>(c);
    Tensor per = wc.defined() ? -(prob * lsm * wc).sum(1) : -(prob * lsm).sum(1);
    Tensor r = reduce(per, reduction, "cross_entropy");
    return logits.dim() == 1 && reduction == Reduction::None ? r.squeeze(0) : r;
  }
  Tensor lsm;
  ClassPick p;
  if (smoothing == 0 && !is_storage_dtype(x.dtype()) && x.numel() > 0) {
    // log_softmax at the targets only: its shifted half picked, less each sample's log-sum-exp
    // (the same arithmetic), without writing the [N, C, d...] log-probabilities out.
    const auto [s, lse] = log_softmax_parts(x, 1, false);
    p = pick_classes(s, t, weight, ignore_index, "cross_entropy");
    p.picked = p.keep.defined() ? where(p.keep != 0, p.picked - lse, 0.0) : p.picked - lse;
  } else {
    lsm = log_softmax(x, 1);
    p = pick_classes(lsm, t, weight, ignore_index, "cross_entropy");
  }
  Tensor loss = p.losses();
  if (smoothing > 0) {
    // Each sample also pays smoothing / C of the (weighted) log-probability of every class.
    Tensor all = wc.defined() ? (lsm * wc).sum(1) : lsm.sum(1);
    if (p.keep.defined()) all = all * p.keep;
    loss = loss * (1.0 - smoothing) - all * (smoothing / static_cast<double>(c));
  }
  if (reduction == Reduction::Mean) return p.mean(loss);
  Tensor r = reduce(loss, reduction, "cross_entropy");
  return logits.dim() == 1 && reduction == Reduction::None ? r.squeeze(0) : r;
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, double smoothing) {
  return cross_entropy(logits, targets, Tensor(), Reduction::Mean, -100, smoothing);
}

Tensor mse_loss(const Tensor& a, const Tensor& b, int64_t reduction) {
  OpContext ctx("mse_loss");
  Tensor d = a - b;
  return reduce(d * d, reduction, "mse_loss");
}

Tensor l1_loss(const Tensor& a, const Tensor& b, int64_t reduction) {
  OpContext ctx("l1_loss");
  return reduce(abs(a - b), reduction, "l1_loss");
}

Tensor smooth_l1_loss(const Tensor& a, const Tensor& b, int64_t reduction, double beta) {
  OpContext ctx("smooth_l1_loss");
  LT_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor d = abs(a - b);
  if (beta == 0) return reduce(d, reduction, "smooth_l1_loss");
  return reduce(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction, "smooth_l1_loss");
}

Tensor huber_loss(const Tensor& a, const Tensor& b, int64_t reduction, double delta) {
  OpContext ctx("huber_loss");
  LT_CHECK(delta > 0, "huber_loss: delta must be positive, got ", delta);
  Tensor d = abs(a - b);
  return reduce(where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction, "huber_loss");
}

Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& target, double margin,
                           int64_t reduction) {
  OpContext ctx("margin_ranking_loss");
  LT_CHECK(x1.sizes() == x2.sizes() && x1.sizes() == target.sizes(), "margin_ranking_loss: input1 ",
           shape_str(x1.sizes()), ", input2 ", shape_str(x2.sizes()), " and target ",
           shape_str(target.sizes()), " must have the same shape");
  return reduce((-target * (x1 - x2) + margin).clamp_min(0.0), reduction, "margin_ranking_loss");
}

Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                             double margin, int64_t reduction) {
  OpContext ctx("cosine_embedding_loss");
  LT_CHECK(x1.sizes() == x2.sizes() && (x1.dim() == 1 || x1.dim() == 2) &&
               target.dim() == x1.dim() - 1 && (x1.dim() == 1 || target.size(0) == x1.size(0)),
           "cosine_embedding_loss: expected input1 and input2 of one shape [N, D] (or [D]) and "
           "target [N] (or 0-d), got ",
           shape_str(x1.sizes()), ", ", shape_str(x2.sizes()), " and ", shape_str(target.sizes()));
  const int64_t d = x1.dim() - 1;
  constexpr double kEps = 1e-12;  // PyTorch's guard on the squared magnitudes
  Tensor dot = (x1 * x2).sum({d});
  Tensor den = (((x1 * x1).sum({d}) + kEps) * ((x2 * x2).sum({d}) + kEps)).sqrt();
  Tensor cos = dot / den;
  Tensor loss =
      where(target == 1, 1.0 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0.0), 0.0);
  return reduce(loss, reduction, "cosine_embedding_loss");
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, int64_t reduction) {
  OpContext ctx("triplet_margin_loss");
  LT_CHECK(anchor.dim() >= 1 && anchor.dim() == positive.dim() && anchor.dim() == negative.dim(),
           "triplet_margin_loss: anchor ", shape_str(anchor.sizes()), ", positive ",
           shape_str(positive.sizes()), " and negative ", shape_str(negative.sizes()),
           " must have the same number of dims (1 or more)");
  Tensor d_ap = pairwise_distance(anchor, positive, p, eps);
  Tensor d_an = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_an = minimum(d_an, pairwise_distance(positive, negative, p, eps));
  return reduce((d_ap - d_an + margin).clamp_min(0.0), reduction, "triplet_margin_loss");
}

Tensor binary_cross_entropy(const Tensor& x, const Tensor& y, const Tensor& weight,
                            int64_t reduction) {
  OpContext ctx("binary_cross_entropy");
  check_floating(x, "binary_cross_entropy", "input (probabilities)");
  check_same_shape(x, y, "binary_cross_entropy");
  // As PyTorch: each log is clamped at -100, so a probability of exactly 0 or 1 stays finite.
  Tensor loss = -(y * log(x).clamp_min(-100.0) + (1.0 - y) * log(1.0 - x).clamp_min(-100.0));
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction, "binary_cross_entropy");
}

Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y, const Tensor& weight,
                                        int64_t reduction, const Tensor& pos_weight) {
  OpContext ctx("binary_cross_entropy_with_logits");
  check_floating(x, "binary_cross_entropy_with_logits", "input (logits)");
  check_same_shape(x, y, "binary_cross_entropy_with_logits");
  // log(1 + exp(-x)) computed without overflow: max(-x, 0) + log1p(exp(-|x|)).
  Tensor softplus_neg = (-x).clamp_min(0.0) + log1p(exp(-abs(x)));
  Tensor loss = pos_weight.defined() ? (1.0 - y) * x + (1.0 + (pos_weight - 1.0) * y) * softplus_neg
                                     : (1.0 - y) * x + softplus_neg;
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction, "binary_cross_entropy_with_logits");
}

Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target) {
  OpContext ctx("kl_div");
  check_floating(input, "kl_div", "input (log-probabilities)");
  Tensor loss =
      log_target ? exp(target) * (target - input)
                 : where(target > 0, target * (log(where(target > 0, target, 1.0)) - input), 0.0);
  return reduce(loss, reduction, "kl_div", true);
}

}  // namespace lt
