#include "core/data/rr.hpp"

#include "core/sys/eintr.hpp"
#include "core/base/clock.hpp"
#include "core/data/streams.hpp"
#include "core/data/udp_io.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace nb {
namespace {

constexpr std::int64_t rr_poll_ns = 100'000'000;  // how often a waiting loop looks at its stop token
constexpr std::size_t number_size = 8;         // a transaction's number, echoed by the server

// Waits until `fd` is ready for `events` or `until` (monotonic) comes, at most a poll slice.
short wait_ready(int fd, short events, std::int64_t until) noexcept {
  pollfd p{fd, events, 0};
  const std::int64_t wait = std::clamp<std::int64_t>(until - mono_ns(), 0, rr_poll_ns);
  timespec ts{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
  return ::ppoll(&p, 1, &ts, nullptr) > 0 ? p.revents : 0;
}

// The transactions in flight, by number: slot n % size holds transaction n while it waits. A slot still
// taken keeps the window shut, so an unanswered old transaction stops new ones until its timeout, as
// netperf's does until its own.
class rr_window {
 public:
  explicit rr_window(std::size_t size) : sent_ns_(size, 0) {}
  bool room() const noexcept { return sent_ns_[next_ % sent_ns_.size()] == 0; }
  std::uint64_t open(std::int64_t now) noexcept {
    sent_ns_[next_ % sent_ns_.size()] = now;
    return next_++;
  }
  bool empty() const noexcept { return oldest_ == next_; }
  std::uint64_t oldest() const noexcept { return oldest_; }
  std::int64_t oldest_sent() const noexcept { return sent_ns_[oldest_ % sent_ns_.size()]; }
  // Transaction n's send time if it is in flight, else 0 (answered, given up, or never sent).
  std::int64_t sent(std::uint64_t n) const noexcept {
    return n >= oldest_ && n < next_ ? sent_ns_[n % sent_ns_.size()] : 0;
  }
  void close(std::uint64_t n) noexcept {
    sent_ns_[n % sent_ns_.size()] = 0;
    while (oldest_ < next_ && sent_ns_[oldest_ % sent_ns_.size()] == 0) ++oldest_;
  }
  std::uint64_t issued() const noexcept { return next_; }

 private:
  std::vector<std::int64_t> sent_ns_;
  std::uint64_t next_ = 0, oldest_ = 0;
};

// When the next transaction is due. Paced transactions keep to a schedule counted from the start (no
// drift), but one that fell behind by more than a transaction (the client stalled, the window was shut)
// does not send the backlog in a burst: that would queue the test's own requests, in the very latency it
// measures. The schedule moves on from now instead, and the rate shows what was missed (the target check).
class rr_schedule {
 public:
  rr_schedule(double pps, std::int64_t start) noexcept : step_ns_(pps > 0 ? 1e9 / pps : 0), start_(start) {}
  bool due(std::int64_t now) const noexcept { return step_ns_ <= 0 || now >= at(); }
  std::int64_t next() const noexcept { return step_ns_ <= 0 ? 0 : at(); }
  void sent(std::int64_t now) noexcept {
    if (step_ns_ <= 0) return;
    ++slot_;
    if (now - at() > static_cast<std::int64_t>(step_ns_)) {  // behind by more than one: skip the missed slots
      start_ = now;
      slot_ = 1;  // the next one a step after this one
    }
  }

 private:
  std::int64_t at() const noexcept { return start_ + static_cast<std::int64_t>(static_cast<double>(slot_) * step_ns_); }
  double step_ns_;
  std::int64_t start_;
  std::uint64_t slot_ = 0;
};

void write_number(unsigned char* p, std::uint64_t n) noexcept {
  const std::uint64_t le = htole64(n);
  std::memcpy(p, &le, number_size);
}

void record_answer(rr_client_state& s, std::size_t bytes, std::int64_t rtt_ns, std::int64_t wall) noexcept {
  s.answers.packets.add(1);
  s.answers.bytes.add(bytes);
  if (s.answers.first_arrival_ns.get() == 0) s.answers.first_arrival_ns.set(wall);
  s.answers.last_arrival_ns.set(wall);
  s.latency.record(static_cast<std::uint64_t>(std::max<std::int64_t>(rtt_ns, 0)));
}

// One UDP answer: matched by its number, or to the oldest transaction when the messages carry none.
void take_udp_answer(rr_client_state& s, rr_window& w, const unsigned char* p, std::size_t len, bool numbered,
                     std::int64_t now, std::uint64_t& longest) noexcept {
  std::uint64_t n = w.oldest();
  if (numbered) {
    std::uint64_t le;
    std::memcpy(&le, p, number_size);
    n = le64toh(le);
  }
  if (std::int64_t sent = w.sent(n); sent != 0) {
    const std::int64_t rtt = now - sent;
    longest = std::max<std::uint64_t>(longest, static_cast<std::uint64_t>(std::max<std::int64_t>(rtt, 0)));
    record_answer(s, len, rtt, wall_ns());
    w.close(n);
  } else if (n < w.oldest()) {  // given up already (the window may be empty by now)
    s.rr.late.add(1);
  } else {
    s.rr.unmatched.add(1);
  }
}

void expire(rr_client_state& s, rr_window& w, std::int64_t now, std::int64_t timeout) noexcept {
  while (!w.empty() && now - w.oldest_sent() >= timeout) {
    s.rr.timeouts.add(1);
    w.close(w.oldest());
  }
}

}  // namespace

std::int64_t rr_timeout_ns(std::uint64_t longest_rtt_ns) noexcept {
  if (longest_rtt_ns == 0) return rr_timeout_ceiling_ns;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min<std::uint64_t>(longest_rtt_ns, 1ULL << 40) * 4),
                                  rr_timeout_floor_ns, rr_timeout_ceiling_ns);
}

