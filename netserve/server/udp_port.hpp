#pragma once
// The UDP data path of one port, shared by its tests: a lane (socket and thread) per CPU. Datagrams are
// attributed by source address: a 1-byte datagram has no room for a header. docs/netserve.md#receive-lanes
#include "core/data/rr.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/endpoint.hpp"
#include "core/sys/socket.hpp"
#include "core/wire/native/flow.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace nb::serve {

// A UDP_RR stream's answers from one lane; `refused` by the kernel (a full buffer, over the path MTU).
struct alignas(64) answer_counters {
  relaxed<std::uint64_t> packets, bytes, refused, unanswered;
};

// One UDP test's flows, a client stream (source port) each, counted per lane.
struct udp_flows {
  udp_flows(std::vector<endpoint> from, std::size_t lanes)
      : sources(std::move(from)),
        counters(sources.size() * lanes),
        answered(sources.size() * lanes),
        drops_at_attach(lanes) {}
  recv_counters& at(std::size_t lane, std::size_t stream) { return counters[lane * sources.size() + stream]; }
  const recv_counters& at(std::size_t lane, std::size_t stream) const {
    return counters[lane * sources.size() + stream];
  }
  std::size_t lanes() const noexcept { return drops_at_attach.size(); }

  // UDP_RR, before attach. Unanswered (and counted): an `itself` stream (it would answer its own
  // answers), a request outside the window, a numbered one seen before, a datagram of another size.
  void answer(std::size_t request_size, std::size_t response_size, const endpoint& reply_from,
              std::vector<bool> itself);
  // Requests stamped (wall clock) within [from, until] are answered; none before this call.
  void answer_between(std::int64_t from_ns, std::int64_t until_ns) noexcept;
  bool in_window(std::int64_t arrival_ns) const noexcept;
  // True the first time request `number` of `stream` comes, on any lane.
  bool first_time(std::size_t stream, std::uint64_t number);
  answer_counters& answers_at(std::size_t lane, std::size_t stream) { return answered[lane * sources.size() + stream]; }
  const answer_counters& answers_at(std::size_t lane, std::size_t stream) const {
    return answered[lane * sources.size() + stream];
  }

  std::vector<endpoint> sources;
  std::vector<recv_counters> counters;    // lane-major
  std::vector<answer_counters> answered;  // UDP_RR, lane-major
  std::size_t answer_size = 0;            // 0: not answered
  std::size_t request_size = 0;
  bool numbered = false;
  std::vector<udp_answerer> answerers;         // by stream
  std::vector<bool> itself;                    // by stream: the source is netserve's own socket
  std::vector<std::uint32_t> drops_at_attach;  // 32-bit in the kernel
  std::uint64_t attach_serial = 0;
  bool shared_at_attach = false;
  int cpu = -1;                 // asked for by the test; -1: none
  std::atomic<int> pinned{-1};  // where a lane's thread really ran for it

 private:
  struct stream_numbers {  // a flow stays on one lane: rarely contended
    std::mutex mu;
    rr_request_numbers seen;
  };
  std::unique_ptr<stream_numbers[]> numbers_;                         // by stream
  std::atomic<std::int64_t> answer_from_ns_{0}, answer_until_ns_{0};  // until 0: no window yet
};

// Summed over the lanes.
flow_totals totals_of(const udp_flows& flows, std::size_t stream);
struct answer_totals {
  std::uint64_t packets = 0, bytes = 0, refused = 0, unanswered = 0;
};
answer_totals answers_of(const udp_flows& flows);
// For the log: "0+1", "none".
std::string lanes_used(const udp_flows& flows);

// The first `wanted` of `allowed` (0: at most 8, about a NIC's RX queues); one lane: {-1}, no CPU of
// its own. Throws std::invalid_argument when more are wanted than allowed.
std::vector<int> receive_cpus(const std::vector<int>& allowed, unsigned wanted);

struct udp_lane {
  fd_handle fd;
  int cpu = -1;  // -1: the scheduler places it
};

