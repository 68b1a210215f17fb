// TcpStore: see tcp_store.h. Wire format (little-endian host order; all ranks run the same
// build): request = u8 op + fields; strings are u32 length + bytes.
//   'H' token -> u8 1            (the first message of every connection; a wrong token gets
//                                 no reply, the connection is closed)
//   'S' key value -> u8 1        'G' key -> u8 found [+ value]
//   'C' u32 n, n keys -> u8 all  'A' key i64 delta -> i64 new value
#include "tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <string_view>

#include "lt/dist.h"
#include "lt/error.h"

namespace lt::dist::detail {
namespace {

using Clock = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

[[noreturn]] void fail(const std::string& what, int err = 0) {
  throw lt::Error("lt::dist: " + what + (err ? std::string(": ") + std::strerror(err) : ""));
}

void put_u32(std::string& buf, uint32_t v) { buf.append(reinterpret_cast<const char*>(&v), 4); }

void put_str(std::string& buf, std::string_view s) {
  put_u32(buf, static_cast<uint32_t>(s.size()));
  buf.append(s);
}

// The client refuses what the server would close the connection for, with a clearer error.
void check_key(const std::string& key) {
  if (key.size() > kMaxKeyBytes)
    fail("rendezvous key of " + std::to_string(key.size()) + " bytes exceeds the store's cap of " +
         std::to_string(kMaxKeyBytes));
}

std::string seconds(ms t) {
  std::ostringstream os;
  os << t.count() / 1000.0 << " s";
  return os.str();
}

// Milliseconds from now to `deadline` for poll(), rounded up so a wake-up is never early.
int poll_ms(Clock::time_point now, Clock::time_point deadline) {
  if (deadline <= now) return 0;
  auto left = std::chrono::ceil<ms>(deadline - now).count();
  return static_cast<int>(std::min<int64_t>(left, 60 * 1000));
}

// ---------------------------------------------------------------- addresses

bool is_loopback(const sockaddr* a) {
  if (a->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  if (a->sa_family != AF_INET6) return false;
  const in6_addr& a6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
}

bool same_address(const sockaddr* a, const sockaddr* b) {
  if (a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

bool is_interface_address(const sockaddr* a) {
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) return false;
  bool found = false;
  for (ifaddrs* i = ifs; i && !found; i = i->ifa_next)
    found = i->ifa_addr && same_address(i->ifa_addr, a);
  ::freeifaddrs(ifs);
  return found;
}

std::string numeric_host(const sockaddr* a, socklen_t len) {
  char host[NI_MAXHOST] = {};
  if (::getnameinfo(a, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "";
  return host;
}

// Compares in time that depends only on the lengths (public), never on where bytes differ.
bool same_token(std::string_view got, std::string_view want) {
  volatile unsigned char diff = got.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < want.size(); ++i)
    diff = diff | static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
  return diff == 0;
}

// ---------------------------------------------------------------- request parsing

// Reads fields from the front of a connection's input buffer without copying. A length over
// its cap sets `bad` as soon as the length itself has arrived, so an announced 4 GiB string
// is refused before any of it is buffered.
class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in) {}
  bool u8(uint8_t& v) { return take(&v, 1); }
  bool u32(uint32_t& v) { return take(&v, 4); }
  bool i64(int64_t& v) { return take(&v, 8); }
  bool str(std::string_view& s, size_t cap) {
    uint32_t n = 0;
    if (!u32(n)) return false;
    if (n > cap) {
      bad = true;
      return false;
    }
    if (in_.size() - pos_ < n) return false;
    s = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  size_t consumed() const { return pos_; }
  bool bad = false;

 private:
  bool take(void* p, size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
};

struct Request {
  uint8_t op = 0;
  std::string_view key, value;         // views into the connection's input buffer
  std::vector<std::string_view> keys;  // 'C'
  int64_t delta = 0;                   // 'A'
};

enum class Parse { kIncomplete, kComplete, kInvalid };

// The largest well-formed request ('S' with a key and a value at their caps).
size_t max_request_bytes(const StoreLimits& lim) {
  return 1 + 4 + lim.max_key_bytes + 4 + lim.max_value_bytes + 8;
}

Parse parse_request(std::string_view in, bool authed, const StoreLimits& lim, Request& r,
                    size_t& used) {
  Parser p(in);
  if (!p.u8(r.op)) return Parse::kIncomplete;
  bool ok = false;
  if (!authed) {
    if (r.op != 'H') return Parse::kInvalid;  // the token comes first, or nothing is served
    ok = p.str(r.value, kMaxTokenBytes);
  } else if (r.op == 'S') {
    ok = p.str(r.key, lim.max_key_bytes) && p.str(r.value, lim.max_value_bytes);
  } else if (r.op == 'G') {
    ok = p.str(r.key, lim.max_key_bytes);
  } else if (r.op == 'C') {
    uint32_t n = 0;
    ok = p.u32(n);
    if (ok && n > lim.max_keys) return Parse::kInvalid;
    r.keys.clear();
    for (uint32_t i = 0; ok && i < n; ++i) {
      std::string_view k;
      ok = p.str(k, lim.max_key_bytes);
      r.keys.push_back(k);
    }
  } else if (r.op == 'A') {
    ok = p.str(r.key, lim.max_key_bytes) && p.i64(r.delta);
  } else {
    return Parse::kInvalid;
  }
  if (p.bad) return Parse::kInvalid;
  if (!ok) return in.size() > max_request_bytes(lim) ? Parse::kInvalid : Parse::kIncomplete;
  used = p.consumed();
  return Parse::kComplete;
}

// ---------------------------------------------------------------- server loop

struct Conn {
  int fd = -1;
  bool authed = false;
  bool dead = false;
  std::string in;   // received, not yet parsed
  std::string out;  // the reply being sent
  size_t out_sent = 0;
  Clock::time_point accepted, progress;  // progress: the last byte moved either way

  bool sending() const { return out_sent < out.size(); }
};

// When `c` is dropped: a handshake must finish soon after accept; a half-received request or
// a half-sent reply must keep moving; an idle authenticated connection stays.
Clock::time_point deadline(const Conn& c, const StoreLimits& lim) {
  if (!c.authed) return c.accepted + lim.handshake_timeout;
  if (!c.in.empty() || c.sending()) return c.progress + lim.io_timeout;
  return Clock::time_point::max();
}

// The single-threaded store: every socket is non-blocking, so one connection can stall only
// itself. A connection's next request is parsed only once its previous reply is out, which
// bounds what a client that never reads can make the server buffer.
class Server {
 public:
  Server(int listen_fd, int wake_fd, const std::string& token, const StoreLimits& lim)
      : listen_fd_(listen_fd), wake_fd_(wake_fd), token_(token), lim_(lim) {}
  ~Server() {
    for (Conn& c : conns_) ::close(c.fd);
  }
  void run();

 private:
  bool accepting(Clock::time_point now) const {
    return conns_.size() < lim_.max_connections && now >= accept_paused_until_;
  }
  int poll_timeout(Clock::time_point now) const;
  void accept_new(Clock::time_point now);
  void read_from(Conn& c, Clock::time_point now);
  void flush(Conn& c, Clock::time_point now);
  void process(Conn& c, Clock::time_point now);
  bool apply(Conn& c, const Request& r);
  bool put(std::string_view key, std::string_view value);
  void drop_finished(Clock::time_point now);

  int listen_fd_, wake_fd_;
  const std::string& token_;
  const StoreLimits& lim_;
  std::vector<Conn> conns_;
  std::map<std::string, std::string, std::less<>> kv_;
  size_t stored_bytes_ = 0;  // sum of key and value sizes in kv_
  Clock::time_point accept_paused_until_{};
};

void Server::run() {
  for (;;) {
    const Clock::time_point now = Clock::now();
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {accepting(now) ? listen_fd_ : -1, POLLIN, 0}};
    for (const Conn& c : conns_)
      fds.push_back({c.fd, static_cast<short>(c.sending() ? POLLOUT : POLLIN), 0});
    if (::poll(fds.data(), fds.size(), poll_timeout(now)) < 0 && errno != EINTR) return;
    if (fds[0].revents) return;
    const Clock::time_point t = Clock::now();
    for (size_t i = 0; i + 2 < fds.size(); ++i) {  // conns_ as polled: accept_new appends later
      Conn& c = conns_[i];
      if (!fds[i + 2].revents) continue;
      if (c.sending()) {  // POLLOUT, or POLLHUP/POLLERR that the failing send reports
        flush(c, t);
        process(c, t);  // requests that arrived while the reply was going out
      } else {
        read_from(c, t);
      }
    }
    if (fds[1].revents & POLLIN) accept_new(t);
    drop_finished(Clock::now());
  }
}

int Server::poll_timeout(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  for (const Conn& c : conns_) next = std::min(next, deadline(c, lim_));
  if (accept_paused_until_ > now) next = std::min(next, accept_paused_until_);
  return next == Clock::time_point::max() ? -1 : poll_ms(now, next);
}

void Server::accept_new(Clock::time_point now) {
  while (accepting(now)) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or memory: the listening socket stays readable, so back off instead
      // of spinning; the connection waits in the backlog.
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until_ = now + ms(100);
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Conn c;
    c.fd = fd;
    c.accepted = c.progress = now;
    conns_.push_back(std::move(c));
  }
}

void Server::read_from(Conn& c, Clock::time_point now) {
  char buf[64 * 1024];
  // At most 1 MiB per turn, so a client streaming a large value cannot starve the others.
  for (int turn = 0; turn < 16 && !c.dead && !c.sending(); ++turn) {
    ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      c.progress = now;
      process(c, now);
    } else if (n == 0) {
      c.dead = true;
    } else if (errno != EINTR) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.dead = true;
      return;
    }
  }
}

void Server::flush(Conn& c, Clock::time_point now) {
  while (c.sending()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_sent += static_cast<size_t>(n);
      c.progress = now;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) c.dead = true;
      return;
    }
  }
  c.out.clear();
  c.out_sent = 0;
}

