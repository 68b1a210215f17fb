// Compiling in the background (LT_COMPILE=async): a graph that missed the compile cache runs on
// the interpreter (the eager kernels, as fast as eager) while a worker thread compiles it, and
// switches to the compiled code at the first run after the compile is done. A graph of a new
// structure is compiled from its second run on, so a graph seen once (an evaluation's last
// partial batch, a one-off computation) is never compiled at all; a second run that comes more
// than kRecentRuns graph runs after the first (once an epoch: a training loop's last partial
// batch) waits for the graph's kRareRuns-th run.
//
// Shape-generic code comes in two tiers (backend::Tier): Quick code first, in about half the
// compile, then Full code once the Quick code has run LT_TIER_UP times as long as its own
// compile took (default 24 / threads: 12 on 2 cores; a loop that has run that long is likely to
// run longer: the JVM's rule for tiered compiles, by time rather than by count). A loop whose sizes
// change every step and that ends within a second (200 MLP steps of random batch sizes) ran on the
// interpreter all along while the one full compile took a core from it. LT_QUICK_TIER=off keeps the
// one full compile; =only makes Quick code only. Static code is always Full: it serves the steady
// state.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "backend/backend.h"

namespace lt::lazy {

// What the worker runs, on a detached copy of the graph (ir::detached_copy). nullptr: no code
// (a backend that declined shape-generic code).
using CompileFn =
    std::function<std::shared_ptr<backend::Executable>(const ir::Graph&, backend::Tier)>;

class TieredExecutable : public backend::Executable {
 public:
  // generic: the executable serves every graph the structure's guard admits, so the
  // interpreter's plan is made per run; launch_now: compile at once (else from the second run).
  TieredExecutable(CompileFn fn, bool generic, const ir::Graph* launch_now, std::string what);
  static constexpr uint64_t kRecentRuns = 100;
  static constexpr int kRareRuns = 4;
  ~TieredExecutable() override;
  std::vector<Tensor> run(const backend::RunArgs& args) override;
  // The compile finished without code: the caller should forget this executable.
  bool declined() const override;

  struct Job;

 private:
  void launch(const ir::Graph& g, backend::Tier tier, std::shared_ptr<Job>& into);
  // The Quick code's run, timed; starts the Full compile when it has run long enough.
  std::vector<Tensor> run_quick(backend::Executable& e, const backend::RunArgs& args);
  CompileFn fn_;
  bool generic_;
  bool tiers_;      // generic_ and LT_QUICK_TIER=tiered: job_ compiles Quick code, full_ Full code
  backend::Tier first_;  // job_'s tier: Quick with tiers_ or LT_QUICK_TIER=only (generic code)
  double tier_up_;       // LT_TIER_UP
  std::string what_;  // for LT_DEBUG
  int runs_ = 0;
  uint64_t last_run_ = 0;  // graph_runs() at this graph's last run
  std::shared_ptr<Job> job_;
  std::shared_ptr<Job> full_;                    // the Full compile after Quick code (tiers_)
  int64_t quick_ns_ = 0;                         // time the Quick code has run
  std::unique_ptr<backend::Executable> interp_;  // static graphs: the plan, made once
};

// LT_COMPILE=async, a compiling backend, and no collective in g (every rank must run the
// same schedule of collectives: one rank on interp and another on compiled code could order
// two all_reduces differently).
bool compile_in_background(const ir::Graph& g);

// Counts a graph run (the executor, before each run); graph_runs(): the count so far.
void note_graph_run();
uint64_t graph_runs();

// Returns when every compile started so far has finished (lt::wait_for_compiles).
void wait_for_background_compiles();

}  // namespace lt::lazy
