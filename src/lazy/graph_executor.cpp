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
#include "lazy/background_compile.h"
#include "lazy/buckets.h"
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
  void erase(ir::Hash128 k) {
    auto it = map_.find(k);
    if (it == map_.end()) return;
    lru_.erase(it->second);
    map_.erase(it);
    M::set("CompileCacheSize", static_cast<int64_t>(lru_.size()));
  }
  void clear() {
    map_.clear();
    lru_.clear();
    M::set("CompileCacheSize", 0);
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

// Why a graph of a structure never compiled before missed: its inputs against the nearest
// cached graph's.
std::string explain_new_structure(const std::vector<std::string>& sig) {
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
  return why;
}

void debug_line(const ir::Graph& g, const std::string& what) {
  std::fprintf(stderr, "lazytensor: compile (cache miss) graph %s, %zu ops: %s\n",
               ir::hash_hex(g.key).c_str(), g.op_count, what.c_str());
}

// Shape generalization (docs/ARCHITECTURE.md, "Dynamic shapes"): per graph structure (the graph
// without its sizes), the size vectors seen and the shape-generic executable made from them.
struct Structure {
  std::vector<std::vector<int64_t>> seen;  // sizes of graphs compiled (capped)
  std::shared_ptr<ir::DynamicShapes> dyn;
  std::shared_ptr<backend::Executable> exe;
  bool declined = false;  // the backend could not make this structure generic
};
constexpr size_t kMaxSeen = 8;
constexpr size_t kMaxStructures = 4096;

std::unordered_map<ir::Hash128, Structure, ir::Hash128Hasher>& structures() {
  static auto* m = new std::unordered_map<ir::Hash128, Structure, ir::Hash128Hasher>();
  return *m;
}

// "input 0 dim 1: 128 -> 97; ..." for the positions where `now` differs from `before`.
std::string size_changes(const ir::Graph& g, const ir::ShapeProfile& p,
                         const std::vector<int64_t>& before) {
  std::string s;
  size_t shown = 0, more = 0;
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (p.values[i] == before[i]) continue;
    if (shown == 4) {
      ++more;
      continue;
    }
    ++shown;
    s += (s.empty() ? "" : "; ") + ir::describe_pos(g, p.pos[i]) + ": " +
         std::to_string(before[i]) + " -> " + std::to_string(p.values[i]);
  }
  if (more) s += " (+" + std::to_string(more) + " more)";
  return s;
}

// When a background compile starts (background_compile.h), for LT_DEBUG.
const std::string kSoon = " (if within " + std::to_string(TieredExecutable::kRecentRuns) +
                          " graph runs of its first, else its " +
                          std::to_string(TieredExecutable::kRareRuns) + "th)";

std::shared_ptr<backend::Executable> compile_static(const ir::Graph& g, bool background) {
  if (background) {  // from its second run (background_compile.h); counted when it starts
    backend::Backend* b = &backend::active_backend();
    return std::make_shared<TieredExecutable>(
        [b](const ir::Graph& c, backend::Tier) {  // static code: always Full (tiers_ is off)
          return std::shared_ptr<backend::Executable>(b->compile(c));
        },
        false, nullptr, "specialized");
  }
  M::add("UncachedCompile");
  M::add("StaticCompile");
  M::ScopedTimer t("CompileTime");
  return backend::active_backend().compile(g);
}