void Server::process(Conn& c, Clock::time_point now) {
  size_t done = 0;
  Request r;
  while (!c.dead && !c.sending()) {
    size_t used = 0;
    Parse p = parse_request(std::string_view(c.in).substr(done), c.authed, lim_, r, used);
    if (p == Parse::kIncomplete) break;
    if (p == Parse::kInvalid || !apply(c, r)) {
      c.dead = true;  // garbage, a wrong token, or over a cap: close without a reply
      break;
    }
    done += used;
    c.progress = now;
    flush(c, now);
  }
  c.in.erase(0, done);
}

bool Server::apply(Conn& c, const Request& r) {
  switch (r.op) {
    case 'H':
      if (!same_token(r.value, token_)) return false;
      c.authed = true;
      c.out.push_back(1);
      return true;
    case 'S':
      if (!put(r.key, r.value)) return false;
      c.out.push_back(1);
      return true;
    case 'G': {
      auto it = kv_.find(r.key);
      c.out.push_back(it != kv_.end());
      if (it != kv_.end()) put_str(c.out, it->second);
      return true;
    }
    case 'C': {
      bool all = true;
      for (std::string_view k : r.keys) all = all && kv_.count(k);
      c.out.push_back(all);
      return true;
    }
    case 'A': {
      int64_t v = 0;
      auto it = kv_.find(r.key);
      if (it != kv_.end() && it->second.size() == 8) std::memcpy(&v, it->second.data(), 8);
      v += r.delta;
      if (!put(r.key, std::string_view(reinterpret_cast<const char*>(&v), 8))) return false;
      c.out.append(reinterpret_cast<const char*>(&v), 8);
      return true;
    }
  }
  return false;
}

