// The compile worker and the executable that runs a graph on the interpreter until its
// compiled code is ready (background_compile.h).
#include "lazy/background_compile.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/config.h"
#include "core/metrics.h"
#include "core/parallel.h"
#include "core/pool.h"
#include "ops/registry.h"

namespace lt::lazy {

namespace M = metrics_impl;

struct TieredExecutable::Job {
  ir::Graph graph;  // a detached copy, freed by the worker once compiled
  CompileFn fn;
  backend::Tier tier = backend::Tier::Full;
  std::string what;
  std::shared_ptr<backend::Executable> exe;  // written before `done` is set
  int64_t ns = 0;                            // the compile's wall time, written before `done`
  std::atomic<bool> done{false};
  bool failed = false;  // threw: the graph stays on the interpreter (written before `done`)
  std::atomic<bool> dropped{false};  // taken off the queue unstarted: the next run starts it again
};

namespace {

// One worker thread, compiles in the order they were started (a compile runs LLVM on threads of
// its own: jit.cpp). A compile in flight must finish before exit destroys the static state it
// uses (LLVM's and ours). exit() runs the exiting thread's thread_local destructors first,
// then atexit hooks and static destructors in the reverse order of their registration, and a
// compile registers destructors of its own statics as it first uses them. So each thread that
// starts a compile holds a thread_local guard whose destructor drops the queued compiles and
// waits for the one in flight: at exit it runs before any static destructor. (An atexit hook
// registered at the first compile ran after the destructors of LLVM statics that compile created,
// and the compile in flight failed in LLVM at exit.) The atexit hook stays for an exit from a
// thread that never started a compile.
class Worker;
struct ExitGuard {
  bool armed = false;
  ~ExitGuard();
};
thread_local ExitGuard t_exit_guard;

class Worker {
 public:
  void submit(std::shared_ptr<TieredExecutable::Job> job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;  // exiting: the graph stays on the interpreter
    t_exit_guard.armed = true;
    if (!thread_.joinable()) {
      thread_ = std::thread([this] { loop(); });
      std::atexit([] { worker().stop(); });  // stop() runs once; later calls find no thread
      static const bool fork_hooks = [] {
        // A fork copies only the forking thread. The parent first finishes the compile in
        // flight (the worker holds the MLIR context's lock while it compiles), and the child
        // starts with a worker of its own; the dropped compiles start again at their next run.
        // (A fork on the worker itself would wait for itself: it skips the wait.)
        pthread_atfork(
            [] {
              if (!backend::compiling_in_background()) worker().drop_queue_and_wait();
            },
            nullptr, [] { slot() = new Worker(); });  // the parent's copy is left alone
        return true;
      }();
      (void)fork_hooks;
    }
    queue_.push_back(std::move(job));
    cv_.notify_one();
  }

  void wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }

  // Drops the compiles not yet started and waits for the one in flight: what an exit needs.
  void drop_queue_and_wait() {
    std::unique_lock<std::mutex> lock(mu_);
    for (const auto& job : queue_) job->dropped.store(true, std::memory_order_release);
    queue_.clear();
    idle_cv_.wait(lock, [this] { return !busy_; });
  }

  static Worker& worker() { return *slot(); }

 private:
  static Worker*& slot() {
    static Worker* w = new Worker();  // never destroyed: the atexit hook stops its thread
    return w;
  }

 public:
 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      queue_.clear();
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

  void loop() {
    backend::set_compiling_in_background(true);
    pool::share_freed_blocks();  // it frees the graph copies the recording thread allocated
    for (;;) {
      std::shared_ptr<TieredExecutable::Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping
        job = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      {
        // The program's steps run on one thread fewer meanwhile (core/parallel.h).
        struct Lent {
          Lent() { lend_core(true); }
          ~Lent() { lend_core(false); }
        } lent;
        compile(*job);
      }
      job.reset();  // the job's last owner may be us (its executable was evicted)
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      idle_cv_.notify_all();
    }
  }

  static void compile(TieredExecutable::Job& job) {
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<backend::Executable> exe;
    try {
      exe = job.fn(job.graph, job.tier);
    } catch (const std::exception& e) {
      // The synchronous path would have thrown at the barrier; here the graph simply stays on
      // the interpreter, which gives the same results.
      M::add("CompileFallback");
      job.failed = true;
      std::fprintf(stderr,
                   "lazytensor: background compile of graph %s failed (%s); it runs on "
                   "interp\n",
                   ir::hash_hex(job.graph.key).c_str(), e.what());
    }
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    M::add_time("BackgroundCompileTime", ns);
    job.ns = ns;
    if (M::debug_enabled())
      std::fprintf(stderr, "lazytensor: background compile of graph %s (%s) done in %.0f ms%s\n",
                   ir::hash_hex(job.graph.key).c_str(), job.what.c_str(),
                   static_cast<double>(ns) / 1e6,
                   exe          ? ""
                   : job.failed ? ": it failed, the graph stays on interp"
                                : ": no code (declined), the graph compiles specialized code");
    job.graph = ir::Graph{};
    job.exe = std::move(exe);
    job.done.store(true, std::memory_order_release);
  }

  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::shared_ptr<TieredExecutable::Job>> queue_;
  std::thread thread_;
  bool busy_ = false, stopping_ = false;
};

// At exit (or when a thread that started compiles ends): the compile in flight finishes, the
// queued ones are dropped (an executable whose compile was dropped starts it again at its next
// run, when its thread was not the process's last).
ExitGuard::~ExitGuard() {
  if (armed) Worker::worker().drop_queue_and_wait();
}

}  // namespace

