#include "netload/netperf/netserver_peer.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/data/streams.hpp"
#include "core/sys/eintr.hpp"
#include "core/sys/kernel_features.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/netperf/netperf_wire.hpp"
#include "netload/native/client.hpp"
#include "netload/native/user_stop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nb::load {

namespace np = netperf;

namespace {

using namespace std::chrono_literals;

void check_options(const client_options& o) {
  auto no = [](const std::string& what) { throw usage_error(fmt::format("--peer netserver: {}", what)); };
  if (o.kind != test_kind::udp_stream && o.kind != test_kind::tcp_stream) no("UDP_STREAM and TCP_STREAM only");
  if (o.reverse || o.bidir) no("netload sends, netserver receives: no --reverse or --bidir");
  if (o.streams != 1) no("one stream (netperf's tests have one)");
  if (!o.psk_file.empty()) no("netserver has no key (--psk-file)");
  if (o.omit_s > 0) no("netserver reports its counts once, at the end: no --omit");
  if (o.remote_cpu >= 0 || o.remote_cpu_util) no("netserver's CPU (-T ,N, -C) is not asked for");
  // Refused, not ignored: netserver would not honour it.
  if (o.receive != recv_mode::automatic)
    no("netserver reads its own way: no --recv-mode, --recv-copy or --recv-discard");
}

// For a whole step, however netserver trickles its bytes.
struct step_deadline {
  std::chrono::milliseconds span;
  std::int64_t give_up = mono_ns() + span.count() * 1'000'000;
};

// Also ends at the stop's grace; a signal meanwhile is taken (stop.take() may throw).
void wait_for(int fd, short events, const step_deadline& d, const char* what, polled_stop& stop) {
  for (;;) {
    const std::int64_t now = mono_ns();
    if (now >= stop.deadline_mono_ns()) stop.grace_over();
    if (now >= d.give_up)
      throw std::runtime_error(
          fmt::format("netserver: timed out after {:g} s {}", std::chrono::duration<double>(d.span).count(), what));
    pollfd p[2] = {{fd, events, 0}, {stop.fd(), POLLIN, 0}};
    const std::int64_t left = std::min(d.give_up, stop.deadline_mono_ns()) - now;
    const int n = ::poll(p, 2, static_cast<int>(left / 1'000'000 + 1));
    if (n < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
    if (n > 0 && p[1].revents) stop.take();
    if (n > 0 && p[0].revents) return;
  }
}

void connect_within(int fd, const endpoint& to, std::chrono::milliseconds timeout, polled_stop& stop) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (::connect(fd, to.data(), to.size()) != 0) {
    if (errno != EINPROGRESS)
      throw std::system_error(errno, std::generic_category(), fmt::format("connecting to {}", to.to_string()));
    wait_for(fd, POLLOUT, step_deadline{timeout}, "connecting", stop);
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error) throw std::system_error(error, std::generic_category(), fmt::format("connecting to {}", to.to_string()));
  }
  ::fcntl(fd, F_SETFL, flags);
}

void send_block(int fd, const np::block& b, polled_stop& stop) {
  const step_deadline d{10s};
  std::size_t put = 0;
  while (put < b.size()) {
    wait_for(fd, POLLOUT, d, "sending a request", stop);
    const ssize_t n = ::send(fd, b.data() + put, b.size() - put, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && !nb::transient_errno(errno))
      throw std::system_error(errno, std::generic_category(), "netserver control connection");
    if (n > 0) put += static_cast<std::size_t>(n);
  }
}

