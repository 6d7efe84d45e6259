#pragma once
// One writer, many readers: relaxed atomics cost the hot path nothing on x86 and never tear.
#include <endian.h>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace nb {

template <class T>
class relaxed {
 public:
  T get() const noexcept { return v_.load(std::memory_order_relaxed); }
  void set(T v) noexcept { v_.store(v, std::memory_order_relaxed); }
  void add(T d) noexcept { set(get() + d); }  // single writer: no read-modify-write

 private:
  std::atomic<T> v_{};
};

// A sequence number and the wall-clock send time.
inline constexpr std::size_t payload_header_size = 16;

inline void write_payload_header(unsigned char* p, std::uint64_t seq, std::int64_t send_wall_ns) noexcept {
  std::uint64_t a = htole64(seq), b = htole64(static_cast<std::uint64_t>(send_wall_ns));
  std::memcpy(p, &a, 8);
  std::memcpy(p + 8, &b, 8);
}
inline void read_payload_header(const unsigned char* p, std::uint64_t& seq, std::int64_t& send_wall_ns) noexcept {
  std::uint64_t a, b;
  std::memcpy(&a, p, 8);
  std::memcpy(&b, p + 8, 8);
  seq = le64toh(a);
  send_wall_ns = static_cast<std::int64_t>(le64toh(b));
}

// iperf3's (src/iperf_udp.c) counts from 1; sequence numbers are kept from 0 inside.
enum class payload_format : std::uint8_t { netload, iperf3_32, iperf3_64 };
constexpr std::size_t header_size(payload_format f) noexcept {
  return f == payload_format::iperf3_32 ? 12 : payload_header_size;
}

