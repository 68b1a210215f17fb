// lt::dist and DistributedDataParallel with real processes on loopback: the collectives on cpu
// and lazy, DDP over 2 ranks against one process with the same global batch, and the failure
// model (a peer that never arrives, a peer that dies) ending in DistError, never a hang.
//
// Each multi-process test forks its ranks from a parent that does no tensor work itself (so no
// thread pool exists to be lost in the fork); the parent only waits, with a deadline after which
// it kills the ranks and fails, so a hang is reported as such. A rank reports failure through
// its exit status and stderr.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dist/tcp_store.h"
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

// ------------------------------------------------------------------ the rendezvous store

// The TCP store against clients that misbehave: a real server on 127.0.0.1 (port 0: the kernel
// picks a free one, no race with other tests), raw sockets playing the hostile client, and
// well-behaved TcpStore clients that must keep being served promptly.
namespace store = lt::dist::detail;
using ms = std::chrono::milliseconds;

constexpr const char* kToken = "5f0c8e1d2a7b49c3a1e6d0f2b8c4e9a7";

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string wire_u32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string wire_str(const std::string& s) { return wire_u32(static_cast<uint32_t>(s.size())) + s; }
std::string hello(const std::string& token) { return "H" + wire_str(token); }
std::string set_request(const std::string& k, const std::string& v) {
  return "S" + wire_str(k) + wire_str(v);
}
std::string get_request(const std::string& k) { return "G" + wire_str(k); }

// Reads exactly n bytes from fd before `deadline`; false on EOF, error or timeout.
bool read_exact(int fd, char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    const auto left = std::chrono::duration_cast<ms>(deadline - Clock::now()).count();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// A raw loopback TCP connection, for sending the server whatever bytes a test wants.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Sends the right token and reads the server's one-byte acknowledgement.
  bool authenticate(const std::string& token = kToken) {
    char ack = 0;
    return send(hello(token)) && read_exact(fd_, &ack, 1, Clock::now() + ms(2000)) && ack == 1;
  }
  // True when the server closes (EOF or reset) within `wait`; what it sent first goes to *got.
  bool closed_within(ms wait, std::string* got = nullptr) {
    const auto deadline = Clock::now() + wait;
    char buf[64 * 1024];
    for (;;) {
      const auto left = std::chrono::duration_cast<ms>(deadline - Clock::now()).count();
      pollfd pfd{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) return false;
      ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
      if (r <= 0) return true;
      if (got) got->append(buf, static_cast<size_t>(r));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::unique_ptr<store::TcpStoreServer> serve(store::StoreLimits limits = {},
                                             const std::string& token = kToken) {
  return std::make_unique<store::TcpStoreServer>("127.0.0.1", 0, token, limits);
}

std::unique_ptr<store::TcpStore> connect_client(const store::TcpStoreServer& s,
                                                const std::string& token = kToken,
                                                ms timeout = ms(3000)) {
  return std::make_unique<store::TcpStore>("127.0.0.1", s.port(), timeout, token);
}

std::vector<char> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<char>& v) { return {v.begin(), v.end()}; }

// A well-behaved client's round trips on its own connection, timed.
double timed_round_trips(store::TcpStore& c, int n, const std::string& tag) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    const std::string k = tag + std::to_string(i);
    c.set(k, bytes("v" + k));
    EXPECT_EQ(text(c.get(k)), "v" + k);
  }
  return since(t0);
}

long resident_mib() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE) / (1024 * 1024);
}

TEST(DistStore, CorrectTokenServesSetGetWaitAdd) {
  auto server = serve();
  auto c = connect_client(*server);
  c->set("a", bytes("1"));
  EXPECT_EQ(text(c->get("a")), "1");
  c->set("a", bytes("22"));  // overwrite
  EXPECT_EQ(text(c->get("a")), "22");
  c->wait({"a"}, ms(500));
  EXPECT_THROW(c->wait({"a", "missing"}, ms(100)), lt::Error);
  EXPECT_EQ(c->add("n", 5), 5);
  EXPECT_EQ(connect_client(*server)->add("n", -2), 3);  // a second connection sees the same store
  c->set("empty", {});
  EXPECT_TRUE(c->get("empty").empty());

  auto open = serve({}, "");  // LT_DIST_TOKEN unset on both sides: still works
  auto oc = connect_client(*open, "");
  oc->set("k", bytes("v"));
  EXPECT_EQ(text(oc->get("k")), "v");
}

