#include "lazy/buckets.h"

#include <algorithm>
#include <unordered_map>

#include "core/check.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/shape.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "lazy/bucket_rewrite.h"

namespace lt::lazy {
namespace {

namespace M = metrics_impl;

// The real entries of a padded value: each padded dim read as [a, B, c], its middle cut to S.
Tensor cut(const Tensor& t, const Pads& p, int64_t s, int64_t b) {
  Dims sizes, strides, real;
  for (size_t d = 0; d < p.size(); ++d) {
    const int64_t st = t.strides()[d];
    if (!p[d].on()) {
      sizes.push_back(t.size(static_cast<int64_t>(d)));
      strides.push_back(st);
      real.push_back(t.size(static_cast<int64_t>(d)));
      continue;
    }
    sizes.push_back(p[d].a), strides.push_back(b * p[d].c * st);
    sizes.push_back(s), strides.push_back(p[d].c * st);
    sizes.push_back(p[d].c), strides.push_back(st);
    real.push_back(p[d].a * s * p[d].c);
  }
  return reshape_view(dense(make_view(t, sizes, strides, t.storage_offset())), real);
}

// One bucket's code, and the graph it was compiled from: every size of the bucket runs it with
// that graph (its own plan differs only in the counts' values and the real output sizes).
struct BucketCode {
  std::shared_ptr<const BucketPlan> plan;
  std::shared_ptr<backend::Executable> exe;
};

class BucketedExecutable : public backend::Executable {
 public:
  BucketedExecutable(std::unique_ptr<BucketPlan> plan, BucketCode code, int64_t s, int64_t b)
      : plan_(std::move(plan)), code_(std::move(code)), s_(s), b_(b) {
    for (const Pad& p : plan_->masks) {
      Tensor m = make_eager({p.a * b * p.c}, kBool);
      bool* q = static_cast<bool*>(m.raw_data_ptr());
      for (int64_t i = 0; i < m.numel(); ++i) q[i] = (i / p.c) % b < s;
      masks_.push_back(m);
    }
  }

  std::vector<Tensor> run(const backend::RunArgs& args) override {
    backend::RunArgs a;
    a.data.reserve(args.data.size());
    for (size_t i = 0; i < args.data.size(); ++i) {
      const Dims& ps = plan_->data_padded[i];
      if (ps.empty()) {
        a.data.push_back(args.data[i]);
        continue;
      }
      const Tensor& x = args.data[i];
      Tensor p = make_eager(ps, x.dtype());
      fill_kernel(p, 0, 0);
      copy_into(make_view(p, x.sizes(), p.strides(), 0), x);
      a.data.push_back(p);
      M::add("BucketPaddedInputs");
    }
    for (const Tensor& m : masks_) a.data.push_back(m);
    a.params = args.params;
    for (const ExtraParam& e : plan_->extra) {
      Tensor s = make_eager({}, e.dtype);
      fill_kernel(s, e.f, e.i);
      a.params.push_back(s);
    }
    a.donate = args.donate;
    for (size_t i = 0; i < a.donate.size(); ++i)
      if (!plan_->data_padded[i].empty()) a.donate[i] = false;
    if (!a.donate.empty()) a.donate.resize(a.data.size(), false);  // never the masks
    a.graph = &code_.plan->graph;
    code_.exe->may_fail = may_fail;
    std::vector<Tensor> out = code_.exe->run(a);
    for (size_t r = 0; r < out.size(); ++r)
      if (!plan_->out_pads[r].empty()) out[r] = cut(out[r], plan_->out_pads[r], s_, b_);
    return out;
  }
  bool declined() const override { return code_.exe->declined(); }

