#include "core/wire/netperf_wire.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>

namespace nb::netperf {

namespace {

constexpr std::size_t data_at = 8;  // the test-specific data follows the type and the errno/CPU word

// Word i of the block (0, 1: the header; 2 on: the test-specific data), as netperf converts it.
std::uint32_t word(const block& b, std::size_t i) noexcept {
  return std::uint32_t{b[4 * i]} << 24 | std::uint32_t{b[4 * i + 1]} << 16 | std::uint32_t{b[4 * i + 2]} << 8 | b[4 * i + 3];
}
void put(block& b, std::size_t i, std::uint32_t v) noexcept {
  b[4 * i] = static_cast<unsigned char>(v >> 24);
  b[4 * i + 1] = static_cast<unsigned char>(v >> 16);
  b[4 * i + 2] = static_cast<unsigned char>(v >> 8);
  b[4 * i + 3] = static_cast<unsigned char>(v);
}

// Reads the test-specific data's words in order, from field 0.
class reader {
 public:
  explicit reader(const block& b) : b_(b) {}
  std::uint32_t u() noexcept { return word(b_, 2 + i_++); }
  std::int32_t i() noexcept { return static_cast<std::int32_t>(u()); }
  float f() noexcept { return std::bit_cast<float>(u()); }
  // A char[size] at byte `at` of the test-specific data: must hold a NUL (netperf strncpy()s and ends it).
  std::string text(std::size_t at, std::size_t size, const char* field) const {
    const char* p = reinterpret_cast<const char*>(b_.data() + data_at + at);
    const void* end = std::memchr(p, 0, size);
    if (!end) throw protocol_error(fmt::format("netperf message: '{}' is not NUL-terminated", field));
    return std::string(p, static_cast<const char*>(end));
  }

 private:
  const block& b_;
  std::size_t i_ = 0;
};

class writer {
 public:
  writer(std::int32_t type, std::int32_t value) {
    b_.fill(0);
    put(b_, 0, static_cast<std::uint32_t>(type));
    put(b_, 1, static_cast<std::uint32_t>(value));
  }
  void u(std::uint32_t v) noexcept { put(b_, 2 + i_++, v); }
  void i(std::int32_t v) noexcept { u(static_cast<std::uint32_t>(v)); }
  void f(float v) noexcept { u(std::bit_cast<std::uint32_t>(v)); }
  // At most size - 1 characters and a NUL, as netperf's strncpy and its terminator give.
  void text(std::size_t at, std::size_t size, const std::string& s) noexcept {
    std::memcpy(b_.data() + data_at + at, s.data(), std::min(s.size(), size - 1));
  }
  const block& done() const noexcept { return b_; }

