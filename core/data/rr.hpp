#pragma once
// Request/response tests as netperf's: a transaction is timed from its send() to its answer's recv(),
// both stacks included, as an application sees it.
#include "core/result/latency_histogram.hpp"
#include "core/sys/endpoint.hpp"
#include "core/wire/native/flow.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <stop_token>

namespace nb {

struct stream_plan;
struct stream_outcome;

struct alignas(64) rr_counters {
  relaxed<std::uint64_t> timeouts;
  relaxed<std::uint64_t> late;
  relaxed<std::uint64_t> unmatched;
};

// Four times the longest round trip so far, within floor and ceiling: a queue that fills suddenly must
// not turn into loss.
inline constexpr std::int64_t rr_timeout_floor_ns = 200'000'000;
inline constexpr std::int64_t rr_timeout_ceiling_ns = 2'000'000'000;
std::int64_t rr_timeout_ns(std::uint64_t longest_rtt_ns) noexcept;

// At most rr_poll_ns, so a waiting loop sees its stop token; returns the events that came.
inline constexpr std::int64_t rr_poll_ns = 100'000'000;
short rr_wait_ready(int fd, short events, std::int64_t until) noexcept;

struct rr_client_state {
  send_counters& requests;
  recv_counters& answers;
  rr_counters& rr;
  latency_histogram& latency;
};

// Then waits for those in flight.
void run_udp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out);
void run_tcp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out);

void run_tcp_rr_server(std::stop_token stop, const stream_plan& plan, recv_counters& requests, send_counters& answers,
                       stream_outcome& out);

// 16 bytes hold the payload header; 8 to 15 the number alone, if the answer has room to echo it.
constexpr bool rr_request_numbered(std::size_t request_size, std::size_t response_size) noexcept {
  return request_size >= 16 || (request_size >= 8 && response_size >= 8);
}

// Begins every unnumbered answer and no request: one that begins with it is an answer come back (two
// netserves pointed at each other) and gets none, so no chain of answers outlives one hop.
inline constexpr unsigned char rr_answer_mark = 0xA5;

// A UDP_RR server answers from the start less a trusted clock skew to the end plus a client's longest wait.
inline constexpr std::int64_t rr_answer_lead_ns = 100'000'000;
inline constexpr std::int64_t rr_answer_drain_ns = rr_timeout_ceiling_ns;

// Answers each request number once; a number more than `span` below the highest was given up.
class rr_request_numbers {
 public:
  static constexpr std::uint64_t span = 4096;
  bool first_time(std::uint64_t n) noexcept;

 private:
  bool set(std::uint64_t n) noexcept;
  bool any_ = false;
  std::uint64_t highest_ = 0;
  std::uint64_t seen_[span / 64] = {};  // bit n % span: n answered, for n in (highest_ - span, highest_]
};

// The request's first bytes (number and send time, as many as both sizes hold), then zeros.
void fill_udp_answer(const unsigned char* request, std::size_t request_copied, unsigned char* out,
                     std::size_t response_size) noexcept;

// From the address the client talks to (IP_PKTINFO): the port's socket is bound to the wildcard.
class udp_answerer {
 public:
  udp_answerer(const endpoint& to, const endpoint& from) noexcept;
  // Without blocking.
  bool send(int fd, const unsigned char* answer, std::size_t size) const noexcept;

 private:
  endpoint to_;
  alignas(cmsghdr) unsigned char control_[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  std::size_t control_len_ = 0;
};

}  // namespace nb
