// The Gloo process group behind lt::dist (see include/lt/dist.h).
// Gloo headers are included only under src/dist/. Link: -lgloo (CMake: find_package(Gloo
// CONFIG) -> imported target `gloo`, /usr/lib/libgloo.so.0.5.0, headers in /usr/include).
#include <arpa/inet.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "api/dispatch.h"  // inplace(): AllReduce is a registry op on every device
#include "core/check.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/tensor_impl.h"  // bump_version after writing through the data pointer
#include "dist/tcp_store.h"
#include "lt/dist.h"
#include "lt/ops.h"
#include "ops/attrs.h"
#include "ops/dist_hooks.h"

namespace lt::dist {
namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);
using ms = std::chrono::milliseconds;

std::string env_str(const char* name) { return config::text(name).value_or(""); }
int env_int(const char* name) { return static_cast<int>(config::integer(name)); }

// The local IPv4/IPv6 address the kernel would use to reach host:port (a UDP "connect" sends
// nothing). Used as the default Gloo listening address, so multi-machine runs work by only
// changing MASTER_ADDR, and loopback runs stay on 127.0.0.1.
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_DGRAM;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return "";
  std::string out;
  int fd = ::socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char buf[INET6_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      if (ss.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
      else
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
      out = buf;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

struct ProcessGroup {
  int rank = 0;
  int size = 1;
  ms timeout{60000};
  std::unique_ptr<detail::TcpStoreServer> server;  // rank 0, TCP rendezvous only
  std::unique_ptr<gloo::rendezvous::Store> store;
  std::unique_ptr<gloo::rendezvous::PrefixStore> prefixed;
  std::shared_ptr<gloo::rendezvous::Context> ctx;  // null when size == 1
  std::mutex mu;                                   // one collective at a time
  uint32_t next_tag = 0;
  std::string broken;  // non-empty after a communication failure
  // Large floating all-reduces (DDP's gradient buckets) run Gloo's chunked ring, set up once per
  // (dtype, size, op) on a staging buffer: measured 2.5x faster than gloo::allreduce, which
  // sets up its buffers on every call. Every rank meets the same sizes in the same order, so
  // the rings (whose construction takes slots from the context) are created identically.
  struct Ring {
    std::vector<char> staging;
    std::unique_ptr<gloo::Algorithm> algo;
  };
  std::map<std::tuple<int, size_t, int>, Ring> rings;
};

constexpr size_t kRingMinBytes = 64 * 1024;
constexpr size_t kMaxRings = 8;

std::mutex g_mu;
std::unique_ptr<ProcessGroup> g_pg;

ProcessGroup& group(const char* what) {
  if (!g_pg) {
    // Like torch: a collective before init is an error (a world of one must be asked for).
    throw lt::Error(std::string("lt::dist::") + what +
                    ": the process group is not initialized (call lt::dist::init_process_group)");
  }
  return *g_pg;
}

[[noreturn]] void rethrow_as_dist_error(ProcessGroup& pg, const char* what,
                                        const std::string& cause,
                                        std::chrono::steady_clock::time_point t0) {
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ostringstream m;
  m << "lt::dist::" << what << " failed on rank " << pg.rank << " of " << pg.size << " after "
    << waited << " s (timeout " << pg.timeout.count() / 1000.0 << " s): " << cause
    << ". A peer process died, stalled, or issued different collectives; the process group is "
       "now unusable (destroy_process_group, then re-init).";
  pg.broken = m.str();
  throw DistError(m.str());
}

// Runs one collective under the group's lock, turning Gloo's exceptions into DistError.
template <typename F>
void run(const char* what, F&& f) {
  ProcessGroup& pg = group(what);
  std::lock_guard<std::mutex> g(pg.mu);
  if (!pg.broken.empty()) throw DistError("lt::dist::" + std::string(what) + ": " + pg.broken);
  auto t0 = std::chrono::steady_clock::now();
  try {
    f(pg, pg.next_tag++);
  } catch (const gloo::IoException& e) {
    // A peer closed or timed out: "[.../pair.cc:598] Connection closed by peer ...".
    rethrow_as_dist_error(pg, what, e.what(), t0);
  } catch (const gloo::Exception& e) {
    rethrow_as_dist_error(pg, what, e.what(), t0);
  } catch (const gloo::EnforceNotMet& e) {  // gloo's assertions (e.g. size mismatch)
    rethrow_as_dist_error(pg, what, e.what(), t0);
  }
}

void check_cpu_tensor(const Tensor& t, const char* what) {
  if (!t.defined()) throw lt::Error(std::string("lt::dist::") + what + ": undefined tensor");
  if (!t.device().is_cpu())
    throw lt::Error(std::string("lt::dist::") + what + ": expected a cpu tensor, got " +
                    t.device().str());
}

template <typename T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      return static_cast<ReduceFn>(&gloo::sum<T>);
    case ReduceOp::Max:
      return static_cast<ReduceFn>(&gloo::max<T>);
    case ReduceOp::Min:
      return static_cast<ReduceFn>(&gloo::min<T>);
    case ReduceOp::Product:
      return static_cast<ReduceFn>(&gloo::product<T>);
  }
  return nullptr;
}

