#pragma once
// The UDP data path of one port, shared by every test on that port. A test's datagrams are attributed by
// source address (a 1-byte datagram has no room for a header).
//
// The port is a SO_REUSEPORT group of lanes, one socket and one receive thread per CPU, and the kernel
// hands each datagram to the lane of the CPU that received it (steer_by_cpu; a kernel before 4.5 has
// no such steering, and the kernel's hash of the sender's address picks the lane instead, with no lane
// on a CPU of its own). While two or more lanes are busy, each lane's thread runs on its own CPU, where
// the softirq ran (the sender's CPU on loopback, the RX queue's CPU on a NIC): two streams on two cores
// are received on two cores, and no skb crosses between caches. A lane busy alone is left to the
// scheduler instead: on loopback its CPU is the sender's, and one stream goes faster with its receiver
// on the other core. With one lane (one CPU allowed, or --rx-threads 1) the port is a plain socket.
//
// SO_REUSEPORT would let a socket of another program of the same user join the group; netserve binds
// the port without it first to see that nobody holds it (bind_lanes), and its TCP acceptor
// on the same number keeps a second netserve away.
//
// A test that asks for a CPU (netperf's -T ,N) gets it: while it is attached, every lane of its port runs
// there, whatever the placement above would do.
//
// A flow normally stays on one lane, but a sender that migrates moves it: every flow therefore has a
// counter block per lane, each with a single writer, and readers add them up (flow_totals).
// The flow table is copied to a thread only when it changes (a generation number is checked once per
// batch), so the per-datagram path takes no lock.
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

// A UDP_RR stream's answers from one lane: sent (packets, bytes), refused by the kernel (a full buffer,
// a datagram over the path MTU), and requests left unanswered (see udp_flows::answer).
struct alignas(64) answer_counters {
  relaxed<std::uint64_t> packets, bytes, refused, unanswered;
};

// The flows of one UDP test: one per client stream (its source port), counted per lane. A UDP_RR test's
// are answered too, by the lane that received each request.
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

  // UDP_RR, set before attach: answer each request of `request_size` bytes with `response_size` bytes,
  // from `reply_from` (the address the client talks to) to the stream's source. A stream whose source is
  // netserve itself (`itself`, by stream) is never answered: it would answer its own answers. Nothing is
  // answered outside the window (answer_between), a numbered request (rr_request_numbered) at most once,
  // a datagram of another size never: each of them counts as unanswered.
  void answer(std::size_t request_size, std::size_t response_size, const endpoint& reply_from,
              std::vector<bool> itself);
  // UDP_RR: answers go to requests that arrived (kernel stamps, wall clock) within [from, until]; none
  // before this is called.
  void answer_between(std::int64_t from_ns, std::int64_t until_ns) noexcept;
  bool in_window(std::int64_t arrival_ns) const noexcept;
  // UDP_RR: true the first time request `number` of `stream` comes, whichever lane it arrives on.
  bool first_time(std::size_t stream, std::uint64_t number);
  answer_counters& answers_at(std::size_t lane, std::size_t stream) { return answered[lane * sources.size() + stream]; }
  const answer_counters& answers_at(std::size_t lane, std::size_t stream) const {
    return answered[lane * sources.size() + stream];
  }

  std::vector<endpoint> sources;
  std::vector<recv_counters> counters;    // lane-major
  std::vector<answer_counters> answered;  // UDP_RR, lane-major
  std::size_t answer_size = 0;            // UDP_RR: the answer's bytes; 0: not answered
  std::size_t request_size = 0;
  bool numbered = false;                       // UDP_RR: requests carry their number
  std::vector<udp_answerer> answerers;         // UDP_RR: by stream
  std::vector<bool> itself;                    // UDP_RR: by stream, the source is netserve's own socket
  std::vector<std::uint32_t> drops_at_attach;  // each lane's drop counter (32-bit in the kernel)
  std::uint64_t attach_serial = 0;
  bool shared_at_attach = false;
  int cpu = -1;                 // the CPU the test asked its receiver to run on; -1: none
  std::atomic<int> pinned{-1};  // the CPU a lane's thread really ran on for it, once pinned there

 private:
  struct stream_numbers {  // a flow normally stays on one lane: the lock is almost never contended
    std::mutex mu;
    rr_request_numbers seen;
  };
  std::unique_ptr<stream_numbers[]> numbers_;                         // UDP_RR with numbered requests: by stream
  std::atomic<std::int64_t> answer_from_ns_{0}, answer_until_ns_{0};  // until 0: no window yet
};

// One stream's counts, summed over the lanes.
flow_totals totals_of(const udp_flows& flows, std::size_t stream);
// UDP_RR: the answers to every stream, summed over the lanes.
struct answer_totals {
  std::uint64_t packets = 0, bytes = 0, refused = 0, unanswered = 0;
};
answer_totals answers_of(const udp_flows& flows);
// The lanes that received any of the flows' datagrams, for the log: "0", "1", "0+1", or "none".
std::string lanes_used(const udp_flows& flows);

// The CPUs that get a lane: the first `wanted` of `allowed` (0: all of them, at most 8, about the RX
// queues a NIC has). A single lane gets no CPU of its own: {-1}. Throws std::invalid_argument when more
// lanes are wanted than CPUs allowed.
std::vector<int> receive_cpus(const std::vector<int>& allowed, unsigned wanted);

// One socket of the group and the CPU it serves (-1: no CPU of its own, the scheduler places it).
struct udp_lane {
  fd_handle fd;
  int cpu = -1;
};

