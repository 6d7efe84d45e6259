#pragma once
// Round-trip times of request/response transactions (UDP_RR / TCP_RR), in nanoseconds: HdrHistogram's
// idea without its library (no Debian package ships a C/C++ one). A log-linear bucket array: values below
// 2^sub_bits each have their own bucket; above, each power of two [2^k, 2^(k+1)) is split into 2^sub_bits
// equal buckets, so a bucket is never wider than 1/2^sub_bits of the values in it and any reported figure
// is within that relative error of the true one. Recording is a few shifts and an increment (data-plane
// thread: no allocation, lock or exception); the percentiles walk the buckets (reporting, not per sample).
#include "core/base/saturating.hpp"
#include "core/wire/native/flow.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <memory>

namespace nb {

// Round-trip times in ns, 1 ns .. ~2^40 ns (about 18 min; larger values clamp into the top bucket and are
// counted in `clamped()`), relative error of any reported value at most 1/2^sub_bits (sub_bits = 7:
// < 0.8 %). min, max, sum and count are exact whatever the bucket.
class latency_histogram {
 public:
  static constexpr int sub_bits = 7;
  static constexpr int max_bits = 40;  // values below 2^40 have their bucket
  static constexpr std::uint64_t max_trackable = (std::uint64_t{1} << max_bits) - 1;
  static constexpr std::size_t bucket_count = std::size_t{max_bits - sub_bits + 1} << sub_bits;  // 4352

  latency_histogram();  // allocates its fixed bucket array once
  // A copy is a snapshot: one thread records while others copy (every counter is a single-writer relaxed
  // atomic, as core/wire/native/flow.hpp's). A snapshot taken mid-record may miss that one value in part; its count is
  // its buckets' total, so its percentiles stay consistent.
  latency_histogram(const latency_histogram& other);
  latency_histogram& operator=(const latency_histogram& other);
  void record(std::uint64_t ns) noexcept;               // also keeps exact min, max, sum (for the mean) and count
  void merge(const latency_histogram& other) noexcept;  // exact: bucket-by-bucket sum, min of mins, max of maxes
  void reset() noexcept;
  // The values recorded since `earlier`, a snapshot of this same histogram: bucket by bucket. Its min and
  // max are those of the lowest and highest buckets that gained (within the relative error), clamped into
  // this histogram's exact ones.
  latency_histogram since(const latency_histogram& earlier) const;

  std::uint64_t count() const noexcept { return count_.get(); }
  std::uint64_t min_ns() const noexcept { return count() ? min_.get() : 0; }  // 0 when empty
  std::uint64_t max_ns() const noexcept { return max_.get(); }
  std::uint64_t sum_ns() const noexcept { return sum_.get(); }  // saturates at 2^64 - 1 rather than wrapping
  double mean_ns() const noexcept;
  // The value at percentile p (0..100) as the nearest-rank: the smallest recorded value v such that at
  // least p % of the recorded values are <= v, reported as its bucket's upper bound clamped into
  // [min, max] (so p100 == max and p0 == min exactly). 0 when empty; p outside 0..100 (or NaN) is
  // taken as the nearest end.
  std::uint64_t percentile_ns(double p) const noexcept;
  std::uint64_t clamped() const noexcept { return clamped_.get(); }

  // Compact JSON for results and the harness's exact merge across instances:
  // {"count":..,"min_ns":..,"max_ns":..,"sum_ns":..,"clamped":..,"sub_bits":7,"buckets":[[index,count],...]}
  // with only non-zero buckets, in ascending index order. from_json validates everything (types, index
  // range and order, counts summing to count, min <= max and in the lowest / highest buckets, sum within
  // count x [min, max], sub_bits equal, no unknown field; "clamped" may be absent, meaning 0) and throws
  // std::invalid_argument naming the field; it never crashes on hostile input (results come from other hosts).
  nlohmann::json to_json() const;
  static latency_histogram from_json(const nlohmann::json& j);
  // The figures people read: {"min_us","mean_us","p50_us","p90_us","p99_us","p999_us","max_us","count"}
  // (microseconds, doubles; count an integer).
  nlohmann::json summary_json() const;

  // The bucket layout, public for the tests and for readers of the JSON form.
  static std::size_t bucket_of(std::uint64_t ns) noexcept;  // ns above max_trackable: the top bucket
  static std::uint64_t bucket_lowest(std::size_t index) noexcept;
  static std::uint64_t bucket_highest(std::size_t index) noexcept;
  std::uint64_t bucket_count_at(std::size_t index) const noexcept { return counts_[index].get(); }

  // Exact equality: every bucket and every figure (a round trip through JSON gives an equal one).
  friend bool operator==(const latency_histogram& a, const latency_histogram& b) noexcept;

 private:
  using counter = relaxed<std::uint64_t>;
  // An array allocated once (34 KiB: too large for the stack of whoever holds one). No move: the
  // counters are atomics, so a histogram is copied (the defaulted moves were deleted, which Clang says).
  std::unique_ptr<counter[]> counts_;
  counter count_;
  counter min_;  // ~0 while empty, so the first record sets it; min_ns() reports 0 when empty
  counter max_;
  counter sum_;
  counter clamped_;
};

// Inline: called once per transaction on the data-plane thread.
inline std::size_t latency_histogram::bucket_of(std::uint64_t ns) noexcept {
  if (ns > max_trackable) ns = max_trackable;
  if (ns < (std::uint64_t{1} << sub_bits)) return static_cast<std::size_t>(ns);  // exact: one value each
  // Highest set bit k >= sub_bits: the power of two [2^k, 2^(k+1)) is bucket row k - sub_bits + 1, and the
  // sub_bits bits below bit k pick the bucket in it. (ns >> shift) keeps bit k too, which adds the row
  // offset of 2^sub_bits: row r starts at r << sub_bits.
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
