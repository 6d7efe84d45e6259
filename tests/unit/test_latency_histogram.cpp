// The latency histogram: exact where it claims to be (small values, min, max, count, the merge), within
// 1/2^sub_bits relative everywhere else, and a JSON reader that refuses, with std::invalid_argument
// naming the field, everything a hostile or broken host could send.
#include "core/result/latency_histogram.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace nb;
using json = nlohmann::json;

namespace {

constexpr double hist_rel_bound = 1.0 / (1 << latency_histogram::sub_bits);

// The exact nearest-rank value of percentile permille/10 among `sorted`: the ceil(permille x n / 1000)-th
// smallest, at least the first; integers only, so no rounding of p enters the reference.
std::uint64_t exact_rank_value(const std::vector<std::uint64_t>& sorted, std::uint64_t permille) {
  const std::uint64_t n = sorted.size();
  const std::uint64_t rank = std::max<std::uint64_t>(1, (permille * n + 999) / 1000);
  return sorted[rank - 1];
}

// Every percentile 0.0 .. 100.0 % in steps of 0.1 % within the relative bound of the exact value, never
// below it (a bucket's upper bound), and the exact figures exact.
void check_against_sorted(const latency_histogram& h, std::vector<std::uint64_t> values) {
  std::sort(values.begin(), values.end());
  REQUIRE(h.count() == values.size());
  CHECK(h.min_ns() == values.front());
  CHECK(h.max_ns() == values.back());
  for (std::uint64_t pm = 0; pm <= 1000; ++pm) {
    const std::uint64_t exact = exact_rank_value(values, pm);
    const std::uint64_t got = h.percentile_ns(static_cast<double>(pm) / 10.0);
    INFO("percentile " << static_cast<double>(pm) / 10.0 << " exact " << exact << " reported " << got);
    CHECK(got >= exact);
    CHECK(static_cast<double>(got - exact) <= hist_rel_bound * static_cast<double>(exact));
  }
  CHECK(h.percentile_ns(0) == values.front());
  CHECK(h.percentile_ns(100) == values.back());
}

std::vector<std::uint64_t> hist_sweep(std::size_t n, std::uint32_t seed) {
  // Log-uniform over 1 ns .. 2^40 ns: every power of two equally likely, as round-trip times spread.
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> exponent(0.0, 40.0);
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<std::uint64_t>(std::exp2(exponent(gen))));
  return v;
}

latency_histogram hist_of(const std::vector<std::uint64_t>& values) {
  latency_histogram h;
  for (auto v : values) h.record(v);
  return h;
}

}  // namespace

TEST_CASE("latency histogram: values below 2^sub_bits are exact, each in its own bucket", "[latency_histogram]") {
  for (std::uint64_t v = 0; v < 256; ++v) {
    CHECK(latency_histogram::bucket_of(v) == v);
    CHECK(latency_histogram::bucket_lowest(v) == v);
    CHECK(latency_histogram::bucket_highest(v) == v);
  }
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v < 128; ++v)
    for (std::uint64_t k = 0; k < v % 5 + 1; ++k) values.push_back(v);
  const latency_histogram h = hist_of(values);
  std::sort(values.begin(), values.end());
  for (std::uint64_t pm = 0; pm <= 1000; ++pm)
    CHECK(h.percentile_ns(static_cast<double>(pm) / 10.0) == exact_rank_value(values, pm));
}

TEST_CASE("latency histogram: buckets tile the range, each no wider than 1/2^sub_bits of its values",
          "[latency_histogram]") {
  for (std::size_t i = 0; i + 1 < latency_histogram::bucket_count; ++i) {
    INFO("bucket " << i);
    REQUIRE(latency_histogram::bucket_highest(i) + 1 == latency_histogram::bucket_lowest(i + 1));
    const std::uint64_t lo = latency_histogram::bucket_lowest(i);
    const std::uint64_t hi = latency_histogram::bucket_highest(i);
    REQUIRE(latency_histogram::bucket_of(lo) == i);
    REQUIRE(latency_histogram::bucket_of(hi) == i);
    REQUIRE(static_cast<double>(hi - lo) <= hist_rel_bound * static_cast<double>(std::max<std::uint64_t>(lo, 1)));
  }
  CHECK(latency_histogram::bucket_highest(latency_histogram::bucket_count - 1) == latency_histogram::max_trackable);
}

