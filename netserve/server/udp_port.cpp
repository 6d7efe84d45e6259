#include "netserve/server/udp_port.hpp"

#include "core/base/clock.hpp"
#include "core/base/limits.hpp"
#include "core/data/udp_io.hpp"
#include "core/sys/kernel_features.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <endian.h>

namespace nb::serve {
namespace {
constexpr std::int64_t idle_exit_ns = 2'000'000'000;  // a thread with no test for this long ends
constexpr std::size_t batch = 64;
constexpr std::int64_t busy_window_ns = 100'000'000;
// Pinning follows a second stream within a few interval samples; the scan costs nothing per batch.
constexpr std::int64_t place_every_ns = 10'000'000;
}  // namespace

std::vector<int> receive_cpus(const std::vector<int>& allowed, unsigned wanted) {
  constexpr std::size_t default_most = 8;
  if (wanted > allowed.size())
    throw std::invalid_argument(fmt::format("--rx-threads {}: netserve may run on {} CPUs", wanted, allowed.size()));
  std::size_t n = wanted ? wanted : std::min(allowed.size(), default_most);
  if (n <= 1) return {-1};
  return {allowed.begin(), allowed.begin() + static_cast<std::ptrdiff_t>(n)};
}

flow_totals totals_of(const udp_flows& flows, std::size_t stream) {
  flow_totals t;
  for (std::size_t l = 0; l < flows.lanes(); ++l) t.add(flows.at(l, stream));
  return t;
}

void udp_flows::answer(std::size_t request, std::size_t response, const endpoint& reply_from, std::vector<bool> self) {
  request_size = request;
  answer_size = response;
  numbered = rr_request_numbered(request, response);
  if (numbered) numbers_ = std::make_unique<stream_numbers[]>(sources.size());
  for (const endpoint& e : sources) answerers.emplace_back(e, reply_from);
  itself = std::move(self);
  itself.resize(sources.size(), false);
}

void udp_flows::answer_between(std::int64_t from_ns, std::int64_t until_ns) noexcept {
  // `from` first: a lane that sees the end sees the start.
  answer_from_ns_.store(from_ns, std::memory_order_relaxed);
  answer_until_ns_.store(until_ns, std::memory_order_release);
}

bool udp_flows::in_window(std::int64_t arrival_ns) const noexcept {
  const std::int64_t until = answer_until_ns_.load(std::memory_order_acquire);
  return until != 0 && arrival_ns <= until && arrival_ns >= answer_from_ns_.load(std::memory_order_relaxed);
}

bool udp_flows::first_time(std::size_t stream, std::uint64_t number) {
  std::lock_guard lock(numbers_[stream].mu);
  return numbers_[stream].seen.first_time(number);
}

answer_totals answers_of(const udp_flows& flows) {
  answer_totals t;
  for (const answer_counters& c : flows.answered) {
    t.packets += c.packets.get();
    t.bytes += c.bytes.get();
    t.refused += c.refused.get();
    t.unanswered += c.unanswered.get();
  }
  return t;
}

std::string lanes_used(const udp_flows& flows) {
  std::string used;
  for (std::size_t l = 0; l < flows.lanes(); ++l) {
    bool any = false;
    for (std::size_t s = 0; s < flows.sources.size(); ++s) any = any || flows.at(l, s).packets.get() > 0;
    if (any) used += fmt::format("{}{}", used.empty() ? "" : "+", l);
  }
  return used.empty() ? "none" : used;
}

std::vector<udp_lane> bind_lanes(const endpoint& local, const std::vector<int>& cpus, int rcvbuf) {
  const bool group = cpus.size() > 1;
  const bool steer = group && kernel_has(kernel_feature::reuseport_cbpf);
  // Fails if anything holds the port, even a SO_REUSEPORT group of this user the lanes would join silently.
  if (group) bind_udp(local, false);
  std::vector<udp_lane> lanes;
  for (int cpu : cpus) {
    lanes.push_back({bind_udp(local, group), steer ? cpu : -1});
    set_recv_buffer(lanes.back().fd.get(), rcvbuf);
    set_dont_fragment(lanes.back().fd.get(), local.family());
  }
  if (steer) steer_by_cpu(lanes.front().fd.get(), cpus);
  return lanes;
}

udp_port::udp_port(std::vector<udp_lane> lanes, bool gro)
    : gro_(gro && kernel_has(kernel_feature::udp_gro)),
      batching_(batching_with(gro_ ? "gro" : "recvmmsg", lanes.size() > 1 && lanes.front().cpu < 0,
                              !kernel_has(kernel_feature::meminfo))) {
  for (auto& l : lanes) {
    set_receive_timeout(l.fd.get(), 50'000'000);
    lanes_.push_back(std::make_unique<lane_state>());
    lanes_.back()->lane = std::move(l);
  }
}

udp_port::~udp_port() {
  stop_ = true;
  for (auto& l : lanes_)
    if (l->thread.joinable()) l->thread.join();
}

int udp_port::grow_recv_buffer(int bytes) {
  int granted = recv_buffer(fd());
  if (bytes <= granted / 2) return granted;  // the kernel reports twice what was asked
  for (auto& l : lanes_) granted = set_recv_buffer(l->lane.fd.get(), bytes);
  return granted;
}

void udp_port::attach(const std::shared_ptr<udp_flows>& flows) {
  std::lock_guard lock(mu_);
  flows->shared_at_attach = !table_.empty();
  flows->attach_serial = ++attach_serial_;
  for (std::size_t l = 0; l < lanes_.size(); ++l)
    flows->drops_at_attach[l] = static_cast<std::uint32_t>(socket_drops(lanes_[l]->lane.fd.get()));
  for (std::size_t i = 0; i < flows->sources.size(); ++i) table_.push_back({flows->sources[i], i, flows});
  generation_.fetch_add(1, std::memory_order_release);
  start_lanes();
}

void udp_port::start_lanes() {
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    lane_state& s = *lanes_[l];
    if (s.running) continue;
    if (s.thread.joinable()) s.thread.join();       // ended for idleness: no longer needs mu_
    s.thread = std::thread([this, l] { run(l); });  // may throw: the lane stays startable
    s.running = true;
  }
}

