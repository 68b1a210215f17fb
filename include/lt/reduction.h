// How a loss reduces its per-element values: libtorch's at::Reduction enum (None, Mean, Sum)
// and the tags torch::kNone, torch::kMean, torch::kSum (and kBatchMean for kl_div), which
// convert to it, so `nll_loss(x, t, {}, Reduction::Sum)` and `.reduction(torch::kSum)` both work.
#pragma once
#include <cstdint>

namespace lt {

namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2, BatchMean = 3 };
}  // namespace Reduction

// EmbeddingBag's modes: torch::kSum, torch::kMean, torch::kMax.
enum class EmbeddingBagMode { Sum, Mean, Max };

namespace enumtype {
struct kNone {
  constexpr operator Reduction::Reduction() const { return Reduction::None; }
};
struct kMean {
  constexpr operator Reduction::Reduction() const { return Reduction::Mean; }
  constexpr operator EmbeddingBagMode() const { return EmbeddingBagMode::Mean; }
};
struct kMax {
  constexpr operator EmbeddingBagMode() const { return EmbeddingBagMode::Max; }
};
struct kSum {
  constexpr operator Reduction::Reduction() const { return Reduction::Sum; }
  constexpr operator EmbeddingBagMode() const { return EmbeddingBagMode::Sum; }
};
// kl_div only: the sum divided by the batch size (the mathematically correct KL mean).
struct kBatchMean {
  constexpr operator Reduction::Reduction() const { return Reduction::BatchMean; }
};
}  // namespace enumtype

// Nonlinearities: RNN's and RNNCell's (torch::kTanh, torch::kReLU) and nn::init's gains
// (calculate_gain: kLinear, kConv1D..kConvTranspose3D, kSigmoid, kTanh, kReLU, kLeakyReLU).
enum class Nonlinearity {
  Tanh,
  ReLU,
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  LeakyReLU
};
// interpolate's modes: libtorch's tags torch::kNearest, kLinear, kBilinear, ... convert to it.
enum class InterpolateMode { Nearest, Linear, Bilinear, Bicubic, Trilinear, Area, NearestExact };
namespace enumtype {
#define LT_INTERP_TAG(Tag, Mode)                                                 \
  struct Tag {                                                                   \
    constexpr operator InterpolateMode() const { return InterpolateMode::Mode; } \
  };
LT_INTERP_TAG(kNearest, Nearest)
struct kLinear {  // also nn::init's linear gain
  constexpr operator InterpolateMode() const { return InterpolateMode::Linear; }
  constexpr operator Nonlinearity() const { return Nonlinearity::Linear; }
};
LT_INTERP_TAG(kBilinear, Bilinear)
LT_INTERP_TAG(kBicubic, Bicubic)
LT_INTERP_TAG(kTrilinear, Trilinear)
LT_INTERP_TAG(kArea, Area)
LT_INTERP_TAG(kNearestExact, NearestExact)
#undef LT_INTERP_TAG
}  // namespace enumtype
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kNearestExact kNearestExact{};

// Padding modes (F::pad's mode and Conv2d's padding_mode): torch::kConstant, kZeros (a conv's
// zero padding), kReflect, kReplicate, kCircular.
enum class PadMode { Constant, Reflect, Replicate, Circular };
namespace enumtype {
#define LT_PAD_TAG(Tag, Mode)                                    \
  struct Tag {                                                   \
    constexpr operator PadMode() const { return PadMode::Mode; } \
  };
LT_PAD_TAG(kConstant, Constant)
LT_PAD_TAG(kZeros, Constant)
LT_PAD_TAG(kReflect, Reflect)
LT_PAD_TAG(kReplicate, Replicate)
LT_PAD_TAG(kCircular, Circular)
#undef LT_PAD_TAG
}  // namespace enumtype
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};

// A convolution's padding by name (Conv1d/Conv2d options, F::conv1d/conv2d): torch::kValid (none)
// and torch::kSame (outputs as large as the inputs).
namespace enumtype {
struct kValid {};
struct kSame {};
}  // namespace enumtype
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};

namespace enumtype {
#define LT_NONLINEARITY_TAG(Tag, Mode)                                     \
  struct Tag {                                                             \
    constexpr operator Nonlinearity() const { return Nonlinearity::Mode; } \
  };
LT_NONLINEARITY_TAG(kTanh, Tanh)
LT_NONLINEARITY_TAG(kReLU, ReLU)
LT_NONLINEARITY_TAG(kConv1D, Conv1D)
LT_NONLINEARITY_TAG(kConv2D, Conv2D)
LT_NONLINEARITY_TAG(kConv3D, Conv3D)
LT_NONLINEARITY_TAG(kConvTranspose1D, ConvTranspose1D)
LT_NONLINEARITY_TAG(kConvTranspose2D, ConvTranspose2D)
LT_NONLINEARITY_TAG(kConvTranspose3D, ConvTranspose3D)
LT_NONLINEARITY_TAG(kSigmoid, Sigmoid)
LT_NONLINEARITY_TAG(kLeakyReLU, LeakyReLU)
#undef LT_NONLINEARITY_TAG
struct kGELU {};  // a transformer layer's activation (nn::TransformerActivation)
}  // namespace enumtype
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};

// nn::init's fan modes: torch::kFanIn, torch::kFanOut.
enum class FanMode { FanIn, FanOut };
namespace enumtype {
struct kFanIn {
  constexpr operator FanMode() const { return FanMode::FanIn; }
};
struct kFanOut {
  constexpr operator FanMode() const { return FanMode::FanOut; }
};
}  // namespace enumtype
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kMax kMax{};
inline constexpr enumtype::kBatchMean kBatchMean{};

}  // namespace lt