namespace {
// When Full code pays for its compile. The Full compile takes ~2.4 times as long as the Quick one
// (t) on one of the program's n cores, so the program loses ~2.4 t / n of its time; Full code
// saves ~20% of the Quick code's time (seqlen layer at S = 128: 23 against 29 ms; the MLP step:
// about nothing). It pays back after ~12 t / n more of Quick runs. A loop that has run E is
// taken to run about E more, and the bet is made at twice the break-even: E = 24 t / n (2 cores:
// 12 t). At 4 t on 2 cores the seqlen loop's Full compile came at 2 of its 4.5 s and cost more
// than it gave back (4.8-5.1 s against 4.2-4.4 s with Quick code throughout).
double default_tier_up() { return 24.0 / std::max(1, num_threads()); }
}  // namespace

TieredExecutable::TieredExecutable(CompileFn fn, bool generic, const ir::Graph* launch_now,
                                   std::string what)
    : fn_(std::move(fn)),
      generic_(generic),
      tiers_(generic && config::choice("LT_QUICK_TIER") == "tiered"),
      first_(tiers_ || (generic && config::choice("LT_QUICK_TIER") == "only")
                 ? backend::Tier::Quick
                 : backend::Tier::Full),
      tier_up_(config::is_set("LT_TIER_UP") ? config::real("LT_TIER_UP") : default_tier_up()),
      what_(std::move(what)) {
  if (launch_now) launch(*launch_now, first_, job_);
}

TieredExecutable::~TieredExecutable() = default;

void TieredExecutable::launch(const ir::Graph& g, backend::Tier tier, std::shared_ptr<Job>& into) {
  M::add("UncachedCompile");
  M::add(generic_ ? "DynamicCompile" : "StaticCompile");
  M::add("BackgroundCompile");
  if (tiers_) M::add(tier == backend::Tier::Quick ? "QuickCompile" : "TierUpCompile");
  into = std::make_shared<Job>();
  into->graph = ir::detached_copy(g);
  into->fn = fn_;
  into->tier = tier;
  into->what = !tiers_ ? what_ : what_ + (tier == backend::Tier::Quick ? ", quick" : ", full");
  Worker::worker().submit(into);
}

std::vector<Tensor> TieredExecutable::run_quick(backend::Executable& e,
                                                const backend::RunArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> out = e.run(args);
  quick_ns_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (static_cast<double>(quick_ns_) >= tier_up_ * static_cast<double>(job_->ns))
    launch(*args.graph, backend::Tier::Full, full_);
  return out;
}

bool TieredExecutable::declined() const {
  return job_ && job_->done.load(std::memory_order_acquire) && !job_->exe && !job_->failed;
}

std::vector<Tensor> TieredExecutable::run(const backend::RunArgs& args) {
  if (job_ && job_->done.load(std::memory_order_acquire)) {
    if (backend::Executable* e = job_->exe.get()) {
      e->may_fail = may_fail;
      if (!tiers_ || job_->tier == backend::Tier::Full) return e->run(args);
      if (!full_) return run_quick(*e, args);
      if (full_->done.load(std::memory_order_acquire) && full_->exe) {
        job_ = std::move(full_);  // the Quick code goes with its job
        full_ = nullptr;
        job_->exe->may_fail = may_fail;
        return job_->exe->run(args);
      }
      // Without Full code the Quick code stays (a failed Full compile is not tried again).
      if (full_->dropped.load(std::memory_order_acquire))
        launch(*args.graph, backend::Tier::Full, full_);
      return e->run(args);
    }
  } else if (job_ && job_->dropped.load(std::memory_order_acquire)) {
    // Its thread ended before the compile started.
    launch(*args.graph, job_->tier, job_);
  } else if (!job_) {
    // A graph that comes back soon is a loop's; one that comes back once an epoch (lt-train's
    // last partial batch, every 938 steps) gains ~1 ms a run from a ~300 ms compile that takes
    // a core from the program meanwhile: in a 2-epoch run it started at the end of epoch 2,
    // never ran, and halved the speed of the evaluation beside it (46 ms against 23).
    const uint64_t now = graph_runs();
    ++runs_;
    if (runs_ >= kRareRuns || (runs_ >= 2 && now - last_run_ <= kRecentRuns))
      launch(*args.graph, first_, job_);
    last_run_ = now;
  }
  M::add("InterpretedRuns");
  if (generic_) return backend::interp_backend().compile(*args.graph)->run(args);
  if (!interp_) interp_ = backend::interp_backend().compile(*args.graph);
  return interp_->run(args);
}

bool compile_in_background(const ir::Graph& g) {
  if (config::choice("LT_COMPILE") != "async") return false;
  backend::Backend& b = backend::active_backend();
  if (std::strcmp(b.name(), "interp") == 0) return false;  // its compile is the plan itself
  for (const ir::Node* n : g.order)
    if (n->kind == ir::NodeKind::Op && op_category(n->op) == OpCategory::Collective) return false;
  static std::unordered_set<const backend::Backend*> prepared;  // under the device lock
  if (prepared.insert(&b).second) b.prepare_background_compiles();
  return true;
}

namespace {
std::atomic<uint64_t> g_graph_runs{0};
}
void note_graph_run() { g_graph_runs.fetch_add(1, std::memory_order_relaxed); }
uint64_t graph_runs() { return g_graph_runs.load(std::memory_order_relaxed); }

void wait_for_background_compiles() { Worker::worker().wait_idle(); }

}  // namespace lt::lazy