namespace {
// In the client host's byte order, as iperf3 writes it.
constexpr std::uint32_t iperf3_udp_hello = 0x36373839;

// Whatever the port: a stream's hello comes from its own.
bool same_address(const endpoint& a, const sockaddr* sa) noexcept {
  if (sa->sa_family != a.family()) return false;
  endpoint probe = a;
  const std::uint16_t port = sa->sa_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(sa)->sin_port
                                                      : reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port;
  probe.set_port(ntohs(port));
  return probe.same(sa);
}
}  // namespace

bool udp_port::expect_hellos(const std::string& cookie, const endpoint& address, std::size_t streams,
                             std::int64_t not_before_ns) {
  std::lock_guard lock(mu_);
  for (const hello_wait& w : hello_waits_)
    if (same_address(w.address, address.data())) return false;
  hello_waits_.push_back({cookie, address, streams, not_before_ns, {}, 0});
  generation_.fetch_add(1, std::memory_order_release);
  start_lanes();
  return true;
}

void udp_port::stop_expecting(const std::string& cookie) {
  std::lock_guard lock(mu_);
  std::erase_if(hello_waits_, [&](const hello_wait& w) { return w.cookie == cookie; });
  generation_.fetch_add(1, std::memory_order_release);
}

// False when the hello is foreign.
bool udp_port::keep_hello(const sockaddr* source, std::int64_t arrival_ns) {
  std::lock_guard lock(mu_);
  for (hello_wait& w : hello_waits_) {
    if (!same_address(w.address, source)) continue;
    if (arrival_ns < w.not_before_ns) return false;
    for (const endpoint& k : w.kept)
      if (k.same(source)) return true;  // announced again: still one stream
    if (w.kept.size() >= w.streams) return false;
    w.kept.emplace_back(source, source->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    return true;
  }
  return false;
}

std::optional<endpoint> udp_port::take_hello(const std::string& cookie) {
  std::lock_guard lock(mu_);
  for (hello_wait& w : hello_waits_)
    if (w.cookie == cookie && w.taken < w.kept.size()) return w.kept[w.taken++];
  return std::nullopt;
}

void udp_port::detach(const std::shared_ptr<udp_flows>& flows) {
  std::lock_guard lock(mu_);
  std::erase_if(table_, [&](const entry& e) { return e.owner == flows; });
  generation_.fetch_add(1, std::memory_order_release);
}

std::uint64_t udp_port::drops_since(const udp_flows& flows, bool& shared) const {
  shared = flows.shared_at_attach || attach_serial_ != flows.attach_serial;
  std::uint64_t drops = 0;
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    auto now = static_cast<std::uint32_t>(socket_drops(lanes_[l]->lane.fd.get()));
    drops += static_cast<std::uint32_t>(now - flows.drops_at_attach[l]);  // wraps at 2^32
  }
  return drops;
}

