#pragma once
// Request/response tests (UDP_RR, TCP_RR, as netperf's): the client sends a request of message_size
// bytes, the server answers with response_size bytes, and each transaction's round trip goes into a
// latency histogram. With a burst of N, N + 1 transactions are in flight (netperf's `-b`).
//
// The client's clock times a transaction from just before its send() to just after the recv() of its
// answer, on CLOCK_MONOTONIC, as netperf does: the figure includes both hosts' stacks, which is what an
// application sees.
//
// UDP loses: a request numbers itself in its first 8 bytes (16 with the send time, which the server's
// sequence analysis reads) when both sizes leave room, and the server echoes those bytes, so an answer is
// matched to its transaction even out of order. Smaller messages are matched first in, first out. A
// transaction not answered within its timeout is given up (counted: timeouts), and the window moves on; an
// answer that comes after that is counted late and not timed.
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

// A client stream's transaction figures beyond its requests (send_counters) and answers (recv_counters).
struct alignas(64) rr_counters {
  relaxed<std::uint64_t> timeouts;   // transactions given up without an answer
  relaxed<std::uint64_t> late;       // answers that came after their transaction was given up
  relaxed<std::uint64_t> unmatched;  // answers to no transaction of ours (duplicates)
};

// How long a UDP transaction waits for its answer: four times the longest round trip seen so far, never
// less than rr_timeout_floor_ns (a queue that fills suddenly must not turn into loss) nor more than
// rr_timeout_ceiling_ns; the first ones, before any round trip is known, wait the ceiling.
inline constexpr std::int64_t rr_timeout_floor_ns = 200'000'000;
inline constexpr std::int64_t rr_timeout_ceiling_ns = 2'000'000'000;
std::int64_t rr_timeout_ns(std::uint64_t longest_rtt_ns) noexcept;

// Waits until `fd` is ready for `events` or `until` (monotonic) comes, at most rr_poll_ns at a time, so
// that a waiting loop looks at its stop token that often; returns the events that came (0: none).
inline constexpr std::int64_t rr_poll_ns = 100'000'000;
short rr_wait_ready(int fd, short events, std::int64_t until) noexcept;

// What a client stream records: its requests (sent), answers (received), the rest, and the round trips.
struct rr_client_state {
  send_counters& requests;
  recv_counters& answers;
  rr_counters& rr;
  latency_histogram& latency;
};

// The client's side of one stream on a connected socket: transactions paced at plan.pps (0: each as soon
// as the window has room) until the duration ends, then waits for those in flight (UDP: up to their
// timeout; TCP: until answered, or stopped).
void run_udp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out);
void run_tcp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out);

// The server's side of a TCP_RR stream: reads requests of plan.message_size bytes and answers each with
// plan.response_size bytes, until the client shuts its side down (EOF) or a stop request. `requests`
// counts what it read, `answers` what it wrote.
void run_tcp_rr_server(std::stop_token stop, const stream_plan& plan, recv_counters& requests, send_counters& answers,
                       stream_outcome& out);

// Whether a UDP_RR request carries its transaction's number in its first 8 bytes, as netload writes them:
// a request of 16 bytes or more always does (the payload header: number and send time), one of 8 to 15
// bytes when the answer has room to echo it. The server answers each number at most once.
constexpr bool rr_request_numbered(std::size_t request_size, std::size_t response_size) noexcept {
  return request_size >= 16 || (request_size >= 8 && response_size >= 8);
}

// The first byte of every unnumbered UDP_RR answer a netserve sends, and of no request netload sends (its
// unnumbered requests are zeros). An unnumbered request that begins with it is an answer come back, from
// this netserve or from another one a peer pointed it at (two netserves registered at each other's ports),
// and gets none: no chain of answers outlives one hop. Numbered answers echo their number instead.
inline constexpr unsigned char rr_answer_mark = 0xA5;

// When a UDP_RR server answers, on its own clock: from the start instant, less the clock difference two
// hosts a run trusts may have (the harness's start-skew bound is 20 ms by default), to the end of the test
// plus the longest a client waits for its last answers (rr_timeout_ceiling_ns): an answer after that
// would be counted lost.
inline constexpr std::int64_t rr_answer_lead_ns = 100'000'000;
inline constexpr std::int64_t rr_answer_drain_ns = rr_timeout_ceiling_ns;

// The request numbers a UDP_RR server has answered, so that none is answered twice: a request that comes
// again (duplicated on the way, replayed, or the server's own answer reflected back to it, which echoes
// the number) gets no second answer. Numbers more than `span` below the highest one seen are too old to
// tell and get none either: a client has at most max_rr_burst + 1 in flight and gave the older ones up.
class rr_request_numbers {
 public:
  static constexpr std::uint64_t span = 4096;
  // True the first time `n` comes (answer it), false for a repeat or a number too old to tell.
  bool first_time(std::uint64_t n) noexcept;

 private:
  bool set(std::uint64_t n) noexcept;  // marks n; returns whether it was marked already
  bool any_ = false;
  std::uint64_t highest_ = 0;
  std::uint64_t seen_[span / 64] = {};  // bit n % span: n answered, for n in (highest_ - span, highest_]
};

// The server's answer to a UDP request: the first bytes of the request (its number and send time, as many
// as both sizes hold) then zeros, `response_size` bytes in all, written into `out` (at least that size).
void fill_udp_answer(const unsigned char* request, std::size_t request_copied, unsigned char* out,
                     std::size_t response_size) noexcept;

// One UDP_RR stream's answers from netserve's shared port socket: to the client stream's port, from the
// address the client talks to (IP_PKTINFO: the port's socket is bound to the wildcard, and the client's
// connected socket takes answers only from the address it sent to). Built once, when the test attaches.
class udp_answerer {
 public:
  udp_answerer(const endpoint& to, const endpoint& from) noexcept;
  // Sends `size` bytes of `answer` without blocking; false when the kernel refused it (a full buffer).
  bool send(int fd, const unsigned char* answer, std::size_t size) const noexcept;

 private:
  endpoint to_;
  alignas(cmsghdr) unsigned char control_[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  std::size_t control_len_ = 0;
};

}  // namespace nb