template <typename T>
const gloo::ReductionFunction<T>* ring_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
      return gloo::ReductionFunction<T>::max;
    case ReduceOp::Min:
      return gloo::ReductionFunction<T>::min;
    case ReduceOp::Product:
      return gloo::ReductionFunction<T>::product;
    default:
      return gloo::ReductionFunction<T>::sum;
  }
}

// The cached chunked ring for floating buffers of at least kRingMinBytes; false otherwise.
template <typename T>
bool ring_allreduce(ProcessGroup& pg, T* data, size_t n, ReduceOp op) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    const size_t bytes = n * sizeof(T);
    if (bytes < kRingMinBytes || n > static_cast<size_t>(INT32_MAX)) return false;
    const int code = op == ReduceOp::Mean ? static_cast<int>(ReduceOp::Sum) : static_cast<int>(op);
    auto key = std::make_tuple(static_cast<int>(sizeof(T)), n, code);
    auto it = pg.rings.find(key);
    if (it == pg.rings.end()) {
      if (pg.rings.size() >= kMaxRings) pg.rings.clear();
      ProcessGroup::Ring r;
      r.staging.resize(bytes);
      T* buf = reinterpret_cast<T*>(r.staging.data());
      r.algo = std::make_unique<gloo::AllreduceRingChunked<T>>(pg.ctx, std::vector<T*>{buf},
                                                               static_cast<int>(n), ring_fn<T>(op));
      it = pg.rings.emplace(key, std::move(r)).first;
    }
    std::memcpy(it->second.staging.data(), data, bytes);
    it->second.algo->run();
    std::memcpy(data, it->second.staging.data(), bytes);
    return true;
  }
}

template <typename T>
void allreduce_buffer(ProcessGroup& pg, uint32_t tag, T* data, size_t n, ReduceOp op) {
  if (pg.size > 1 && n > 0 && !ring_allreduce(pg, data, n, op)) {
    gloo::AllreduceOptions o(pg.ctx);
    o.setOutput(data, n);  // in place: output doubles as input
    o.setReduceFunction(reduce_fn<T>(op));
    o.setTag(tag);
    o.setTimeout(pg.timeout);
    gloo::allreduce(o);
  }
  if (op == ReduceOp::Mean) {
    if constexpr (std::is_floating_point_v<T>) {
      const T inv = T(1) / T(pg.size);
      for (size_t i = 0; i < n; ++i) data[i] *= inv;
    }
  }
}

// Calls f.template operator()<T>() for the tensor's dtype.
template <typename F>
void dispatch_dtype(Dtype d, const char* what, F&& f) {
  switch (d) {
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      return f.template operator()<double>();
    case kInt32:
      return f.template operator()<int32_t>();
    case kInt64:
      return f.template operator()<int64_t>();
    default:
      throw lt::Error(std::string("lt::dist::") + what + ": unsupported dtype " + dtype_name(d));
  }
}

