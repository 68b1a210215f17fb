// lt::dist and DistributedDataParallel with real processes on loopback: the collectives on cpu
// and lazy, DDP over 2 ranks against one process with the same global batch, and the failure
// model (a peer that never arrives, a peer that dies) ending in DistError, never a hang.
//
// Each multi-process test forks its ranks from a parent that does no tensor work itself (so no
// thread pool exists to be lost in the fork); the parent only waits, with a deadline after which
// it kills the ranks and fails, so a hang is reported as such. A rank reports failure through
// its exit status and stderr.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lt/lt.h"

namespace fs = std::filesystem;
namespace dist = lt::dist;
using Clock = std::chrono::steady_clock;
using lt::Tensor;

namespace {

const lt::Device kCpu("cpu");
const lt::Device kLazy("lazy");

dist::InitOptions options(int rank, int world, int port, double timeout_s = 10) {
  dist::InitOptions o;
  o.rank = rank;
  o.world_size = world;
  o.master_addr = "127.0.0.1";
  o.master_port = port;
  o.timeout_s = timeout_s;
  return o;
}

// Thrown in a rank to fail it with a message (gtest assertions do not cross the fork).
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define RANK_CHECK(cond, msg)                                             \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::ostringstream os_;                                             \
      os_ << __FILE__ << ":" << __LINE__ << ": " << #cond << ": " << msg; \
      throw RankFailure(os_.str());                                       \
    }                                                                     \
  } while (0)

struct RankResult {
  int code = -1;        // exit status, -1 when killed
  bool killed = false;  // by the deadline
  double seconds = 0;
};

// Forks `n` ranks running body(rank); waits at most `deadline_s`, then kills what is left.
std::vector<RankResult> run_ranks(int n, const std::function<int(int)>& body,
                                  double deadline_s = 20) {
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  const auto t0 = Clock::now();
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int code = 1;
      try {
        code = body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "[rank %d] %s\n", r, e.what());
      }
      std::fflush(nullptr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<RankResult> res(n);
  int left = n;
  while (left > 0) {
    for (int r = 0; r < n; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        res[r].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        res[r].seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        pids[r] = 0;
        --left;
      }
    }
    if (left > 0 && std::chrono::duration<double>(Clock::now() - t0).count() > deadline_s) {
      for (int r = 0; r < n; ++r)
        if (pids[r] > 0) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          res[r].killed = true;
          pids[r] = 0;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return res;
}

void expect_all_ok(const std::vector<RankResult>& res) {
  for (size_t r = 0; r < res.size(); ++r) {
    EXPECT_FALSE(res[r].killed) << "rank " << r << " hung and was killed";
    EXPECT_EQ(res[r].code, 0) << "rank " << r << " failed (see its stderr above)";
  }
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  return t.to(kCpu).contiguous().to_vector<T>();
}

// ------------------------------------------------------------------ collectives

int collectives_body(int rank, lt::Device dev, int port) {
  dist::ProcessGroupGuard pg(options(rank, 2, port));
  RANK_CHECK(dist::rank() == rank && dist::world_size() == 2, "rank/world");
  const float r = static_cast<float>(rank);

  Tensor s = lt::tensor(std::vector<float>{1 + r, 2, 3 * (1 + r)}, {3}).to(dev);
  dist::all_reduce(s, dist::ReduceOp::Sum);
  RANK_CHECK(values<float>(s) == (std::vector<float>{3, 4, 9}), "sum");

  Tensor m = lt::tensor(std::vector<double>{r, 10.0}, {2}).to(dev);
  dist::all_reduce(m, dist::ReduceOp::Mean);
  RANK_CHECK(values<double>(m) == (std::vector<double>{0.5, 10.0}), "mean");

  Tensor x = lt::tensor(std::vector<int64_t>{rank * 5 + 1, -rank}, {2}).to(dev);
  dist::all_reduce(x, dist::ReduceOp::Max);
  RANK_CHECK(values<int64_t>(x) == (std::vector<int64_t>{6, 0}), "max");

  // Through a non-contiguous view: the base sees the result.
  Tensor base = lt::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).to(dev);
  Tensor t = base.t();
  dist::all_reduce(t);
  RANK_CHECK(values<float>(base) == (std::vector<float>{2, 4, 6, 8, 10, 12}), "view");

  std::vector<Tensor> bucket = {lt::full({2, 2}, 1 + r).to(dev), lt::full({3}, 2 * r).to(dev)};
  dist::all_reduce_coalesced(bucket, dist::ReduceOp::Mean);
  RANK_CHECK(values<float>(bucket[0]) == std::vector<float>(4, 1.5f), "coalesced 0");
  RANK_CHECK(values<float>(bucket[1]) == std::vector<float>(3, 1.0f), "coalesced 1");

  // Large enough for the cached ring (>= 64 KiB), twice: set up, then reused.
  for (int i = 0; i < 2; ++i) {
    Tensor big = lt::full({40000}, 1 + r + i).to(dev);
    dist::all_reduce(big, i ? dist::ReduceOp::Max : dist::ReduceOp::Mean);
    RANK_CHECK(values<float>(big) == std::vector<float>(40000, i ? 3.0f : 1.5f), "big " << i);
  }

  Tensor b = lt::tensor(std::vector<float>{r, r}, {2}).to(dev);
  dist::broadcast(b, 1);
  RANK_CHECK(values<float>(b) == (std::vector<float>{1, 1}), "broadcast");

  std::vector<Tensor> g;
  dist::all_gather(g, lt::tensor(std::vector<float>{r, 10 * r}, {2}).to(dev));
  RANK_CHECK(g.size() == 2, "all_gather size");
  RANK_CHECK(values<float>(g[0]) == (std::vector<float>{0, 0}), "all_gather 0");
  RANK_CHECK(values<float>(g[1]) == (std::vector<float>{1, 10}), "all_gather 1");
  RANK_CHECK(g[1].device() == dev, "all_gather device");

  dist::barrier();
  return 0;
}

