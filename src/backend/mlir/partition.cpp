#include "backend/mlir/partition.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <queue>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/config.h"
#include "core/shape.h"
#include "ops/registry.h"

namespace lt::backend {

namespace {
constexpr size_t kMaxClusterNodes = 512;

// The movement ops the lowering writes as index maps or copies.
bool is_view_like(OpKind op) { return op_category(op) == OpCategory::Movement && is_fused_op(op); }
}  // namespace

namespace {
std::atomic<bool> g_unlowered[kNumOps];
}  // namespace

void mark_unlowered(OpKind op) { g_unlowered[static_cast<int>(op)].store(true); }
bool is_unlowered(OpKind op) {
  return g_unlowered[static_cast<int>(op)].load(std::memory_order_relaxed);
}

// LT_MLIR_DISABLE_LOWERING=op1,op2 (registry names): a test-only switch that makes the lowering
// turn those ops down, as if their case were missing.
bool lowering_disabled(OpKind op) {
  static const std::vector<bool> off = [] {
    std::vector<bool> v(kNumOps, false);
    std::stringstream ss(config::text("LT_MLIR_DISABLE_LOWERING").value_or(""));
    for (std::string name; std::getline(ss, name, ',');)
      for (int k = 0; k < kNumOps; ++k)
        if (name == op_name(static_cast<OpKind>(k))) v[k] = true;
    return v;
  }();
  return off[static_cast<size_t>(op)];
}

bool is_fusible(const ir::Node* n) {
  // The table's Fused column (argmax/argmin, contractions, indexing, creation and collectives
  // are library steps), less the ops found unlowered in this process.
  if (n->kind != ir::NodeKind::Op || !is_fused_op(n->op) || is_unlowered(n->op)) return false;
  // Empty tensors: nothing to compute, and linalg rejects maps over empty loop ranges.
  if (numel_of(n->meta.sizes) == 0) return false;
  for (uint32_t i = 0; i < n->n_operands; ++i)
    if (numel_of(n->operands[i]->meta.sizes) == 0) return false;
  if (n->op == OpKind::Pow) return is_floating(n->meta.compute);  // integer pow: the kernel
  if (op_category(n->op) == OpCategory::Reduction) {
    // Reductions fuse with their elementwise producers and consumers (LT_MLIR_FUSE_REDUCTIONS=0
    // makes them library steps, for comparison).
    static const bool fuse = config::flag("LT_MLIR_FUSE_REDUCTIONS");
    return fuse;
  }
  return true;
}

namespace {
void find_donations(
    Cluster& c, const std::unordered_map<const ir::Node*, std::vector<const ir::Node*>>& users) {
  std::unordered_set<const ir::Node*> in(c.nodes.begin(), c.nodes.end());
  auto users_in = [&](const ir::Node* n) {
    std::vector<const ir::Node*> u;
    auto it = users.find(n);
    if (it != users.end())
      for (const ir::Node* x : it->second)
        if (in.count(x)) u.push_back(x);
    return u;
  };
  std::vector<std::pair<int32_t, int32_t>> candidates;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const ir::Node* d = c.inputs[i];
    if (d->kind != ir::NodeKind::Data) continue;
    std::vector<const ir::Node*> next = users_in(d);
    if (next.size() != 1) continue;  // one reader in the cluster (users are distinct)
    const ir::Node* cur = next[0];
    while (is_elementwise(cur->op) && cur->meta.sizes == d->meta.sizes) {
      next = users_in(cur);
      auto o = std::find(c.outputs.begin(), c.outputs.end(), cur);
      if (o != c.outputs.end()) {
        const size_t k = static_cast<size_t>(o - c.outputs.begin());
        // Readers of the output inside the cluster are fine: they read new values (the
        // output has two uses, so elementwise fusion never recomputes it from the input).
        if (cur->meta.dtype == d->meta.dtype)
          candidates.emplace_back(static_cast<int32_t>(i), static_cast<int32_t>(k));
        break;
      }
      if (next.size() != 1) break;
      cur = next[0];
    }
  }
  // One donation per output. With several candidates, the one reached through first operands
  // from the output: an in-place op records its self first (w.sub_(g * lr) is
  // sub(w, mul(g, lr))), and that buffer is the one the barrier can usually donate (g is
  // usually held elsewhere); else the first candidate.
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    const int32_t o = static_cast<int32_t>(k);
    int32_t pick = -1;
    const ir::Node* cur = c.outputs[k];
    while (cur->kind == ir::NodeKind::Op && cur->n_operands > 0) cur = cur->operands[0].get();
    for (auto [i, oo] : candidates)
      if (oo == o && (pick < 0 || c.inputs[static_cast<size_t>(i)] == cur)) pick = i;
    if (pick >= 0) c.donations.emplace_back(pick, o);
  }
}
}  // namespace