// A graph that missed the cache: the structure's shape-generic code if it admits the graph's
// sizes; else a new generic version when only sizes changed since a graph of the same
// structure (PyTorch 2's "automatic dynamic": static code first, generic after a change);
// else specialized code.
std::shared_ptr<backend::Executable> compile_miss(const ir::Graph& g,
                                                  const std::vector<std::string>& sig) {
  const bool dynamic = config::choice("LT_DYNAMIC_SHAPES") == "auto";  // read per miss
  const bool debug = M::debug_enabled();
  const bool background = compile_in_background(g);
  const std::string deferred =
      background
          ? std::string("; runs on interp, compiled in the background from its second run") + kSoon
          : "";
  if (!dynamic) {
    if (debug) debug_line(g, explain_new_structure(sig) + "; specialized" + deferred);
    return compile_static(g, background);
  }
  const ir::ShapeProfile prof = ir::shape_profile(g);
  auto& all = structures();
  if (all.size() >= kMaxStructures) all.clear();
  Structure& st =
      all[ir::mix(prof.structure, reinterpret_cast<uintptr_t>(&backend::active_backend()))];
  if (!st.seen.empty() && st.seen.back().size() != prof.values.size()) st = Structure{};
  if (st.exe && st.exe->declined()) {  // a background compile of generic code found no code
    st.exe = nullptr;
    st.declined = true;
    M::add("DynamicCompileDeclined");
  }
  std::string not_bucketed;
  if (!st.seen.empty() && buckets_enabled()) {
    // LT_SHAPE_BUCKETS: static code of the size's bucket rather than shape-generic code.
    const std::vector<int64_t>& ref =
        st.seen.front() != prof.values ? st.seen.front() : st.seen.back();
    std::string what;
    bool fresh = false;
    if (auto exe = bucketed(
            g, prof, ref, [&](const ir::Graph& b) { return compile_static(b, background); }, &what,
            &fresh)) {
      if (debug)
        debug_line(g,
                   "sizes " + size_changes(g, prof, ref) + "; " + what + (fresh ? deferred : ""));
      return exe;
    }
    M::add("BucketRefused");
    not_bucketed = "; not bucketed: " + what;
  }
  if (st.exe && st.dyn->admits(prof.values)) {
    M::add("CachedCompile");
    M::add("DynamicCacheHit");
    return st.exe;
  }
  std::string why = st.seen.empty() ? "new graph structure (" + explain_new_structure(sig) + ")"
                                    : "sizes " + size_changes(g, prof, st.seen.back());
  why += not_bucketed;
  if (!st.seen.empty() && !st.declined) {
    std::vector<std::vector<int64_t>> seen = st.seen;
    if (seen.size() == kMaxSeen) seen.erase(seen.begin() + 1);  // keep the first
    seen.push_back(prof.values);
    if (auto d = ir::DynamicShapes::generalize(prof.pos, seen)) {
      auto dyn = std::make_shared<ir::DynamicShapes>(std::move(*d));
      M::add("ShapeGeneralization");
      if (background) {
        // Compiled from its second run, like a new structure: a size seen once may be a
        // one-off (the last partial batch of a one-epoch run, an evaluation's), and on 2 cores
        // a compile in the background takes one of the program's threads for its whole length.
        backend::Backend* b = &backend::active_backend();
        // A copy per compile: bind() writes it, and the Quick code runs while the Full compiles.
        auto exe = std::make_shared<TieredExecutable>(
            [b, code = *dyn](const ir::Graph& c, backend::Tier tier) {
              return std::shared_ptr<backend::Executable>(
                  b->compile_generic(c, std::make_shared<ir::DynamicShapes>(code), tier));
            },
            true, nullptr, "generic");
        if (debug)
          debug_line(g, why + "; generic in " + dyn->describe(g) +
                            "; runs on interp, compiled in the background from its second run" +
                            kSoon);
        st.seen = std::move(seen);
        st.dyn = std::move(dyn);
        st.exe = exe;
        return exe;
      }
      std::shared_ptr<backend::Executable> exe;
      {
        M::ScopedTimer t("CompileTime");
        // A barrier that waits for its compile gets Full code (LT_QUICK_TIER=only: Quick).
        const bool quick = config::choice("LT_QUICK_TIER") == "only";
        exe = backend::active_backend().compile_generic(
            g, dyn, quick ? backend::Tier::Quick : backend::Tier::Full);
      }
      if (exe) {
        M::add("UncachedCompile");
        M::add("DynamicCompile");
        if (debug) debug_line(g, why + "; generic in " + dyn->describe(g));
        st.seen = std::move(seen);
        st.dyn = std::move(dyn);
        st.exe = exe;
        return exe;
      }
      st.declined = true;
      M::add("DynamicCompileDeclined");
      why += "; the backend declined generic code";
    } else {
      why += "; a size that changed is 0 or 1 here or before (never merged)";
      // A reference with a 0 or 1 where sizes vary is useless for later graphs: this one
      // replaces it, unless this one is the odd graph.
      bool small_now = false;
      for (size_t i = 0; i < prof.values.size(); ++i)
        small_now = small_now || (prof.values[i] != st.seen.back()[i] && prof.values[i] < 2);
      if (!small_now) st.seen = {prof.values};
    }
  }
  if (st.seen.empty()) st.seen.push_back(prof.values);
  if (debug) debug_line(g, why + "; specialized" + deferred);
  return compile_static(g, background);
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
  backend::Backend& interp = backend::interp_backend();
  for (Alias* a : aliases) {
    try {
      ir::Graph g = ir::build_graph({a->value});
      backend::RunArgs args = run_inputs(g);
      args.graph = &g;
      std::vector<Tensor> out = interp.compile(g)->run(args);
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
  if (exe && exe->declined()) {  // generic code that never came: compile this graph anew
    cache().erase(key);
    exe = nullptr;
  }
  if (exe) {
    M::add("CachedCompile");
  } else {
    std::vector<std::string> sig = ir::input_signature(g);
    exe = compile_miss(g, sig);
    exe->may_fail = may_fail(g);
    cache().insert(CacheEntry{key, exe, std::move(sig)});
  }
  save_ir(g);
  backend::RunArgs args = run_inputs(g);
  args.graph = &g;
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
    note_graph_run();
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

void clear_compile_cache() {
  cache().clear();
  structures().clear();
  clear_bucket_cache();
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
