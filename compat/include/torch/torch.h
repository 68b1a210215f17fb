// The drop-in header of lazytensor::torch: a libtorch C++ program that includes <torch/torch.h>
// compiles against lazytensor unchanged. The namespaces torch, at and c10 (and torch::nn,
// torch::nn::functional, torch::optim, torch::autograd with custom Functions, torch::data) name
// lt's types and functions; choose the lazy device with torch::Device(torch::kLazy) or
// torch::Device("lazy"). Differences from libtorch are listed in README.md ("libtorch programs").
#pragma once
#include <c10/util/irange.h>
#include <lt/lt.h>

#include <optional>

// Declares the holder `Name` of module class `NameImpl`, as libtorch's macro.
#define TORCH_MODULE(Name) LT_MODULE(Name)

namespace c10 {
using lt::ArrayRef;
using lt::Device;
using lt::DeviceType;
using lt::IntArrayRef;
using lt::IValue;
using lt::Layout;
using lt::Scalar;
using lt::Tensor;
using lt::TensorOptions;
using std::nullopt;
using std::optional;
using ScalarType = lt::Dtype;
using Error = lt::Error;  // catch (const c10::Error&) catches every lazytensor error
using lt::BFloat16;
using lt::Half;
using lt::kBFloat16;
using lt::kBool;
using lt::kChar;
using lt::kCPU;
using lt::kDouble;
using lt::kFloat;
using lt::kFloat16;
using lt::kFloat32;
using lt::kFloat64;
using lt::kHalf;
using lt::kInt;
using lt::kInt32;
using lt::kInt64;
using lt::kInt8;
using lt::kLazy;
using lt::kLong;
using lt::kStrided;
}  // namespace c10

namespace caffe2 {
using lt::TypeMeta;
}

namespace at {
using namespace lt;
using c10::irange;
using c10::ScalarType;
}  // namespace at

namespace torch {
using namespace lt;
using c10::irange;
using c10::ScalarType;
using std::nullopt;
using std::optional;
namespace nn {
using namespace lt::nn;
namespace functional {
using namespace lt::nn::functional;
}
}  // namespace nn
namespace optim {
using namespace lt::optim;
}
namespace data {
using namespace lt::data;
}
namespace autograd {
using namespace lt::autograd;
using lt::AutoGradMode;
using lt::NoGradGuard;
}
}  // namespace torch
