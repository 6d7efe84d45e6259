#pragma once
// `harness watch PLAN --every 15m`: the plan run again and again, never two runs at once, each recorded
// in the results database and said in one line on stdout with its verdict against the baseline;
// optionally the last run's figures served as OpenMetrics on --listen for Prometheus.
#include "harness/app/app.hpp"

#include <chrono>
#include <string>

namespace harness::watch {

struct watch_request {
  run_request run;  // the options `harness run` takes
  std::chrono::seconds every{0};
  int count = 0;       // stop after this many runs; 0: until a signal
  std::string listen;  // ADDR:PORT of the metrics server; empty: none
  // With --listen and --count: how long the last run's figures stay served after it, so that a scraper
  // reads them (Prometheus' default scrape interval); a signal ends the wait at once.
  std::chrono::seconds linger{60};
};

// 128 + the signal when one stopped a run or the wait for one; otherwise (a signal in the linger too) 0 when every run
// was ok, or the last non-zero status a run had (3 a run failed, 4 a regression with --fail-on-regression); errors
// thrown to main.
int watch_plan(const watch_request& w);

}  // namespace harness::watch