np::block recv_block(int fd, std::chrono::milliseconds timeout, const char* what, polled_stop& stop) {
  const step_deadline d{timeout};
  np::block b{};
  std::size_t got = 0;
  while (got < b.size()) {
    wait_for(fd, POLLIN, d, what, stop);
    const ssize_t n = ::recv(fd, b.data() + got, b.size() - got, MSG_DONTWAIT);
    if (n == 0) throw std::runtime_error(fmt::format("netserver closed the control connection {}", what));
    if (n < 0 && !nb::transient_errno(errno))
      throw std::system_error(errno, std::generic_category(), "netserver control connection");
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return b;
}

void check_errno(const np::block& b, const char* what) {
  if (const std::int32_t e = np::decode_header(b).value; e != 0)
    throw std::runtime_error(fmt::format("netserver refused {}: remote error {} ({})", what, e, std::strerror(e)));
}

// `wait_s`: to the start instant. netserver's timer runs from its answer and must not end the test early.
np::omni_request make_request(const client_options& o, std::uint16_t local_port, int family, double wait_s) {
  np::omni_request r;
  const bool udp = o.kind == test_kind::udp_stream;
  r.recv_buf_size = o.remote_buffer > 0 ? o.remote_buffer : -1;
  r.send_buf_size = -1;
  r.receive_size = o.recv_size ? o.recv_size : 0xffffffffU;  // -1: netserver's choice
  r.send_size = 0xffffffffU;
  r.send_alignment = r.recv_alignment = 8;  // netperf's defaults
  r.test_length =
      static_cast<std::int32_t>(std::min(std::ceil(o.duration_s + wait_s), double{INT32_MAX - np::pad_time_s}));
  r.ipfamily = family == AF_INET6 ? np::nf_inet6 : np::nf_inet;
  r.socket_type = udp ? np::nst_dgram : np::nst_stream;
  r.protocol = udp ? np::ipproto_udp : np::ipproto_tcp;
  r.direction = np::dir_recv;
  r.netperf_port = local_port;
  r.cong_control = o.congestion;
  return r;
}

fd_handle data_socket(const client_options& o, const endpoint& server) {
  fd_handle fd = make_socket(server.family(), o.kind == test_kind::udp_stream ? SOCK_DGRAM : SOCK_STREAM);
  endpoint local = o.local_address.empty() ? endpoint::from_numeric(server.family() == AF_INET6 ? "::" : "0.0.0.0", 0)
                                           : endpoint::from_numeric(o.local_address, 0);
  if (::bind(fd.get(), local.data(), local.size()) != 0)
    throw std::system_error(errno, std::generic_category(), "binding the data socket");
  if (o.local_buffer > 0) set_send_buffer(fd.get(), o.local_buffer);
  if (!o.congestion.empty()) set_tcp_congestion(fd.get(), o.congestion);
  return fd;
}

// netserver's datagram count is 32-bit: bytes / message size when that agrees modulo 2^32.
flow_figures receiver_of(const np::omni_results& res, const client_options& o, double seconds) {
  flow_figures f;
  f.bytes = res.bytes_received;
  f.packets = res.recv_calls;
  if (o.kind == test_kind::udp_stream && o.message_size && res.bytes_received % o.message_size == 0 &&
      static_cast<std::uint32_t>(res.bytes_received / o.message_size) == res.recv_calls)
    f.packets = res.bytes_received / o.message_size;
  f.seconds = seconds;
  f.socket_buffer = res.recv_buf_size;
  f.batching = fmt::format("netserver, {}", no_drop_count);
  return f;
}

// netserver reports once, at the end: an interval has the sender's figures only.
struct sender_intervals {
  const client_events& events;
  std::int64_t start_ns = 0, end_ns = 0, step = 0;
  std::vector<interval_figures> taken{};
  std::uint64_t packets = 0, bytes = 0;  // at the last boundary

  std::int64_t next() const { return start_ns + static_cast<std::int64_t>(taken.size() + 1) * step; }
  // Not at the end's boundary: the last interval is taken once the sending has ended.
  void poll(const stream_set& streams) {
    if (step && next() < end_ns && wall_ns() >= next()) take(streams, next());
  }
  void take(const stream_set& streams, std::int64_t until) {
    std::uint64_t p = 0, b = 0;
    streams.totals(p, b);
    interval_figures f;
    f.index = static_cast<std::uint32_t>(taken.size());
    f.start_ns = start_ns + static_cast<std::int64_t>(taken.size()) * step;
    f.end_ns = std::min(until, end_ns);
    f.sent_packets = p - packets;
    f.sent_bytes = b - bytes;
    packets = p, bytes = b;
    taken.push_back(f);
    if (events.interval) events.interval(f);
  }
};

side_counts send_for(const client_options& o, int fd, std::int64_t start_wall_ns, polled_stop& stop,
                     sender_intervals& samples) {
  stream_set streams(1, true, o.kind, o.message_size);
  stream_plan plan;
  plan.fd = fd;
  plan.message_size = o.message_size;
  plan.pps = o.target_pps();
  plan.start_wall_ns = start_wall_ns;
  plan.duration_ns = s_to_ns(o.duration_s);
  plan.batch = o.batch ? o.batch : default_batch(o.message_size);
  plan.gso = o.send_gso;
  plan.cpu = o.local_cpu;
  plan.send_call = o.zerocopy ? tcp_send_call::zerocopy : o.send_copy ? tcp_send_call::copy : tcp_send_call::sendfile;
  samples.start_ns = start_wall_ns;
  samples.end_ns = start_wall_ns + plan.duration_ns;
  samples.step = o.interval_s > 0 ? s_to_ns(o.interval_s) : 0;
  streams.start(0, plan);
  // Before the instant a stop sends nothing: take() throws.
  while (wall_ns() < start_wall_ns) {
    pollfd p{stop.fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>((start_wall_ns - wall_ns()) / 1'000'000, 0, 10))) > 0)
      stop.take();
  }
  stop.begin();
  // For a sender stuck on a full socket.
  const std::int64_t give_up =
      mono_ns() + std::max<std::int64_t>(0, start_wall_ns - wall_ns()) + plan.duration_ns + s_to_ns(10);
  while (!streams.all_done() && mono_ns() < give_up) {
    pollfd p{stop.fd(), POLLIN, 0};
    if (::poll(&p, 1, 10) > 0 && stop.take()) break;
    samples.poll(streams);
  }
  streams.stop();
  if (samples.step) samples.take(streams, stop.stopped() ? stop.stop_wall_ns() : wall_ns());
  return streams.counts();
}