TEST(DistStore, WrongTokenFailsNamingTheVariableAndIsNotServed) {
  auto server = serve();
  for (const std::string& bad : {std::string("not-the-token"), std::string()}) {
    const auto t0 = Clock::now();
    try {
      store::TcpStore c("127.0.0.1", server->port(), ms(3000), bad);
      ADD_FAILURE() << "a client with token '" << bad << "' was accepted";
    } catch (const lt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("LT_DIST_TOKEN"), std::string::npos) << e.what();
    }
    EXPECT_LT(since(t0), 2.0) << "the refusal must come at once, not after the timeout";
  }
  // A raw client pipelining requests behind a wrong token gets no byte back, and sets nothing.
  RawClient raw(server->port());
  ASSERT_TRUE(raw.connected());
  raw.send(hello("wrong") + set_request("stolen", "x") + get_request("stolen"));
  std::string got;
  EXPECT_TRUE(raw.closed_within(ms(2000), &got));
  EXPECT_TRUE(got.empty()) << got.size() << " bytes answered to a wrong token";
  // Skipping the handshake is the same as a wrong token.
  RawClient skip(server->port());
  skip.send(set_request("stolen", "x"));
  got.clear();
  EXPECT_TRUE(skip.closed_within(ms(2000), &got));
  EXPECT_TRUE(got.empty());
  EXPECT_THROW(connect_client(*server)->wait({"stolen"}, ms(200)), lt::Error);  // never stored
}

TEST(DistStore, GarbageClosesOnlyThatConnection) {
  auto server = serve();
  auto good = connect_client(*server);  // connected first: must survive what follows
  good->set("a", bytes("1"));
  RawClient unauth(server->port());
  unauth.send("\xff\x00garbage that is not a handshake");
  EXPECT_TRUE(unauth.closed_within(ms(2000)));
  RawClient authed(server->port());
  ASSERT_TRUE(authed.authenticate());
  authed.send("Zjunk");  // an unknown op after a good handshake
  EXPECT_TRUE(authed.closed_within(ms(2000)));
  RawClient twice(server->port());
  ASSERT_TRUE(twice.authenticate());
  twice.send(hello(kToken));  // a second handshake is not a request
  EXPECT_TRUE(twice.closed_within(ms(2000)));
  EXPECT_EQ(text(good->get("a")), "1");
  EXPECT_LT(timed_round_trips(*good, 10, "g"), 3.0);
}

TEST(DistStore, HugeAnnouncedLengthsAreRefusedWithoutAllocating) {
  auto server = serve();
  const long before = resident_mib();
  const std::vector<std::pair<bool, std::string>> attacks = {
      {false, "H" + wire_u32(0xffffffffu)},                 // a 4 GiB token
      {true, "S" + wire_u32(0xffffffffu)},                  // a 4 GiB key
      {true, "S" + wire_str("k") + wire_u32(0xffffffffu)},  // a 4 GiB value
      {true, "S" + wire_str("k") + wire_u32(store::kMaxValueBytes + 1)},
      {true, "G" + wire_u32(store::kMaxKeyBytes + 1)},
      {true, "C" + wire_u32(0xffffffffu)},  // 4 billion keys to check
  };
  for (size_t i = 0; i < attacks.size(); ++i) {
    RawClient raw(server->port());
    ASSERT_TRUE(raw.connected());
    if (attacks[i].first) ASSERT_TRUE(raw.authenticate());
    const auto t0 = Clock::now();
    raw.send(attacks[i].second);
    // Closed on the length alone: the server does not wait for the announced bytes.
    EXPECT_TRUE(raw.closed_within(ms(2000))) << "attack " << i;
    EXPECT_LT(since(t0), 1.0) << "attack " << i;
  }
  EXPECT_LT(resident_mib() - before, 256) << "the server allocated for an announced length";
  auto good = connect_client(*server);
  EXPECT_LT(timed_round_trips(*good, 10, "h"), 3.0);
}