// A contiguous tensor to communicate through and, when `t` is not contiguous, the copy back.
struct Contig {
  Tensor buf;
  bool copy_back;
};
Contig contiguous_view(const Tensor& t) {
  if (t.is_contiguous()) return {t, false};
  return {t.contiguous(), true};
}

void finish_in_place(Tensor& t, const Contig& c) {
  if (c.copy_back)
    t.copy_(c.buf);  // bumps the version itself
  else
    t.impl()->bump_version();  // we wrote through the data pointer
}

static_assert(static_cast<int64_t>(ReduceOp::Sum) == static_cast<int64_t>(ReduceCode::Sum) &&
              static_cast<int64_t>(ReduceOp::Mean) == static_cast<int64_t>(ReduceCode::Mean) &&
              static_cast<int64_t>(ReduceOp::Max) == static_cast<int64_t>(ReduceCode::Max) &&
              static_cast<int64_t>(ReduceOp::Min) == static_cast<int64_t>(ReduceCode::Min) &&
              static_cast<int64_t>(ReduceOp::Product) == static_cast<int64_t>(ReduceCode::Product));

// The AllReduce kernel's way in (ops/dist_hooks.h): `buf` is a fresh contiguous cpu tensor.
void hook_all_reduce(const Tensor& buf, int64_t code, int64_t group_id) {
  LT_CHECK(group_id == 0, "lt::dist::all_reduce: unknown group ", group_id);
  const auto op = static_cast<ReduceOp>(code);
  metrics_impl::ScopedTimer timer("AllReduceTime");  // includes waiting for the slowest rank
  Tensor b = buf;
  run("all_reduce", [&](ProcessGroup& pg, uint32_t tag) {
    dispatch_dtype(b.dtype(), "all_reduce", [&]<typename T>() {
      allreduce_buffer<T>(pg, tag, b.data_ptr<T>(), static_cast<size_t>(b.numel()), op);
    });
  });
}

const bool g_hooks_set = [] {
  dist_hooks().all_reduce = &hook_all_reduce;
  return true;
}();

}  // namespace

// ------------------------------------------------------------------ lifecycle