 private:
  block b_{};
  std::size_t i_ = 0;
};

void expect_type(const block& b, std::int32_t type, const char* what) {
  const auto got = static_cast<std::int32_t>(word(b, 0));
  if (got != type) throw protocol_error(fmt::format("netperf {}: message type {}, expected {}", what, got, type));
}

}  // namespace

header decode_header(const block& b) noexcept {
  return {static_cast<std::int32_t>(word(b, 0)), static_cast<std::int32_t>(word(b, 1))};
}

omni_request decode_request(const block& b) {
  expect_type(b, type_request, "request");
  reader in(b);
  omni_request r;
  r.send_buf_size = in.i();
  r.send_size = in.u();
  r.send_alignment = in.u();
  r.send_offset = in.u();
  r.send_width = in.u();
  r.request_size = in.i();
  r.recv_buf_size = in.i();
  r.receive_size = in.u();
  r.recv_alignment = in.u();
  r.recv_offset = in.u();
  r.recv_width = in.u();
  r.response_size = in.i();
  r.flags = in.u();
  r.cpu_rate = in.f();
  r.test_length = in.i();
  r.so_rcvavoid = in.u();
  r.so_sndavoid = in.u();
  r.send_dirty_count = in.u();
  r.recv_dirty_count = in.u();
  r.recv_clean_count = in.u();
  r.data_port = in.u();
  r.ipfamily = in.u();
  r.socket_type = in.u();
  r.protocol = in.u();
  r.direction = in.u();
  r.netperf_port = in.u();
  r.interval_burst = in.u();
  r.interval_usecs = in.u();
  for (auto& w : r.netperf_ip) w = in.u();
  for (auto& w : r.netserver_ip) w = in.u();
  r.socket_prio = in.i();
  r.socket_tos = in.i();
  r.cong_control = in.text(152, 16, "cong_control");
  r.fill_file = in.text(168, 32, "fill_file");
  return r;
}

block encode_request(const omni_request& r, std::int32_t cpu) {
  writer out(type_request, cpu);
  out.i(r.send_buf_size);
  out.u(r.send_size);
  out.u(r.send_alignment);
  out.u(r.send_offset);
  out.u(r.send_width);
  out.i(r.request_size);
  out.i(r.recv_buf_size);
  out.u(r.receive_size);
  out.u(r.recv_alignment);
  out.u(r.recv_offset);
  out.u(r.recv_width);
  out.i(r.response_size);
  out.u(r.flags);
  out.f(r.cpu_rate);
  out.i(r.test_length);
  out.u(r.so_rcvavoid);
  out.u(r.so_sndavoid);
  out.u(r.send_dirty_count);
  out.u(r.recv_dirty_count);
  out.u(r.recv_clean_count);
  out.u(r.data_port);
  out.u(r.ipfamily);
  out.u(r.socket_type);
  out.u(r.protocol);
  out.u(r.direction);
  out.u(r.netperf_port);
  out.u(r.interval_burst);
  out.u(r.interval_usecs);
  for (auto w : r.netperf_ip) out.u(w);
  for (auto w : r.netserver_ip) out.u(w);
  out.i(r.socket_prio);
  out.i(r.socket_tos);
  out.text(152, 16, r.cong_control);
  out.text(168, 32, r.fill_file);
  return out.done();
}

omni_setup decode_setup(const block& b) {
  expect_type(b, type_setup, "response");
  reader in(b);
  omni_setup s;
  s.recv_buf_size = in.i();
  s.receive_size = in.u();
  s.recv_width = in.i();
  s.send_buf_size = in.i();
  s.send_size = in.u();
  s.send_width = in.i();
  s.flags = in.u();
  s.cpu_rate = in.f();
  s.test_length = in.u();
  s.so_rcvavoid = in.u();
  s.so_sndavoid = in.u();
  s.data_port = in.u();
  s.interval_burst = in.u();
  s.interval_usecs = in.u();
  s.cpu_frequency = in.u();
  s.security_info = in.u();
  s.socket_prio = in.i();
  s.socket_tos = in.i();
  s.system_model = in.text(72, 33, "system_model");
  s.cpu_model = in.text(105, 80, "cpu_model");
  s.security_string = in.text(185, 16, "security_string");
  return s;
}

block encode_setup(const omni_setup& s) {
  writer out(type_setup, 0);
  out.i(s.recv_buf_size);
  out.u(s.receive_size);
  out.i(s.recv_width);
  out.i(s.send_buf_size);
  out.u(s.send_size);
  out.i(s.send_width);
  out.u(s.flags);
  out.f(s.cpu_rate);
  out.u(s.test_length);
  out.u(s.so_rcvavoid);
  out.u(s.so_sndavoid);
  out.u(s.data_port);
  out.u(s.interval_burst);
  out.u(s.interval_usecs);
  out.u(s.cpu_frequency);
  out.u(s.security_info);
  out.i(s.socket_prio);
  out.i(s.socket_tos);
  out.text(72, 33, s.system_model);
  out.text(105, 80, s.cpu_model);
  out.text(185, 16, s.security_string);
  return out.done();
}

omni_results decode_results(const block& b) {
  // netserver reuses its setup response's block for the results, converted in place once already: its
  // type word comes back byte-swapped (98 as 0x62000000); netperf never looks at it. Either order is taken.
  const std::uint32_t raw = word(b, 0);
  const auto type = static_cast<std::int32_t>(raw);
  const auto swapped = static_cast<std::int32_t>(__builtin_bswap32(raw));
  auto known = [](std::int32_t t) { return t == type_results || t == type_setup; };
  if (!known(type) && !known(swapped))
    throw protocol_error(fmt::format("netperf results: message type {}, expected {}", type, type_results));
  reader in(b);
  omni_results r;
  r.bytes_received = std::uint64_t{in.u()} << 32;
  r.bytes_received |= in.u();
  r.recv_calls = in.u();
  r.recv_buf_size = in.i();
  r.bytes_sent = std::uint64_t{in.u()} << 32;
  r.bytes_sent |= in.u();
  r.send_calls = in.u();
  r.send_buf_size = in.i();
  r.failed_sends = in.u();
  r.trans_received = in.u();
  r.elapsed_time = in.f();
  r.cpu_util = in.f();
  r.cpu_percent_user = in.f();
  r.cpu_percent_system = in.f();
  r.cpu_percent_iowait = in.f();
  r.cpu_percent_irq = in.f();
  r.cpu_percent_swintr = in.f();
  r.serv_dem = in.f();
  r.cpu_method = in.u();
  r.num_cpus = in.u();
  r.peak_cpu_id = in.i();
  r.peak_cpu_util = in.f();
  r.vendor = in.i();
  r.device = in.i();
  r.subvendor = in.i();
  r.subdevice = in.i();
  r.transport_retrans = in.i();
  r.ifname = in.text(108, 16, "ifname");
  r.driver = in.text(124, 32, "driver");
  r.version = in.text(156, 32, "version");
  r.firmware = in.text(188, 32, "firmware");
  r.bus = in.text(220, 32, "bus");
  r.ifslot = in.text(252, 16, "ifslot");
  r.cong_control = in.text(268, 16, "cong_control");
  return r;
}

block encode_results(const omni_results& r) {
  writer out(type_results, 0);
  out.u(static_cast<std::uint32_t>(r.bytes_received >> 32));
  out.u(static_cast<std::uint32_t>(r.bytes_received));
  out.u(r.recv_calls);
  out.i(r.recv_buf_size);
  out.u(static_cast<std::uint32_t>(r.bytes_sent >> 32));
  out.u(static_cast<std::uint32_t>(r.bytes_sent));
  out.u(r.send_calls);
  out.i(r.send_buf_size);
  out.u(r.failed_sends);
  out.u(r.trans_received);
  out.f(r.elapsed_time);
  out.f(r.cpu_util);
  out.f(r.cpu_percent_user);
  out.f(r.cpu_percent_system);
  out.f(r.cpu_percent_iowait);
  out.f(r.cpu_percent_irq);
  out.f(r.cpu_percent_swintr);
  out.f(r.serv_dem);
  out.u(r.cpu_method);
  out.u(r.num_cpus);
  out.i(r.peak_cpu_id);
  out.f(r.peak_cpu_util);
  out.i(r.vendor);
  out.i(r.device);
  out.i(r.subvendor);
  out.i(r.subdevice);
  out.i(r.transport_retrans);
  out.text(108, 16, r.ifname);
  out.text(124, 32, r.driver);
  out.text(156, 32, r.version);
  out.text(188, 32, r.firmware);
  out.text(220, 32, r.bus);
  out.text(252, 16, r.ifslot);
  out.text(268, 16, r.cong_control);
  return out.done();
}

block encode_error(std::int32_t type, std::int32_t errno_value) { return writer(type, errno_value).done(); }

bool looks_like_request(const unsigned char (&first)[5]) noexcept {
  return first[0] == 0 && first[1] == 0 && (first[4] == 0 || first[4] == 0xff);
}

}  // namespace nb::netperf
