// ctc_loss (libtorch's torch::ctc_loss, F::ctc_loss, nn::CTCLoss): the negative log-likelihood of
// each target under all alignments of log_probs [T, N, C], by the forward (alpha) recursion in
// log space over the target with blanks between and around its labels. The time loop is C++, so
// a lazy graph records it unrolled and autograd differentiates the recursion; no primitive and
// no gradient formula of its own. Samples shorter than T stop updating at their input length.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/shift.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"

namespace lt {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log(sum(exp(x))) over the tensors, elementwise; -inf where every term is -inf (no NaN, in the
// value or the gradient). The shift m is detached: the value does not depend on it.
Tensor log_sum_exp(const std::vector<Tensor>& xs) {
  Tensor m = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) m = maximum(m, xs[i]);
  const Tensor finite = m != kNegInf;
  const Tensor shift = where(finite, m, 0.0).detach();
  Tensor s = exp(xs[0] - shift);
  for (size_t i = 1; i < xs.size(); ++i) s = s + exp(xs[i] - shift);
  return where(finite, shift + log(where(finite, s, 1.0)), kNegInf);
}

// Per-sample losses [N] for log_probs [T, N, C], padded targets [N, S] (int64), and lengths [N]
// (int64, on log_probs' device).
Tensor ctc_per_sample(const Tensor& lp, const Tensor& targets, const Tensor& in_len,
                      const Tensor& tgt_len, int64_t blank) {
  const int64_t T = lp.size(0), N = lp.size(1), S = targets.size(1), L = 2 * S + 1;
  const TensorOptions i64 = TensorOptions().dtype(kInt64).device(lp.device());
  // The target with blanks between and around its labels: [N, L]; entries past a sample's
  // length are blanks (so any padding value is fine).
  const Tensor label = where(arange(S, i64).unsqueeze(0) < tgt_len.unsqueeze(1), targets, blank);
  const Tensor ext = cat(
      {stack({full({N, S}, blank, i64), label}, 2).reshape({N, 2 * S}), full({N, 1}, blank, i64)},
      1);
  const Tensor lpe = lp.gather(2, ext.unsqueeze(0).expand({T, N, L}));  // [T, N, L]
  const Tensor pos = arange(L, i64).unsqueeze(0);                       // [1, L]
  // A label may follow the previous label directly (skipping the blank) unless they are equal.
  const Tensor skip = (pos >= 2) & (ext != blank) & (ext != shifted(ext, 1, 2, -1));
  Tensor alpha = where(pos < 2, lpe.select(0, 0), kNegInf);
  for (int64_t t = 1; t < T; ++t) {
    const Tensor next = log_sum_exp({alpha, shifted(alpha, 1, 1, kNegInf),
                                     where(skip, shifted(alpha, 1, 2, kNegInf), kNegInf)}) +
                        lpe.select(0, t);
    alpha = where((in_len > t).unsqueeze(1), next, alpha);
  }
  // End on the last label or the blank after it.
  const Tensor last = alpha.gather(1, (2 * tgt_len).unsqueeze(1)).squeeze(1);
  const Tensor before =
      where(tgt_len > 0, alpha.gather(1, (2 * tgt_len - 1).clamp_min(0).unsqueeze(1)).squeeze(1),
            kNegInf);
  Tensor loss = -log_sum_exp({last, before});
  if (lp.requires_grad()) {
    // PyTorch's gradient with respect to log_probs is the one with respect to the logits of a
    // log_softmax: it adds exp(log_probs) at each sample's steps. Through log_softmax (the
    // usual input) both give the same gradient; on log_probs alone, PyTorch's. The term adds 0.
    const Tensor steps = (arange(T, i64).unsqueeze(1) < in_len.unsqueeze(0)).unsqueeze(2);
    const Tensor e = where(steps, exp(lp), 0.0).sum({0, 2});
    loss = loss + (e - e.detach());
  }
  return loss;
}

std::vector<int64_t> host_lengths(const Tensor& t, const char* what) {
  LT_CHECK(!is_floating(t.dtype()) && t.dim() <= 1, "ctc_loss: ", what,
           " must be integers of 0 or 1 dims, got ", dtype_name(t.dtype()), " ",
           shape_str(t.sizes()));
  return t.to(kInt64).cpu().to_vector<int64_t>();  // a sync point for a lazy tensor
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction,
                bool zero_infinity) {
  OpContext ctx("ctc_loss");
  LT_CHECK(is_floating(log_probs.dtype()) && (log_probs.dim() == 3 || log_probs.dim() == 2),
           "ctc_loss: expected floating log_probs of [T, N, C] or [T, C], got ",
           dtype_name(log_probs.dtype()), " ", shape_str(log_probs.sizes()));
  LT_CHECK(!is_floating(targets.dtype()) && targets.dtype() != kBool,
           "ctc_loss: expected integer targets, got ", dtype_name(targets.dtype()));
  LT_CHECK(
      reduction == Reduction::None || reduction == Reduction::Mean || reduction == Reduction::Sum,
      "ctc_loss: reduction must be none, mean or sum");
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
  const int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  LT_CHECK(blank >= 0 && blank < C, "ctc_loss: blank ", blank, " is not a class of log_probs ",
           shape_str(log_probs.sizes()));
  const Device dev = lp.device();
  const TensorOptions i64 = TensorOptions().dtype(kInt64).device(dev);
  // Lengths: checked here where they are host tensors (libtorch's usual), else used on the device.
  auto lengths = [&](const Tensor& t, const char* what, int64_t most) {
    if (t.device() != Device("cpu")) return t.to(kInt64).reshape({N});
    const std::vector<int64_t> v = host_lengths(t, what);
    LT_CHECK(static_cast<int64_t>(v.size()) == N, "ctc_loss: expected ", N, " ", what,
             " for log_probs ", shape_str(log_probs.sizes()), ", got ", v.size());
    for (int64_t x : v)
      LT_CHECK(x >= 0 && x <= most, "ctc_loss: ", what, " ", x, " is outside [0, ", most,
               "] for log_probs ", shape_str(log_probs.sizes()), " and targets ",
               shape_str(targets.sizes()));
    return tensor(v).to(dev);
  };
  const Tensor in_len = lengths(input_lengths, "input_lengths", T);
  Tensor padded;
  Tensor tgt_len;
  if (targets.dim() == (batched ? 2 : 1)) {  // padded [N, S] (or [S] for one sample)
    padded = (batched ? targets : targets.unsqueeze(0)).to(kInt64);
    LT_CHECK(padded.size(0) == N, "ctc_loss: expected targets of ", N, " rows, got ",
             shape_str(targets.sizes()));
    tgt_len = lengths(target_lengths, "target_lengths", padded.size(1));
  } else {
    LT_CHECK(targets.dim() == 1 && batched,
             "ctc_loss: expected targets of [N, S] or concatenated [sum(target_lengths)], got ",
             shape_str(targets.sizes()));
    // Concatenated targets: rows gathered from the host lengths (a sync point on lazy).
    const std::vector<int64_t> len = host_lengths(target_lengths, "target_lengths");
    LT_CHECK(static_cast<int64_t>(len.size()) == N, "ctc_loss: expected ", N,
             " target_lengths, got ", len.size());
    int64_t total = 0, most = 0;
    for (int64_t x : len) {
      LT_CHECK(x >= 0, "ctc_loss: target_lengths ", x, " is negative");
      total += x;
      most = std::max(most, x);
    }
    LT_CHECK(total == targets.size(0), "ctc_loss: target_lengths sum to ", total,
             " but targets are ", shape_str(targets.sizes()));
    std::vector<int64_t> rows;
    int64_t offset = 0;
    for (int64_t x : len) {
      for (int64_t s = 0; s < most; ++s) rows.push_back(x == 0 ? 0 : offset + std::min(s, x - 1));
      offset += x;
    }
    padded = total == 0
                 ? zeros({N, most}, i64)
                 : targets.to(kInt64).index_select(0, tensor(rows).to(dev)).reshape({N, most});
    tgt_len = tensor(len).to(dev);
  }
  Tensor loss = ctc_per_sample(lp, padded, in_len, tgt_len, blank);
  if (zero_infinity) loss = where(isinf(loss), 0.0, loss);
  if (reduction == Reduction::Sum) return loss.sum();
  if (reduction == Reduction::Mean) return (loss / tgt_len.clamp_min(1).to(loss.dtype())).mean();
  return batched ? loss : loss.squeeze(0);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntList input_lengths,
                IntList target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  return ctc_loss(log_probs, targets, tensor(input_lengths.vec()), tensor(target_lengths.vec()),
                  blank, reduction, zero_infinity);
}

}  // namespace lt