// Stores key = value unless that would exceed the key count or byte caps.
bool Server::put(std::string_view key, std::string_view value) {
  auto it = kv_.find(key);
  const bool fresh = it == kv_.end();
  const size_t old = fresh ? 0 : key.size() + it->second.size();
  if (fresh && kv_.size() >= lim_.max_keys) return false;
  if (stored_bytes_ - old + key.size() + value.size() > lim_.max_store_bytes) return false;
  stored_bytes_ = stored_bytes_ - old + key.size() + value.size();
  if (fresh)
    kv_.emplace(std::string(key), std::string(value));
  else
    it->second.assign(value);
  return true;
}

void Server::drop_finished(Clock::time_point now) {
  std::erase_if(conns_, [&](const Conn& c) {
    const bool drop = c.dead || now >= deadline(c, lim_);
    if (drop) ::close(c.fd);
    return drop;
  });
}

// ---------------------------------------------------------------- client I/O

enum class Io { kOk, kClosed, kTimeout, kError };

// Waits for `events` on fd until `deadline`; false on timeout.
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, poll_ms(now, deadline));
    if (r > 0 || (r < 0 && errno != EINTR)) return true;  // the next call reports any error
  }
}

Io send_until(int fd, const char* p, size_t n, Clock::time_point deadline, int& err) {
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
    } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline)) return Io::kTimeout;
    } else if (r < 0 && errno != EINTR) {
      err = errno;
      return errno == EPIPE || errno == ECONNRESET ? Io::kClosed : Io::kError;
    }
  }
  return Io::kOk;
}

