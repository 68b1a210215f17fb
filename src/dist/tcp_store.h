// TcpStore: a tiny key/value store over TCP implementing gloo::rendezvous::Store, so that
// processes can rendezvous from MASTER_ADDR/MASTER_PORT as in PyTorch (Debian's gloo 0.5.0
// ships FileStore, HashStore, PrefixStore and RedisStore only; no TCP store).
// Rank 0 runs the server on a background thread; every rank (0 included) is a client.
// Waits poll the server and throw lt::Error (via the supplied callback) on timeout.
//
// Where rank 0 listens (store_bind_address): the store must be reachable by the ranks and by
// as little else as possible, so it binds the address the ranks connect to:
//   - MASTER_ADDR local (127.x.x.x, localhost, ::1, or any name resolving to loopback):
//     that loopback address (IPv4 preferred), so single-machine runs (lt-train --nproc) are
//     unreachable from other hosts;
//   - MASTER_ADDR resolving to an address of one of this host's interfaces: that address;
//   - otherwise (a name or address that is not this host's, e.g. behind NAT or a load
//     balancer, or that does not resolve here): every interface (INADDR_ANY), as before.
//
// Authentication: every connection starts with a handshake carrying a shared token, the
// environment variable LT_DIST_TOKEN (empty when unset). The server closes, without answering,
// a connection whose first message is not the right token; the client then throws an lt::Error
// naming LT_DIST_TOKEN. lt-train --nproc generates a random token for its ranks. For manual
// multi-host launches setting LT_DIST_TOKEN (the same secret on every rank, e.g. from
// `openssl rand -hex 16`) is strongly recommended: without it anyone who can reach
// MASTER_ADDR:MASTER_PORT can read and write the rendezvous keys. (The token authenticates;
// it does not encrypt: use a trusted network.)
//
// Robustness against a misbehaving peer: the server never blocks on one connection. Sockets
// are non-blocking with per-connection input and output buffers; only complete requests are
// parsed; a connection that does not finish its handshake, or leaves a request or a reply
// half-transferred without progress, within a deadline is dropped. Keys, values, the number
// of keys and the bytes stored are capped (StoreLimits); a request over a cap closes that
// connection while the server keeps serving the others. The client bounds every read and write
// by its timeout and rejects replies over the caps.
#pragma once
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lt::dist::detail {

// Rendezvous keys are short names and values are Gloo addresses: these are far above use.
constexpr size_t kMaxKeyBytes = 4 * 1024;
constexpr size_t kMaxValueBytes = 64 * 1024 * 1024;
constexpr size_t kMaxTokenBytes = 1024;
constexpr size_t kMaxKeys = 64 * 1024;
constexpr size_t kMaxStoreBytes = 256 * 1024 * 1024;
constexpr size_t kMaxConnections = 1024;

struct StoreLimits {
  size_t max_key_bytes = kMaxKeyBytes;
  size_t max_value_bytes = kMaxValueBytes;
  size_t max_keys = kMaxKeys;                // distinct keys stored
  size_t max_store_bytes = kMaxStoreBytes;   // sum of key and value sizes stored
  size_t max_connections = kMaxConnections;  // more wait in the listen backlog
  // A connection that has not completed the handshake this long after accept is dropped.
  std::chrono::milliseconds handshake_timeout{5000};
  // A connection holding a partial request, or an unsent reply, with no bytes moving for this
  // long is dropped. Idle connections (nothing pending) are kept: ranks hold theirs for the run.
  std::chrono::milliseconds io_timeout{5000};
};

// The numeric address rank 0's server binds for MASTER_ADDR `master_addr` (rule above).
std::string store_bind_address(const std::string& master_addr);

class TcpStoreServer {
 public:
  // Binds the numeric address `bind_addr` ("0.0.0.0" or "::" for every interface) at `port`
  // (0 picks a free one; see port()) and serves clients presenting `token`. Throws lt::Error.
  TcpStoreServer(const std::string& bind_addr, int port, std::string token,
                 StoreLimits limits = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  int port() const { return port_; }
  std::string address() const;  // the listening socket's numeric address (getsockname)

 private:
  void loop();
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  int port_ = 0;
  std::string token_;
  StoreLimits limits_;
  std::thread thread_;
};

class TcpStore : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start later), and presents
  // `token` (LT_DIST_TOKEN). Every later request is bounded by `timeout` too.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout,
           const std::string& token);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;  // waits for the key
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // Atomic add on an int64 counter key; returns the new value (used for join counting).
  int64_t add(const std::string& key, int64_t delta);

 private:
  void connect_until(std::chrono::steady_clock::time_point deadline);
  void handshake(const std::string& token, std::chrono::steady_clock::time_point deadline);
  bool check(const std::vector<std::string>& keys);
  void send_request(const std::string& req);
  void read_reply(void* p, size_t n);
  [[noreturn]] void lost(const std::string& what, int err);
  std::string host_;
  int port_;
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
};

}  // namespace lt::dist::detail
