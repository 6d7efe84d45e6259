#include "core/data/rr.hpp"

#include "core/base/clock.hpp"
#include "core/data/streams.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/eintr.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace nb {
namespace {

constexpr std::size_t number_size = 8;

// Slot n % size holds transaction n: an unanswered old one shuts the window until its timeout, as netperf's.
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
  // 0: not in flight.
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

// A client behind the schedule skips the missed slots: a burst would queue its own requests in the
// latency it measures. The rate shows what was missed.
class rr_schedule {
 public:
  rr_schedule(double pps, std::int64_t start) noexcept : step_ns_(pps > 0 ? 1e9 / pps : 0), start_(start) {}
  bool due(std::int64_t now) const noexcept { return step_ns_ <= 0 || now >= at(); }
  std::int64_t next() const noexcept { return step_ns_ <= 0 ? 0 : at(); }
  void sent(std::int64_t now) noexcept {
    if (step_ns_ <= 0) return;
    ++slot_;
    if (now - at() > static_cast<std::int64_t>(step_ns_)) {
      start_ = now;
      slot_ = 1;
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

// Matched by its number, or to the oldest transaction when the messages carry none.
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
  } else if (n < w.oldest()) {  // given up already
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

struct udp_rr_state {
  udp_rr_state(const stream_plan& p, rr_client_state& state, std::int64_t start)
      : plan(p),
        s(state),
        numbered(p.message_size >= number_size && p.response_size >= number_size),
        request(std::max<std::size_t>(p.message_size, 1), 0),
        answer(std::max<std::size_t>(p.response_size, 1) + 1),
        w(p.burst + 1),
        schedule(p.pps, start) {}
  const stream_plan& plan;
  rr_client_state& s;
  const bool numbered;
  std::vector<unsigned char> request, answer;
  rr_window w;
  rr_schedule schedule;
  std::uint64_t longest = 0;  // round trip: the timeout follows it
};

// False when a request can never be sent (out.error).
bool send_udp_requests(udp_rr_state& u, std::int64_t now, stream_outcome& out) {
  const stream_plan& plan = u.plan;
  while (u.w.room() && u.schedule.due(now)) {
    const std::uint64_t n = u.w.issued();
    if (plan.message_size >= payload_header_size) write_payload_header(u.request.data(), n, wall_ns());
    else if (u.numbered) write_number(u.request.data(), n);
    now = mono_ns();
    if (retry_eintr([&] { return ::send(plan.fd, u.request.data(), plan.message_size, 0); }) < 0) {
      if (errno == EMSGSIZE) {
        out.error = fmt::format("send: a request of {} bytes does not fit the path MTU", plan.message_size);
        return false;
      }
      u.s.requests.errors.add(1);  // refused: the number is not reused
      u.w.close(u.w.open(now));
      u.schedule.sent(now);
      continue;
    }
    u.w.open(now);
    u.schedule.sent(now);
    u.s.requests.packets.add(1);
    u.s.requests.bytes.add(plan.message_size);
  }
  return true;
}

void read_udp_answers(udp_rr_state& u) {
  for (;;) {
    ssize_t r = ::recv(u.plan.fd, u.answer.data(), u.answer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (r < 0) break;  // ECONNREFUSED too: the count shows that loss
    const std::int64_t got = mono_ns();
    if (static_cast<std::size_t>(r) != u.plan.response_size) u.s.rr.unmatched.add(1);
    else take_udp_answer(u.s, u.w, u.answer.data(), static_cast<std::size_t>(r), u.numbered, got, u.longest);
  }
}

// TCP answers come in order.
struct tcp_rr_state {
  tcp_rr_state(const stream_plan& p, rr_client_state& state, std::int64_t start)
      : plan(p),
        s(state),
        request(std::max<std::size_t>(p.message_size, 1), 0x5a),
        buffer(std::max<std::size_t>(p.response_size, 64 << 10)),
        sent_ns(p.burst + 1),
        schedule(p.pps, start) {}
  bool window_open() const noexcept { return issued - answered < sent_ns.size(); }
  const stream_plan& plan;
  rr_client_state& s;
  std::vector<unsigned char> request, buffer;
  std::vector<std::int64_t> sent_ns;
  std::uint64_t issued = 0, answered = 0;
  std::size_t written = 0;  // 0 = no request under way
  std::uint64_t answer_bytes = 0;
  bool writing = false;
  rr_schedule schedule;
};

enum class rr_io { idle, progress, failed };

rr_io write_tcp_request(tcp_rr_state& t, stream_outcome& out) {
  ssize_t r =
      ::send(t.plan.fd, t.request.data() + t.written, t.plan.message_size - t.written, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (r < 0 && !transient_errno(errno)) {
    out.error = fmt::format("send: {}", std::strerror(errno));
    return rr_io::failed;
  }
  if (r <= 0) return rr_io::idle;
  t.written += static_cast<std::size_t>(r);
  t.s.requests.bytes.add(static_cast<std::uint64_t>(r));
  if (t.written == t.plan.message_size) {
    t.writing = false;
    t.s.requests.packets.add(1);
  }
  return rr_io::progress;
}

rr_io read_tcp_answers(tcp_rr_state& t, stream_outcome& out) {
  ssize_t r = ::recv(t.plan.fd, t.buffer.data(), t.buffer.size(), MSG_DONTWAIT);
  if (r == 0) {
    out.error = "the server closed the data connection during the test";
    return rr_io::failed;
  }
  if (r < 0 && !transient_errno(errno)) {
    out.error = fmt::format("recv: {}", std::strerror(errno));
    return rr_io::failed;
  }
  if (r < 0) return rr_io::idle;
  const std::int64_t got = mono_ns(), wall = wall_ns();
  const std::size_t size = t.plan.response_size;
  t.answer_bytes += static_cast<std::uint64_t>(r);
  for (; t.answer_bytes >= size && t.answered < t.issued; t.answer_bytes -= size) {
    record_answer(t.s, size, got - t.sent_ns[t.answered % t.sent_ns.size()], wall);
    ++t.answered;
  }
  return rr_io::progress;
}

}  // namespace

void run_udp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out) {
  out.batching = "send/recv";
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  udp_rr_state u(plan, s, start);
  std::int64_t give_up = 0;  // for the last transactions, after the end
  for (;;) {
    const std::int64_t now = mono_ns();
    const bool sending = now < end && !stop.stop_requested();
    if (sending && !send_udp_requests(u, now, out)) return;
    if (!sending) {
      if (give_up == 0) {
        give_up = now + rr_timeout_ns(u.longest);
        out.elapsed_ns = now - start;  // the wait for the last is no part of the rate
      }
      if (u.w.empty() || stop.stop_requested() || now >= give_up) break;
    }
    std::int64_t until = sending ? end : give_up;
    if (!u.w.empty()) until = std::min(until, u.w.oldest_sent() + rr_timeout_ns(u.longest));
    if (sending && u.w.room() && plan.pps > 0) until = std::min(until, u.schedule.next());
    // POLLERR too: a pending ICMP error would wake ppoll at once, every pass, until a recv() takes it.
    if (rr_wait_ready(plan.fd, POLLIN, until) & (POLLIN | POLLERR)) read_udp_answers(u);
    expire(s, u.w, mono_ns(), rr_timeout_ns(u.longest));
  }
  while (!u.w.empty()) {
    s.rr.timeouts.add(1);
    u.w.close(u.w.oldest());
  }
}

void run_tcp_rr_client(std::stop_token stop, const stream_plan& plan, rr_client_state s, stream_outcome& out) {
  out.batching = "send/recv";
  std::int64_t start = 0, end = 0;
  begin_stream(stop, plan, out, start, end);
  tcp_rr_state t(plan, s, start);
  while (!stop.stop_requested()) {
    std::int64_t now = mono_ns();
    const bool sending = now < end;
    if (!sending && out.elapsed_ns == 0) out.elapsed_ns = now - start;
    if (!t.writing && sending && t.window_open() && t.schedule.due(now)) {
      t.schedule.sent(now);
      t.sent_ns[t.issued++ % t.sent_ns.size()] = now;
      t.writing = true;
      t.written = 0;
    }
    const rr_io wrote = t.writing ? write_tcp_request(t, out) : rr_io::idle;
    if (wrote == rr_io::failed) return;
    const rr_io read = read_tcp_answers(t, out);
    if (read == rr_io::failed) return;
    if (!sending && !t.writing && t.answered == t.issued) break;
    if (wrote == rr_io::progress || read == rr_io::progress) continue;
    std::int64_t until = sending ? end : now + rr_poll_ns;
    if (sending && !t.writing && t.window_open() && plan.pps > 0) until = std::min(until, t.schedule.next());
    rr_wait_ready(plan.fd, static_cast<short>(POLLIN | (t.writing ? POLLOUT : 0)), until);
  }
  if (out.elapsed_ns == 0) out.elapsed_ns = mono_ns() - start;
  ::shutdown(plan.fd, SHUT_WR);  // the server's loop ends at this EOF, after every answer
}

}  // namespace nb