 private:
  std::unique_ptr<BucketPlan> plan_;
  BucketCode code_;
  int64_t s_, b_;
  std::vector<Tensor> masks_;  // BucketPlan::masks for this size
};

std::unordered_map<ir::Hash128, BucketCode, ir::Hash128Hasher>& bucket_code() {
  static auto* m = new std::unordered_map<ir::Hash128, BucketCode, ir::Hash128Hasher>();
  return *m;
}

}  // namespace

bool buckets_enabled() { return !config::text("LT_SHAPE_BUCKETS").value_or("").empty(); }

int64_t bucket_for(int64_t size) {
  const std::string spec = config::text("LT_SHAPE_BUCKETS").value_or("");
  if (spec.empty()) return 0;
  if (spec == "pow2") {
    int64_t b = 1;
    while (b < size) b *= 2;
    return b;
  }
  int64_t best = 0;
  size_t at = 0;
  while (at < spec.size()) {
    size_t comma = spec.find(',', at);
    if (comma == std::string::npos) comma = spec.size();
    const std::string item = spec.substr(at, comma - at);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    LT_CHECK(!item.empty() && end && *end == '\0' && v > 0, "LT_SHAPE_BUCKETS: expected pow2 or ",
             "a list of positive sizes such as 32,64,128, got '", spec, "'");
    if (v >= size && (!best || v < best)) best = v;
    at = comma + 1;
  }
  return best;
}

std::shared_ptr<backend::Executable> bucketed(const ir::Graph& g, const ir::ShapeProfile& prof,
                                              const std::vector<int64_t>& ref,
                                              const StaticCompile& compile, std::string* what,
                                              bool* fresh) {
  const std::vector<int64_t>& now = prof.values;
  if (ref.size() != now.size()) {
    *what = "no earlier graph of this structure";
    return nullptr;
  }
  // The changing size S: the smallest that changed. Every changed integer must be k * S, with
  // the same k in the earlier graph.
  size_t base = now.size();
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i] != ref[i] && (base == now.size() || now[i] < now[base])) base = i;
  if (base == now.size()) {
    *what = "no size changed";
    return nullptr;
  }
  const int64_t s = now[base], s_ref = ref[base];
  if (s < 2 || s_ref < 2) {
    *what = "a changed size is 0 or 1";
    return nullptr;
  }
  std::unordered_map<uint64_t, int64_t> fac;
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i] == ref[i]) continue;
    const int64_t k = now[i] / s;
    if (now[i] % s || ref[i] != k * s_ref) {
      *what = ir::describe_pos(g, prof.pos[i]) + " changed " + std::to_string(ref[i]) + " -> " +
              std::to_string(now[i]) + ", not a multiple of " +
              ir::describe_pos(g, prof.pos[base]) + " (" + std::to_string(s_ref) + " -> " +
              std::to_string(s) + ")";
      return nullptr;
    }
    fac[bucket_pos_key(prof.pos[i].node, prof.pos[i].field, prof.pos[i].k)] = k;
  }
  const int64_t b = bucket_for(s);
  if (!b) {
    *what = "size " + std::to_string(s) + " is beyond the last bucket";
    return nullptr;
  }
  std::unique_ptr<BucketPlan> plan;
  int masked = 0;
  try {
    plan = rewrite_to_bucket(g, s, b, std::move(fac), &masked);
  } catch (const BucketRefused& r) {
    *what = r.why;
    return nullptr;
  }
  M::add("BucketedGraphs");
  auto& code = bucket_code();
  if (code.size() > 1024) code.clear();
  auto it = code.find(plan->graph.key);
  *fresh = it == code.end();
  if (*fresh) {
    // The bucket's own copy of the graph (this plan goes with this size's executable).
    auto own = std::make_shared<BucketPlan>();
    own->graph = ir::detached_copy(plan->graph);
    std::shared_ptr<backend::Executable> exe = compile(own->graph);
    it = code.emplace(plan->graph.key, BucketCode{std::move(own), std::move(exe)}).first;
  }
  *what = ir::describe_pos(g, prof.pos[base]) + " = " + std::to_string(s) + " padded to bucket " +
          std::to_string(b) + " (" + std::to_string(masked) + " masked reads)" +
          (*fresh ? "; the bucket's code is new" : "; the bucket's code is reused");
  return std::make_shared<BucketedExecutable>(std::move(plan), it->second, s, b);
}

void clear_bucket_cache() { bucket_code().clear(); }

}  // namespace lt::lazy
