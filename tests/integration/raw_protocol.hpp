#pragma once
// Speaking the control protocol by hand to a netserve on 127.0.0.1, from any loopback address: a client
// that registers tests and data connections and then does what netload never would (waits, parks, leaves).
// Also what a process holds, from /proc.
#include "core/wire/native/protocol.hpp"
#include "tests/integration/raw_client.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

namespace nb::test {

inline int connect_from(const char* source, std::uint16_t port) { return connect_to(port, source); }

inline void send_message(int fd, const message& m) {
  const std::string frame = encode_frame(m);
  REQUIRE(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
}

inline bool read_exactly(int fd, char* p, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// The next message, or nothing when the connection closed or `seconds` passed.
inline std::optional<message> read_message(int fd, int seconds = 10) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  unsigned char header[frame_header_size];
  if (!read_exactly(fd, reinterpret_cast<char*>(header), sizeof header)) return std::nullopt;
  std::string payload(decode_frame_length(header), '\0');
  if (!read_exactly(fd, payload.data(), payload.size())) return std::nullopt;
  return decode_payload(payload);
}

// The server's reason when it refused, else "".
inline std::string refusal(const std::optional<message>& m) {
  if (!m) return "(no answer)";
  if (auto* e = std::get_if<error_msg>(&*m)) return e->reason;
  return {};
}

inline test_request tcp_request(std::uint32_t streams, double seconds = 10) {
  test_request r;
  r.kind = test_kind::tcp_stream;
  r.message_size = 65536;
  r.duration_s = seconds;
  r.streams = streams;
  r.client_version = "raw";
  return r;
}

inline test_request udp_request(double seconds = 10) {
  test_request r;
  r.kind = test_kind::udp_stream;
  r.message_size = 100;
  r.duration_s = seconds;
  r.data_ports = {9};
  r.client_version = "raw";
  return r;
}

// What a process holds: resident memory, threads, descriptors.
struct usage {
  long rss_kib = 0;
  long threads = 0;
  long fds = 0;
};

inline usage usage_of(pid_t pid) {
  usage u;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_kib = std::stol(line.substr(6));
    if (line.rfind("Threads:", 0) == 0) u.threads = std::stol(line.substr(8));
  }
  if (DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++u.fds;
    ::closedir(d);
  }
  return u;
}

// The process's user + system CPU time so far, in seconds (/proc/PID/stat).
inline double cpu_seconds_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));  // the name may hold spaces
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {  // utime and stime are fields 14 and 15
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace nb::test