// As read_start_line (client.hpp), watching for the user's stop.
std::int64_t read_start_instant(const client_events& events, polled_stop& stop) {
  if (events.armed) events.armed();
  std::string line;
  const std::int64_t give_up = mono_ns() + s_to_ns(25);
  while (line.find('\n') == std::string::npos) {
    if (mono_ns() >= give_up) throw std::runtime_error("--start-on-stdin: no start instant within 25 s");
    pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {stop.fd(), POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>((give_up - mono_ns()) / 1'000'000 + 1)) <= 0) continue;
    if (p[1].revents) stop.take();
    if (!p[0].revents) continue;
    char buf[128];
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0 || (n < 0 && !nb::transient_errno(errno)))
      throw std::runtime_error("--start-on-stdin: standard input closed before a start instant came");
    if (n > 0) line.append(buf, static_cast<std::size_t>(n));
    if (line.size() > 256) throw std::runtime_error("--start-on-stdin: no start instant in the first line");
  }
  return parse_start_line(std::string_view(line).substr(0, line.find('\n'))).first;
}

// As netperf ends a test: three empty datagrams (not counted) or the close.
np::omni_results end_test(const client_options& o, fd_handle& data, int control, polled_stop& stop) {
  if (o.kind == test_kind::udp_stream)
    for (int i = 0; i < 3; ++i) ::send(data.get(), "", 0, MSG_DONTWAIT);
  data.reset();
  const auto results_wait = std::chrono::milliseconds(s_to_ns(np::pad_time_s + 30) / 1'000'000);
  const np::block end = recv_block(control, results_wait, "waiting for its results", stop);
  check_errno(end, "its results");
  ::shutdown(control, SHUT_WR);  // as netperf's shutdown_control
  return np::decode_results(end);
}

// Read before the request, whose test_length counts the wait. 0: now.
std::int64_t requested_start_ns(const client_options& o, const client_events& events, polled_stop& stop) {
  const std::int64_t requested = o.start_on_stdin ? read_start_instant(events, stop)
                                 : o.start_at     ? static_cast<std::int64_t>(*o.start_at * 1e9)
                                                  : 0;
  if (requested && requested < wall_ns())
    throw std::runtime_error(
        fmt::format("start instant {:.6f} is in the past: refused; give an instant in the future", ns_to_s(requested)));
  return requested;
}

}  // namespace

test_result run_netserver_test(const client_options& o, const client_events& events) {
  check_options(o);
  test_result r = failed_result(o, "");
  r.server_version = netserver_peer_name;
  r.receiver_counted_by = netserver_peer_name;
  polled_stop stop;  // before the data thread starts: it inherits the blocked signals
  try {
    const endpoint server = endpoint::resolve(o.host, o.port, o.family);
    const auto connect_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.connect_timeout_s * 1000));
    fd_handle control = make_socket(server.family(), SOCK_STREAM);
    connect_within(control.get(), server, connect_timeout, stop);
    const std::int64_t requested = requested_start_ns(o, events, stop);
    r.requested_start = static_cast<double>(requested) / 1e9;
    fd_handle data = data_socket(o, server);
    const double wait_s = requested ? ns_to_s(requested - wall_ns()) : 0;
    send_block(control.get(),
               np::encode_request(make_request(o, endpoint::local_of(data.get()).port(), server.family(), wait_s)),
               stop);
    const np::block answer =
        recv_block(control.get(), connect_timeout,
                   "waiting for its answer to the request (is a netserver listening there?)", stop);
    check_errno(answer, "the test");
    const np::omni_setup setup = np::decode_setup(answer);
    endpoint to = server;
    to.set_port(peer_port(setup.data_port, "netserver's data port"));
    connect_within(data.get(), to, connect_timeout, stop);
    const int sndbuf = send_buffer(data.get());
    if (o.kind == test_kind::udp_stream) r.path_mtu = path_mtu(data.get(), server.family());

    client_options sending = o;
    if (o.kind == test_kind::udp_stream) r.segmentation = resolve_gso(sending, to, endpoint::local_of(data.get()));
    sender_intervals samples{events};
    const side_counts sent = send_for(sending, data.get(), std::max(requested, wall_ns() + 1'000'000), stop, samples);
    const bool interrupted = stop.stopped();  // a later stop changes no figure
    const np::omni_results res = end_test(o, data, control.get(), stop);

    const double secs = ns_to_s(sent.elapsed_ns);
    r.actual_start = static_cast<double>(sent.start_wall_ns) / 1e9;
    r.intervals = std::move(samples.taken);
    r.sender = sender_figures(sent, secs, sent.start_wall_ns, sndbuf, sent.batching);
    if (r.segmentation) settle_segmentation(*r.segmentation, r.sender.batching);
    r.receiver = receiver_of(res, o, secs);
    compute_rates(r.receiver);
    r.receive_engine = "socket";
    reconcile(r, 0, 0);
    r.ok = sent.error.empty();
    r.error = sent.error;
    if (interrupted)
      r.interrupted =
          interruption{stop.signal(), std::max(0.0, ns_to_s(stop.stop_wall_ns() - sent.start_wall_ns)), o.duration_s};
  } catch (const stop_abandoned&) {
    return stop.abandoned_result(o);
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  escape_peer_text(r);
  return r;
}

}  // namespace nb::load
