#pragma once
// Ports the data path reads without a lock while the control plane changes them; a count per port, as a
// number may be held by a TCP and a UDP socket at once.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace nb {

class port_set {
 public:
  void add(std::uint16_t port) noexcept { count_[port].fetch_add(1, std::memory_order_acq_rel); }
  void remove(std::uint16_t port) noexcept { count_[port].fetch_sub(1, std::memory_order_acq_rel); }
  bool contains(std::uint16_t port) const noexcept { return count_[port].load(std::memory_order_acquire) != 0; }

 private:
  std::array<std::atomic<std::uint32_t>, 65536> count_{};
};

// Holds its ports in the set for as long as it lives.
class port_claim {
 public:
  port_claim() = default;
  port_claim(std::shared_ptr<port_set> set, std::vector<std::uint16_t> ports)
      : set_(std::move(set)), ports_(std::move(ports)) {
    for (auto p : ports_) set_->add(p);
  }
  port_claim(port_claim&& o) noexcept : set_(std::move(o.set_)), ports_(std::move(o.ports_)) { o.ports_.clear(); }
  port_claim& operator=(port_claim&& o) noexcept {
    if (this != &o) {
      release();
      set_ = std::move(o.set_);
      ports_ = std::move(o.ports_);
      o.ports_.clear();
    }
    return *this;
  }
  port_claim(const port_claim&) = delete;
  port_claim& operator=(const port_claim&) = delete;
  ~port_claim() { release(); }

 private:
  void release() noexcept {
    if (set_)
      for (auto p : ports_) set_->remove(p);
    ports_.clear();
  }

  std::shared_ptr<port_set> set_;
  std::vector<std::uint16_t> ports_;
};

}  // namespace nb
