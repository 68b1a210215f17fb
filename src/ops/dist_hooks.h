// The slot through which the AllReduce kernel reaches the process group without including it
// (like lazy_hooks.h): the dist layer fills it at load time (src/dist/process_group.cpp).
#pragma once
#include <cstdint>

#include "lt/tensor.h"
#include "ops/hook.h"

namespace lt {

// The reduce op of an AllReduce node (AllReduceAttrs::op); lt::dist::ReduceOp has the same values.
enum class ReduceCode : int64_t { Sum, Mean, Max, Min, Product };
inline constexpr int64_t kNumReduceCodes = 5;
inline const char* reduce_code_name(int64_t c) {
  static const char* const kNames[] = {"sum", "mean", "max", "min", "product"};
  return c >= 0 && c < kNumReduceCodes ? kNames[c] : "?";
}

struct DistHooks {
  // Reduces `buf` (a fresh contiguous cpu tensor) in place across the process group `group`
  // (0: the world). Throws lt::dist::DistError on communication failure.
  void (*all_reduce)(const Tensor& buf, int64_t reduce_code, int64_t group) = nullptr;
};
DistHooks& dist_hooks();

}  // namespace lt
