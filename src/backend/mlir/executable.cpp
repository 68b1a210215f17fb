#include "backend/mlir/executable.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/mlir/matmul_codegen.h"
#include "backend/plan_node.h"
#include "core/check.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "eager/executor.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "ops/shape_rules.h"

namespace lt::backend {
namespace {

namespace M = lt::metrics_impl;

// The in-step trial of a generated matmul (below, MlirExecutable::run_library_matmul).
struct MatmulTrial {
  static constexpr int kRuns = 8;  // per side, after one warm-up run each
  std::mutex mu;
  std::atomic<int> decided{-1};  // -1 trying, 0 OpenBLAS, 1 generated
  int runs = 0;
  double best_gen = 1e300, best_lib = 1e300;
};

// The memref descriptors of a cluster call (allocated, aligned, offset, sizes..., strides...
// per argument), packed into one buffer that the calling thread reuses: a call used to build
// one small vector per argument and grow it word by word, ~1 us of allocations for an Adam
// cluster of 7 arguments, more than its [10]-element loop.
class DescPack {
 public:
  void clear() {
    words_.clear();
    starts_.clear();
  }
  void add(const Tensor& t) {
    const int64_t p = reinterpret_cast<int64_t>(t.raw_data_ptr());
    starts_.push_back(words_.size());
    words_.insert(words_.end(), {p, p, 0});
    const IntList sizes = t.sizes(), strides = t.strides();
    words_.insert(words_.end(), sizes.begin(), sizes.end());
    words_.insert(words_.end(), strides.begin(), strides.end());
  }
  void add_words(std::initializer_list<int64_t> w) {
    starts_.push_back(words_.size());
    words_.insert(words_.end(), w);
  }
  // The ciface convention: one pointer per argument to a pointer to its descriptor.
  void** args() {
    ptrs_.resize(starts_.size());
    args_.resize(starts_.size());
    for (size_t i = 0; i < starts_.size(); ++i) {
      ptrs_[i] = words_.data() + starts_[i];
      args_[i] = &ptrs_[i];
    }
    return args_.data();
  }

