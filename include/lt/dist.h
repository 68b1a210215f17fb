// lt::dist: collective communication between processes (data-parallel training), backed by
// Gloo (Debian libgloo-dev, libgloo.so.0.5.0, TCP transport), as PyTorch's CPU process groups are.
//
// Rendezvous, in the usual style (torchrun / torch.distributed env:// conventions):
//   RANK, WORLD_SIZE            this process's rank and the number of processes
//   MASTER_ADDR, MASTER_PORT    rank 0 serves a small TCP key/value store there; every rank
//                               publishes its Gloo address in it, then all connect full-mesh
//   LT_DIST_STORE=<dir>         instead of MASTER_*: a gloo FileStore in a fresh directory
//                               (shared file system; each init needs an empty directory)
//   LT_DIST_TIMEOUT=<seconds>   rendezvous and per-collective timeout (default 60)
//   LT_DIST_TOKEN=<secret>      shared by every rank: the store serves only connections that
//                               present it (lt-train --nproc generates one; set it yourself
//                               for multi-host runs, else anyone reaching the port is served)
//   LT_DIST_IFNAME=<iface>      network interface for the data connections (also honours
//                               GLOO_SOCKET_IFNAME); default: the local address that routes
//                               to MASTER_ADDR
// Without RANK/WORLD_SIZE and without options, init_process_group() makes a world of one
// (every collective is then the identity), so single-process code needs no special case.
//
// Failure model: a peer that never arrives makes init_process_group throw lt::dist::DistError
// after the timeout; a peer that dies makes the next (or current) collective throw at once
// ("Connection closed by peer"); a peer that stalls makes it throw after the timeout. After
// a DistError the process group is broken: every later call throws; destroy and re-init.
//
// all_reduce works in place on cpu and lazy tensors through one registry op, OpKind::AllReduce:
// on cpu it runs at once; on the lazy device it is recorded in the step's graph and run at the
// barrier as a library step between fused clusters, in graph order (the same on every rank for
// the same program). broadcast and all_gather on a lazy tensor sync it and run on the host.
// Every rank must issue the same collectives in the same order with the same shapes and dtypes.
//
// Why Gloo and not MPI: with Gloo a peer that never arrives or dies becomes a catchable
// DistError within the timeout (mpirun kills the whole job, and a stalled MPI peer hangs
// forever), and it embeds in any process without a launcher (lt-train --nproc forks its ranks).
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "lt/error.h"
#include "lt/tensor.h"

namespace lt::dist {

// Thrown for communication failures (timeout, a peer that died, rendezvous errors).
class DistError : public lt::Error {
 public:
  explicit DistError(const std::string& msg) : lt::Error(msg) {}
};

// The values are the AllReduce node's attribute (src/ops/dist_hooks.h ReduceCode).
enum class ReduceOp { Sum, Mean, Max, Min, Product };

struct InitOptions {
  std::string backend = "gloo";  // the only one for now
  int rank = -1;                 // -1: env RANK (0 when unset)
  int world_size = -1;           // -1: env WORLD_SIZE (1 when unset)
  std::string master_addr;       // "": env MASTER_ADDR ("127.0.0.1" when unset)
  int master_port = -1;          // -1: env MASTER_PORT (29500 when unset)
  std::string store_path;        // "": env LT_DIST_STORE; non-empty: FileStore rendezvous
  std::string ifname;            // "": env LT_DIST_IFNAME / GLOO_SOCKET_IFNAME
  double timeout_s = -1;         // <0: env LT_DIST_TIMEOUT (60 when unset)
};

// Joins the process group (blocks until all world_size processes have arrived, or throws
// DistError after the timeout). Throws lt::Error if already initialized.
void init_process_group(const InitOptions& options = {});
bool is_initialized();
// Closes the connections (and rank 0's store). Safe to call when not initialized.
void destroy_process_group();

int rank();              // 0 when not initialized
int world_size();        // 1 when not initialized
bool is_main_process();  // rank() == 0

void set_timeout(std::chrono::milliseconds timeout);  // for later collectives
std::chrono::milliseconds timeout();

// In place on every rank. dtypes: float32, float64, int32, int64 (Mean: floating only).
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
// One collective over several tensors of one dtype (flattened into one buffer): what DDP's
// gradient buckets use.
void all_reduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::Sum);
// Replaces `tensor` on every rank with src's value (same shape and dtype everywhere).
void broadcast(Tensor& tensor, int src = 0);
// out[r] = rank r's `tensor` (new cpu tensors; same shape and dtype on every rank).
void all_gather(std::vector<Tensor>& out, const Tensor& tensor);
// Blocks until every rank has reached it.
void barrier();

// A TCP port that is free on this machine now (bound on loopback, read back, released), for a
// single-machine rendezvous: pass it as MASTER_PORT to every rank. Throws DistError if none.
int free_port();

// RAII: init in the constructor, destroy in the destructor (tests, tools).
class ProcessGroupGuard {
 public:
  explicit ProcessGroupGuard(const InitOptions& options = {}) { init_process_group(options); }
  ~ProcessGroupGuard() { destroy_process_group(); }
  ProcessGroupGuard(const ProcessGroupGuard&) = delete;
  ProcessGroupGuard& operator=(const ProcessGroupGuard&) = delete;
};

}  // namespace lt::dist