bool rr_request_numbers::set(std::uint64_t n) noexcept {
  std::uint64_t& word = seen_[(n % span) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (n % 64);
  const bool was = (word & bit) != 0;
  word |= bit;
  return was;
}

bool rr_request_numbers::first_time(std::uint64_t n) noexcept {
  if (!any_ || n > highest_) {
    // The numbers between the old highest and n were never seen: their slots still hold numbers a span
    // older, which must not count as answered ones.
    if (!any_ || n - highest_ >= span) {
      std::fill(std::begin(seen_), std::end(seen_), 0);
    } else {
      for (std::uint64_t k = highest_ + 1; k != n; ++k) seen_[(k % span) / 64] &= ~(std::uint64_t{1} << (k % 64));
      seen_[(n % span) / 64] &= ~(std::uint64_t{1} << (n % 64));
    }
    any_ = true;
    highest_ = n;
    set(n);
    return true;
  }
  if (highest_ - n >= span) return false;  // too old to tell
  return !set(n);
}

void fill_udp_answer(const unsigned char* request, std::size_t request_copied, unsigned char* out,
                     std::size_t response_size) noexcept {
  const std::size_t echoed = std::min({request_copied, response_size, payload_header_size});
  std::memcpy(out, request, echoed);
  std::memset(out + echoed, 0, response_size - echoed);
}

udp_answerer::udp_answerer(const endpoint& to, const endpoint& from) noexcept : to_(to) {
  msghdr h{};
  h.msg_control = control_;
  h.msg_controllen = sizeof control_;
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  auto put = [&](int level, int type, const auto& info) {
    c->cmsg_level = level;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(sizeof info);
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
    control_len_ = CMSG_SPACE(sizeof info);
  };
  if (from.family() == AF_INET6) {
    in6_pktinfo info{};
    info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(from.data())->sin6_addr;
    put(IPPROTO_IPV6, IPV6_PKTINFO, info);
  } else {
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(from.data())->sin_addr;
    put(IPPROTO_IP, IP_PKTINFO, info);
  }
}

bool udp_answerer::send(int fd, const unsigned char* answer, std::size_t size) const noexcept {
  iovec v{const_cast<unsigned char*>(answer), size};
  msghdr h{};
  h.msg_name = const_cast<sockaddr*>(to_.data());
  h.msg_namelen = to_.size();
  h.msg_iov = &v;
  h.msg_iovlen = 1;
  h.msg_control = const_cast<unsigned char*>(control_);
  h.msg_controllen = control_len_;
  return retry_eintr([&] { return ::sendmsg(fd, &h, MSG_DONTWAIT); }) >= 0;
}

void run_udp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out) {
  out.batching = "send/recv";
  const bool numbered = plan.message_size >= number_size && plan.response_size >= number_size;
  std::vector<unsigned char> request(std::max<std::size_t>(plan.message_size, 1), 0);
  std::vector<unsigned char> answer(std::max<std::size_t>(plan.response_size, 1) + 1);
  rr_window w(plan.burst + 1);
  std::uint64_t longest = 0;
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  rr_schedule schedule(plan.pps, start);
  std::int64_t give_up = 0;  // after the end: when the last transactions stop waiting
  for (;;) {
    std::int64_t now = mono_ns();
    const bool sending = now < end && !stop.stop_requested();
    while (sending && w.room() && schedule.due(now)) {
      const std::uint64_t n = w.issued();
      if (plan.message_size >= payload_header_size) write_payload_header(request.data(), n, wall_ns());
      else if (numbered) write_number(request.data(), n);
      now = mono_ns();
      if (retry_eintr([&] { return ::send(plan.fd, request.data(), plan.message_size, 0); }) < 0) {
        if (errno == EMSGSIZE) {
          out.error = fmt::format("send: a request of {} bytes does not fit the path MTU", plan.message_size);
          return;
        }
        s.requests.errors.add(1);  // refused (ENOBUFS, an ICMP error): the number is not reused
        w.close(w.open(now));
        schedule.sent(now);
        continue;
      }
      w.open(now);
      schedule.sent(now);
      s.requests.packets.add(1);
      s.requests.bytes.add(plan.message_size);
    }
    if (!sending) {
      if (give_up == 0) {
        give_up = now + rr_timeout_ns(longest);
        out.elapsed_ns = now - start;  // the rate is over the sending time; the wait for the last is no part of it
      }
      if (w.empty() || stop.stop_requested() || now >= give_up) break;
    }
    std::int64_t until = sending ? end : give_up;
    if (!w.empty()) until = std::min(until, w.oldest_sent() + rr_timeout_ns(longest));
    if (sending && w.room() && plan.pps > 0) until = std::min(until, schedule.next());
    // POLLERR too: a pending ICMP error would wake ppoll at once, every pass, until a recv() takes it.
    if (wait_ready(plan.fd, POLLIN, until) & (POLLIN | POLLERR)) {
      for (;;) {
        ssize_t r = ::recv(plan.fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_TRUNC);
        if (r < 0) break;  // EAGAIN: all read; ECONNREFUSED (an ICMP error) is the loss the count shows
        const std::int64_t got = mono_ns();
        if (static_cast<std::size_t>(r) != plan.response_size) s.rr.unmatched.add(1);
        else take_udp_answer(s, w, answer.data(), static_cast<std::size_t>(r), numbered, got, longest);
      }
    }
    expire(s, w, mono_ns(), rr_timeout_ns(longest));
  }
  // What is still in flight had its chance: given up.
  while (!w.empty()) {
    s.rr.timeouts.add(1);
    w.close(w.oldest());
  }
}

