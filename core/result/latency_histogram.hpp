#pragma once
// Round-trip times in ns: HdrHistogram's log-linear buckets without its library (no Debian package
// ships a C/C++ one). Recording allocates nothing and takes no lock: it runs on the data-plane thread.
#include "core/base/saturating.hpp"
#include "core/wire/native/flow.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <memory>

namespace nb {

// Any reported value is within 1/2^sub_bits of the true one; min, max, sum and count are exact.
class latency_histogram {
 public:
  static constexpr int sub_bits = 7;
  static constexpr int max_bits = 40;  // about 18 min; larger values clamp into the top bucket
  static constexpr std::uint64_t max_trackable = (std::uint64_t{1} << max_bits) - 1;
  static constexpr std::size_t bucket_count = std::size_t{max_bits - sub_bits + 1} << sub_bits;

  latency_histogram();
  // A copy is a snapshot while one thread records (single-writer relaxed atomics); its count is its
  // buckets' total, so a value caught mid-record cannot skew the percentiles.
  latency_histogram(const latency_histogram& other);
  latency_histogram& operator=(const latency_histogram& other);
  void record(std::uint64_t ns) noexcept;
  void merge(const latency_histogram& other) noexcept;  // exact
  void reset() noexcept;
  // The values recorded since `earlier`, a snapshot of this one; min and max within the relative error.
  latency_histogram since(const latency_histogram& earlier) const;

  std::uint64_t count() const noexcept { return count_.get(); }
  std::uint64_t min_ns() const noexcept { return count() ? min_.get() : 0; }
  std::uint64_t max_ns() const noexcept { return max_.get(); }
  std::uint64_t sum_ns() const noexcept { return sum_.get(); }  // saturates
  double mean_ns() const noexcept;
  // Nearest rank, as its bucket's upper bound clamped into [min, max]: p100 == max exactly.
  std::uint64_t percentile_ns(double p) const noexcept;
  std::uint64_t clamped() const noexcept { return clamped_.get(); }

  // Non-zero buckets only, for an exact merge across instances. from_json throws std::invalid_argument
  // naming the field: results come from other hosts, so it checks everything.
  nlohmann::json to_json() const;
  static latency_histogram from_json(const nlohmann::json& j);
  // Microseconds: min, mean, percentiles, max.
  nlohmann::json summary_json() const;

  // Public for the tests and for readers of the JSON form.
  static std::size_t bucket_of(std::uint64_t ns) noexcept;
  static std::uint64_t bucket_lowest(std::size_t index) noexcept;
  static std::uint64_t bucket_highest(std::size_t index) noexcept;
  std::uint64_t bucket_count_at(std::size_t index) const noexcept { return counts_[index].get(); }

  friend bool operator==(const latency_histogram& a, const latency_histogram& b) noexcept;

 private:
  using counter = relaxed<std::uint64_t>;
  // On the heap: too large for a holder's stack. No move: atomics are copied.
  std::unique_ptr<counter[]> counts_;
  counter count_;
  counter min_;  // ~0 while empty, so the first record sets it
  counter max_;
  counter sum_;
  counter clamped_;
};

// Inline: once per transaction on the data-plane thread.
inline std::size_t latency_histogram::bucket_of(std::uint64_t ns) noexcept {
  if (ns > max_trackable) ns = max_trackable;
  if (ns < (std::uint64_t{1} << sub_bits)) return static_cast<std::size_t>(ns);
  // (ns >> shift) keeps the top bit too, which adds the row offset of 2^sub_bits.
  const int shift = static_cast<int>(std::bit_width(ns)) - 1 - sub_bits;
  return (static_cast<std::size_t>(shift) << sub_bits) + static_cast<std::size_t>(ns >> shift);
}

inline void latency_histogram::record(std::uint64_t ns) noexcept {
  if (ns > max_trackable) clamped_.add(1);
  counts_[bucket_of(ns)].add(1);
  count_.add(1);
  sum_.set(saturating_add(sum_.get(), ns));
  if (ns < min_.get()) min_.set(ns);
  if (ns > max_.get()) max_.set(ns);
}

}  // namespace nb