 private:
  std::vector<int64_t> words_;
  std::vector<size_t> starts_;
  std::vector<void*> ptrs_, args_;
};

class MlirExecutable : public Executable {
 public:
  MlirExecutable(const ir::Graph& g, Schedule s, const PackedLookup& lookup,
                 std::shared_ptr<void> code, const LibraryKernels& kernels,
                 std::shared_ptr<ir::DynamicShapes> dyn)
      : sched_(std::move(s)),
        code_(std::move(code)),
        dyn_(std::move(dyn)),
        nodes_(flatten(g, &roots_)) {
    std::unordered_map<const ir::Node*, int32_t> idx;
    for (size_t i = 0; i < g.order.size(); ++i) idx[g.order[i]] = static_cast<int32_t>(i);
    for (Schedule::Step& st : sched_.steps) {
      Step s;
      s.kind = st.kind;
      if (st.kind == Schedule::Kind::Cluster) {
        const Cluster& c = sched_.clusters[st.cluster];
        for (const ir::Node* n : c.inputs) s.in.push_back(idx.at(n));
        for (const ir::Node* n : c.outputs) s.out.push_back(idx.at(n));
        s.in_place = c.donations;
        s.fn = lookup(cluster_entry(st.cluster));
        ok_ = ok_ && s.fn;
      } else if (st.kind == Schedule::Kind::Alias) {
        s.node = idx.at(st.node);
        s.in.push_back(idx.at(st.source));
      } else {
        s.node = idx.at(st.node);
        auto k = kernels.find(st.node);
        if (k != kernels.end()) {
          s.matmul = k->second;
          // (Shape-generic code's kernels run chunks of rows, which change with the sizes:
          // no in-step trial.)
          // A convolution's trial: its kernels with the close calls against those that won.
          if ((s.matmul.run || (s.matmul.conv && !s.matmul.won_alone)) &&
              matmul_policy() == MatmulPolicy::kMeasure && !dyn_)
            s.trial = std::make_shared<MatmulTrial>();
        }
      }
      if (M::profile_enabled()) {
        s.label = step_label(st, s.matmul.run || s.matmul.conv);
        if (s.matmul.run) s.label_lib = step_label(st, false);  // when OpenBLAS runs it
      }
      steps_.push_back(std::move(s));
    }
    // Each value is released after the step that reads it last (roots are kept), so a step's
    // peak memory is that of its live values, as on eager, not of every intermediate.
    // Donation: the last step reading a buffer (a value or any view of it; a root is read
    // after every step) may write an output into it, if the barrier donated it.
    std::vector<std::pair<int32_t, int32_t>> aliases;  // (value, the value whose buffer it is)
    for (const Step& s : steps_)
      if (s.kind == Schedule::Kind::Alias) aliases.emplace_back(s.node, s.in[0]);
    const std::vector<int32_t> buf_of = buffer_owners(nodes_, aliases);
    std::vector<int32_t> last(nodes_.size(), -1), buf_last(nodes_.size(), -1);
    for (size_t k = 0; k < steps_.size(); ++k) {
      const Step& s = steps_[k];
      const bool listed = s.kind == Schedule::Kind::Cluster || s.kind == Schedule::Kind::Alias;
      for (int32_t i : listed ? s.in : nodes_[s.node].args)
        last[i] = buf_last[buf_of[i]] = static_cast<int32_t>(k);
    }
    for (int32_t r : roots_) last[r] = -1, buf_last[buf_of[r]] = INT32_MAX;
    for (size_t k = 0; k < steps_.size(); ++k) {
      Step& s = steps_[k];
      if (s.kind != Schedule::Kind::Cluster) continue;
      for (auto [i, o] : sched_.clusters[sched_.steps[k].cluster].donations) {
        const int32_t d = s.in[i];
        // Another input of this step that is a view of the same buffer (a reshape computed
        // outside the cluster) is read by a later loop of the cluster: it would see the writes.
        bool aliased = false;
        for (size_t j = 0; j < s.in.size(); ++j)
          aliased = aliased || (static_cast<int32_t>(j) != i && buf_of[s.in[j]] == buf_of[d]);
        if (!aliased && buf_of[d] == d && buf_last[d] == static_cast<int32_t>(k))
          s.donate.emplace_back(i, o);
      }
    }
    // A slice_scatter whose base is an intermediate this step reads last writes its slice
    // into the base's buffer, instead of a copy of the whole base. The LSTM's backward fills
    // its [28, 64, 128] gradient of the stacked outputs one time step at a time: 28 copies of
    // the whole tensor per layer, 18% of its step.
    for (size_t k = 0; k < steps_.size(); ++k) {
      Step& s = steps_[k];
      if (s.kind != Schedule::Kind::Library) continue;
      const PlanNode& n = nodes_[s.node];
      if (n.kind != ir::NodeKind::Op || n.op != OpKind::SliceScatter) continue;
      const int32_t base = n.args[0], src = n.args[1];
      s.scatter_in_place = nodes_[base].kind == ir::NodeKind::Op && buf_of[base] == base &&
                           buf_last[base] == static_cast<int32_t>(k) && buf_of[src] != base;
    }
    // A shape-generic run re-reads the sizes of the values it allocates or runs a kernel for.
    if (dyn_)
      for (const Step& s : steps_) {
        if (s.kind == Schedule::Kind::Cluster)
          sized_.insert(sized_.end(), s.out.begin(), s.out.end());
        else
          sized_.push_back(s.node);
      }
    release_after_.resize(steps_.size());
    for (size_t i = 0; i < last.size(); ++i)
      if (last[i] >= 0) release_after_[last[i]].push_back(static_cast<int32_t>(i));
  }
  bool ok() const { return ok_; }