Io recv_until(int fd, char* p, size_t n, Clock::time_point deadline, int& err) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
    } else if (r == 0) {
      return Io::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(fd, POLLIN, deadline)) return Io::kTimeout;
    } else if (errno != EINTR) {
      err = errno;
      return errno == ECONNRESET ? Io::kClosed : Io::kError;
    }
  }
  return Io::kOk;
}

// A non-blocking connect bounded by `deadline` (a black-holed SYN would otherwise take minutes).
int connect_one(const addrinfo* ai, Clock::time_point deadline, int& err) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
  if (rc < 0 && errno == EINPROGRESS) {
    int so = ETIMEDOUT;
    socklen_t len = sizeof so;
    if (wait_ready(fd, POLLOUT, deadline)) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
    rc = so ? -1 : 0;
    errno = so;
  }
  if (rc == 0) return fd;
  err = errno;
  ::close(fd);
  return -1;
}

}  // namespace

std::string store_bind_address(const std::string& master_addr) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(master_addr.c_str(), nullptr, &hints, &res) != 0) return "0.0.0.0";
  std::string loop4, loop6, local;
  for (const addrinfo* ai = res; ai; ai = ai->ai_next) {
    if (is_loopback(ai->ai_addr)) {
      std::string& slot = ai->ai_family == AF_INET ? loop4 : loop6;
      if (slot.empty()) slot = numeric_host(ai->ai_addr, ai->ai_addrlen);
    } else if (local.empty() && is_interface_address(ai->ai_addr)) {
      local = numeric_host(ai->ai_addr, ai->ai_addrlen);
    }
  }
  ::freeaddrinfo(res);
  // IPv4 loopback first: "localhost" may list ::1 first, and IPv6 may be disabled.
  for (const std::string* a : {&loop4, &loop6, &local})
    if (!a->empty()) return *a;
  return "0.0.0.0";
}

// ---------------------------------------------------------------- server

TcpStoreServer::TcpStoreServer(const std::string& bind_addr, int port, std::string token,
                               StoreLimits limits)
    : token_(std::move(token)), limits_(limits) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  const std::string where = bind_addr + " port " + std::to_string(port);
  if (int rc = ::getaddrinfo(bind_addr.c_str(), std::to_string(port).c_str(), &hints, &res))
    fail("rank 0 cannot listen on " + where + ": " + ::gai_strerror(rc));
  listen_fd_ = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (listen_fd_ >= 0) ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool ok = listen_fd_ >= 0 && ::bind(listen_fd_, res->ai_addr, res->ai_addrlen) == 0 &&
                  ::listen(listen_fd_, 128) == 0 && ::pipe2(wake_fd_, O_CLOEXEC) == 0;
  const int err = errno;
  ::freeaddrinfo(res);
  if (!ok) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    fail("rank 0 cannot listen on MASTER_PORT " + std::to_string(port) + " at " + bind_addr, err);
  }
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
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

std::string TcpStoreServer::address() const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return numeric_host(reinterpret_cast<sockaddr*>(&a), len);
}

void TcpStoreServer::loop() { Server(listen_fd_, wake_fd_[0], token_, limits_).run(); }

