#include "core/wire/netperf/netperf_wire.hpp"

#include <fmt/format.h>

#include <bit>
#include <concepts>
#include <cstring>
#include <type_traits>

namespace nb::netperf {

namespace {

constexpr std::size_t data_at = 8;

// Words 0 and 1 are the header.
std::uint32_t word(const block& b, std::size_t i) noexcept {
  return std::uint32_t{b[4 * i]} << 24 | std::uint32_t{b[4 * i + 1]} << 16 | std::uint32_t{b[4 * i + 2]} << 8 |
         b[4 * i + 3];
}
void put(block& b, std::size_t i, std::uint32_t v) noexcept {
  b[4 * i] = static_cast<unsigned char>(v >> 24);
  b[4 * i + 1] = static_cast<unsigned char>(v >> 16);
  b[4 * i + 2] = static_cast<unsigned char>(v >> 8);
  b[4 * i + 3] = static_cast<unsigned char>(v);
}

// Floats by their bit pattern, 64-bit counts high word first, addresses in four words.
class reader {
 public:
  explicit reader(const block& b) : b_(b) {}
  template <class... Field>
  void operator()(Field&... fields) noexcept {
    (take(fields), ...);
  }
  // netperf strncpy()s and NUL-ends it.
  void text(std::size_t at, std::size_t size, std::string& out, const char* field) const {
    const char* p = reinterpret_cast<const char*>(b_.data() + data_at + at);
    const void* end = std::memchr(p, 0, size);
    if (!end) throw protocol_error(fmt::format("netperf message: '{}' is not NUL-terminated", field));
    out.assign(p, static_cast<const char*>(end));
  }

 private:
  std::uint32_t next() noexcept { return word(b_, 2 + i_++); }
  void take(std::uint32_t& v) noexcept { v = next(); }
  void take(std::int32_t& v) noexcept { v = static_cast<std::int32_t>(next()); }
  void take(float& v) noexcept { v = std::bit_cast<float>(next()); }
  void take(std::uint64_t& v) noexcept {
    v = std::uint64_t{next()} << 32;
    v |= next();
  }
  void take(std::array<std::uint32_t, 4>& words) noexcept {
    for (auto& w : words) w = next();
  }

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
  template <class... Field>
  void operator()(const Field&... fields) noexcept {
    (give(fields), ...);
  }
  // As netperf's strncpy and its terminator give.
  void text(std::size_t at, std::size_t size, const std::string& s, const char*) noexcept {
    std::memcpy(b_.data() + data_at + at, s.data(), std::min(s.size(), size - 1));
  }
  const block& done() const noexcept { return b_; }

 private:
  void give(std::uint32_t v) noexcept { put(b_, 2 + i_++, v); }
  void give(std::int32_t v) noexcept { give(static_cast<std::uint32_t>(v)); }
  void give(float v) noexcept { give(std::bit_cast<std::uint32_t>(v)); }
  void give(std::uint64_t v) noexcept {
    give(static_cast<std::uint32_t>(v >> 32));
    give(static_cast<std::uint32_t>(v));
  }
  void give(const std::array<std::uint32_t, 4>& words) noexcept {
    for (auto w : words) give(w);
  }

  block b_{};
  std::size_t i_ = 0;
};

// Written once for both directions: `io` is a reader or a writer.
template <class IO, class Request>
void fields(IO& io, Request& r) requires std::same_as<std::remove_const_t<Request>, omni_request> {
  io(r.send_buf_size, r.send_size, r.send_alignment, r.send_offset, r.send_width, r.request_size);
  io(r.recv_buf_size, r.receive_size, r.recv_alignment, r.recv_offset, r.recv_width, r.response_size);
  io(r.flags, r.cpu_rate, r.test_length, r.so_rcvavoid, r.so_sndavoid);
  io(r.send_dirty_count, r.recv_dirty_count, r.recv_clean_count);
  io(r.data_port, r.ipfamily, r.socket_type, r.protocol, r.direction, r.netperf_port);
  io(r.interval_burst, r.interval_usecs, r.netperf_ip, r.netserver_ip, r.socket_prio, r.socket_tos);
  io.text(152, 16, r.cong_control, "cong_control");
  io.text(168, 32, r.fill_file, "fill_file");
}

template <class IO, class Setup>
void fields(IO& io, Setup& s) requires std::same_as<std::remove_const_t<Setup>, omni_setup> {
  io(s.recv_buf_size, s.receive_size, s.recv_width, s.send_buf_size, s.send_size, s.send_width);
  io(s.flags, s.cpu_rate, s.test_length, s.so_rcvavoid, s.so_sndavoid, s.data_port);
  io(s.interval_burst, s.interval_usecs, s.cpu_frequency, s.security_info, s.socket_prio, s.socket_tos);
  io.text(72, 33, s.system_model, "system_model");
  io.text(105, 80, s.cpu_model, "cpu_model");
  io.text(185, 16, s.security_string, "security_string");
}

template <class IO, class Results>
void fields(IO& io, Results& r) requires std::same_as<std::remove_const_t<Results>, omni_results> {
  io(r.bytes_received, r.recv_calls, r.recv_buf_size, r.bytes_sent, r.send_calls, r.send_buf_size);
  io(r.failed_sends, r.trans_received, r.elapsed_time);
  io(r.cpu_util, r.cpu_percent_user, r.cpu_percent_system, r.cpu_percent_iowait, r.cpu_percent_irq,
     r.cpu_percent_swintr, r.serv_dem, r.cpu_method, r.num_cpus, r.peak_cpu_id, r.peak_cpu_util);
  io(r.vendor, r.device, r.subvendor, r.subdevice, r.transport_retrans);
  io.text(108, 16, r.ifname, "ifname");
  io.text(124, 32, r.driver, "driver");
  io.text(156, 32, r.version, "version");
  io.text(188, 32, r.firmware, "firmware");
  io.text(220, 32, r.bus, "bus");
  io.text(252, 16, r.ifslot, "ifslot");
  io.text(268, 16, r.cong_control, "cong_control");
}

template <class Message>
Message decoded(const block& b) {
  reader in(b);
  Message m;
  fields(in, m);
  return m;
}

template <class Message>
block encoded(const Message& m, std::int32_t type, std::int32_t value) {
  writer out(type, value);
  fields(out, m);
  return out.done();
}

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
  return decoded<omni_request>(b);
}

block encode_request(const omni_request& r, std::int32_t cpu) { return encoded(r, type_request, cpu); }

omni_setup decode_setup(const block& b) {
  expect_type(b, type_setup, "response");
  return decoded<omni_setup>(b);
}

block encode_setup(const omni_setup& s) { return encoded(s, type_setup, 0); }

omni_results decode_results(const block& b) {
  // netserver reuses its setup block, already converted: the type comes back byte-swapped.
  const std::uint32_t raw = word(b, 0);
  const auto type = static_cast<std::int32_t>(raw);
  const auto swapped = static_cast<std::int32_t>(__builtin_bswap32(raw));
  auto known = [](std::int32_t t) { return t == type_results || t == type_setup; };
  if (!known(type) && !known(swapped))
    throw protocol_error(fmt::format("netperf results: message type {}, expected {}", type, type_results));
  return decoded<omni_results>(b);
}

block encode_results(const omni_results& r) { return encoded(r, type_results, 0); }

block encode_error(std::int32_t type, std::int32_t errno_value) { return writer(type, errno_value).done(); }

bool looks_like_request(const unsigned char (&first)[5]) noexcept {
  return first[0] == 0 && first[1] == 0 && (first[4] == 0 || first[4] == 0xff);
}

}  // namespace nb::netperf