  std::vector<Tensor> run(const RunArgs& args) override {
    // Compiled loops fork through the OpenMP runtime our kernels use (libomp): give this
    // thread's fork the library's thread count (one fewer while a background compile runs).
    thread_local int omp_threads = 0;
    if (const int want = run_threads(); omp_threads != want)
      omp_set_num_threads(omp_threads = want);
    if (dyn_) take_sizes(args);
    std::vector<Tensor> v(nodes_.size());
    int64_t forwarded = 0, scattered = 0;  // counted once per run: each add takes a lock
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0;  // a labelled step's start (LT_PROFILE)
    for (size_t k = 0; k < steps_.size(); ++k) {
      const Step& s = steps_[k];
      if (!s.label.empty()) t0 = Clock::now();
      bool generated = false;  // a library matmul ran its generated kernel
      if (s.kind == Schedule::Kind::Cluster) {
        run_cluster(s, v, args);
      } else if (s.kind == Schedule::Kind::Alias) {
        v[s.node] = v[s.in[0]];
        ++forwarded;
      } else {
        const PlanNode& n = nodes_[s.node];
        if (n.kind != ir::NodeKind::Op) {
          v[s.node] = leaf_value(n, args);
        } else {
          OpAttrs attrs;
          std::vector<Tensor> in = op_inputs(n, v, &attrs);
          if (s.scatter_in_place && scatter_in_place(n, in, attrs)) {
            v[s.node] = in[0];
            ++scattered;
          } else if (s.matmul.conv) {
            v[s.node] = run_library_conv(s, in, attrs);
          } else if (!s.matmul || !run_library_matmul(s, in, attrs, v, generated)) {
            v[s.node] = eager_execute(n.op, in, attrs, n.meta);
          }
        }
      }
      for (int32_t i : release_after_[k]) v[i] = Tensor();
      if (!s.label.empty())
        M::profile_add(
            s.matmul.run && !generated ? s.label_lib : s.label,
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    }
    if (forwarded) M::add("CopiesForwarded", forwarded);
    if (scattered) M::add("ScatterInPlace", scattered);
    std::vector<Tensor> out;
    for (size_t r = 0; r < roots_.size(); ++r) {
      Tensor t = v[roots_[r]];
      const PlanNode& n = nodes_[roots_[r]];
      bool own = n.kind == ir::NodeKind::Op && !is_view_op(n.op) && t.is_contiguous();
      for (size_t q = 0; q < r && own; ++q) own = out[q].impl()->storage != t.impl()->storage;
      for (size_t d = 0; d < args.data.size(); ++d)  // a donated input's buffer is ours
        own = own && (args.data[d].impl()->storage != t.impl()->storage ||
                      (d < args.donate.size() && args.donate[d]));
      if (!own) {
        Tensor c = make_eager(t.sizes(), t.dtype());
        copy_into(c, t);
        t = c;
      }
      out.push_back(t);
    }
    return out;
  }

 private:
  // A shape-generic run: this graph's sizes and size attributes for the allocations and the
  // library steps (sized_), its symbols for the compiled functions. (Runs hold the device lock:
  // one at a time.)
  void take_sizes(const RunArgs& args) {
    LT_CHECK(args.graph && args.graph->order.size() == nodes_.size(),
             "internal: a shape-generic executable run without its graph");
    for (int32_t i : sized_) {
      const ir::Node* n = args.graph->order[static_cast<size_t>(i)];
      nodes_[i].meta.sizes = n->meta.sizes;
      nodes_[i].attrs.ints = n->attrs.ints;
      for (int k = 0; k < 4; ++k) nodes_[i].attrs.i[k] = n->attrs.i[k];
    }
    dyn_->symbol_values(*args.graph, &symbols_);
  }

  struct Step {
    Schedule::Kind kind;
    int32_t node = -1;
    std::vector<int32_t> in, out;
    void (*fn)(void**) = nullptr;
    std::vector<std::pair<int32_t, int32_t>> donate;  // (input, output): see Cluster::donations
    // All of the cluster's donations (donate: those this plan may make), each input read from
    // its output's buffer.
    std::vector<std::pair<int32_t, int32_t>> in_place;
    bool scatter_in_place = false;  // a slice_scatter that may write into its base
    MatmulKernel matmul;                              // a library matmul by generated code
    std::shared_ptr<MatmulTrial> trial;               // unset: the kernel is taken
    std::string label;  // LT_PROFILE: what the step is (clusters and library ops)
    std::string label_lib;  // a matmul with a generated kernel, on a run that took OpenBLAS
  };

  // LT_PROFILE's name for a step: a cluster's ops (each kind once, in order) and its first
  // output's sizes, or a library op and its sizes (those of the graph compiled: a shape-generic
  // executable's runs take other sizes).
  std::string step_label(const Schedule::Step& st, bool generated) const {
    if (st.kind == Schedule::Kind::Cluster) {
      const Cluster& c = sched_.clusters[st.cluster];
      std::vector<OpKind> kinds;
      for (const ir::Node* n : c.nodes)
        if (n->kind == ir::NodeKind::Op &&
            std::find(kinds.begin(), kinds.end(), n->op) == kinds.end())
          kinds.push_back(n->op);
      std::string out = "cluster(";
      for (size_t i = 0; i < kinds.size(); ++i) {
        if (i == 6) {
          out += ", +" + std::to_string(kinds.size() - 6);
          break;
        }
        out += (i ? ", " : "") + std::string(op_name(kinds[i]));
      }
      return out + ") -> " + (c.outputs.empty() ? "[]" : shape_str(c.outputs[0]->meta.sizes));
    }
    if (st.kind != Schedule::Kind::Library || st.node->kind != ir::NodeKind::Op) return "";
    std::string out = op_name(st.node->op);
    for (uint32_t i = 0; i < st.node->n_operands; ++i)
      out += (i ? " x " : " ") + shape_str(st.node->operands[i]->meta.sizes);
    return out + " -> " + shape_str(st.node->meta.sizes) + (generated ? " (generated)" : "");
  }

  // Step::scatter_in_place: the base's buffer, dense and held by no other storage owner (its
  // value dies here), takes the slice. False: the step runs the kernel.
  static bool scatter_in_place(const PlanNode& n, const std::vector<Tensor>& in,
                               const OpAttrs& attrs) {
    const Tensor& base = in[0];
    if (!base.is_contiguous() || base.storage_offset() != 0 || base.dtype() != n.meta.dtype ||
        base.impl()->storage.use_count() != 1)
      return false;
    copy_into(eager_execute(OpKind::Slice, {base}, attrs, infer_meta(OpKind::Slice, {base}, attrs)),
              in[1]);
    return true;
  }

  // A convolution step with its GEMMs on generated kernels (conv_gemm.cpp) where `gemm` has
  // them, the others on OpenBLAS (eager_execute runs it all on OpenBLAS).
  Tensor run_conv(const Step& s, const ConvGemm* gemm, const std::vector<Tensor>& in,
                  const OpAttrs& attrs) {
    const PlanNode& n = nodes_[s.node];
    Tensor out = make_eager(n.meta.sizes, n.meta.dtype);
    const ConvAttrs c = ConvAttrs::of(attrs);
    if (n.op == OpKind::Conv2d)
      conv2d_kernel(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), c, out, gemm);
    else if (n.op == OpKind::Conv2dGradInput)
      conv2d_grad_input_kernel(in[0], in[1], c, out, gemm);
    else
      conv2d_grad_weight_kernel(in[0], in[1], c, out, gemm);
    return out;
  }