void init_process_group(const InitOptions& opt) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_pg) throw lt::Error("lt::dist::init_process_group: already initialized");
  if (opt.backend != "gloo")
    throw lt::Error("lt::dist::init_process_group: unknown backend '" + opt.backend +
                    "' (have: gloo)");
  auto pg = std::make_unique<ProcessGroup>();
  pg->rank = opt.rank >= 0 ? opt.rank : env_int("RANK");
  pg->size = opt.world_size >= 0 ? opt.world_size : env_int("WORLD_SIZE");
  if (pg->size < 1 || pg->rank < 0 || pg->rank >= pg->size) {
    std::ostringstream m;
    m << "lt::dist::init_process_group: invalid RANK=" << pg->rank << " WORLD_SIZE=" << pg->size;
    throw lt::Error(m.str());
  }
  double tmo =
      opt.timeout_s >= 0 ? opt.timeout_s : config::real("LT_DIST_TIMEOUT");
  if (!(tmo > 0)) throw lt::Error("lt::dist: LT_DIST_TIMEOUT must be a positive number of seconds");
  pg->timeout = ms(static_cast<int64_t>(std::llround(tmo * 1000)));

  if (pg->size > 1) {
    const std::string addr =
        !opt.master_addr.empty() ? opt.master_addr : env_str("MASTER_ADDR");
    const int port = opt.master_port >= 0 ? opt.master_port : env_int("MASTER_PORT");
    const std::string path = !opt.store_path.empty() ? opt.store_path : env_str("LT_DIST_STORE");
    std::string ifname =
        !opt.ifname.empty() ? opt.ifname : (!env_str("LT_DIST_IFNAME").empty() ? env_str("LT_DIST_IFNAME") : env_str("GLOO_SOCKET_IFNAME"));
    try {
      if (!path.empty()) {
        // FileStore refuses to overwrite a key ("File already exists"): every
        // init_process_group needs a fresh directory.
        pg->store = std::make_unique<gloo::rendezvous::FileStore>(path);
      } else {
        // Empty when unset, on every rank alike: manual launches keep working unauthenticated.
        const std::string token = env_str("LT_DIST_TOKEN");
        if (pg->rank == 0)
          pg->server = std::make_unique<detail::TcpStoreServer>(detail::store_bind_address(addr),
                                                                port, token);
        pg->store = std::make_unique<detail::TcpStore>(addr, port, pg->timeout, token);
      }
      // The key prefix must be the same on every rank whatever each process did before (an
      // earlier group in one process but not in another), so it is fixed; the TCP store is
      // new with every group (rank 0 serves it), the file store needs a new directory.
      pg->prefixed = std::make_unique<gloo::rendezvous::PrefixStore>("lt", *pg->store);

      gloo::transport::tcp::attr attr;
      if (!ifname.empty()) {
        attr.iface = ifname;
      } else {
        std::string local = path.empty() ? local_address_towards(addr, port) : "";
        if (!local.empty()) attr.hostname = local;  // else gloo resolves gethostname()
      }
      auto dev = gloo::transport::tcp::CreateDevice(attr);
      pg->ctx = std::make_shared<gloo::rendezvous::Context>(pg->rank, pg->size);
      pg->ctx->setTimeout(pg->timeout);  // also bounds connectFullMesh's store waits
      pg->ctx->connectFullMesh(*pg->prefixed, dev);
      // Nobody may leave init (rank 0 may then destroy the store) before all have connected.
      gloo::BarrierOptions b(pg->ctx);
      b.setTimeout(pg->timeout);
      gloo::barrier(b);
    } catch (const std::exception& e) {
      std::ostringstream m;
      m << "lt::dist::init_process_group: rank " << pg->rank << " of " << pg->size
        << " could not rendezvous within " << pg->timeout.count() / 1000.0 << " s via "
        << (path.empty() ? "MASTER_ADDR=" + addr + " MASTER_PORT=" + std::to_string(port)
                         : "LT_DIST_STORE=" + path)
        << ": " << e.what();
      throw DistError(m.str());
    }
  }
  g_pg = std::move(pg);
}

bool is_initialized() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_pg != nullptr;
}

void destroy_process_group() {
  std::lock_guard<std::mutex> g(g_mu);
  if (!g_pg) return;
  g_pg->rings.clear();  // their buffers live on the context's pairs
  if (g_pg->ctx) g_pg->ctx->closeConnections();
  g_pg.reset();  // context, device loop thread, store client, then rank 0's server
}

int rank() { return g_pg ? g_pg->rank : 0; }
int world_size() { return g_pg ? g_pg->size : 1; }
bool is_main_process() { return rank() == 0; }

void set_timeout(std::chrono::milliseconds t) {
  ProcessGroup& pg = group("set_timeout");
  std::lock_guard<std::mutex> g(pg.mu);
  pg.timeout = t;
  if (pg.ctx) pg.ctx->setTimeout(t);
}

std::chrono::milliseconds timeout() { return g_pg ? g_pg->timeout : ms(60000); }

// ------------------------------------------------------------------ collectives

void all_reduce(Tensor& t, ReduceOp op) {
  group("all_reduce");  // a collective before init is an error, at the caller's line
  LT_CHECK(t.defined(), "lt::dist::all_reduce: undefined tensor");
  // On the lazy device this records an AllReduce node (run at the barrier as a library step,
  // in graph order); on cpu it runs now. Both reach the process group via hook_all_reduce.
  inplace(OpKind::AllReduce, t, {t}, AllReduceAttrs{static_cast<int64_t>(op), 0}.attrs());
}

