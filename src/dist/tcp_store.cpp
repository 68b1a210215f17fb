// TcpStore: see tcp_store.h. Wire format (little-endian host order; all ranks run the same
// build): request = u8 op + fields; strings are u32 length + bytes.
//   'S' key value -> u8 1        'G' key -> u8 found [+ value]
//   'C' u32 n, n keys -> u8 all  'A' key i64 delta -> i64 new value
#include "tcp_store.h"

#include "lt/dist.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "lt/error.h"

namespace lt::dist::detail {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw lt::Error("lt::dist: " + what + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

bool read_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r == 0) return false;
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* p, size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t r = ::send(fd, c, n, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool read_str(int fd, std::string& s) {
  uint32_t n;
  if (!read_all(fd, &n, 4)) return false;
  s.resize(n);
  return read_all(fd, s.data(), n);
}

void put_str(std::string& buf, const void* p, uint32_t n) {
  buf.append(reinterpret_cast<const char*>(&n), 4);
  buf.append(static_cast<const char*>(p), n);
}

}  // namespace

// ---------------------------------------------------------------- server

TcpStoreServer::TcpStoreServer(int port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("socket");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
    int e = errno;
    ::close(listen_fd_);
    errno = e;
    fail("rank 0 cannot listen on MASTER_PORT " + std::to_string(port));
  }
  if (::listen(listen_fd_, 128) < 0) fail("listen");
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  if (::pipe2(wake_fd_, O_CLOEXEC) < 0) fail("pipe");
  thread_ = std::thread([this] { loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  char c = 0;
  (void)!::write(wake_fd_[1], &c, 1);
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_[0]);
  ::close(wake_fd_[1]);
}

void TcpStoreServer::loop() {
  std::map<std::string, std::string> kv;
  std::vector<int> clients;
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (int c : clients) fds.push_back({c, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        int one = 1;
        ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        clients.push_back(c);
      }
    }
    std::vector<int> dead;
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      int c = fds[i].fd;
      uint8_t op;
      bool ok = read_all(c, &op, 1);
      std::string key, val, reply;
      if (ok && op == 'S') {
        ok = read_str(c, key) && read_str(c, val);
        if (ok) kv[key] = val, reply.push_back(1);
      } else if (ok && op == 'G') {
        ok = read_str(c, key);
        auto it = kv.find(key);
        reply.push_back(it != kv.end());
        if (it != kv.end())
          put_str(reply, it->second.data(), static_cast<uint32_t>(it->second.size()));
      } else if (ok && op == 'C') {
        uint32_t n = 0;
        ok = read_all(c, &n, 4);
        bool all = true;
        for (uint32_t k = 0; ok && k < n; ++k) {
          ok = read_str(c, key);
          all = all && kv.count(key);
        }
        reply.push_back(all);
      } else if (ok && op == 'A') {
        int64_t d = 0, v = 0;
        ok = read_str(c, key) && read_all(c, &d, 8);
        auto& s = kv[key];
        if (s.size() == 8) std::memcpy(&v, s.data(), 8);
        v += d;
        s.assign(reinterpret_cast<char*>(&v), 8);
        reply.append(reinterpret_cast<char*>(&v), 8);
      } else {
        ok = false;
      }
      if (!ok || !write_all(c, reply.data(), reply.size())) dead.push_back(c);
    }
    for (int c : dead) {
      ::close(c);
      std::erase(clients, c);
    }
  }
  for (int c : clients) ::close(c);
}

// ---------------------------------------------------------------- client

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout)
    : host_(host), port_(port), timeout_(timeout) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string ps = std::to_string(port);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int last_errno = 0;
  for (;;) {
    if (::getaddrinfo(host.c_str(), ps.c_str(), &hints, &res) == 0) {
      for (auto* ai = res; ai && fd_ < 0; ai = ai->ai_next) {
        int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          last_errno = errno;
          ::close(fd);
        }
      }
      ::freeaddrinfo(res);
    }
    if (fd_ >= 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      errno = last_errno;
      std::ostringstream m;
      m << "could not reach the rendezvous store at MASTER_ADDR=" << host << " MASTER_PORT=" << port
        << " within " << timeout.count() / 1000.0 << " s (is rank 0 running?)";
      fail(m.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'S');
  put_str(req, key.data(), static_cast<uint32_t>(key.size()));
  put_str(req, data.data(), static_cast<uint32_t>(data.size()));
  uint8_t ack;
  errno = 0;
  if (!write_all(fd_, req.data(), req.size()) || !read_all(fd_, &ack, 1))
    fail("lost the connection to the rendezvous store (rank 0 gone?)");
}

bool TcpStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'C');
  uint32_t n = static_cast<uint32_t>(keys.size());
  req.append(reinterpret_cast<char*>(&n), 4);
  for (auto& k : keys) put_str(req, k.data(), static_cast<uint32_t>(k.size()));
  uint8_t all;
  errno = 0;
  if (!write_all(fd_, req.data(), req.size()) || !read_all(fd_, &all, 1))
    fail("lost the connection to the rendezvous store (rank 0 gone?)");
  return all != 0;
}

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto sleep = std::chrono::milliseconds(1);
  while (!check(keys)) {
    if (timeout != std::chrono::milliseconds::zero() &&
        std::chrono::steady_clock::now() >= deadline) {
      std::ostringstream m;
      m << "timed out after " << timeout.count() / 1000.0 << " s waiting for rendezvous keys [";
      for (size_t i = 0; i < keys.size(); ++i) m << (i ? ", " : "") << keys[i];
      m << "] (a peer never arrived)";
      errno = 0;
      fail(m.str());
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
  }
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'G');
  put_str(req, key.data(), static_cast<uint32_t>(key.size()));
  uint8_t found;
  std::string v;
  errno = 0;
  if (!write_all(fd_, req.data(), req.size()) || !read_all(fd_, &found, 1) || !found ||
      !read_str(fd_, v))
    fail("rendezvous store get failed for key " + key);
  return {v.begin(), v.end()};
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'A');
  put_str(req, key.data(), static_cast<uint32_t>(key.size()));
  req.append(reinterpret_cast<char*>(&delta), 8);
  int64_t v;
  errno = 0;
  if (!write_all(fd_, req.data(), req.size()) || !read_all(fd_, &v, 8))
    fail("lost the connection to the rendezvous store (rank 0 gone?)");
  return v;
}

}  // namespace lt::dist::detail

namespace lt::dist {

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) throw DistError(std::string("free_port: no free TCP port on loopback: ") +
                           std::strerror(err));
  return ntohs(a.sin_port);
}

}  // namespace lt::dist