TEST(DistStore, StalledHalfRequestDoesNotDelayOthers) {
  auto server = serve();  // the default 5 s deadlines: the stalled clients outlive this test
  RawClient half(server->port());
  ASSERT_TRUE(half.authenticate());
  half.send("S" + wire_u32(10) + "abc");  // 3 of 10 key bytes, then nothing
  RawClient half_hello(server->port());
  half_hello.send("H" + wire_u32(32) + "0123");
  RawClient silent(server->port());  // connects and never speaks
  ASSERT_TRUE(half.connected() && half_hello.connected() && silent.connected());
  auto good = connect_client(*server);
  EXPECT_LT(timed_round_trips(*good, 50, "s"), 3.0);
  EXPECT_FALSE(half.closed_within(ms(10)));  // still there: the others were never waiting on it
}

TEST(DistStore, StalledConnectionsAreDroppedAfterTheirDeadline) {
  store::StoreLimits lim;
  lim.handshake_timeout = ms(300);
  lim.io_timeout = ms(300);
  auto server = serve(lim);
  auto idle = connect_client(*server);  // authenticated and idle: must not be dropped
  RawClient half(server->port());
  ASSERT_TRUE(half.authenticate());
  const auto t0 = Clock::now();
  half.send("S" + wire_u32(10) + "abc");
  RawClient silent(server->port());
  EXPECT_TRUE(half.closed_within(ms(3000)));
  EXPECT_GE(since(t0), 0.25);  // by the deadline, not at once: a partial request is legal
  EXPECT_TRUE(silent.closed_within(ms(3000)));
  EXPECT_LT(timed_round_trips(*idle, 5, "i"), 3.0);
}

TEST(DistStore, ClientThatNeverReadsDoesNotBlockTheServer) {
  store::StoreLimits lim;
  lim.io_timeout = ms(500);
  auto server = serve(lim);
  auto good = connect_client(*server);
  const size_t big = 8 << 20;
  good->set("big", std::vector<char>(big, 'x'));
  RawClient greedy(server->port());
  ASSERT_TRUE(greedy.authenticate());
  std::string requests;
  for (int i = 0; i < 32; ++i) requests += get_request("big");
  greedy.send(requests);  // 256 MiB of replies asked for, none read
  EXPECT_LT(timed_round_trips(*good, 20, "r"), 3.0);
  std::this_thread::sleep_for(ms(1500));  // past the write deadline
  std::string got;
  EXPECT_TRUE(greedy.closed_within(ms(5000), &got));
  EXPECT_LT(got.size(), 32 * (big + 5)) << "the stalled reader was never dropped";
}

TEST(DistStore, CapsCloseTheConnectionButTheServerKeepsServing) {
  store::StoreLimits lim;
  lim.max_keys = 3;
  lim.max_store_bytes = 10000;
  auto server = serve(lim);
  auto a = connect_client(*server);
  for (const char* k : {"k1", "k2", "k3"}) a->set(k, bytes("v"));
  EXPECT_THROW(a->set("k4", bytes("v")), lt::Error);  // a fourth key
  EXPECT_THROW(a->get("k1"), lt::Error);              // that connection is gone
  auto b = connect_client(*server);
  EXPECT_EQ(text(b->get("k1")), "v");
  b->set("k1", bytes("overwrite"));  // not a new key: allowed
  EXPECT_THROW(b->add("k5", 1), lt::Error);
  auto c = connect_client(*server);
  EXPECT_THROW(c->set("k2", std::vector<char>(20000, 'x')), lt::Error);  // over the byte cap
  auto d = connect_client(*server);
  EXPECT_EQ(text(d->get("k2")), "v");  // unchanged
  EXPECT_EQ(text(d->get("k1")), "overwrite");
  // The client refuses oversize keys and values itself, keeping its connection.
  try {
    d->set(std::string(store::kMaxKeyBytes + 1, 'k'), bytes("v"));
    ADD_FAILURE() << "an oversize key was sent";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cap"), std::string::npos) << e.what();
  }
  EXPECT_THROW(d->set("k", std::vector<char>(store::kMaxValueBytes + 1)), lt::Error);
  EXPECT_EQ(text(d->get("k3")), "v");
}

