// <ATen/ATen.h> of the lazytensor::torch drop-in headers: at:: names lt's tensors and ops.
#pragma once
#include <torch/torch.h>
