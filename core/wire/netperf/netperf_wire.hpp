#pragma once
// netperf 2.7's control protocol (src/netlib.c, src/nettest_omni.c), both sides: fixed blocks of a type, an
// errno (a request: the CPU to bind) and test data, big-endian words then raw bytes. Since 2.5 every test
// runs as OMNI: request, setup naming a data port, data on its own connection, results.
#include "core/wire/native/protocol.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nb::netperf {

inline constexpr std::size_t message_size = 656;  // 8 + MAXSPECDATA ints, double-aligned
using block = std::array<unsigned char, message_size>;

// src/netlib.h
inline constexpr std::int32_t type_request = 97, type_setup = 98, type_results = 99;
inline constexpr std::int32_t type_passphrase = 6;  // -Z: answered by nothing
inline constexpr std::int32_t unknown_test_errno = 998;

// From the server's view: STREAM tests are recv, RR both.
inline constexpr std::uint32_t dir_xmit = 0x2, dir_recv = 0x4;
// src/nettest_bsd.h
inline constexpr std::uint32_t flag_no_delay = 0x1, flag_connect_test = 0x4, flag_measure_cpu = 0x8;
inline constexpr std::int32_t ipproto_tcp = 6, ipproto_udp = 17;
inline constexpr std::uint32_t nf_inet = 4, nf_inet6 = 6;
inline constexpr std::uint32_t nst_stream = 1, nst_dgram = 2;
// PAD_TIME: the server pads a receiving test's timer, then subtracts it.
inline constexpr int pad_time_s = 4;

struct header {
  std::int32_t type = 0;
  std::int32_t value = 0;  // request: CPU to bind (-1: none); response: errno
};

// netperf's struct omni_request_struct.
struct omni_request {
  std::int32_t send_buf_size = -1;
  std::uint32_t send_size = 0, send_alignment = 0, send_offset = 0, send_width = 0;
  std::int32_t request_size = 0;
  std::int32_t recv_buf_size = -1;
  std::uint32_t receive_size = 0, recv_alignment = 0, recv_offset = 0, recv_width = 0;
  std::int32_t response_size = 0;
  std::uint32_t flags = 0;
  float cpu_rate = 0;
  std::int32_t test_length = 0;  // seconds; negative: transactions or bytes
  std::uint32_t so_rcvavoid = 0, so_sndavoid = 0, send_dirty_count = 0, recv_dirty_count = 0, recv_clean_count = 0;
  std::uint32_t data_port = 0;  // 0: the server's choice
  std::uint32_t ipfamily = nf_inet, socket_type = nst_stream, protocol = ipproto_tcp, direction = dir_recv;
  std::uint32_t netperf_port = 0;  // the client's data port
  std::uint32_t interval_burst = 0, interval_usecs = 0;
  std::array<std::uint32_t, 4> netperf_ip{}, netserver_ip{};
  std::int32_t socket_prio = -1, socket_tos = -1;
  std::string cong_control;
  std::string fill_file;
};

// netperf's struct omni_response_struct.
struct omni_setup {
  std::int32_t recv_buf_size = 0, send_buf_size = 0;
  std::uint32_t receive_size = 0, send_size = 0;
  std::int32_t recv_width = 0, send_width = 0;
  std::uint32_t flags = 0, test_length = 0, data_port = 0;
  float cpu_rate = 0;
  std::uint32_t so_rcvavoid = 0, so_sndavoid = 0;
  std::uint32_t interval_burst = 0, interval_usecs = 0, cpu_frequency = 0, security_info = 0;
  std::int32_t socket_prio = -1, socket_tos = -1;
  std::string system_model, cpu_model, security_string;
};

// netperf's struct omni_results_struct: byte counts in two words, calls and transactions in one.
struct omni_results {
  std::uint64_t bytes_received = 0, bytes_sent = 0;
  std::uint32_t recv_calls = 0, send_calls = 0, failed_sends = 0, trans_received = 0;
  std::int32_t recv_buf_size = 0, send_buf_size = 0;
  float elapsed_time = 0;
  float cpu_util = -1, cpu_percent_user = 0, cpu_percent_system = 0, cpu_percent_iowait = 0, cpu_percent_irq = 0,
        cpu_percent_swintr = 0, serv_dem = -1, peak_cpu_util = 0;
  std::uint32_t cpu_method = 0, num_cpus = 0;
  std::int32_t peak_cpu_id = -1;
  std::int32_t vendor = 0, device = 0, subvendor = 0, subdevice = 0, transport_retrans = 0;
  std::string ifname, driver, version, firmware, bus, ifslot, cong_control;
};

// Saturates: the largest a 32-bit field can say.
constexpr std::uint32_t field32(std::uint64_t v) noexcept {
  return v > 0xffffffffULL ? 0xffffffffU : static_cast<std::uint32_t>(v);
}

header decode_header(const block& b) noexcept;
// Throw protocol_error for the wrong type or a text field without its NUL.
omni_request decode_request(const block& b);
omni_setup decode_setup(const block& b);
omni_results decode_results(const block& b);
block encode_request(const omni_request& r, std::int32_t cpu = -1);
block encode_setup(const omni_setup& s);
block encode_results(const omni_results& r);
// netperf prints "netperf: remote error N".
block encode_error(std::int32_t type, std::int32_t errno_value);

// Tells a netperf request (a type below 2^16, then -1 or a CPU) from a netload frame (a length, then '{').
bool looks_like_request(const unsigned char (&first)[5]) noexcept;

}  // namespace nb::netperf