  // A convolution whose kernels include close calls (they lost to OpenBLAS alone, by at most
  // kCloseCall) has the in-step trial of run_library_matmul: its first runs alternate all of
  // its kernels with those that won alone (MatmulKernel::conv_winners), and keep the faster.
  // (The ResNet's 24-channel input gradient, padded to depth 32: 0.057 ms alone against
  // OpenBLAS's 0.046 on depth 24, but 3.6 ms a step against 5.1; AVX-512 host.)
  Tensor run_library_conv(const Step& s, const std::vector<Tensor>& in, const OpAttrs& attrs) {
    MatmulTrial* t = s.trial.get();
    if (!t) return run_conv(s, s.matmul.conv.get(), in, attrs);
    const int d = t->decided.load(std::memory_order_acquire);
    if (d >= 0)
      return run_conv(s, d == 1 ? s.matmul.conv.get() : s.matmul.conv_winners.get(), in, attrs);
    int run;
    {
      std::lock_guard<std::mutex> lock(t->mu);
      run = t->runs++;
    }
    const bool gen = run % 2 == 0;
    const auto t0 = std::chrono::steady_clock::now();
    Tensor out = run_conv(s, gen ? s.matmul.conv.get() : s.matmul.conv_winners.get(), in, attrs);
    record_trial(
        s, t, run, gen,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
        s.matmul.conv_winners ? "the kernels that won alone" : "OpenBLAS");
    return out;
  }