TEST(Dist, CollectivesOnCpu) {
  const int port = lt::dist::free_port();
  expect_all_ok(run_ranks(2, [&](int r) {
    // Histories differ (rank 0 had a group before): the rendezvous must not depend on them.
    if (r == 0) dist::ProcessGroupGuard before(options(0, 1, -1));
    return collectives_body(r, kCpu, port);
  }));
}

TEST(Dist, CollectivesOnLazy) {
  int ports[2] = {lt::dist::free_port(), lt::dist::free_port()};
  while (ports[1] == ports[0]) ports[1] = lt::dist::free_port();
  expect_all_ok(run_ranks(2, [&](int r) {
    int i = 0;
    for (const char* backend : {"mlir", "interp"}) {
      lt::set_lazy_backend(backend);
      collectives_body(r, kLazy, ports[i++]);  // a fresh rendezvous per backend
    }
    return 0;
  }));
}

// The rendezvous through a shared directory instead of MASTER_ADDR/MASTER_PORT.
TEST(Dist, FileStoreRendezvous) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("lt_dist_fs_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  expect_all_ok(run_ranks(2, [&](int r) {
    dist::InitOptions o = options(r, 2, -1);
    o.store_path = dir.string();
    dist::ProcessGroupGuard pg(o);
    Tensor t = lt::full({4}, static_cast<float>(r + 1));
    dist::all_reduce(t);
    RANK_CHECK(values<float>(t) == std::vector<float>(4, 3.0f), "sum");
    return 0;
  }));
  fs::remove_all(dir);
}

// ------------------------------------------------------------------ the IR op (one process)

TEST(Dist, LazyAllReduceIsOneNonDifferentiableIrOp) {
  dist::ProcessGroupGuard pg(options(0, 1, -1));  // a world of one: all_reduce is the identity
  Tensor w = lt::ones({3}, lt::TensorOptions(kLazy)).requires_grad_();
  Tensor y = w * 2;
  dist::all_reduce(y, dist::ReduceOp::Mean);
  const std::string ir = lt::debug::ir_text({y});
  EXPECT_NE(ir.find("all_reduce("), std::string::npos) << ir;
  EXPECT_NE(ir.find("op=mean"), std::string::npos) << ir;
  EXPECT_FALSE(y.requires_grad());  // like torch.distributed: the result has no history
  EXPECT_EQ(values<float>(y), std::vector<float>(3, 2.0f));
  Tensor i = lt::ones({2}, lt::TensorOptions(kLazy).dtype(lt::kInt64));
  EXPECT_THROW(dist::all_reduce(i, dist::ReduceOp::Mean), lt::Error);  // at record time
  Tensor bl = lt::ones({2}, lt::TensorOptions(kCpu).dtype(lt::kBool));
  EXPECT_THROW(dist::all_reduce(bl), lt::Error);
}

TEST(Dist, CollectiveBeforeInitThrows) {
  ASSERT_FALSE(dist::is_initialized());
  Tensor t = lt::ones({2});
  EXPECT_THROW(dist::all_reduce(t), lt::Error);
  EXPECT_EQ(dist::world_size(), 1);
  EXPECT_EQ(dist::rank(), 0);
}

// ------------------------------------------------------------------ DDP equivalence

