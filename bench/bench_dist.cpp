// Data-parallel training with DistributedDataParallel over lt::dist (Gloo, loopback), on every
// system (naming contract in bench_util.h):
//   ddp_mlp_step_1proc: MLP 784-256-10, global batch 64, cross_entropy, backward, DDP gradient
//     sync (a no-op in a world of one), SGD: steps/s of one process;
//   ddp_mlp_step_2proc: the same global step by 2 processes, 32 samples each: steps/s;
//   ddp_allreduce_2proc: the gradient all-reduce of that step (one 25 MB bucket holds all
//     203,530 parameters' gradients): ms per step, from the AllReduceTime timer (on the lazy
//     device the AllReduce runs inside the step's graph).
// Each 2-process benchmark starts rank 1 as this program again (LT_BENCH_DIST_RANK1 set), which
// runs the same fixed number of steps; the iteration counts are fixed so that both ranks issue
// the same collectives. Both ranks share the machine's cores.
// Run: ./build/bench/bench_dist
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "bench_util.h"

namespace {

using ltb::Sys;

constexpr int kGlobalBatch = 64, kWarmup = 5, kSteps = 200;

struct DdpMlp {
  lt::nn::Sequential m{lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10)};
  std::shared_ptr<lt::nn::parallel::DistributedDataParallelImpl> ddp;
  std::unique_ptr<lt::optim::SGD> opt;
  lt::Tensor x, y;
  explicit DdpMlp(lt::Device d) {
    m->to(d);
    ddp = lt::nn::parallel::DistributedDataParallel(m).ptr();
    opt = std::make_unique<lt::optim::SGD>(m->parameters(), lt::optim::SGDOptions(0.01));
    const int64_t per = kGlobalBatch / lt::dist::world_size();
    x = lt::randn({per, 784}).to(d);
    y = lt::randint(0, 10, {per}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    lt::cross_entropy(ddp->forward(x), y).backward();
    ddp->synchronize_gradients();
    opt->step();  // on lazy: ends with mark_step, which runs the AllReduce
  }
};

lt::dist::InitOptions rank_options(int rank, int world, int port) {
  lt::dist::InitOptions o;
  o.rank = rank;
  o.world_size = world;
  o.master_addr = "127.0.0.1";
  o.master_port = port;
  return o;
}

// Rank 1 of a 2-process benchmark: the same steps as rank 0, then exit.
int rank1_main(const char* spec) {
  int sys = 0, port = 0;
  if (std::sscanf(spec, "%d:%d", &sys, &port) != 2) return 2;
  lt::set_num_threads(1);
  const lt::Device d = ltb::enter(static_cast<Sys>(sys));
  lt::dist::ProcessGroupGuard pg(rank_options(1, 2, port));
  lt::manual_seed(1);
  DdpMlp model(d);
  for (int i = 0; i < kWarmup + kSteps; ++i) model.step();
  lt::wait_device_ops();
  lt::dist::barrier();
  return 0;
}

pid_t spawn_rank1(Sys s, int port) {
  const std::string spec = std::to_string(static_cast<int>(s)) + ":" + std::to_string(port);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("LT_BENCH_DIST_RANK1", spec.c_str(), 1);
    char* argv[] = {const_cast<char*>("bench_dist"), nullptr};
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  return pid;
}

void ddp_step(benchmark::State& st, Sys s, int world, bool report_allreduce) {
  const lt::Device d = ltb::enter(s);
  const int port = lt::dist::free_port();
  pid_t peer = world > 1 ? spawn_rank1(s, port) : -1;
  const int threads = lt::get_num_threads();
  if (world > 1) lt::set_num_threads(1);  // two ranks on the machine's cores
  {
    lt::dist::ProcessGroupGuard pg(rank_options(0, world, port));
    lt::manual_seed(0);
    DdpMlp model(d);
    for (int i = 0; i < kWarmup; ++i) model.step();
    lt::wait_device_ops();
    lt::metrics::reset();
    for (auto _ : st) model.step();
    lt::wait_device_ops();
    if (report_allreduce) {
      st.counters["value"] = lt::metrics::timer_ms("AllReduceTime") / kSteps;
      st.SetLabel("ms");
    } else {
      ltb::rate_value(st, "steps/s");
    }
    st.counters["allreduce_ms_per_step"] = lt::metrics::timer_ms("AllReduceTime") / kSteps;
    lt::dist::barrier();
  }
  lt::set_num_threads(threads);
  if (peer > 0) {
    int status = 0;
    waitpid(peer, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) st.SkipWithError("rank 1 failed");
  }
}

const bool registered = [] {
  auto fixed = [](benchmark::internal::Benchmark* b) { b->Iterations(kSteps); };
  ltb::add(
      "ddp_mlp_step_1proc", ltb::kAll,
      [](benchmark::State& st, Sys s) { ddp_step(st, s, 1, false); }, fixed);
  ltb::add(
      "ddp_mlp_step_2proc", ltb::kAll,
      [](benchmark::State& st, Sys s) { ddp_step(st, s, 2, false); }, fixed);
  ltb::add(
      "ddp_allreduce_2proc", ltb::kAll,
      [](benchmark::State& st, Sys s) { ddp_step(st, s, 2, true); }, fixed);
  return true;
}();

}  // namespace

int main(int argc, char** argv) {
  if (const char* spec = std::getenv("LT_BENCH_DIST_RANK1")) return rank1_main(spec);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