  // One timed run of a trial (`gen`: the generated side); after kRuns of each side past a
  // warm-up run, the decision.
  void record_trial(const Step& s, MatmulTrial* t, int run, bool gen, double ms,
                    const char* other) {
    std::lock_guard<std::mutex> lock(t->mu);
    if (run >= 2) (gen ? t->best_gen : t->best_lib) = std::min(gen ? t->best_gen : t->best_lib, ms);
    if (t->runs >= 2 * (MatmulTrial::kRuns + 1) && t->decided.load() < 0) {
      // A kernel that won alone stays unless OpenBLAS is clearly faster in the step: the trial
      // alternates the two, so each runs while the other's thread pool still spins (OpenBLAS's
      // pthreads, libomp's workers for 1 ms), and a step whose products all run generated code
      // leaves OpenBLAS's pool asleep, which no alternating run sees. (MLP step: one run in six
      // measured both of its kernels at 3x their usual time against OpenBLAS and gave the
      // weight gradient to OpenBLAS by 1.5%: 2176 steps/s against 2600-3245.) A close call
      // (OpenBLAS won alone) needs the kernel to be faster.
      const bool keep = t->best_gen < t->best_lib * (s.matmul.won_alone ? 1.1 : 1.0);
      t->decided.store(keep ? 1 : 0, std::memory_order_release);
      M::add(keep ? "CodegenMatmulTrialKept" : "CodegenMatmulTrialDropped");
      if (M::debug_enabled()) {
        const PlanNode& n = nodes_[s.node];
        std::fprintf(stderr,
                     "lazytensor: %s to %s in its step: generated %.4f ms vs %s %.4f ms (best of "
                     "%d) -> %s\n",
                     op_name(n.op), shape_str(n.meta.sizes).c_str(), t->best_gen, other,
                     t->best_lib, MatmulTrial::kRuns, keep ? "generated kernels" : other);
      }
    }
  }

  // A library matmul with a generated kernel: the kernel where it runs (run_matmul). Unless
  // LT_MLIR_MATMUL=codegen, the kernel won a timing against OpenBLAS in isolation
  // (matmul_choice.cpp), but inside a step the operands come from other steps' caches and the
  // two share the cores with their thread pools, so the first runs of each step alternate the
  // two, timed in place (one warm-up run each, then the best of kRuns), and keep the faster
  // (CodegenMatmulTrialKept / CodegenMatmulTrialDropped; LT_DEBUG prints the times). False:
  // the caller runs OpenBLAS. `generated`: whether the kernel ran (LT_PROFILE's label).
  bool run_library_matmul(const Step& s, const std::vector<Tensor>& in, const OpAttrs& attrs,
                          std::vector<Tensor>& v, bool& generated) {
    MatmulTrial* t = s.trial.get();
    if (!t) return generated = run_matmul(s, in, v);
    const int d = t->decided.load(std::memory_order_acquire);
    if (d >= 0) return generated = d == 1 && run_matmul(s, in, v);
    int run;
    {
      std::lock_guard<std::mutex> lock(t->mu);
      run = t->runs++;
    }
    const bool gen = run % 2 == 0;
    const auto t0 = std::chrono::steady_clock::now();
    bool ran = gen && run_matmul(s, in, v);
    generated = ran;
    if (gen && !ran) {  // the copy rule declined: OpenBLAS runs this step
      t->decided.store(0, std::memory_order_release);
      return false;
    }
    if (!gen) v[s.node] = eager_execute(nodes_[s.node].op, in, attrs, nodes_[s.node].meta);
    record_trial(
        s, t, run, gen,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
        "OpenBLAS");
    return true;
  }

  // A (rows folded from its batch dims) times a 2-d B; the backend checked shapes and dtypes.
  // The kernel takes row-major buffers, so a transposed view is copied first, which OpenBLAS
  // does not need. The copy costs ~0.5 ns per element, the kernel ~0.003 ns per flop: with more
  // than one copied element per 512 flops (a Linear's weight, copied for a batch of fewer than
  // 256 rows) OpenBLAS on the view is faster, and the step declines (MLP step: 900 -> 1020
  // steps/s with the rule; the transformer's 2048-row products keep the kernel).
  // A shape the kernel takes only transposed (MatmulKernel::transposed, 2-d operands) runs as
  // C^T = B^T A^T: the value is the transposed view of the kernel's [m, rows] buffer, which a
  // cluster reading it copies into its layout (a Linear's weight gradient reaches .grad through
  // such a copy anyway), and the copy rule counts B^T's and A^T's copies.
  bool run_matmul(const Step& s, const std::vector<Tensor>& in, std::vector<Tensor>& v) {
    const bool tr = s.matmul.transposed;
    const Tensor x = tr ? permute_view(in[1], {1, 0}) : in[0],
                 y = tr ? permute_view(in[0], {1, 0}) : in[1];
    const int64_t k = x.size(-1), rows = x.numel() / std::max<int64_t>(k, 1), m = y.size(-1);
    const int64_t copied = (x.is_contiguous() ? 0 : rows * k) + (y.is_contiguous() ? 0 : k * m);
    if (copied * 512 > 2 * rows * m * k) return false;
    Tensor a = dense(x), b = dense(y);
    Tensor out =
        tr ? make_eager({rows, m}, kFloat32) : make_eager(nodes_[s.node].meta.sizes, kFloat32);
    s.matmul.run(static_cast<const float*>(a.raw_data_ptr()),
                 static_cast<const float*>(b.raw_data_ptr()),
                 static_cast<float*>(out.raw_data_ptr()), rows, k, m);
    v[s.node] = tr ? permute_view(out, {1, 0}) : out;
    M::add("CodegenMatmulRuns");
    return true;
  }