void run_tcp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out) {
  out.batching = "send/recv";
  std::vector<unsigned char> request(std::max<std::size_t>(plan.message_size, 1), 0x5a);
  std::vector<unsigned char> buffer(std::max<std::size_t>(plan.response_size, 64 << 10));
  std::vector<std::int64_t> sent_ns(plan.burst + 1);  // by transaction number: TCP answers come in order
  std::uint64_t issued = 0, answered = 0;
  std::size_t written = 0;      // of the request being written; 0 = none under way
  std::uint64_t answer_bytes = 0;  // of the answer being read
  bool writing = false;
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  rr_schedule schedule(plan.pps, start);
  while (!stop.stop_requested()) {
    std::int64_t now = mono_ns();
    const bool sending = now < end;
    if (!sending && out.elapsed_ns == 0) out.elapsed_ns = now - start;
    if (!writing && sending && issued - answered < sent_ns.size() && schedule.due(now)) {
      schedule.sent(now);
      sent_ns[issued++ % sent_ns.size()] = now;
      writing = true;
      written = 0;
    }
    bool progress = false;
    if (writing) {
      ssize_t r = ::send(plan.fd, request.data() + written, plan.message_size - written, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (r < 0 && !transient_errno(errno)) {
        out.error = fmt::format("send: {}", std::strerror(errno));
        return;
      }
      if (r > 0) {
        written += static_cast<std::size_t>(r);
        s.requests.bytes.add(static_cast<std::uint64_t>(r));
        progress = true;
        if (written == plan.message_size) {
          writing = false;
          s.requests.packets.add(1);
        }
      }
    }
    ssize_t r = ::recv(plan.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (r == 0) {
      out.error = "the server closed the data connection during the test";
      return;
    }
    if (r < 0 && !transient_errno(errno)) {
      out.error = fmt::format("recv: {}", std::strerror(errno));
      return;
    }
    if (r > 0) {
      progress = true;
      const std::int64_t got = mono_ns(), wall = wall_ns();
      answer_bytes += static_cast<std::uint64_t>(r);
      for (; answer_bytes >= plan.response_size && answered < issued; answer_bytes -= plan.response_size) {
        record_answer(s, plan.response_size, got - sent_ns[answered % sent_ns.size()], wall);
        ++answered;
      }
    }
    if (!sending && !writing && answered == issued) break;  // every transaction answered
    if (progress) continue;
    std::int64_t until = sending ? end : now + rr_poll_ns;
    if (sending && !writing && issued - answered < sent_ns.size() && plan.pps > 0) until = std::min(until, schedule.next());
    wait_ready(plan.fd, static_cast<short>(POLLIN | (writing ? POLLOUT : 0)), until);
  }
  if (out.elapsed_ns == 0) out.elapsed_ns = mono_ns() - start;
  ::shutdown(plan.fd, SHUT_WR);  // the server's loop ends at this EOF, after every answer
}

void run_tcp_rr_server(std::stop_token stop, const stream_plan& plan, recv_counters& requests, send_counters& answers,
                       stream_outcome& out) {
  out.batching = "recv/send";
  std::vector<unsigned char> buffer(std::max<std::size_t>(plan.message_size, 64 << 10));
  const std::vector<unsigned char> answer(std::max<std::size_t>(plan.response_size, 1), 0xa5);
  std::uint64_t received = 0, owed = 0;  // request bytes read; answers due and not yet all written
  std::size_t written = 0;               // of the answer being written
  bool eof = false;
  while (!stop.stop_requested()) {
    bool progress = false;
    if (!eof) {
      ssize_t r = ::recv(plan.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (r == 0) eof = true;
      else if (r < 0 && !transient_errno(errno)) {
        out.error = fmt::format("recv: {}", std::strerror(errno));
        return;
      } else if (r > 0) {
        const std::int64_t now = wall_ns();
        if (requests.first_arrival_ns.get() == 0) requests.first_arrival_ns.set(now);
        requests.last_arrival_ns.set(now);
        const std::uint64_t before = received / plan.message_size;
        received += static_cast<std::uint64_t>(r);
        requests.bytes.add(static_cast<std::uint64_t>(r));
        owed += received / plan.message_size - before;
        requests.packets.set(received / plan.message_size);
        progress = true;
      }
    }
    while (owed > 0) {
      ssize_t w = ::send(plan.fd, answer.data() + written, plan.response_size - written, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (transient_errno(errno)) break;
        out.error = fmt::format("send: {}", std::strerror(errno));
        return;
      }
      written += static_cast<std::size_t>(w);
      answers.bytes.add(static_cast<std::uint64_t>(w));
      progress = true;
      if (written == plan.response_size) {
        written = 0;
        --owed;
        answers.packets.add(1);
      }
    }
    if (eof && owed == 0) return;  // every request answered
    if (!progress)
      wait_ready(plan.fd, static_cast<short>((eof ? 0 : POLLIN) | (owed ? POLLOUT : 0)), mono_ns() + rr_poll_ns);
  }
}

}  // namespace nb