inline void write_header(payload_format f, unsigned char* p, std::uint64_t seq, std::int64_t send_wall_ns) noexcept {
  if (f == payload_format::netload) return write_payload_header(p, seq, send_wall_ns);
  const auto sec = htobe32(static_cast<std::uint32_t>(send_wall_ns / 1'000'000'000));
  const auto usec = htobe32(static_cast<std::uint32_t>(send_wall_ns % 1'000'000'000 / 1000));
  std::memcpy(p, &sec, 4);
  std::memcpy(p + 4, &usec, 4);
  if (f == payload_format::iperf3_64) {
    const std::uint64_t count = htobe64(seq + 1);
    std::memcpy(p + 8, &count, 8);
  } else {
    const std::uint32_t count = htobe32(static_cast<std::uint32_t>(seq + 1));
    std::memcpy(p + 8, &count, 4);
  }
}

inline void read_header(payload_format f, const unsigned char* p, std::uint64_t& seq,
                        std::int64_t& send_wall_ns) noexcept {
  if (f == payload_format::netload) return read_payload_header(p, seq, send_wall_ns);
  std::uint32_t sec, usec;
  std::memcpy(&sec, p, 4);
  std::memcpy(&usec, p + 4, 4);
  send_wall_ns = std::int64_t{be32toh(sec)} * 1'000'000'000 + std::int64_t{be32toh(usec)} * 1000;
  std::uint64_t count;
  if (f == payload_format::iperf3_64) {
    std::memcpy(&count, p + 8, 8);
    count = be64toh(count);
  } else {
    std::uint32_t c32;
    std::memcpy(&c32, p + 8, 4);
    count = be32toh(c32);
  }
  seq = count - 1;  // a count of 0 wraps to a huge sequence: one jump
}

// The one way both sides count TCP messages, from all streams' bytes together: a stream's last write may
// end part-way, and the remainders add up to whole messages the receiver's bytes contain.
inline std::uint64_t tcp_messages(std::uint64_t bytes, std::uint64_t message_size) noexcept {
  return message_size ? bytes / message_size : 0;
}

struct alignas(64) send_counters {
  relaxed<std::uint64_t> packets, bytes, errors;  // errors: refused by the kernel
};

struct alignas(64) recv_counters {
  relaxed<std::uint64_t> packets, bytes;
  relaxed<std::uint64_t> buffers;                           // one per datagram, or per GRO batch
  relaxed<std::int64_t> first_arrival_ns, last_arrival_ns;  // wall clock, 0 = none
  relaxed<std::uint64_t> sequenced;
  relaxed<std::uint64_t> next_seq;
  relaxed<std::uint64_t> out_of_order;
  relaxed<std::int64_t> last_transit_ns;
  relaxed<double> jitter_ns;
  payload_format format = payload_format::netload;  // fixed from the first datagram

  // `segment`: GRO's (0: none); only `copied` bytes are in `p`. GRO merges consecutive datagrams of one
  // flow, so the first header stands for the buffer.
  void on_receive(const unsigned char* p, std::size_t len, std::size_t segment, std::size_t copied,
                  std::int64_t arrival_ns) noexcept {
    std::uint64_t n = 1;
    if (segment > 0 && len > segment) n = (len + segment - 1) / segment;
    packets.add(n);
    bytes.add(len);
    buffers.add(1);
    if (first_arrival_ns.get() == 0) first_arrival_ns.set(arrival_ns);
    last_arrival_ns.set(arrival_ns);
    std::size_t first = n == 1 ? len : segment;
    const std::size_t header = header_size(format);
    if (first < header || copied < header) return;
    std::uint64_t seq;
    std::int64_t sent_ns;
    read_header(format, p, seq, sent_ns);
    if (seq >= next_seq.get()) next_seq.set(seq + n);
    else out_of_order.add(n);
    std::int64_t transit = arrival_ns - sent_ns;
    if (sequenced.get() > 0) {
      double d = std::fabs(static_cast<double>(transit - last_transit_ns.get()));
      jitter_ns.set(jitter_ns.get() + (d - jitter_ns.get()) / 16.0);
    }
    last_transit_ns.set(transit);
    sequenced.add(n);
  }
};

// Over the counter blocks that saw one stream (one per receive lane).
struct flow_totals {
  std::uint64_t packets = 0, bytes = 0, buffers = 0, sequenced = 0, out_of_order = 0;
  std::uint64_t next_seq = 0;
  std::int64_t first_arrival_ns = 0, last_arrival_ns = 0;
  double jitter_ns = 0;    // of the block with most sequenced datagrams
  std::uint64_t gaps = 0;  // XDP engine only

  flow_totals& add(const recv_counters& c) noexcept {
    packets += c.packets.get();
    bytes += c.bytes.get();
    buffers += c.buffers.get();
    if (c.sequenced.get() > sequenced_most_) {
      sequenced_most_ = c.sequenced.get();
      jitter_ns = c.jitter_ns.get();
    }
    sequenced += c.sequenced.get();
    out_of_order += c.out_of_order.get();
    if (c.next_seq.get() > next_seq) next_seq = c.next_seq.get();
    if (auto f = c.first_arrival_ns.get(); f && (first_arrival_ns == 0 || f < first_arrival_ns)) first_arrival_ns = f;
    if (c.last_arrival_ns.get() > last_arrival_ns) last_arrival_ns = c.last_arrival_ns.get();
    return *this;
  }
  // The jitter stays: only the caller knows which part's is meant.
  flow_totals& add_counts(const flow_totals& o) noexcept {
    packets += o.packets;
    bytes += o.bytes;
    buffers += o.buffers;
    sequenced += o.sequenced;
    out_of_order += o.out_of_order;
    gaps += o.gaps;
    if (o.next_seq > next_seq) next_seq = o.next_seq;
    if (o.first_arrival_ns && (first_arrival_ns == 0 || o.first_arrival_ns < first_arrival_ns))
      first_arrival_ns = o.first_arrival_ns;
    if (o.last_arrival_ns > last_arrival_ns) last_arrival_ns = o.last_arrival_ns;
    return *this;
  }

 private:
  std::uint64_t sequenced_most_ = 0;
};

}  // namespace nb