void all_reduce_coalesced(std::vector<Tensor>& ts, ReduceOp op) {
  if (ts.empty()) return;
  if (ts.size() == 1) return all_reduce(ts[0], op);
  // One flat buffer, one collective, then the pieces back: written in lt ops, so on the lazy
  // device the packing, the AllReduce and the unpacking are all part of the step's graph.
  std::vector<Tensor> flat_parts;
  flat_parts.reserve(ts.size());
  for (const Tensor& t : ts) {
    LT_CHECK(t.defined(), "lt::dist::all_reduce_coalesced: undefined tensor");
    LT_CHECK(t.dtype() == ts[0].dtype() && t.device() == ts[0].device(),
             "lt::dist::all_reduce_coalesced: tensors of different dtypes or devices (",
             dtype_name(ts[0].dtype()), " on ", ts[0].device().str(), " vs ", dtype_name(t.dtype()),
             " on ", t.device().str(), ")");
    flat_parts.push_back(t.reshape({-1}));
  }
  Tensor flat = lt::cat(flat_parts, 0);
  all_reduce(flat, op);
  int64_t off = 0;
  for (Tensor& t : ts) {
    t.copy_(flat.narrow(0, off, t.numel()).view(t.sizes()));
    off += t.numel();
  }
}

void broadcast(Tensor& t, int src) {
  if (t.defined() && t.device().is_lazy()) {
    Tensor host = t.cpu();
    broadcast(host, src);
    t.copy_(host.to(t.device()));
    return;
  }
  check_cpu_tensor(t, "broadcast");
  Contig c = contiguous_view(t);
  run("broadcast", [&](ProcessGroup& pg, uint32_t tag) {
    if (src < 0 || src >= pg.size)
      throw lt::Error("lt::dist::broadcast: src " + std::to_string(src) + " out of range");
    if (pg.size == 1 || t.numel() == 0) return;
    gloo::BroadcastOptions o(pg.ctx);
    void* p = c.buf.raw_data_ptr();
    size_t bytes = static_cast<size_t>(c.buf.numel()) * c.buf.element_size();
    auto* bp = static_cast<uint8_t*>(p);  // bytes: dtype-agnostic
    if (pg.rank == src) o.setInput(bp, bytes);
    o.setOutput(bp, bytes);
    o.setRoot(src);
    o.setTag(tag);
    o.setTimeout(pg.timeout);
    gloo::broadcast(o);
  });
  finish_in_place(t, c);
}

void all_gather(std::vector<Tensor>& out, const Tensor& t0) {
  Tensor t = t0.defined() && t0.device().is_lazy() ? t0.cpu() : t0;
  check_cpu_tensor(t, "all_gather");
  Tensor c = t.contiguous();
  const int n = world_size();
  const size_t bytes = static_cast<size_t>(c.numel()) * c.element_size();
  Tensor gathered = lt::empty({static_cast<int64_t>(n) * c.numel()}, c.options());
  run("all_gather", [&](ProcessGroup& pg, uint32_t tag) {
    auto* in = static_cast<uint8_t*>(c.raw_data_ptr());
    auto* all = static_cast<uint8_t*>(gathered.raw_data_ptr());
    if (pg.size == 1 || bytes == 0) {
      if (bytes) std::memcpy(all, in, bytes);
      return;
    }
    gloo::AllgatherOptions o(pg.ctx);
    o.setInput(in, bytes);
    o.setOutput(all, bytes * static_cast<size_t>(pg.size));
    o.setTag(tag);
    o.setTimeout(pg.timeout);
    gloo::allgather(o);
  });
  out.clear();
  for (int r = 0; r < n; ++r)
    out.push_back(gathered.narrow(0, r * c.numel(), c.numel()).view(t.sizes()).clone());
  if (t0.device().is_lazy())
    for (auto& o : out) o = o.to(t0.device());
}

void barrier() {
  run("barrier", [&](ProcessGroup& pg, uint32_t tag) {
    if (pg.size == 1) return;
    gloo::BarrierOptions o(pg.ctx);
    o.setTag(tag);
    o.setTimeout(pg.timeout);
    gloo::barrier(o);
  });
}

}  // namespace lt::dist
