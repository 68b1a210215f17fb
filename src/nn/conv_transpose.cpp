// ConvTranspose1d and ConvTranspose2d over lt::conv_transpose1d/2d.
#include <cmath>

#include "core/check.h"
#include "core/shape.h"
#include "lt/nn/init.h"
#include "lt/nn/modules.h"

namespace lt::nn {
namespace {

// The checks and parameters both dims share. kernel: the kernel's extent per spatial dim.
template <typename Options>
void make_parameters(Module& m, const char* name, const Options& o, const Dims& kernel,
                     Tensor* weight, Tensor* bias) {
  bool ok = o.in_channels() > 0 && o.out_channels() > 0 && o.groups() > 0 &&
            o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0;
  for (int64_t k : kernel) ok = ok && k > 0;
  LT_CHECK(ok, name, ": channels ", o.in_channels(), " -> ", o.out_channels(), ", kernel ",
           shape_str(kernel), ", groups ", o.groups(), " are not a valid configuration");
  LT_CHECK(o.padding_mode() == PadMode::Constant, name,
           ": only zero padding (torch::kZeros) is supported, as in libtorch");
  Dims shape = {o.in_channels(), o.out_channels() / o.groups()};
  for (int64_t k : kernel) shape.push_back(k);
  *weight = m.register_parameter("weight", empty(shape));
  if (o.bias()) *bias = m.register_parameter("bias", empty({o.out_channels()}));
}

// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight and the bias, fan_in = weight.size(1) times
// the kernel's elements: PyTorch's kaiming_uniform_(a = sqrt(5)) and bias rule.
void reset(Tensor& weight, Tensor& bias) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(weight.numel() / weight.size(0)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

// output_padding for a requested output_size (the spatial extent, or with N and C in front),
// as libtorch's: each extent between the smallest the layer gives and that plus stride - 1.
template <typename Options>
Dims output_padding(const char* name, const Options& o, const Tensor& x, IntList kernel,
                    const std::optional<std::vector<int64_t>>& output_size) {
  const size_t d = kernel.size();
  Dims pad(IntList(o.output_padding()->data(), d));
  if (!output_size) return pad;
  std::vector<int64_t> want = *output_size;
  if (want.size() == d + 2) want.erase(want.begin(), want.begin() + 2);
  LT_CHECK(want.size() == d, name, ": output_size ", shape_str(*output_size), " must have ", d,
           " or ", d + 2, " values");
  LT_CHECK(x.dim() >= static_cast<int64_t>(d), name, ": input ", shape_str(x.sizes()),
           " has fewer than ", d, " dims");
  for (size_t i = 0; i < d; ++i) {
    const int64_t in = x.size(x.dim() - static_cast<int64_t>(d) + static_cast<int64_t>(i));
    const int64_t s = (*o.stride())[i], p = (*o.padding())[i], dil = (*o.dilation())[i];
    const int64_t lo = (in - 1) * s - 2 * p + dil * (kernel[i] - 1) + 1, hi = lo + s - 1;
    LT_CHECK(want[i] >= lo && want[i] <= hi, name, ": output_size ", shape_str(*output_size),
             " is not reachable: dim ", i, " must be in [", lo, ", ", hi, "] for input ",
             shape_str(x.sizes()));
    pad[i] = want[i] - lo;
  }
  return pad;
}

}  // namespace

ConvTranspose1dImpl::ConvTranspose1dImpl(const ConvTranspose1dOptions& o) : options(o) {
  make_parameters(*this, "ConvTranspose1d", o, {o.kernel_size()[0]}, &weight, &bias);
  reset_parameters();
}
void ConvTranspose1dImpl::reset_parameters() { reset(weight, bias); }
Tensor ConvTranspose1dImpl::forward(const Tensor& x,
                                    const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options;
  Dims op = output_padding("ConvTranspose1d", o, x, {o.kernel_size()[0]}, output_size);
  return conv_transpose1d(x, weight, bias, o.stride(), o.padding(), op, o.groups(), o.dilation());
}

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& o) : options(o) {
  make_parameters(*this, "ConvTranspose2d", o, {o.kernel_size()[0], o.kernel_size()[1]}, &weight,
                  &bias);
  reset_parameters();
}
void ConvTranspose2dImpl::reset_parameters() { reset(weight, bias); }
Tensor ConvTranspose2dImpl::forward(const Tensor& x,
                                    const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options;
  Dims op = output_padding("ConvTranspose2d", o, x, {o.kernel_size()[0], o.kernel_size()[1]},
                           output_size);
  return conv_transpose2d(x, weight, bias, o.stride(), o.padding(), op, o.groups(), o.dilation());
}

}  // namespace lt::nn
