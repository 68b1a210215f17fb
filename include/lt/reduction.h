// How a loss reduces its per-element values: libtorch's at::Reduction enum (None, Mean, Sum)
// and the tags torch::kNone, torch::kMean, torch::kSum (and kBatchMean for kl_div), which
// convert to it, so `nll_loss(x, t, {}, Reduction::Sum)` and `.reduction(torch::kSum)` both work.
#pragma once
#include <cstdint>

namespace lt {

namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2, BatchMean = 3 };
}  // namespace Reduction

namespace enumtype {
struct kNone {
  constexpr operator Reduction::Reduction() const { return Reduction::None; }
};
struct kMean {
  constexpr operator Reduction::Reduction() const { return Reduction::Mean; }
};
struct kSum {
  constexpr operator Reduction::Reduction() const { return Reduction::Sum; }
};
// kl_div only: the sum divided by the batch size (the mathematically correct KL mean).
struct kBatchMean {
  constexpr operator Reduction::Reduction() const { return Reduction::BatchMean; }
};
}  // namespace enumtype

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kBatchMean kBatchMean{};

}  // namespace lt
