// The graph executor (paper §4): gathers pending values, builds one graph, looks it up in the
// compile cache (compiling on a miss), runs it, and swaps each alias's IR value for its new
// buffer. At the barrier only, input buffers that nothing else can observe are donated.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <list>
#include <unordered_map>
#include <unordered_set>

#include "backend/backend.h"
#include "backend/plan_node.h"
#include "core/check.h"
#include "core/config.h"
#include "core/metrics.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "lazy/lazy_tensor.h"

namespace lt::lazy {
namespace {

namespace M = metrics_impl;

struct CacheEntry {
  ir::Hash128 key;
  std::shared_ptr<backend::Executable> exe;
  std::vector<std::string> signature;
};

// LRU compile cache keyed by graph key (root hashes + input pattern) and backend.
class CompileCache {
 public:
  std::shared_ptr<backend::Executable> find(ir::Hash128 k) {
    auto it = map_.find(k);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->exe;
  }
  void insert(CacheEntry e) {
    lru_.push_front(std::move(e));
    map_[lru_.front().key] = lru_.begin();
    while (lru_.size() > capacity_) {
      map_.erase(lru_.back().key);
      lru_.pop_back();
      M::add("CompileCacheEvictions");
    }
    M::set("CompileCacheSize", static_cast<int64_t>(lru_.size()));
  }
  // The cached graph whose inputs look most like `sig`, for explaining a recompile.
  const CacheEntry* nearest(const std::vector<std::string>& sig) const {
    const CacheEntry* best = nullptr;
    size_t best_score = 0;
    for (const CacheEntry& e : lru_) {
      size_t score = 1;
      for (size_t i = 0; i < std::min(sig.size(), e.signature.size()); ++i)
        score += sig[i] == e.signature[i];
      if (e.signature.size() == sig.size()) score += 1000;
      if (score > best_score) best = &e, best_score = score;
    }
    return best;
  }

