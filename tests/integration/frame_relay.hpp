#pragma once
// A man in the middle, for tests of the key check: listens on a free loopback port and, for every
// connection made to it, opens one to netserve and passes control frames both ways through a hook that
// may alter, drop, duplicate or hold them. After a data hello the connection carries raw bytes, which it
// passes on untouched. Frames are found by their header only, so sealed (MAC'd) frames pass as well.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nb::test {

// Reads exactly n bytes within `timeout_ms` in total; false on EOF, error or timeout.
inline bool read_exact(int fd, char* p, std::size_t n, int timeout_ms = 10'000) {
  for (std::size_t got = 0; got < n;) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) <= 0) return false;
    ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

inline bool write_all(int fd, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    ssize_t r = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (r <= 0) return false;
    sent += static_cast<std::size_t>(r);
  }
  return true;
}

// One whole frame, header included.
inline bool read_frame(int fd, std::string& frame, int timeout_ms = 10'000) {
  char header[4];
  if (!read_exact(fd, header, 4, timeout_ms)) return false;
  std::uint32_t len;
  std::memcpy(&len, header, 4);
  len = ntohl(len);
  if (len > (1u << 20)) return false;
  frame.assign(header, 4);
  frame.resize(4 + len);
  return read_exact(fd, frame.data() + 4, len, timeout_ms);
}

// The frame's message type, found in its text: "" when there is none.
inline std::string frame_type(const std::string& frame) {
  const std::string key = "\"type\":\"";
  auto at = frame.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return frame.substr(at, frame.find('"', at) - at);
}

// A frame around `body`, with its length recomputed (for frames a hook altered).
inline std::string reframe(const std::string& body) {
  std::uint32_t len = htonl(static_cast<std::uint32_t>(body.size()));
  return std::string(reinterpret_cast<const char*>(&len), 4) + body;
}

// A listening socket on 127.0.0.1 and a port the kernel picked.
inline int listen_loopback(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("relay: cannot listen on loopback");
  port = ntohs(a.sin_port);
  return fd;
}

// Accepts one connection within `timeout_ms`; -1 when none came.
inline int accept_within(int listener, int timeout_ms) {
  pollfd pfd{listener, POLLIN, 0};
  if (::poll(&pfd, 1, timeout_ms) <= 0) return -1;
  return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
}

inline int connect_loopback(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

enum class leg { to_server, to_client };

class frame_relay {
 public:
  // Called for each frame (whole, header included) of connection `conn` (0, 1, ... in accept order);
  // returns the frames to pass on instead. Calls are serialised.
  using hook = std::function<std::vector<std::string>(leg, int conn, const std::string& frame)>;

  frame_relay(std::uint16_t server_port, hook h) : server_port_(server_port), hook_(std::move(h)) {
    listener_ = listen_loopback(port_);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~frame_relay() {
    stop_ = true;
    accept_thread_.join();
    for (auto& c : conns_) {
      ::shutdown(c->client, SHUT_RDWR);
      ::shutdown(c->server, SHUT_RDWR);
    }
    for (auto& c : conns_) {
      c->up.join();
      c->down.join();
      ::close(c->client);
      ::close(c->server);
    }
    ::close(listener_);
  }
  frame_relay(const frame_relay&) = delete;
  frame_relay& operator=(const frame_relay&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  struct connection {
    int client = -1, server = -1;
    std::atomic<bool> raw{false};  // past the data hello: bytes, no more frames
    std::thread up, down;
  };

  void accept_loop() {
    while (!stop_) {
      int client = accept_within(listener_, 100);
      if (client < 0) continue;
      auto c = std::make_unique<connection>();
      c->client = client;
      c->server = connect_loopback(server_port_);
      const int index = static_cast<int>(conns_.size());
      connection& ref = *c;
      c->up = std::thread([this, &ref, index] { pump(ref, leg::to_server, index); });
      c->down = std::thread([this, &ref, index] { pump(ref, leg::to_client, index); });
      conns_.push_back(std::move(c));
    }
  }

  void pump(connection& c, leg l, int index) {
    const int from = l == leg::to_server ? c.client : c.server, to = l == leg::to_server ? c.server : c.client;
    std::string frame;
    while (!stop_ && !c.raw) {
      if (!read_frame(from, frame, 100)) {
        if (stop_ || !still_open(from)) break;
        continue;  // a slow peer (or one now sending raw data): look again
      }
      std::vector<std::string> out;
      {
        std::lock_guard lock(hook_mutex_);
        out = hook_(l, index, frame);
      }
      for (const auto& f : out) write_all(to, f);
      if (l == leg::to_server && frame_type(frame) == "data") c.raw = true;
    }
    char buf[16384];
    while (!stop_ && c.raw) {
      pollfd pfd{from, POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0) continue;
      ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0 || !write_all(to, std::string(buf, static_cast<std::size_t>(n)))) break;
    }
    ::shutdown(to, SHUT_WR);
  }

  // read_frame's timeout consumed nothing only when no byte had come; a partial frame is lost, which the
  // tests avoid by keeping their peers' frames whole (they are small and written at once).
  static bool still_open(int fd) {
    char b;
    ssize_t r = ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r > 0 || (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

  std::uint16_t server_port_;
  hook hook_;
  std::mutex hook_mutex_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::vector<std::unique_ptr<connection>> conns_;
};

}  // namespace nb::test
