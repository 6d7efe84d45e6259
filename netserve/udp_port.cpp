#include "netserve/udp_port.hpp"

#include "core/clock.hpp"
#include "core/udp_io.hpp"

#include <sys/ioctl.h>

#include <algorithm>

namespace nb::serve {
namespace {
constexpr std::int64_t idle_exit_ns = 2'000'000'000;  // a thread with no test for this long ends
constexpr std::size_t batch = 64;
}  // namespace

udp_port::udp_port(fd_handle fd, bool gro) : fd_(std::move(fd)), gro_(gro) {
  set_receive_timeout(fd_.get(), 50'000'000);
}

udp_port::~udp_port() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void udp_port::attach(const std::shared_ptr<udp_flows>& flows) {
  std::lock_guard lock(mu_);
  flows->shared_at_attach = !table_.empty();
  flows->attach_serial = ++attach_serial_;
  flows->drops_at_attach = static_cast<std::uint32_t>(socket_drops(fd_.get()));
  for (std::size_t i = 0; i < flows->sources.size(); ++i) table_.push_back({flows->sources[i], &flows->counters[i], flows});
  generation_.fetch_add(1, std::memory_order_release);
  if (!running_) {
    if (thread_.joinable()) thread_.join();  // a thread that ended for idleness; it no longer needs mu_
    running_ = true;
    thread_ = std::thread([this] { run(); });
  }
}

void udp_port::detach(const std::shared_ptr<udp_flows>& flows) {
  std::lock_guard lock(mu_);
  std::erase_if(table_, [&](const entry& e) { return e.owner == flows; });
  generation_.fetch_add(1, std::memory_order_release);
}

std::uint64_t udp_port::drops_since(const udp_flows& flows, bool& shared) const {
  auto now = static_cast<std::uint32_t>(socket_drops(fd_.get()));
  shared = flows.shared_at_attach || attach_serial_ != flows.attach_serial;
  return static_cast<std::uint32_t>(now - flows.drops_at_attach);  // the kernel counter wraps at 2^32
}

int udp_port::queued_bytes() const noexcept {
  int n = 0;
  ::ioctl(fd_.get(), FIONREAD, &n);
  return n;
}

bool udp_port::refresh(std::vector<entry>& local, std::uint64_t& seen) {
  std::lock_guard lock(mu_);
  local = table_;
  seen = generation_.load(std::memory_order_acquire);
  return !local.empty();
}

void udp_port::run() {
  udp_batch_receiver rx(fd_.get(), batch, gro_);
  std::vector<entry> local;
  std::uint64_t seen = ~0ULL;
  std::int64_t idle_since = mono_ns();
  std::size_t hint = 0;  // the last matching entry: consecutive datagrams mostly belong to one flow
  while (!stop_.load(std::memory_order_relaxed)) {
    if (generation_.load(std::memory_order_acquire) != seen) {
      if (refresh(local, seen)) idle_since = 0;
      else if (idle_since == 0) idle_since = mono_ns();
      hint = 0;
    }
    if (local.empty() && mono_ns() - idle_since > idle_exit_ns) {
      std::lock_guard lock(mu_);
      if (generation_.load(std::memory_order_acquire) == seen) {
        running_ = false;
        return;
      }
      continue;
    }
    std::error_code ec;
    rx.receive(
        [&](const received& r) {
          if (hint >= local.size() || !local[hint].source.same(r.source)) {
            auto find = [&] {
              return std::find_if(local.begin(), local.end(), [&](const entry& e) { return e.source.same(r.source); });
            };
            auto it = find();
            // A test attached while this thread sat in recvmmsg: its first datagrams may be in this very
            // batch, so a miss looks at the table again before calling a datagram foreign.
            if (it == local.end() && generation_.load(std::memory_order_acquire) != seen) {
              refresh(local, seen);
              it = find();
            }
            if (it == local.end()) {
              unattributed_.add(r.segment && r.len > r.segment ? (r.len + r.segment - 1) / r.segment : 1);
              return;
            }
            hint = static_cast<std::size_t>(it - local.begin());
          }
          local[hint].counters->on_receive(r.data, r.len, r.segment, r.copied, r.arrival_ns);
        },
        ec);
  }
}

}  // namespace nb::serve