// `local`'s port is not 0. Throws std::system_error, EADDRINUSE when anything holds the port. Lanes send
// with don't-fragment: what does not fit the path fails rather than leaving in fragments.
std::vector<udp_lane> bind_lanes(const endpoint& local, const std::vector<int>& cpus, int rcvbuf);

class udp_port {
 public:
  udp_port(std::vector<udp_lane> lanes, bool gro);
  ~udp_port();
  udp_port(const udp_port&) = delete;
  udp_port& operator=(const udp_port&) = delete;

  std::size_t lanes() const noexcept { return lanes_.size(); }
  int fd() const noexcept { return lanes_.front()->lane.fd.get(); }  // any lane sends for the port
  // Never shrinks: the lanes are shared. Returns the size granted.
  int grow_recv_buffer(int bytes);
  void attach(const std::shared_ptr<udp_flows>& flows);
  void detach(const std::shared_ptr<udp_flows>& flows);
  // `shared`: another test was attached meanwhile.
  std::uint64_t drops_since(const udp_flows& flows, bool& shared) const;
  std::uint64_t unattributed() const noexcept;
  // Keeps iperf3 UDP hellos for `cookie`'s session (docs/netserve.md#iperf3-hellos); false while
  // another session of `address` waits.
  bool expect_hellos(const std::string& cookie, const endpoint& address, std::size_t streams,
                     std::int64_t not_before_ns);
  void stop_expecting(const std::string& cookie);
  // A stream's source: the oldest hello kept and not yet taken.
  std::optional<endpoint> take_hello(const std::string& cookie);
  std::int64_t queued_bytes() const noexcept;
  // Idle lanes leave a flood in their queues, where the kernel would drop a stream's one hello.
  bool has_room() const noexcept;
  // As results say it: "gro, lanes by kernel hash".
  const std::string& batching() const noexcept { return batching_; }

 private:
  struct entry {
    endpoint source;
    std::size_t stream;
    std::shared_ptr<udp_flows> owner;  // keeps the counters alive while a thread's copy uses them
  };
  struct hello_wait {
    std::string cookie;
    endpoint address;  // its port is not compared
    std::size_t streams;
    std::int64_t not_before_ns;
    std::vector<endpoint> kept;  // in arrival order
    std::size_t taken = 0;
  };
  struct local_entry {
    endpoint source;
    recv_counters* counters;
    std::shared_ptr<udp_flows> owner;
    std::size_t stream;
    answer_counters* answers;
  };
  struct alignas(64) lane_state {  // per-batch writes stay off the neighbours' cache line
    udp_lane lane;
    std::thread thread;
    bool running = false;  // guarded by mu_
    int pinned = -1;       // -1: the home CPUs
    relaxed<std::uint64_t> unattributed;
    relaxed<std::int64_t> busy_ns;  // monotonic, last datagram
  };
  // A lane thread's copy of the flow table, refreshed when the generation changes.
  struct lane_view {
    std::vector<local_entry> flows;
    std::uint64_t seen = ~0ULL;
    int asked = -1;                    // the CPU an attached test asked for
    std::vector<endpoint> hello_from;  // addresses whose iperf3 sessions wait for hellos
    std::size_t hint = 0;              // last matching flow: consecutive datagrams mostly share one
  };
  void run(std::size_t lane);
  void place(lane_state& self, const std::vector<int>& home, int asked, std::int64_t now);
  bool refresh(std::size_t lane, lane_view& view);
  bool find_flow(lane_state& self, std::size_t lane, lane_view& view, const received& r);
  void answer(int fd, const local_entry& e, const received& r, std::vector<unsigned char>& scratch) const noexcept;
  void start_lanes();  // with mu_ held
  bool keep_hello(const sockaddr* source, std::int64_t arrival_ns);

  std::vector<std::unique_ptr<lane_state>> lanes_;
  bool gro_;  // asked for and offered
  std::string batching_;
  std::mutex mu_;
  std::vector<entry> table_;
  std::vector<hello_wait> hello_waits_;  // guarded by mu_
  std::atomic<std::uint64_t> generation_{0};
  std::uint64_t attach_serial_ = 0;
  std::atomic<bool> stop_{false};
};

}  // namespace nb::serve