  void run_cluster(const Step& s, std::vector<Tensor>& v, const RunArgs& run_args) {
    thread_local DescPack descs;  // a cluster's code never runs another cluster
    descs.clear();
    std::vector<Tensor> keep;
    keep.reserve(s.in.size());
    for (int32_t i : s.in) {
      Tensor t = v[i];
      if (!t.is_contiguous() || t.storage_offset() != 0) {  // identity layout expected
        Tensor c = make_eager(t.sizes(), t.dtype());
        copy_into(c, t);
        t = c;
      }
      descs.add(t);
      keep.push_back(std::move(t));
    }
    for (size_t k = 0; k < s.out.size(); ++k) {
      const int32_t o = s.out[k];
      for (auto [i, ok] : s.donate) {
        const PlanNode& d = nodes_[s.in[i]];
        const Tensor& t = keep[i];
        if (ok == static_cast<int32_t>(k) &&  // d is a data leaf (Cluster::donations)
            static_cast<size_t>(d.slot) < run_args.donate.size() && run_args.donate[d.slot] &&
            t.impl()->storage == v[s.in[i]].impl()->storage && t.storage_offset() == 0) {
          v[o] = t;  // written in place: the input's last reader, element by element
          M::add("DonatedInPlace");
          break;
        }
      }
      if (!v[o].defined()) v[o] = make_eager(nodes_[o].meta.sizes, nodes_[o].meta.dtype);
      descs.add(v[o]);
    }
    // The function reads these inputs from their outputs' buffers: where not donated, the
    // input goes there first.
    for (auto [i, ok] : s.in_place) {
      Tensor& o = v[s.out[static_cast<size_t>(ok)]];
      if (o.impl()->storage != keep[static_cast<size_t>(i)].impl()->storage) {
        copy_into(o, keep[static_cast<size_t>(i)]);
        M::add("InPlaceCopies");
      }
    }
    if (dyn_) {
      const int64_t p = reinterpret_cast<int64_t>(symbols_.data());
      descs.add_words({p, p, 0, static_cast<int64_t>(symbols_.size()), 1});
    }
    s.fn(descs.args());
  }

  Schedule sched_;
  std::shared_ptr<void> code_;
  std::shared_ptr<ir::DynamicShapes> dyn_;  // shape-generic: see take_sizes()
  std::vector<int64_t> symbols_;
  std::vector<int32_t> sized_;  // shape-generic: the values take_sizes() updates
  std::vector<int32_t> roots_;  // before nodes_: flatten() fills it in the initializer list
  std::vector<PlanNode> nodes_;
  std::vector<Step> steps_;
  std::vector<std::vector<int32_t>> release_after_;  // per step: values read for the last time
  bool ok_ = true;
};

}  // namespace

std::string cluster_function(int k) { return "c" + std::to_string(k); }
std::string cluster_entry(int k) { return "_mlir__mlir_ciface_" + cluster_function(k); }

std::unique_ptr<Executable> make_mlir_executable(const ir::Graph& g, Schedule s,
                                                 const PackedLookup& lookup,
                                                 std::shared_ptr<void> code,
                                                 const LibraryKernels& kernels,
                                                 std::shared_ptr<ir::DynamicShapes> dyn) {
  auto exe = std::make_unique<MlirExecutable>(g, std::move(s), lookup, std::move(code), kernels,
                                              std::move(dyn));
  if (!exe->ok()) return nullptr;
  return exe;
}

}  // namespace lt::backend
