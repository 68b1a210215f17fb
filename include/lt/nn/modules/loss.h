// Loss modules: forward(input, target) is F::xxx(input, target, options) (lt/nn/functional.h).
#pragma once
#include <string>

#include "lt/nn/functional.h"
#include "lt/nn/module.h"
#include "lt/nn/options.h"

namespace lt::nn {

#define LT_NN_LOSS(Name, fn)                                         \
  class Name##Impl : public Module {                                 \
   public:                                                           \
    explicit Name##Impl(const Name##Options& o = {}) : options(o) {} \
    Tensor forward(const Tensor& input, const Tensor& target) {      \
      return functional::fn(input, target, options);                 \
    }                                                                \
    std::string name() const override { return #Name; }              \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                \
    Name##Options options;                                           \
  };                                                                 \
  LT_MODULE(Name)

LT_NN_LOSS(MSELoss, mse_loss);
LT_NN_LOSS(L1Loss, l1_loss);
LT_NN_LOSS(NLLLoss, nll_loss);
LT_NN_LOSS(CrossEntropyLoss, cross_entropy);
LT_NN_LOSS(BCELoss, binary_cross_entropy);
LT_NN_LOSS(BCEWithLogitsLoss, binary_cross_entropy_with_logits);
LT_NN_LOSS(SmoothL1Loss, smooth_l1_loss);
LT_NN_LOSS(HuberLoss, huber_loss);
LT_NN_LOSS(KLDivLoss, kl_div);
#undef LT_NN_LOSS

// The losses of three inputs: MarginRankingLoss and CosineEmbeddingLoss take (input1, input2,
// target), TripletMarginLoss (anchor, positive, negative).
#define LT_NN_LOSS3(Name, fn)                                           \
  class Name##Impl : public Module {                                    \
   public:                                                              \
    explicit Name##Impl(const Name##Options& o = {}) : options(o) {}    \
    Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) { \
      return functional::fn(a, b, c, options);                          \
    }                                                                   \
    std::string name() const override { return #Name; }                 \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                   \
    Name##Options options;                                              \
  };                                                                    \
  LT_MODULE(Name)

LT_NN_LOSS3(MarginRankingLoss, margin_ranking_loss);
LT_NN_LOSS3(CosineEmbeddingLoss, cosine_embedding_loss);
LT_NN_LOSS3(TripletMarginLoss, triplet_margin_loss);
#undef LT_NN_LOSS3

// CTCLoss: forward(log_probs, targets, input_lengths, target_lengths), as libtorch's.
class CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(const CTCLossOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) {
    return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
  std::string name() const override { return "CTCLoss"; }
  LT_CLONE_FROM_OPTIONS(CTCLossImpl)
  CTCLossOptions options;
};
LT_MODULE(CTCLoss);

}  // namespace lt::nn