std::uint64_t udp_port::unattributed() const noexcept {
  std::uint64_t n = 0;
  for (const auto& l : lanes_) n += l->unattributed.get();
  return n;
}

std::int64_t udp_port::queued_bytes() const noexcept {
  std::int64_t total = 0;
  for (const auto& l : lanes_) {
    total += nb::queued_bytes(l->lane.fd.get());
  }
  return total;
}

bool udp_port::has_room() const noexcept {
  return std::all_of(lanes_.begin(), lanes_.end(),
                     [](const auto& l) { return receive_queue_has_room(l->lane.fd.get()); });
}

bool udp_port::refresh(std::size_t lane, lane_view& view) {
  std::lock_guard lock(mu_);
  view.flows.clear();
  view.asked = -1;
  for (const entry& e : table_) {
    view.flows.push_back(
        {e.source, &e.owner->at(lane, e.stream), e.owner, e.stream, &e.owner->answers_at(lane, e.stream)});
    if (view.asked < 0) view.asked = e.owner->cpu;
  }
  view.seen = generation_.load(std::memory_order_acquire);
  view.hello_from.clear();
  for (const hello_wait& w : hello_waits_) view.hello_from.push_back(w.address);
  view.hint = 0;
  return !view.flows.empty() || !view.hello_from.empty();
}

// Called per flow change, not per datagram. False for no flow: an iperf3 hello (kept) or a foreign datagram.
bool udp_port::find_flow(lane_state& self, std::size_t lane, lane_view& view, const received& r) {
  auto find = [&] {
    return std::find_if(view.flows.begin(), view.flows.end(),
                        [&](const local_entry& e) { return e.source.same(r.source); });
  };
  auto it = find();
  // A test may have attached while this thread sat in recvmmsg: look again before calling it foreign.
  if (it == view.flows.end() && generation_.load(std::memory_order_acquire) != view.seen) {
    refresh(lane, view);
    it = find();
  }
  if (it != view.flows.end()) {
    view.hint = static_cast<std::size_t>(it - view.flows.begin());
    return true;
  }
  if (!view.hello_from.empty() && r.len == 4 && r.copied == 4) {
    std::uint32_t word;
    std::memcpy(&word, r.data, 4);
    // Only a waiting address takes the lock: a flood from any other is foreign at once.
    auto waited = [&](const endpoint& a) { return same_address(a, r.source); };
    if (word == iperf3_udp_hello && std::any_of(view.hello_from.begin(), view.hello_from.end(), waited) &&
        keep_hello(r.source, r.arrival_ns))
      return false;
  }
  self.unattributed.add(r.segment && r.len > r.segment ? (r.len + r.segment - 1) / r.segment : 1);
  return false;
}