// The lanes of one port: a socket per CPU in `cpus` ({-1}: one plain socket), bound to `local` (a
// port number, not 0), each with `rcvbuf`, steered by CPU. On a kernel without reuseport BPF (before
// 4.5) the lanes share the port by the kernel's hash instead, and none has a CPU (cpu -1 each). Throws
// std::system_error; EADDRINUSE when anything holds the port. Every lane sends with don't-fragment set
// (answers, reverse streams): what does not fit the path fails instead of leaving in fragments.
std::vector<udp_lane> bind_lanes(const endpoint& local, const std::vector<int>& cpus, int rcvbuf);

class udp_port {
 public:
  udp_port(std::vector<udp_lane> lanes, bool gro);
  ~udp_port();
  udp_port(const udp_port&) = delete;
  udp_port& operator=(const udp_port&) = delete;

  std::size_t lanes() const noexcept { return lanes_.size(); }
  int fd() const noexcept { return lanes_.front()->lane.fd.get(); }  // any lane sends for the port
  // Receive buffer of every lane: grows to at least `bytes`, never shrinks. Returns the granted size.
  int grow_recv_buffer(int bytes);
  void attach(const std::shared_ptr<udp_flows>& flows);
  void detach(const std::shared_ptr<udp_flows>& flows);
  // Datagrams the lanes dropped since `flows` attached, and whether another test was attached meanwhile.
  std::uint64_t drops_since(const udp_flows& flows, bool& shared) const;
  std::uint64_t unattributed() const noexcept;
  // iperf3's UDP streams announce themselves with a 4-byte datagram before their data (src/iperf_udp.c),
  // which carries nothing of their test. A session waiting for `streams` of them from its client's address
  // registers under its cookie; while any session waits, the lanes run and keep a hello only when it can
  // be a waiting session's: from its address (any port: the stream's), arrived at `not_before_ns` (wall
  // clock) or later (a stream announces itself only once told to; an older hello is a stale client's),
  // from a source it has not kept already, and at most `streams` in all. Every other datagram is
  // unattributed as any foreign one, so no address can crowd out another's hellos. One session of an
  // address waits at a time: false when another of that address does.
  bool expect_hellos(const std::string& cookie, const endpoint& address, std::size_t streams,
                     std::int64_t not_before_ns);
  void stop_expecting(const std::string& cookie);
  // The oldest hello kept for `cookie`'s session and not yet taken: the source of one of its streams.
  std::optional<endpoint> take_hello(const std::string& cookie);
  // Bytes waiting in the lanes' receive queues (0 once drained).
  std::int64_t queued_bytes() const noexcept;
  // Every lane's queue has room (receive_queue_has_room). Lanes that were not running leave a flood to
  // fill their queues, where the kernel drops what comes next (a stream's one hello too).
  bool has_room() const noexcept;
  // How the lanes receive, as the result says it: "gro" or "recvmmsg", then what the kernel lacks
  // (core/sys/kernel_features.hpp): ", lanes by kernel hash", ", no drop count".
  const std::string& batching() const noexcept { return batching_; }

 private:
  struct entry {
    endpoint source;
    std::size_t stream;
    std::shared_ptr<udp_flows> owner;  // keeps the counters alive while a thread's copy uses them
  };
  struct hello_wait {  // a session waiting for its UDP streams' hellos
    std::string cookie;
    endpoint address;  // the client's; its port is not compared
    std::size_t streams;
    std::int64_t not_before_ns;
    std::vector<endpoint> kept;  // every hello kept, in arrival order
    std::size_t taken = 0;       // of them, handed to the session
  };
  struct local_entry {
    endpoint source;
    recv_counters* counters;
    std::shared_ptr<udp_flows> owner;
    std::size_t stream;
    answer_counters* answers;  // UDP_RR: this lane's answers to the stream
  };
  struct alignas(64) lane_state {  // per-batch writes of one lane stay off its neighbours' cache line
    udp_lane lane;
    std::thread thread;
    bool running = false;  // guarded by mu_
    int pinned = -1;       // the CPU the thread is pinned to, -1: its home CPUs (the lane's own thread only)
    relaxed<std::uint64_t> unattributed;
    relaxed<std::int64_t> busy_ns;  // monotonic time of the last datagram
  };
  // A lane thread's copy of the flow table, taken again when the generation changes (refresh).
  struct lane_view {
    std::vector<local_entry> flows;
    std::uint64_t seen = ~0ULL;        // the generation copied
    int asked = -1;                    // the CPU an attached test asked for
    std::vector<endpoint> hello_from;  // the addresses whose iperf3 sessions wait for their streams' hellos
    std::size_t hint = 0;              // the last matching flow: consecutive datagrams mostly belong to one
  };
  void run(std::size_t lane);
  void place(lane_state& self, const std::vector<int>& home, int asked, std::int64_t now);
  bool refresh(std::size_t lane, lane_view& view);
  bool find_flow(lane_state& self, std::size_t lane, lane_view& view, const received& r);
  void answer(int fd, const local_entry& e, const received& r, std::vector<unsigned char>& scratch) const noexcept;
  void start_lanes();  // with mu_ held
  bool keep_hello(const sockaddr* source, std::int64_t arrival_ns);

  std::vector<std::unique_ptr<lane_state>> lanes_;
  bool gro_;  // asked for and offered by the kernel
  std::string batching_;
  std::mutex mu_;
  std::vector<entry> table_;
  std::vector<hello_wait> hello_waits_;  // guarded by mu_
  std::atomic<std::uint64_t> generation_{0};
  std::uint64_t attach_serial_ = 0;
  std::atomic<bool> stop_{false};
};

}  // namespace nb::serve