// A fake server that completes the handshake and a wait, then announces a 4 GiB value.
TEST(DistStore, ClientRejectsAnOversizeReply) {
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(lfd, 1), 0);
  ASSERT_EQ(::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string key = "k";
  std::thread fake([&] {
    const auto deadline = Clock::now() + ms(5000);
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    int fd = ::accept(lfd, nullptr, nullptr);
    std::string buf(64, '\0');
    const std::string replies[] = {"\x01", "\x01", "\x01" + wire_u32(0xfffffff0u)};
    const size_t sizes[] = {hello(kToken).size(), 1 + 4 + wire_str(key).size(),
                            get_request(key).size()};
    for (int i = 0; i < 3; ++i) {
      if (!read_exact(fd, buf.data(), sizes[i], deadline)) break;
      ::send(fd, replies[i].data(), replies[i].size(), MSG_NOSIGNAL);
    }
    char c;
    read_exact(fd, &c, 1, deadline);  // until the client hangs up
    ::close(fd);
  });
  const long before = resident_mib();
  try {
    store::TcpStore c("127.0.0.1", ntohs(a.sin_port), ms(3000), kToken);
    c.get(key);
    ADD_FAILURE() << "a 4 GiB reply was accepted";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cap"), std::string::npos) << e.what();
  }
  EXPECT_LT(resident_mib() - before, 256);
  fake.join();
  ::close(lfd);
}

// A non-loopback IPv4 address of an up interface of this host; "" when there is none.
std::string non_loopback_address() {
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) return "";
  std::string out;
  for (ifaddrs* i = ifs; i && out.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
        (i->ifa_flags & IFF_LOOPBACK))
      continue;
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    out = buf;
  }
  ::freeifaddrs(ifs);
  return out;
}

TEST(DistStore, BindsLoopbackForALocalMasterAddr) {
  EXPECT_EQ(store::store_bind_address("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(store::store_bind_address("127.0.0.5"), "127.0.0.5");
  const std::string lh = store::store_bind_address("localhost");
  EXPECT_TRUE(lh.rfind("127.", 0) == 0 || lh == "::1") << lh;
  EXPECT_EQ(store::store_bind_address("192.0.2.1"), "0.0.0.0");  // TEST-NET-1: not this host

  store::TcpStoreServer server(store::store_bind_address("127.0.0.1"), 0, kToken);
  EXPECT_EQ(server.address(), "127.0.0.1");  // getsockname of the listening socket
  const std::string other = non_loopback_address();
  if (other.empty()) {
    std::printf("(no non-loopback IPv4 address on this host: reachability part skipped)\n");
    return;
  }
  EXPECT_EQ(store::store_bind_address(other), other);
  // The loopback-bound store is not reachable through the host's other address.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(server.port()));
  ::inet_pton(AF_INET, other.c_str(), &a.sin_addr);
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << other;
  ::close(fd);
}

// The local address (hex, as /proc/net/tcp writes it) of the socket listening on `port`.
std::string listening_address(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, local, remote, state;
    f >> sl >> local >> remote >> state;
    if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want)
      return local.substr(0, local.size() - 5);
  }
  return "";
}

TEST(Dist, ProcessGroupServesTheStoreOnLoopbackWithAToken) {
  const int port = lt::dist::free_port();
  expect_all_ok(run_ranks(2, [&](int r) {
    setenv("LT_DIST_TOKEN", kToken, 1);
    dist::ProcessGroupGuard pg(options(r, 2, port));
    if (r == 0) {
      const std::string a = listening_address(port);
      RANK_CHECK(a == "0100007F", "the store listens on " << (a.empty() ? "?" : a));
    }
    dist::barrier();
    return 0;
  }));
}

TEST(Dist, MismatchedTokensFailTheRendezvous) {
  const int port = lt::dist::free_port();
  expect_all_ok(run_ranks(2, [&](int r) {
    setenv("LT_DIST_TOKEN", r == 0 ? kToken : "another-token", 1);
    const auto t0 = Clock::now();
    try {
      dist::init_process_group(options(r, 2, port, /*timeout_s=*/2));
    } catch (const dist::DistError& e) {
      const std::string m = e.what();
      // Rank 1 is refused at once; rank 0 waits for it until the timeout.
      RANK_CHECK(r == 0 || m.find("LT_DIST_TOKEN") != std::string::npos, m);
      RANK_CHECK(since(t0) < 6, "after " << since(t0) << " s");
      return 0;
    }
    RANK_CHECK(false, "rank " << r << " joined with a mismatched token");
  }));
}

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