Schedule partition(const ir::Graph& g) {
  Schedule s;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users;
  std::unordered_map<const ir::Node*, int> pending;
  for (const ir::Node* n : g.order) {
    std::unordered_set<const ir::Node*> seen;
    int deps = 0;
    for (uint32_t i = 0; i < n->n_operands; ++i) {
      const ir::Node* c = n->operands[i].get();
      if (!seen.insert(c).second) continue;
      users[c].push_back(n);
      if (c->kind == ir::NodeKind::Op) ++deps;
    }
    pending[n] = deps;
  }
  // Ready ops run in recording order (the smallest position in g.order first): consecutive
  // fusible ops form a cluster. Hoisting every ready fusible op ahead of library ops fused a
  // little more but kept intermediates alive longer: a TransformerEncoderLayer training step
  // peaked at 2.5x the eager step's tensor memory.
  std::unordered_map<const ir::Node*, size_t> pos;
  for (size_t i = 0; i < g.order.size(); ++i) pos[g.order[i]] = i;
  // Except: a fusible op computed from leaves only (directly or through other such ops) waits
  // until its first user's turn. The recording order is a depth-first walk from the roots, so
  // Adam's m * beta1 (its state times a scalar) came first, before the forward pass, and formed
  // a cluster of its own: one more loop over the parameter, a stored and reloaded temporary,
  // where it could fuse with the moment update after the gradient's matmul. Its inputs live
  // across the step anyway, so waiting never lengthens a buffer's life; it shortens its own.
  std::unordered_map<const ir::Node*, bool> leaf_fed;
  for (const ir::Node* n : g.order) {
    bool f = n->kind == ir::NodeKind::Op && is_fusible(n);
    for (uint32_t i = 0; f && i < n->n_operands; ++i) {
      const ir::Node* o = n->operands[i].get();
      f = o->kind != ir::NodeKind::Op || leaf_fed[o];
    }
    leaf_fed[n] = f;
  }
  std::unordered_map<const ir::Node*, size_t> turn;
  for (size_t i = g.order.size(); i-- > 0;) {
    const ir::Node* n = g.order[i];
    size_t t = i;
    if (leaf_fed[n] && !users[n].empty()) {
      t = SIZE_MAX;
      for (const ir::Node* u : users[n]) t = std::min(t, turn[u]);
    }
    turn[n] = t;
  }
  auto later = [&](const ir::Node* a, const ir::Node* b) {
    const size_t ta = turn[a], tb = turn[b];
    return ta != tb ? ta > tb : pos[a] > pos[b];
  };
  std::priority_queue<const ir::Node*, std::vector<const ir::Node*>, decltype(later)> ready(later);
  auto release = [&](const ir::Node* n) {
    for (const ir::Node* u : users[n])
      if (--pending[u] == 0) ready.push(u);
  };
  for (const ir::Node* n : g.order) {
    if (n->kind != ir::NodeKind::Op) {
      s.steps.push_back({Schedule::Kind::Leaf, n, -1});
    } else if (pending[n] == 0) {
      ready.push(n);
    }
  }
  // Leaves' users were counted only for op operands, so nothing to release for them.
  std::vector<const ir::Node*> cur;
  auto emit = [&](std::vector<const ir::Node*> nodes) {
    bool computes = std::any_of(nodes.begin(), nodes.end(),
                                [](const ir::Node* n) { return !is_view_like(n->op); });
    if (!computes) {  // views alone: cheaper as eager views than as a compiled copy
      for (const ir::Node* n : nodes) s.steps.push_back({Schedule::Kind::Library, n, -1});
    } else {
      s.steps.push_back({Schedule::Kind::Cluster, nullptr, static_cast<int>(s.clusters.size())});
      s.clusters.push_back(Cluster{std::move(nodes), {}, {}, {}});
    }
  };
  // A run of fusible ops becomes one cluster per connected part (ops joined by a value one
  // computes and the other reads). Parts that share no value share no loop either, and as
  // functions of their own they are what other graphs have in common: a partial batch's Adam
  // update of a weight (reading the weight's gradient) is the full batch's, while the bias's
  // update beside it reduces over the batch; in one function, the whole had to be recompiled.
  auto close = [&] {
    if (cur.empty()) return;
    std::unordered_map<const ir::Node*, size_t> index;
    for (size_t i = 0; i < cur.size(); ++i) index[cur[i]] = i;
    std::vector<size_t> parent(cur.size());  // union-find over the run's positions
    for (size_t i = 0; i < cur.size(); ++i) parent[i] = i;
    auto root = [&](size_t i) {
      while (parent[i] != i) i = parent[i] = parent[parent[i]];
      return i;
    };
    for (size_t i = 0; i < cur.size(); ++i)
      for (uint32_t k = 0; k < cur[i]->n_operands; ++k) {
        auto it = index.find(cur[i]->operands[k].get());
        if (it != index.end()) parent[root(i)] = root(it->second);
      }
    std::vector<std::vector<const ir::Node*>> parts;  // in order of their first op
    std::vector<size_t> part(cur.size(), SIZE_MAX);   // a root's part
    for (size_t i = 0; i < cur.size(); ++i) {
      size_t& p = part[root(i)];
      if (p == SIZE_MAX) p = parts.size(), parts.emplace_back();
      parts[p].push_back(cur[i]);
    }
    for (std::vector<const ir::Node*>& p : parts) emit(std::move(p));
    cur.clear();
  };
  // A view read only by library steps (directly or through more such views) stays a view: in
  // a cluster it would be a cluster output, i.e. a copy. An MLP step's permute(relu(h)) fed
  // the weight-gradient matmul a [256, 64] copy that eager never makes (BLAS reads the
  // transposed view), which put the lazy step's peak memory above eager's.
  std::unordered_set<const ir::Node*> roots;
  for (const ir::NodePtr& r : g.roots) roots.insert(r.get());
  std::unordered_map<const ir::Node*, bool> library_view_memo;
  std::function<bool(const ir::Node*)> library_view = [&](const ir::Node* n) {
    auto it = library_view_memo.find(n);
    if (it != library_view_memo.end()) return it->second;
    bool r = is_view_op(n->op) && !roots.count(n) && !users[n].empty();
    for (const ir::Node* u : users[n]) r = r && (!is_fusible(u) || library_view(u));
    return library_view_memo[n] = r;
  };
  // Copies that forward a library step's result (Kind::Alias), and the permutes between,
  // which no step computes.
  std::unordered_map<const ir::Node*, const ir::Node*> forward;
  std::unordered_set<const ir::Node*> skipped;
  for (const ir::Node* c : g.order) {
    if (c->kind != ir::NodeKind::Op || c->op != OpKind::Copy) continue;
    const size_t rank = c->meta.sizes.size();
    std::vector<int64_t> perm(rank);
    for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(k);
    std::vector<const ir::Node*> chain;
    const ir::Node* x = c->operands[0].get();
    auto only_user = [&](const ir::Node* v, const ir::Node* u) {
      auto it = users.find(v);
      return it != users.end() && it->second.size() == 1 && it->second[0] == u;
    };
    const ir::Node* user = c;
    bool ok = true;
    while (ok && x->kind == ir::NodeKind::Op && x->op == OpKind::Permute) {
      ok = only_user(x, user) && !roots.count(x) && x->attrs.ints.size() == rank;
      for (size_t k = 0; ok && k < rank; ++k) perm[k] = x->attrs.ints[static_cast<size_t>(perm[k])];
      chain.push_back(x);
      user = x;
      x = x->operands[0].get();
    }
    for (size_t k = 0; ok && k < rank; ++k) ok = perm[k] == static_cast<int64_t>(k);
    ok = ok && x->kind == ir::NodeKind::Op && !is_fusible(x) && !is_view_op(x->op) &&
         !roots.count(x) && only_user(x, user) && x->meta.sizes == c->meta.sizes &&
         x->meta.dtype == c->meta.dtype;
    if (!ok) continue;
    forward[c] = x;
    skipped.insert(chain.begin(), chain.end());
  }
  while (!ready.empty()) {
    const ir::Node* n = ready.top();
    ready.pop();
    if (skipped.count(n)) {
      release(n);
      continue;
    }
    if (auto f = forward.find(n); f != forward.end()) {
      // No cluster closes: the source, a library step, ran before every open cluster, and the
      // copy's readers run after this step.
      s.steps.push_back({Schedule::Kind::Alias, n, -1, f->second});
      release(n);
      continue;
    }
    if (is_fusible(n) && !library_view(n)) {
      cur.push_back(n);
      release(n);
      if (cur.size() >= kMaxClusterNodes) close();  // bounds one function's compile time
      continue;
    }
    close();
    s.steps.push_back({Schedule::Kind::Library, n, -1});
    release(n);
  }
  close();
  // Inputs and outputs of each cluster.
  for (Cluster& c : s.clusters) {
    std::unordered_set<const ir::Node*> in(c.nodes.begin(), c.nodes.end()), seen;
    for (const ir::Node* n : c.nodes) {
      for (uint32_t i = 0; i < n->n_operands; ++i) {
        const ir::Node* o = n->operands[i].get();
        if (in.count(o) || o->kind == ir::NodeKind::Const || !seen.insert(o).second) continue;
        c.inputs.push_back(o);
      }
      bool out = roots.count(n) > 0;
      for (const ir::Node* u : users[n]) out = out || !in.count(u);
      if (out) c.outputs.push_back(n);
    }
    find_donations(c, users);
  }
  return s;
}

}  // namespace lt::backend
