#include "netload/native/bidir.hpp"

#include "core/base/clock.hpp"
#include "core/base/units.hpp"
#include "core/base/version.hpp"
#include "netload/native/client.hpp"
#include "netload/native/outcome.hpp"
#include "netload/native/report.hpp"
#include "netload/native/user_stop.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <cstdio>

namespace nb::load {
namespace {

using namespace std::chrono_literals;

// Holds the other's default handshake and a start instant on stdin.
constexpr auto barrier_limit = 60s;

// The forward test chooses the instant as a single test would; the reverse takes it.
class start_barrier {
 public:
  explicit start_barrier(asio::io_context& io) : wake_(io, std::chrono::steady_clock::now() + barrier_limit) {}

  asio::awaitable<std::optional<start_instant>> arrive(bool chooser) {
    ++arrived_;
    wake_.cancel();
    while (!failed_ && (arrived_ < 2 || (!chooser && !chosen_))) {
      if (std::chrono::steady_clock::now() >= wake_.expiry())
        throw std::runtime_error("--bidir: the other direction was not ready to start within 60 s");
      co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (failed_) throw std::runtime_error("--bidir: not started: the other direction failed");
    co_return chooser ? std::nullopt : chosen_;
  }
  void chosen(const start_instant& s) {
    chosen_ = s;
    wake_.cancel();
  }
  void failed() {
    failed_ = true;
    wake_.cancel();
  }
  const std::optional<start_instant>& instant() const { return chosen_; }

 private:
  asio::steady_timer wake_;  // cancelled on any change
  int arrived_ = 0;
  bool failed_ = false;
  std::optional<start_instant> chosen_;
};

struct direction {
  const char* name;
  client_options options;
  std::shared_ptr<client_test> test;
  bool completed = false;
  std::string failure;
};

test_result result_of(const direction& d, const user_stop& stop) {
  test_result r = !d.completed        ? stop.abandoned_result(d.options)
                  : d.failure.empty() ? d.test->result()
                                      : failed_result(d.options, d.failure);
  escape_peer_text(r);
  return r;
}

void run_both(asio::io_context& io, std::array<direction, 2>& dirs, start_barrier& barrier,
              const std::array<client_events, 2>& events) {
  int done = 0;
  for (std::size_t k = 0; k < dirs.size(); ++k) {
    direction& d = dirs[k];
    client_events ev = events[k];
    const bool chooser = k == 0;
    ev.arrive = [&barrier, chooser] { return barrier.arrive(chooser); };
    ev.chosen = [&barrier](const start_instant& s) { barrier.chosen(s); };
    d.test = std::make_shared<client_test>(io, d.options, std::move(ev));
    asio::co_spawn(io, d.test->run(), [&, k](std::exception_ptr e) {
      dirs[k].completed = true;
      if (e) {
        dirs[k].failure = describe_failure(e);
        barrier.failed();
      }
      if (++done == 2) io.stop();
    });
  }
  io.run();
}

std::string sum_line(const test_result& f, const test_result& r, char units) {
  const rate_units u{units ? units : 'm'};
  auto mbit = [&](double bps) { return u.of(bps); };
  return fmt::format(
      "Both ways   sent {:.2f} {} (forward {:.2f} + reverse {:.2f}), received {:.2f} {} "
      "(forward {:.2f} + reverse {:.2f}); lost {} of {}\n",
      mbit(f.sender.bits_per_second + r.sender.bits_per_second), u.name(), mbit(f.sender.bits_per_second),
      mbit(r.sender.bits_per_second), mbit(f.receiver.bits_per_second + r.receiver.bits_per_second), u.name(),
      mbit(f.receiver.bits_per_second), mbit(r.receiver.bits_per_second), f.loss.packets + r.loss.packets,
      f.sender.packets + r.sender.packets);
}

void print_results(const client_options& o, const std::array<test_result, 2>& results, const start_barrier& barrier) {
  const char* names[2] = {"forward", "reverse"};
  if (o.json_stream) {
    for (std::size_t k = 0; k < 2; ++k) {
      nlohmann::json j = to_json(results[k]);
      j["type"] = "result";
      j["direction"] = names[k];
      fmt::print("{}\n", j.dump());
    }
  } else if (o.json) {
    nlohmann::json j = {{"bidir", true}, {"forward", to_json(results[0])}, {"reverse", to_json(results[1])}};
    j["start_instant"] =
        barrier.instant() ? nlohmann::json(ns_to_s(barrier.instant()->wall_ns)) : nlohmann::json(nullptr);
    fmt::print("{}\n", j.dump(2));
  } else {
    const char* heads[2] = {"Forward: netload sends, netserve receives", "Reverse: netserve sends, netload receives"};
    for (std::size_t k = 0; k < 2; ++k)
      if (results[k].ok)
        fmt::print("{}\n{}{}\n", heads[k], interrupted_line(results[k]),
                   format_table(results[k], o.local_cpu_util, o.remote_cpu_util, o.rate_units));
    if (results[0].ok && results[1].ok) fmt::print("{}", sum_line(results[0], results[1], o.rate_units));
  }
}

}  // namespace

int run_bidir(const client_options& o) {
  // -T l,r: both directions' threads on l and up, netserve's on r and up, as for one test.
  if (o.local_cpu >= 0 && !pin_thread_to_cpu(o.local_cpu))
    fmt::print(stderr, "netload: cannot run on CPU {} (-T): not pinned\n", o.local_cpu);
  asio::io_context io;
  std::array<direction, 2> dirs{direction{"forward", o, nullptr, false, {}},
                                direction{"reverse", o, nullptr, false, {}}};
  dirs[0].options.reverse = false;
  dirs[1].options.reverse = true;
  std::int64_t first_start = 0;
  std::array<client_events, 2> events;
  for (std::size_t k = 0; k < 2; ++k)
    events[k].interval = [&, name = dirs[k].name](const interval_figures& i) {
      if (!first_start) first_start = i.start_ns;
      if (o.json_stream) {
        nlohmann::json j = interval_event(i);
        j["direction"] = name;
        fmt::print("{}\n", j.dump());
      } else if (!o.json) {
        fmt::print("{} {}", name, format_interval_line(i, first_start, o.rate_units, o.omit_s));
      }
      std::fflush(stdout);
    };
  events[0].armed = [&] {  // the forward test reads the instant for both
    if (o.json_stream) fmt::print("{{\"type\":\"armed\"}}\n");
    else fmt::print(stderr, "netload: both directions connected; waiting for the start instant on standard input\n");
    std::fflush(stdout);
  };
  start_barrier barrier(io);
  // One direction whose traffic has not begun abandons both (neither has then).
  user_stop stop(io, [&](const std::string& signal) {
    bool graceful = true;
    for (direction& d : dirs) graceful = (d.test && !d.completed ? d.test->interrupt(signal) : true) && graceful;
    return graceful;
  });
  run_both(io, dirs, barrier, events);
  std::array<test_result, 2> results{result_of(dirs[0], stop), result_of(dirs[1], stop)};
  for (std::size_t k = 0; k < 2; ++k) results[k].options = options_json(dirs[k].options);
  print_results(o, results, barrier);
  const int forward = exit_status(results[0], "forward: ");  // its line first on stderr
  return worse(forward, exit_status(results[1], "reverse: "));
}

}  // namespace nb::load
