#include "core/result/latency_histogram.hpp"

#include "core/json/json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace nb {

namespace {

using json = nlohmann::json;
using histogram_fields = json_fields<std::invalid_argument>;

constexpr std::size_t histogram_sub_count = std::size_t{1} << latency_histogram::sub_bits;

// ceil(p / 100 x n), at least 1; 99.9 is not exact as a double, so a hair above a whole number is that number.
std::uint64_t nearest_rank(double p, std::uint64_t n) noexcept {
  const double q = p >= 0 ? std::min(p, 100.0) : 0.0;  // NaN: 0
  const double x = q / 100.0 * static_cast<double>(n);
  if (x <= 1) return 1;
  if (x >= static_cast<double>(n)) return n;
  const auto rank = static_cast<std::uint64_t>(std::ceil(x - x * 1e-12));
  return std::clamp<std::uint64_t>(rank, 1, n);
}

double us_of(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

latency_histogram::latency_histogram() : counts_(new counter[bucket_count]) { min_.set(~std::uint64_t{0}); }

latency_histogram::latency_histogram(const latency_histogram& other) : latency_histogram() { *this = other; }

latency_histogram& latency_histogram::operator=(const latency_histogram& other) {
  if (this == &other) return *this;
  if (!counts_) counts_.reset(new counter[bucket_count]);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    counts_[i].set(other.counts_[i].get());
    total += counts_[i].get();
  }
  count_.set(total);
  min_.set(other.min_.get());
  max_.set(other.max_.get());
  sum_.set(other.sum_.get());
  clamped_.set(other.clamped_.get());
  return *this;
}

bool operator==(const latency_histogram& a, const latency_histogram& b) noexcept {
  if (a.count() != b.count() || a.min_ns() != b.min_ns() || a.max_ns() != b.max_ns() || a.sum_ns() != b.sum_ns() ||
      a.clamped() != b.clamped())
    return false;
  for (std::size_t i = 0; i < latency_histogram::bucket_count; ++i)
    if (a.bucket_count_at(i) != b.bucket_count_at(i)) return false;
  return true;
}

latency_histogram latency_histogram::since(const latency_histogram& earlier) const {
  latency_histogram d;
  std::uint64_t total = 0;
  std::size_t lowest = bucket_count, highest = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    const std::uint64_t now = counts_[i].get(), then = earlier.counts_[i].get();
    if (now <= then) continue;
    d.counts_[i].set(now - then);
    total += now - then;
    lowest = std::min(lowest, i);
    highest = i;
  }
  d.count_.set(total);
  if (total == 0) return d;
  // Snapshots taken mid-record may disagree by a value; the result must still pass from_json().
  const std::uint64_t hi = bucket_of(max_ns()) == highest ? max_ns() : bucket_highest(highest);
  const std::uint64_t lo = total == 1 ? hi : bucket_of(min_ns()) == lowest ? min_ns() : bucket_lowest(lowest);
  const std::uint64_t sum = sum_.get(), sum_then = earlier.sum_.get();
  d.sum_.set(std::clamp(sum > sum_then ? sum - sum_then : 0, saturating_mul(total, lo), saturating_mul(total, hi)));
  d.min_.set(lo);
  d.max_.set(hi);
  d.clamped_.set(clamped() - std::min(clamped(), earlier.clamped()));
  return d;
}

std::uint64_t latency_histogram::bucket_lowest(std::size_t index) noexcept {
  if (index < histogram_sub_count) return index;
  const std::size_t shift = (index >> sub_bits) - 1;
  return static_cast<std::uint64_t>((index & (histogram_sub_count - 1)) | histogram_sub_count) << shift;
}

std::uint64_t latency_histogram::bucket_highest(std::size_t index) noexcept {
  if (index < histogram_sub_count) return index;
  const std::size_t shift = (index >> sub_bits) - 1;
  return bucket_lowest(index) + ((std::uint64_t{1} << shift) - 1);
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i) counts_[i].add(other.counts_[i].get());
  count_.add(other.count());
  sum_.set(saturating_add(sum_.get(), other.sum_.get()));
  clamped_.add(other.clamped());
  min_.set(std::min(min_.get(), other.min_.get()));  // an empty one's min_ is ~0
  max_.set(std::max(max_.get(), other.max_.get()));
}

void latency_histogram::reset() noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i) counts_[i].set(0);
  count_.set(0);
  sum_.set(0);
  max_.set(0);
  clamped_.set(0);
  min_.set(~std::uint64_t{0});
}

double latency_histogram::mean_ns() const noexcept {
  return count() ? static_cast<double>(sum_ns()) / static_cast<double>(count()) : 0.0;
}

std::uint64_t latency_histogram::percentile_ns(double p) const noexcept {
  const std::uint64_t n = count(), lo = min_ns(), hi = max_ns();
  if (n == 0) return 0;
  const std::uint64_t rank = nearest_rank(p, n);
  if (rank == 1) return lo;
  if (rank == n) return hi;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    seen += counts_[i].get();
    if (seen >= rank) return std::clamp(bucket_highest(i), lo, hi);
  }
  return hi;  // not reached
}