// Parameters of a small MLP after k SGD steps on a global batch of 8: by one process, or by
// `world` ranks with DDP, each on its 8/world rows.
std::vector<float> train_params(lt::Device dev, int rank, int world, int k) {
  lt::manual_seed(3);
  lt::nn::Sequential net(lt::nn::Linear(12, 16), lt::nn::ReLU(), lt::nn::Linear(16, 4));
  if (rank != 0)  // rank 1 starts from other weights: DDP's broadcast must fix that
    for (Tensor p : net->parameters()) {
      lt::NoGradGuard g;
      p.add_(1.0);
    }
  net->to(dev);
  std::shared_ptr<lt::nn::parallel::DistributedDataParallelImpl> ddp;
  if (world > 1) ddp = lt::nn::parallel::DistributedDataParallel(net).ptr();
  lt::optim::SGD opt(net->parameters(), lt::optim::SGDOptions(0.1).momentum(0.9));
  lt::manual_seed(11);
  Tensor x_all = lt::randn({k, 8, 12}), y_all = lt::randint(0, 4, {k, 8});
  const int64_t per = 8 / world;
  for (int s = 0; s < k; ++s) {
    Tensor x = x_all.select(0, s).narrow(0, rank * per, per).to(dev);
    Tensor y = y_all.select(0, s).narrow(0, rank * per, per).to(dev);
    opt.zero_grad();
    Tensor loss = lt::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    if (ddp) ddp->synchronize_gradients();
    opt.step();
  }
  std::vector<float> out;
  for (const Tensor& p : net->parameters()) {
    std::vector<float> v = values<float>(p.detach());
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Equal up to float32 re-association: a rank's gradient sums 4 rows and the mean of two ranks
// adds the halves, where one process sums all 8 rows in its own order. Each step so differs in
// the last bits (~1e-7 relative), and 5 steps of SGD at lr 0.1 keep that well under 1e-5.
void ddp_matches_single_process(lt::Device dev) {
  const int port = lt::dist::free_port(), k = 5;
  expect_all_ok(run_ranks(2, [&](int r) {
    std::vector<float> single = train_params(dev, 0, 1, k);
    dist::ProcessGroupGuard pg(options(r, 2, port));
    std::vector<float> multi = train_params(dev, r, 2, k);
    RANK_CHECK(single.size() == multi.size(), "sizes");
    double worst = 0;
    for (size_t i = 0; i < single.size(); ++i) {
      double d = std::fabs(single[i] - multi[i]) / std::max(1e-3, std::fabs(double(single[i])));
      worst = std::max(worst, d);
    }
    RANK_CHECK(worst <= 1e-5, "DDP parameters differ from one process by " << worst);
    // The gradient buckets went through the AllReduce op (a library step on lazy, never the
    // fallback path): one per step here, the whole MLP fits one bucket.
    RANK_CHECK(lt::metrics::counter("AllReduceTime") >= k,
               "AllReduce ran " << lt::metrics::counter("AllReduceTime") << " times");
    RANK_CHECK(lt::metrics::counter("fallback::all_reduce") == 0, "all_reduce fell back");
    // And the ranks agree with each other exactly: all hold the same all-reduced gradients.
    std::vector<Tensor> g;
    dist::all_gather(g, lt::tensor(multi, {static_cast<int64_t>(multi.size())}));
    RANK_CHECK(values<float>(g[0]) == values<float>(g[1]), "ranks disagree");
    return 0;
  }));
}

TEST(Dist, DdpMatchesSingleProcessOnCpu) { ddp_matches_single_process(kCpu); }
TEST(Dist, DdpMatchesSingleProcessOnLazy) { ddp_matches_single_process(kLazy); }

TEST(Dist, DdpNeedsAProcessGroup) {
  lt::nn::Linear fc(2, 2);
  EXPECT_THROW(lt::nn::parallel::DistributedDataParallel ddp(fc), lt::Error);
}

// ------------------------------------------------------------------ failures

TEST(Dist, MissingPeerTimesOut) {
  const int port = lt::dist::free_port();
  auto res = run_ranks(1, [&](int) {  // rank 0 of 2; rank 1 never comes
    const auto t0 = Clock::now();
    try {
      dist::init_process_group(options(0, 2, port, /*timeout_s=*/3));
    } catch (const dist::DistError& e) {
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      RANK_CHECK(s >= 2.5 && s < 10, "DistError after " << s << " s");
      RANK_CHECK(std::string(e.what()).find("rendezvous") != std::string::npos, e.what());
      return 0;
    }
    RANK_CHECK(false, "init_process_group returned without the peer");
  });
  expect_all_ok(res);
}

TEST(Dist, MissingPeerTimesOutViaEnv) {
  const int port = lt::dist::free_port();
  auto res = run_ranks(1, [&](int) {
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    setenv("LT_DIST_TIMEOUT", "3", 1);
    try {
      dist::init_process_group();  // rank 1: rank 0 (the store) never comes
    } catch (const dist::DistError&) {
      return 0;
    }
    RANK_CHECK(false, "no DistError");
  });
  expect_all_ok(res);
}

// Rank 1 dies after the rendezvous: rank 0's next collectives throw DistError (at once, as the
// connection closes, or at the latest after the timeout), on cpu and through a lazy graph. `n`
// floats: small ones take gloo::allreduce, large ones the cached chunked ring.
void dead_peer_is_an_error(int64_t n) {
  const int port = lt::dist::free_port();
  auto res = run_ranks(2, [&](int r) {
    dist::init_process_group(options(r, 2, port, /*timeout_s=*/5));
    if (r == 1) _exit(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int errors = 0;
    Tensor x = lt::ones({n});
    try {
      dist::all_reduce(x);
    } catch (const dist::DistError&) {
      ++errors;
    }
    Tensor l = lt::ones({10}, lt::TensorOptions(kLazy));
    try {
      dist::all_reduce(l);
      l.sum().item<float>();  // the graph runs the AllReduce here
    } catch (const dist::DistError&) {
      ++errors;
    }
    RANK_CHECK(errors == 2, "errors " << errors);
    dist::destroy_process_group();
    return 0;
  });
  EXPECT_FALSE(res[0].killed) << "rank 0 hung";
  EXPECT_EQ(res[0].code, 0);
  EXPECT_LT(res[0].seconds, 15);
}

TEST(Dist, DeadPeerIsAnErrorNotAHang) { dead_peer_is_an_error(1000); }
TEST(Dist, DeadPeerIsAnErrorNotAHangInTheRing) { dead_peer_is_an_error(100000); }

// ------------------------------------------------------------------ lt-train --nproc

std::string tool_path() {
  return (fs::read_symlink("/proc/self/exe").parent_path() / ".." / "tools" / "lt-train")
      .lexically_normal()
      .string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ToolResult {
  int code = -1;
  std::string out, err;
};

// Runs lt-train (no shell) with extra environment entries, output captured in a per-pid dir.
ToolResult run_tool(const std::vector<std::string>& args,
                    const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("lt_dist_tool_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();
  const std::string exe = tool_path();
  std::vector<std::string> all = {exe, "--out-dir", dir.string()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      _exit(127);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  ToolResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

class DistTool : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(tool_path())) GTEST_SKIP() << "lt-train not built at " << tool_path();
  }
};

TEST_F(DistTool, NprocTrainsWithTwoProcesses) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "no Fashion-MNIST";
  ToolResult r = run_tool({"--nproc", "2", "--max-steps", "20", "--epochs", "1", "--quiet",
                           "--optim", "sgd", "--data-dir", "/usr/share/datasets/fashion-mnist"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 processes (32 samples each per step)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("done: 20 steps"), std::string::npos) << r.out;
  size_t n = 0;  // only rank 0 reports
  for (size_t p = r.out.find("test accuracy"); p != std::string::npos;
       p = r.out.find("test accuracy", p + 1))
    ++n;
  EXPECT_EQ(n, 2u) << r.out;  // the epoch line and the final line
}

TEST_F(DistTool, NprocRejectsAnIndivisibleBatch) {
  ToolResult r = run_tool({"--nproc", "3", "--batch-size", "64"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not divisible"), std::string::npos) << r.err;
}

TEST_F(DistTool, NprocFailsWhenItsWorkersFail) {
  ToolResult r = run_tool({"--nproc", "2", "--data-dir", "/nonexistent"});
  EXPECT_NE(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("lt-train: rank "), std::string::npos) << r.err;
}

// One rank started by hand (the multi-machine way) whose peer never comes: an error, not a hang.
TEST_F(DistTool, RankWithoutPeerFailsWithinTheTimeout) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "no Fashion-MNIST";
  const auto t0 = Clock::now();
  ToolResult r = run_tool({"--max-steps", "5", "--data-dir", "/usr/share/datasets/fashion-mnist"},
                          {{"RANK", "0"},
                           {"WORLD_SIZE", "2"},
                           {"MASTER_ADDR", "127.0.0.1"},
                           {"MASTER_PORT", std::to_string(lt::dist::free_port())},
                           {"LT_DIST_TIMEOUT", "2"}});
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("rendezvous"), std::string::npos) << r.err;
  EXPECT_LT(s, 15);
}

}  // namespace