// ---------------------------------------------------------------- client

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout,
                   const std::string& token)
    : host_(host), port_(port), timeout_(timeout) {
  if (token.size() > kMaxTokenBytes)
    fail("LT_DIST_TOKEN is longer than " + std::to_string(kMaxTokenBytes) + " bytes");
  const Clock::time_point deadline = Clock::now() + timeout;
  connect_until(deadline);
  // The connection may come just before the deadline: leave the handshake a moment.
  handshake(token, std::max(deadline, Clock::now() + ms(1000)));
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::connect_until(Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string ps = std::to_string(port_);
  int last_err = 0;
  for (;;) {
    addrinfo* res = nullptr;
    if (::getaddrinfo(host_.c_str(), ps.c_str(), &hints, &res) == 0) {
      for (const addrinfo* ai = res; ai && fd_ < 0; ai = ai->ai_next)
        fd_ = connect_one(ai, deadline, last_err);
      ::freeaddrinfo(res);
    }
    if (fd_ >= 0) break;
    if (Clock::now() >= deadline) {
      fail("could not reach the rendezvous store at MASTER_ADDR=" + host_ + " MASTER_PORT=" + ps +
               " within " + seconds(timeout_) + " (is rank 0 running?)",
           last_err);
    }
    std::this_thread::sleep_for(ms(50));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void TcpStore::handshake(const std::string& token, Clock::time_point deadline) {
  std::string hello(1, 'H');
  put_str(hello, token);
  int err = 0;
  Io r = send_until(fd_, hello.data(), hello.size(), deadline, err);
  char ack = 0;
  if (r == Io::kOk) r = recv_until(fd_, &ack, 1, deadline, err);
  if (r == Io::kOk && ack == 1) return;
  ::close(fd_);
  fd_ = -1;
  const std::string where =
      "the rendezvous store at MASTER_ADDR=" + host_ + " MASTER_PORT=" + std::to_string(port_);
  if (r == Io::kTimeout)
    fail(where + " did not answer the handshake within " + seconds(timeout_) +
         " (rank 0 stalled, or another service on that port; check LT_DIST_TOKEN and MASTER_*)");
  fail(where +
           " refused this process: its LT_DIST_TOKEN does not match rank 0's (every rank "
           "needs the same LT_DIST_TOKEN, or none sets it)",
       r == Io::kError ? err : 0);
}

void TcpStore::lost(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;  // the stream may be mid-message: nothing after this could be trusted
  fail(what + " (rendezvous store at MASTER_ADDR=" + host_ +
           " MASTER_PORT=" + std::to_string(port_) +
           "; rank 0 gone or stalled, or a request over the store's "
           "limits)",
       err);
}

void TcpStore::send_request(const std::string& req) {
  if (fd_ < 0) fail("the connection to the rendezvous store was lost earlier");
  int err = 0;
  switch (
      send_until(fd_, req.data(), req.size(), Clock::now() + std::max(timeout_, ms(1000)), err)) {
    case Io::kOk:
      return;
    case Io::kTimeout:
      lost("timed out sending to the rendezvous store", 0);
    default:
      lost("lost the connection to the rendezvous store", err);
  }
}

void TcpStore::read_reply(void* p, size_t n) {
  int err = 0;
  switch (
      recv_until(fd_, static_cast<char*>(p), n, Clock::now() + std::max(timeout_, ms(1000)), err)) {
    case Io::kOk:
      return;
    case Io::kTimeout:
      lost("no reply from the rendezvous store within " + seconds(timeout_), 0);
    default:
      lost("lost the connection to the rendezvous store", err);
  }
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  check_key(key);
  if (data.size() > kMaxValueBytes)
    fail("rendezvous value of " + std::to_string(data.size()) + " bytes for key " + key +
         " exceeds the store's cap of " + std::to_string(kMaxValueBytes));
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'S');
  put_str(req, key);
  put_str(req, std::string_view(data.data(), data.size()));
  send_request(req);
  char ack;
  read_reply(&ack, 1);
}

bool TcpStore::check(const std::vector<std::string>& keys) {
  if (keys.size() > kMaxKeys) fail("waiting for more rendezvous keys than the store can hold");
  for (const std::string& k : keys) check_key(k);
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'C');
  put_u32(req, static_cast<uint32_t>(keys.size()));
  for (const std::string& k : keys) put_str(req, k);
  send_request(req);
  char all;
  read_reply(&all, 1);
  return all != 0;
}

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  auto deadline = Clock::now() + timeout;
  auto sleep = ms(1);
  while (!check(keys)) {
    if (timeout != ms::zero() && Clock::now() >= deadline) {
      std::ostringstream m;
      m << "timed out after " << timeout.count() / 1000.0 << " s waiting for rendezvous keys [";
      for (size_t i = 0; i < keys.size(); ++i) m << (i ? ", " : "") << keys[i];
      m << "] (a peer never arrived)";
      fail(m.str());
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, ms(50));
  }
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'G');
  put_str(req, key);
  send_request(req);
  char found = 0;
  read_reply(&found, 1);
  if (!found) fail("rendezvous store get failed for key " + key);
  uint32_t n = 0;
  read_reply(&n, 4);
  if (n > kMaxValueBytes)  // never allocate what a broken or hostile server announces
    lost("the rendezvous store announced a value of " + std::to_string(n) +
             " bytes, over the cap of " + std::to_string(kMaxValueBytes),
         0);
  std::vector<char> v(n);
  read_reply(v.data(), n);
  return v;
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  check_key(key);
  std::lock_guard<std::mutex> g(mu_);
  std::string req(1, 'A');
  put_str(req, key);
  req.append(reinterpret_cast<const char*>(&delta), 8);
  send_request(req);
  int64_t v;
  read_reply(&v, 8);
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
  if (!ok)
    throw DistError(std::string("free_port: no free TCP port on loopback: ") + std::strerror(err));
  return ntohs(a.sin_port);
}

}  // namespace lt::dist
