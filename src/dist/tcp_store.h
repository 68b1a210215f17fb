// TcpStore: a tiny key/value store over TCP implementing gloo::rendezvous::Store, so that
// processes can rendezvous from MASTER_ADDR/MASTER_PORT as in PyTorch (Debian's gloo 0.5.0
// ships FileStore, HashStore, PrefixStore and RedisStore only; no TCP store).
// Rank 0 runs the server on a background thread; every rank (0 included) is a client.
// Waits poll the server and throw lt::Error (via the supplied callback) on timeout.
#pragma once
#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lt::dist::detail {

class TcpStoreServer {
 public:
  // Binds 0.0.0.0:port (port 0 picks a free one; see port()). Throws std::runtime_error.
  explicit TcpStoreServer(int port);
  ~TcpStoreServer();
  int port() const { return port_; }

 private:
  void loop();
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
};

class TcpStore : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start later).
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;  // waits for the key
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // Atomic add on an int64 counter key; returns the new value (used for join counting).
  int64_t add(const std::string& key, int64_t delta);

 private:
  bool check(const std::vector<std::string>& keys);
  std::string host_;
  int port_;
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
};

}  // namespace lt::dist::detail
