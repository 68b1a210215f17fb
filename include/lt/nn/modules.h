// The lt::nn modules. Initialization follows PyTorch's defaults.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/module.h"
#include "lt/nn/modules/activation.h"
#include "lt/nn/modules/container.h"
#include "lt/nn/modules/layers.h"
#include "lt/nn/modules/loss.h"
#include "lt/nn/modules/rnn.h"
#include "lt/nn/modules/transformer.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

}  // namespace lt::nn
