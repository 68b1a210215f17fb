// Shape bucketing (LT_SHAPE_BUCKETS, docs/ARCHITECTURE.md "Dynamic shapes"): a graph whose sizes
// changed is rewritten to run at a bucket's size, with static code, instead of as shape-generic
// code. The changing size S (and every size that is a fixed multiple of it) is padded up to the
// bucket B >= S; inputs are zero-padded, outputs cut back to S.
//
// Padding never changes a result. The rewrite tracks, for every value, which dims are padded:
// their first k*S entries are the real values and the rest is anything (NaN included). An op
// that only moves or maps entries keeps that form; an op that mixes entries along a padded dim
// reads it masked: a reduction or a contraction (matmul, a convolution's weight gradient) over
// a padded dim sees its identity there (0 for a sum or a product's operand, -inf for a max), an
// index computed from padding reads entry 0, and a mean needs nothing (its divisor is a
// run-time scalar of the traced graph: 1/S). Anything else that mixes entries along a padded
// dim (a slice that is not the whole dim, cat, pad, sort along it, two changing sizes that are
// not multiples of one) refuses: the graph gets shape-generic code as without buckets, and
// LT_DEBUG says why.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ir/shape_profile.h"

namespace lt::lazy {

// Whether LT_SHAPE_BUCKETS is set (read per call).
bool buckets_enabled();
// The bucket size S pads to: the next power of two (pow2) or the smallest listed size >= S;
// 0 when S is beyond the list.
int64_t bucket_for(int64_t size);

using StaticCompile = std::function<std::shared_ptr<backend::Executable>(const ir::Graph&)>;

// Code for g padded to its bucket, where `ref` (ShapeProfile::values of an earlier graph of g's
// structure) tells which sizes change. The bucket's code is compiled once (by `compile`) and
// shared by every size of the bucket (*fresh: compiled by this call). nullptr when it refuses;
// *what says why, or on success what was padded.
std::shared_ptr<backend::Executable> bucketed(const ir::Graph& g, const ir::ShapeProfile& prof,
                                              const std::vector<int64_t>& ref,
                                              const StaticCompile& compile, std::string* what,
                                              bool* fresh);

void clear_bucket_cache();

}  // namespace lt::lazy