TEST_CASE("latency histogram: every power of two and its neighbours, alone, reported within the bound",
          "[latency_histogram]") {
  for (int k = 0; k < latency_histogram::max_bits; ++k) {
    const std::uint64_t p2 = std::uint64_t{1} << k;
    for (std::uint64_t v : {p2 - 1, p2, p2 + 1}) {
      if (v == 0) continue;
      INFO("value " << v);
      const std::uint64_t hi = latency_histogram::bucket_highest(latency_histogram::bucket_of(v));
      CHECK(hi >= v);
      CHECK(static_cast<double>(hi - v) <= hist_rel_bound * static_cast<double>(v));
      // With a larger value after it, p50 (the rank of v, neither the first nor the last) is v's
      // bucket's upper bound.
      latency_histogram h;
      h.record(v);
      h.record(v);
      h.record(latency_histogram::max_trackable);
      CHECK(h.percentile_ns(50) == hi);
    }
  }
}

TEST_CASE("latency histogram: a pseudo-random sweep, every percentile within 1/128 of the exact one",
          "[latency_histogram]") {
  const std::vector<std::uint64_t> values = hist_sweep(20'000, 12345);
  check_against_sorted(hist_of(values), values);
  // Values spread over only a small range (a LAN's round trips): the middle of the buckets is exercised.
  std::mt19937_64 gen(777);
  std::uniform_int_distribution<std::uint64_t> rtt(20'000, 80'000);
  std::vector<std::uint64_t> lan;
  for (int i = 0; i < 10'000; ++i) lan.push_back(rtt(gen));
  check_against_sorted(hist_of(lan), lan);
}

TEST_CASE("latency histogram: min, max, mean and count exact, p0 is min and p100 is max", "[latency_histogram]") {
  latency_histogram h;
  for (std::uint64_t v : {1'000'001u, 5'000'003u, 2'999'999u, 7u}) h.record(v);
  CHECK(h.count() == 4);
  CHECK(h.min_ns() == 7);
  CHECK(h.max_ns() == 5'000'003);
  CHECK(h.mean_ns() == Approx((1'000'001.0 + 5'000'003.0 + 2'999'999.0 + 7.0) / 4));
  CHECK(h.percentile_ns(0) == 7);
  CHECK(h.percentile_ns(100) == 5'000'003);
  CHECK(h.percentile_ns(-5) == 7);  // outside 0..100: the nearest end
  CHECK(h.percentile_ns(250) == 5'000'003);
  CHECK(h.clamped() == 0);
}

TEST_CASE("latency histogram: empty gives zeros everywhere", "[latency_histogram]") {
  latency_histogram h;
  CHECK(h.count() == 0);
  CHECK(h.min_ns() == 0);
  CHECK(h.max_ns() == 0);
  CHECK(h.mean_ns() == 0.0);
  for (double p : {0.0, 50.0, 99.9, 100.0}) CHECK(h.percentile_ns(p) == 0);
  const json s = h.summary_json();
  for (const char* k : {"min_us", "mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"})
    CHECK(s.at(k).get<double>() == 0.0);
  CHECK(s.at("count") == 0);
  h.record(42);
  h.reset();
  CHECK(h == latency_histogram());
}

TEST_CASE("latency histogram: merging two halves equals recording everything in one", "[latency_histogram]") {
  const std::vector<std::uint64_t> values = hist_sweep(10'000, 99);
  latency_histogram all, first, second;
  for (std::size_t i = 0; i < values.size(); ++i) {
    all.record(values[i]);
    (i % 3 ? first : second).record(values[i]);
  }
  latency_histogram merged = first;
  merged.merge(second);
  CHECK(merged == all);
  latency_histogram empty;
  merged.merge(empty);  // an empty one changes nothing, min included
  CHECK(merged == all);
  empty.merge(all);
  CHECK(empty == all);
}

TEST_CASE("latency histogram: values beyond 2^40 ns clamp into the top bucket and are counted", "[latency_histogram]") {
  latency_histogram h;
  h.record(10);
  h.record(std::uint64_t{1} << 50);
  h.record(~std::uint64_t{0});
  CHECK(h.clamped() == 2);
  CHECK(h.max_ns() == ~std::uint64_t{0});  // exact figures stay exact
  CHECK(h.percentile_ns(100) == ~std::uint64_t{0});
  CHECK(h.bucket_count_at(latency_histogram::bucket_count - 1) == 2);
  CHECK(h.sum_ns() == ~std::uint64_t{0});  // saturated, not wrapped
  CHECK(latency_histogram::from_json(h.to_json()) == h);
}

TEST_CASE("latency histogram: to_json / from_json round trip gives an equal histogram", "[latency_histogram]") {
  const latency_histogram h = hist_of(hist_sweep(5'000, 4242));
  const json j = h.to_json();
  CHECK(j.at("sub_bits") == latency_histogram::sub_bits);
  CHECK(j.at("count") == 5'000);
  const latency_histogram back = latency_histogram::from_json(json::parse(j.dump()));
  CHECK(back == h);
  CHECK(back.summary_json() == h.summary_json());
  CHECK(latency_histogram::from_json(latency_histogram().to_json()) == latency_histogram());
}

TEST_CASE("latency histogram: summary in microseconds", "[latency_histogram]") {
  latency_histogram h;
  for (int i = 0; i < 1000; ++i) h.record(50'000);  // 50 us
  const json s = h.summary_json();
  CHECK(s.at("p50_us").get<double>() == 50.0);
  CHECK(s.at("p999_us").get<double>() == 50.0);
  CHECK(s.at("mean_us").get<double>() == 50.0);
  CHECK(s.at("count") == 1000);
}

TEST_CASE("latency histogram: from_json refuses what does not hold together, naming the field", "[latency_histogram]") {
  latency_histogram h;
  for (std::uint64_t v : {100u, 2'000u, 30'000u}) h.record(v);
  const json good = h.to_json();
  REQUIRE_NOTHROW(latency_histogram::from_json(good));
  // Refused for the reason given: the field named, and `why` in the message when given.
  const auto refused = [](const json& j, const std::string& field, const std::string& why = "") {
    INFO(j.dump());
    try {
      (void)latency_histogram::from_json(j);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(field) && Catch::Contains(why));
    }
  };
  // Unsigned literals: a JSON text's non-negative numbers parse as unsigned, and a signed one would be
  // refused for its type before the check each line is about.
  const auto with = [&](const char* key, json v) {
    json j = good;
    j[key] = std::move(v);
    return j;
  };
  const auto bucket_at = [&](std::size_t n, json entry) {
    json j = good;
    j["buckets"][n] = std::move(entry);
    return j;
  };
  refused(json::array(), "must be an object");
  refused(json("text"), "must be an object");
  for (const char* k : {"count", "min_ns", "max_ns", "sum_ns", "sub_bits", "buckets"}) {
    json j = good;
    j.erase(k);
    refused(j, k);
  }
  refused(with("sub_bits", 8u), "sub_bits", "must be 7");
  refused(with("count", -3), "count");
  refused(with("count", 3.0), "count");
  refused(with("count", "3"), "count");
  refused(with("count", 4u), "buckets", "add up");
  refused(with("min_ns", 40'000u), "min_ns");  // above max
  refused(with("min_ns", 101u), "min_ns", "lowest bucket");
  refused(with("max_ns", 99'999u), "max_ns", "highest bucket");
  refused(with("sum_ns", 1u), "sum_ns", "between");
  refused(with("clamped", 1u), "clamped", "top bucket");
  refused(with("extra", 1), "extra");
  refused(with("buckets", json::object()), "buckets");
  refused(bucket_at(0, json::array({latency_histogram::bucket_count, 1u})), "buckets", "beyond the last bucket");
  refused(bucket_at(0, json::array({~std::uint64_t{0}, 1u})), "buckets", "beyond the last bucket");
  refused(bucket_at(0, json::array({-1, 1u})), "buckets");
  refused(bucket_at(0, json::array({100u, -1})), "buckets");
  refused(bucket_at(0, json::array({100u, 1.5})), "buckets");
  refused(bucket_at(0, json::array({100u, "1"})), "buckets");
  refused(bucket_at(0, json::array({100u})), "buckets");
  refused(bucket_at(0, json(100)), "buckets");
  refused(bucket_at(1, good["buckets"][0]), "buckets", "out of order");  // a duplicate
  // Counts that wrap to the right total: 2^64 - 1 + 2 + 2 overflows to 3.
  json wrap = good;
  wrap["buckets"] =
      json::array({json::array({100u, ~std::uint64_t{0}}), json::array({latency_histogram::bucket_of(2'000), 2u}),
                   json::array({latency_histogram::bucket_of(30'000), 2u})});
  refused(wrap, "buckets", "overflow");
  // min above max within one bucket (1000 .. 1003), so that no other check sees it first.
  latency_histogram one_bucket;
  one_bucket.record(1'000);
  one_bucket.record(1'002);
  json swapped = one_bucket.to_json();
  swapped["min_ns"] = 1'002u;
  swapped["max_ns"] = 1'000u;
  refused(swapped, "min_ns", "above max_ns");
  latency_histogram far;
  far.record(std::uint64_t{1} << 45);
  json unclamped = far.to_json();
  unclamped["clamped"] = 0u;
  refused(unclamped, "clamped", "disagrees");
  json empty = latency_histogram().to_json();
  empty["max_ns"] = 5u;
  refused(empty, "count", "is 0");
}

TEST_CASE("latency_histogram: since() gives what was recorded after a snapshot, bucket by bucket",
          "[latency_histogram]") {
  nb::latency_histogram h;
  for (std::uint64_t v = 1000; v < 2000; ++v) h.record(v);
  const nb::latency_histogram then = h;  // a snapshot, as netload takes one per interval
  CHECK(then == h);
  for (std::uint64_t v = 50'000; v < 50'100; ++v) h.record(v);
  const nb::latency_histogram d = h.since(then);
  CHECK(d.count() == 100);
  CHECK(d.min_ns() >= 50'000 * 127 / 128);
  CHECK(d.min_ns() <= 50'000);
  CHECK(d.max_ns() >= 50'099);
  CHECK(d.max_ns() <= h.max_ns());
  CHECK(d.sum_ns() == h.sum_ns() - then.sum_ns());
  CHECK(d.percentile_ns(50) >= 50'049);
  CHECK(d.percentile_ns(50) <= 50'049 + 50'049 / 128);
  CHECK(h.since(h).count() == 0);
  CHECK(h.since(h).percentile_ns(99) == 0);
  // Whatever the snapshots, an interval is a histogram its reader accepts: one value, and a value in the
  // lowest bucket's range recorded before (the whole run's min lies in the interval's lowest bucket).
  const nb::latency_histogram before = h;
  h.record(777'777);
  const nb::latency_histogram one = h.since(before);
  CHECK(one.count() == 1);
  CHECK(one.min_ns() == one.max_ns());
  CHECK_NOTHROW(nb::latency_histogram::from_json(one.to_json()));
  CHECK_NOTHROW(nb::latency_histogram::from_json(d.to_json()));
  const nb::latency_histogram then2 = h;
  h.record(1001);
  h.record(900'000);
  CHECK_NOTHROW(nb::latency_histogram::from_json(h.since(then2).to_json()));
}
