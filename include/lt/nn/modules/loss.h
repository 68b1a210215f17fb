// Loss modules: forward(input, target) calls the loss function of lt/ops.h with the options.
#pragma once
#include <string>

#include "lt/nn/module.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

#define LT_NN_LOSS(Name, Opts, call)                                           \
  class Name##Impl : public Module {                                           \
   public:                                                                     \
    explicit Name##Impl(const Opts& o = {}) : options(o) {}                    \
    Tensor forward(const Tensor& input, const Tensor& target) { return call; } \
    std::string name() const override { return #Name; }                        \
    Opts options;                                                              \
  };                                                                           \
  LT_MODULE(Name)

LT_NN_LOSS(MSELoss, MSELossOptions, mse_loss(input, target, options.reduction()));
LT_NN_LOSS(L1Loss, L1LossOptions, l1_loss(input, target, options.reduction()));
LT_NN_LOSS(NLLLoss, NLLLossOptions,
           nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index()));
LT_NN_LOSS(CrossEntropyLoss, CrossEntropyLossOptions,
           cross_entropy(input, target, options.weight(), options.reduction(),
                         options.ignore_index(), options.label_smoothing()));
LT_NN_LOSS(BCELoss, BCELossOptions,
           binary_cross_entropy(input, target, options.weight(), options.reduction()));
LT_NN_LOSS(BCEWithLogitsLoss, BCEWithLogitsLossOptions,
           binary_cross_entropy_with_logits(input, target, options.weight(), options.reduction(),
                                            options.pos_weight()));
LT_NN_LOSS(SmoothL1Loss, SmoothL1LossOptions,
           smooth_l1_loss(input, target, options.reduction(), options.beta()));
LT_NN_LOSS(HuberLoss, HuberLossOptions,
           huber_loss(input, target, options.reduction(), options.delta()));
LT_NN_LOSS(KLDivLoss, KLDivLossOptions,
           kl_div(input, target, options.reduction(), options.log_target()));
#undef LT_NN_LOSS

}  // namespace lt::nn