json latency_histogram::to_json() const {
  json buckets = json::array();
  for (std::size_t i = 0; i < bucket_count; ++i)
    if (const std::uint64_t c = counts_[i].get()) buckets.push_back(json::array({i, c}));
  return json{{"count", count()},     {"min_ns", min_ns()},   {"max_ns", max_ns()},           {"sum_ns", sum_ns()},
              {"clamped", clamped()}, {"sub_bits", sub_bits}, {"buckets", std::move(buckets)}};
}

namespace {

struct bucket_span {
  std::size_t lowest = 0;
  std::size_t highest = 0;
  std::uint64_t total = 0;
};

bucket_span read_buckets(const histogram_fields& f, const json& buckets, std::vector<std::uint64_t>& counts) {
  if (!buckets.is_array()) f.fail("buckets", "must be an array");
  counts.assign(latency_histogram::bucket_count, 0);
  bucket_span span{counts.size(), 0, 0};
  std::size_t next = 0;  // the lowest index the next entry may have
  for (std::size_t n = 0; n < buckets.size(); ++n) {
    const json& e = buckets[n];
    const auto bad = [&](const char* what) { f.fail("buckets", fmt::format("entry {} {}", n, what).c_str()); };
    if (!e.is_array() || e.size() != 2) bad("must be an array [index, count]");
    if (!e[0].is_number_unsigned()) bad("must have a non-negative integer index");
    if (!e[1].is_number_unsigned()) bad("must have a non-negative integer count");
    const auto index = e[0].get<std::uint64_t>();
    const auto count = e[1].get<std::uint64_t>();
    if (index >= counts.size())
      bad(fmt::format("has index {}, beyond the last bucket {}", index, counts.size() - 1).c_str());
    if (index < next) bad("is out of order: indices must be strictly ascending");
    next = static_cast<std::size_t>(index) + 1;
    if (count == 0) continue;
    if (__builtin_add_overflow(span.total, count, &span.total)) bad("makes the counts' total overflow");
    counts[index] = count;
    span.lowest = std::min(span.lowest, static_cast<std::size_t>(index));
    span.highest = static_cast<std::size_t>(index);
  }
  return span;
}

}  // namespace

latency_histogram latency_histogram::from_json(const json& j) {
  histogram_fields f(j, "latency histogram");
  if (f.get<std::int64_t>("sub_bits") != sub_bits)
    f.fail("sub_bits", fmt::format("must be {} (buckets of another layout cannot be merged)", sub_bits).c_str());
  const auto count = f.get<std::uint64_t>("count");
  const auto min = f.get<std::uint64_t>("min_ns");
  const auto max = f.get<std::uint64_t>("max_ns");
  const auto sum = f.get<std::uint64_t>("sum_ns");
  const auto clamped = f.get_or<std::uint64_t>("clamped", 0);
  const json buckets = f.get<json>("buckets");
  f.done();
  std::vector<std::uint64_t> counts;
  const bucket_span span = read_buckets(f, buckets, counts);
  if (span.total != count) f.fail("buckets", "counts do not add up to count");
  latency_histogram h;
  if (count == 0) {
    if (min || max || sum || clamped) f.fail("count", "is 0 but min_ns, max_ns, sum_ns or clamped is not");
    return h;
  }
  // Each check keeps percentile_ns() and merge() meaningful.
  if (min > max) f.fail("min_ns", "is above max_ns");
  if (bucket_of(min) != span.lowest) f.fail("min_ns", "is not in the lowest bucket holding a value");
  if (bucket_of(max) != span.highest) f.fail("max_ns", "is not in the highest bucket holding a value");
  if (count == 1 && min != max) f.fail("min_ns", "differs from max_ns with one value");
  if (sum < saturating_mul(count, min) || sum > saturating_mul(count, max))
    f.fail("sum_ns", "is not between count x min_ns and count x max_ns");
  if (clamped > counts[bucket_count - 1]) f.fail("clamped", "is more than the top bucket holds");
  if ((clamped > 0) != (max > max_trackable))
    f.fail("clamped", "disagrees with max_ns (values above the range are clamped, and only those)");
  for (std::size_t i = 0; i < bucket_count; ++i) h.counts_[i].set(counts[i]);
  h.count_.set(count);
  h.min_.set(min);
  h.max_.set(max);
  h.sum_.set(sum);
  h.clamped_.set(clamped);
  return h;
}

json latency_histogram::summary_json() const {
  return json{{"min_us", us_of(min_ns())},          {"mean_us", mean_ns() / 1e3},
              {"p50_us", us_of(percentile_ns(50))}, {"p90_us", us_of(percentile_ns(90))},
              {"p99_us", us_of(percentile_ns(99))}, {"p999_us", us_of(percentile_ns(99.9))},
              {"max_us", us_of(max_ns())},          {"count", count()}};
}

}  // namespace nb