 private:
  size_t capacity_ = static_cast<size_t>(config::integer("LT_CACHE_SIZE"));
  std::list<CacheEntry> lru_;
  std::unordered_map<ir::Hash128, std::list<CacheEntry>::iterator, ir::Hash128Hasher> map_;
};

CompileCache& cache() {
  static CompileCache* c = new CompileCache();
  return *c;
}

void explain_miss(const ir::Graph& g, const std::vector<std::string>& sig) {
  const CacheEntry* near = cache().nearest(sig);
  std::string why;
  if (!near) {
    why = "first graph";
  } else {
    for (size_t i = 0; i < std::max(sig.size(), near->signature.size()); ++i) {
      std::string a = i < near->signature.size() ? near->signature[i] : "(none)";
      std::string b = i < sig.size() ? sig[i] : "(none)";
      if (a == b) continue;
      auto colon = b.find(": ");
      std::string label = colon != std::string::npos ? b.substr(0, colon) : b;
      std::string av = a.find(": ") != std::string::npos ? a.substr(a.find(": ") + 2) : a;
      std::string bv = colon != std::string::npos ? b.substr(colon + 2) : b;
      if (!why.empty()) why += "; ";
      why += label + ": " + av + " -> " + bv;
    }
    if (why.empty()) why = "same inputs, different graph structure (ops or attributes)";
  }
  std::fprintf(stderr, "lazytensor: compile (cache miss) graph %s, %zu ops: %s\n",
               ir::hash_hex(g.key).c_str(), g.op_count, why.c_str());
}

void save_ir(const ir::Graph& g) {
  static const std::string path = config::text("LT_SAVE_IR").value_or("");
  if (path.empty()) return;
  static const std::string fmt = config::choice("LT_IR_FORMAT");
  std::ofstream os(path, std::ios::app);
  os << "# graph " << ir::hash_hex(g.key) << "\n" << (fmt == "dot" ? ir::to_dot(g) : ir::to_text(g));
}

std::atomic<int64_t> g_pending_ops{0};

// Whether a step of `g` can throw on values at run time: an indexing op (gather, scatter...) whose
// index is computed in the graph. Indices that are device data or views of it were checked
// when recorded (record.cpp).
bool may_fail(const ir::Graph& g) {
  for (const ir::Node* n : g.order) {
    if (n->kind != ir::NodeKind::Op || op_category(n->op) != OpCategory::Indexing) continue;
    const ir::Node* i = n->operands[1].get();
    while (i->kind == ir::NodeKind::Op && i->n_operands == 1 &&
           (is_view_op(i->op) || i->op == OpKind::Copy))
      i = i->operands[0].get();
    if (i->kind != ir::NodeKind::Data) return true;
  }
  return false;
}

// The graph's input buffers and run-time parameters (no donation).
backend::RunArgs run_inputs(const ir::Graph& g) {
  backend::RunArgs args;
  for (ir::Node* d : g.data) args.data.push_back(d->data);
  for (ir::Node* p : g.params) {
    Tensor s = make_eager({}, p->meta.dtype);
    fill_kernel(s, p->param_f, p->param_i);
    args.params.push_back(s);
  }
  return args;
}

// A run failed (no input was donated, so every input is intact). Each requested tensor is
// computed again on its own by the reference interpreter: those that do not depend on the
// failing step get their values, the others are marked failed with the error.
void recover(const std::vector<Alias*>& aliases) {
  static std::unique_ptr<backend::Backend> interp = backend::make_interp_backend();
  for (Alias* a : aliases) {
    try {
      ir::Graph g = ir::build_graph({a->value});
      std::vector<Tensor> out = interp->compile(g)->run(run_inputs(g));
      a->value = ir::make_data(out[0]);
      a->generation++;
    } catch (const Error& e) {
      a->error = std::make_shared<const std::string>(e.what());
      g_any_failed_run.store(true, std::memory_order_relaxed);
    }
  }
}
int64_t max_pending() {
  static const int64_t n = config::integer("LT_MAX_PENDING_OPS");
  return n;
}

}  // namespace

std::atomic<bool> g_any_failed_run{false};

void sync_aliases(const std::vector<Alias*>& requested, bool barrier) {
  std::lock_guard<DeviceMutex> lock(device_mutex());
  std::vector<Alias*> aliases;
  // Pending = an op to compute. A scalar leaf is not work for the barrier (it would only copy
  // a host number); an explicit sync or observation does materialize it. A failed tensor is
  // not work either: the barrier skips it, reading it throws its error again.
  for (Alias* a : requested) {
    if (a->error) {
      if (!barrier) throw Error(*a->error);
      continue;
    }
    ir::NodeKind k = a->value->kind;
    if (k == ir::NodeKind::Op || (!barrier && k != ir::NodeKind::Data)) aliases.push_back(a);
  }
  if (barrier) g_pending_ops.store(0);  // every recorded op is now either computed or dead
  if (aliases.empty()) return;
  g_pending_ops.store(0);
  std::vector<ir::NodePtr> roots;
  for (Alias* a : aliases) roots.push_back(a->value);
  ir::Graph g = ir::build_graph(std::move(roots));
  const ir::Hash128 key = ir::mix(g.key, reinterpret_cast<uintptr_t>(&backend::active_backend()));
  M::add("GraphNodes", static_cast<int64_t>(g.order.size()));
  std::shared_ptr<backend::Executable> exe = cache().find(key);
  if (exe) {
    M::add("CachedCompile");
  } else {
    std::vector<std::string> sig = ir::input_signature(g);
    if (M::debug_enabled()) explain_miss(g, sig);
    M::add("UncachedCompile");
    {
      M::ScopedTimer t("CompileTime");
      exe = backend::active_backend().compile(g);
    }
    exe->may_fail = may_fail(g);
    cache().insert(CacheEntry{key, exe, std::move(sig)});
  }
  save_ir(g);
  backend::RunArgs args = run_inputs(g);
  if (barrier && !exe->may_fail) {
    // The paper's two conditions: this is the barrier (the outputs are final) and every live
    // tensor is in the graph, so an input buffer nobody else holds may be overwritten.
    std::unordered_set<const ir::Node*> held;
    for_each_alias([&](Alias* a) { held.insert(a->value.get()); });
    args.donate.resize(g.data.size());
    for (size_t i = 0; i < g.data.size(); ++i) {
      const ir::Node* d = g.data[i];
      // Held only by this node (and by args.data): no view, alias or user can see it.
      args.donate[i] = !held.count(d) && d->data.impl()->storage.use_count() == 1 &&
                       d->data.impl_ptr().use_count() == 2;
    }
  }
  std::vector<Tensor> out;
  try {
    M::ScopedTimer t("ExecuteTime");
    out = exe->run(args);
  } catch (const Error& e) {
    M::add("FailedExecutions");
    if (std::find(args.donate.begin(), args.donate.end(), true) == args.donate.end()) {
      recover(aliases);
    } else {  // inputs may be half overwritten: nothing of this graph can be trusted
      auto msg = std::make_shared<const std::string>(e.what());
      for (Alias* a : aliases) a->error = msg;
      g_any_failed_run.store(true, std::memory_order_relaxed);
    }
    throw;
  }
  for (size_t i = 0; i < aliases.size(); ++i) {
    aliases[i]->value = ir::make_data(out[i]);
    aliases[i]->generation++;
  }
  for (size_t i = 0; i < args.donate.size(); ++i)
    if (args.donate[i]) M::add("DonatedBuffers");
}

void note_recorded_op() {
  // Called with the device lock held, so a plain increment (no atomic read-modify-write).
  const int64_t n = g_pending_ops.load(std::memory_order_relaxed) + 1;
  g_pending_ops.store(n, std::memory_order_relaxed);
  if (n < max_pending()) return;
  // Huge trace with no barrier: cut it here (evaluate every live tensor, no donation).
  M::add("AutoCut");
  std::vector<Alias*> all;
  std::lock_guard<DeviceMutex> lock(device_mutex());
  for_each_alias([&](Alias* a) { all.push_back(a); });
  sync_aliases(all, false);
}

}  // namespace lt::lazy