// A GRO buffer of n requests numbered from k carries k .. k + n - 1; only the first one's bytes were
// copied. A datagram of another size (a GRO buffer's last may be shorter) is no request.
void udp_port::answer(int fd, const local_entry& e, const received& r,
                      std::vector<unsigned char>& scratch) const noexcept {
  udp_flows& f = *e.owner;
  const std::size_t n = r.segment && r.len > r.segment ? (r.len + r.segment - 1) / r.segment : 1;
  const std::size_t each = n == 1 ? r.len : r.segment;
  const std::size_t requests = each == f.request_size ? r.len / each : 0;
  if (requests == 0 || f.itself[e.stream] || !f.in_window(r.arrival_ns)) {
    e.answers->unanswered.add(n);
    return;
  }
  const bool numbered = f.numbered && r.copied >= 8;
  if (!numbered && r.copied >= 1 && r.data[0] == rr_answer_mark) {  // a netserve's answer, not a request
    e.answers->unanswered.add(n);
    return;
  }
  std::size_t unanswered = n - requests;
  const std::size_t size = f.answer_size;
  fill_udp_answer(r.data, std::min(r.copied, each), scratch.data(), size);
  if (!numbered) scratch[0] = rr_answer_mark;
  std::uint64_t first = 0;
  if (numbered) {
    std::memcpy(&first, r.data, 8);
    first = le64toh(first);
  }
  for (std::size_t i = 0; i < requests; ++i) {
    if (numbered) {
      if (!f.first_time(e.stream, first + i)) {  // a repeat, or our own answer come back
        ++unanswered;
        continue;
      }
      if (i > 0 && size >= 8) {
        const std::uint64_t k = htole64(first + i);
        std::memcpy(scratch.data(), &k, 8);
      }
    }
    if (f.answerers[e.stream].send(fd, scratch.data(), size)) {
      e.answers->packets.add(1);
      e.answers->bytes.add(size);
    } else {
      e.answers->refused.add(1);
    }
  }
  if (unanswered) e.answers->unanswered.add(unanswered);
}

void udp_port::place(lane_state& self, const std::vector<int>& home, int asked, std::int64_t now) {
  int want = asked;
  if (want < 0 && self.lane.cpu >= 0) {
    int busy = 0;
    for (const auto& l : lanes_) busy += now - l->busy_ns.get() < busy_window_ns;
    if (busy >= 2) want = self.lane.cpu;
  }
  if (want == self.pinned) return;
  if (want >= 0) self.pinned = pin_thread_to_cpu(want) ? want : self.pinned;
  else if (set_thread_cpus(home)) self.pinned = -1;
}

void udp_port::run(std::size_t lane) {
  lane_state& self = *lanes_[lane];
  const std::vector<int> home = allowed_cpus();  // main's, where "unpinned" goes back to
  self.pinned = -1;
  std::int64_t next_place = 0;
  udp_batch_receiver rx(self.lane.fd.get(), batch, gro_);
  lane_view view;
  std::int64_t idle_since = mono_ns();
  std::vector<unsigned char> scratch(max_udp_message_size);  // UDP_RR answers
  while (!stop_.load(std::memory_order_relaxed)) {
    if (generation_.load(std::memory_order_acquire) != view.seen) {
      if (refresh(lane, view)) idle_since = 0;
      else if (idle_since == 0) idle_since = mono_ns();
      next_place = 0;  // a test that asks for a CPU gets it at once
    }
    if (view.flows.empty() && view.hello_from.empty() && mono_ns() - idle_since > idle_exit_ns) {
      std::lock_guard lock(mu_);
      if (generation_.load(std::memory_order_acquire) == view.seen) {
        self.running = false;
        return;
      }
      continue;
    }
    std::error_code ec;
    std::size_t got = rx.receive(
        [&](const received& r) {
          if ((view.hint >= view.flows.size() || !view.flows[view.hint].source.same(r.source)) &&
              !find_flow(self, lane, view, r))
            return;
          const local_entry& e = view.flows[view.hint];
          e.counters->on_receive(r.data, r.len, r.segment, r.copied, r.arrival_ns);
          if (e.owner->answer_size) answer(self.lane.fd.get(), e, r, scratch);
        },
        ec);
    std::int64_t now = mono_ns();
    if (got) self.busy_ns.set(now);
    if (now >= next_place) {
      const int asked = view.asked;
      place(self, home, asked, now);
      if (asked >= 0 && self.pinned == asked)  // the verdict judges this CPU: only once true
        for (const auto& e : view.flows)
          if (e.owner->cpu == asked) e.owner->pinned.store(asked, std::memory_order_relaxed);
      next_place = now + place_every_ns;
    }
  }
}

}  // namespace nb::serve
