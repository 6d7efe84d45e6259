#include "harness/plan/overrides.hpp"

#include "harness/toml/toml_bounds.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace harness {

namespace {

std::vector<std::string> split_names(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& g : given) {
    std::size_t at = 0;
    while (at <= g.size()) {
      const std::size_t comma = std::min(g.find(',', at), g.size());
      std::string name = g.substr(at, comma - at);
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      if (name.empty()) throw plan_error(fmt::format("--only '{}': an empty test name", g));
      out.push_back(name);
      at = comma + 1;
    }
  }
  return out;
}

// "60, 300 s": the distinct values the tests had.
std::string values_of(const std::vector<test_spec>& tests, double test_spec::*field) {
  std::set<double> v;
  for (const auto& t : tests) v.insert(t.*field);
  return fmt::format("{:g} s", fmt::join(v, ", "));
}

void keep_only(plan& p, const std::vector<std::string>& only, std::vector<std::string>& changes) {
  std::vector<std::string> all;
  for (const auto& t : p.tests) all.push_back(t.name);
  const auto names = split_names(only);
  for (const auto& n : names)
    if (std::find(all.begin(), all.end(), n) == all.end())
      throw plan_error(fmt::format("--only {}: plan '{}' has no test of that name (its tests: {})", n, p.name,
                                   fmt::join(all, ", ")));
  std::vector<std::string> left_out;
  std::erase_if(p.tests, [&](const test_spec& t) {
    const bool out = std::find(names.begin(), names.end(), t.name) == names.end();
    if (out) left_out.push_back(t.name);
    return out;
  });
  if (!left_out.empty()) changes.push_back(fmt::format("tests left out (--only): {}", fmt::join(left_out, ", ")));
}

// The older form's sum is its final trial; a goal keeps its own sum unless d exceeds it.
double searched_sum(const search_spec& s, const nb::search::goal& g, double d) {
  return s.older_form ? d : std::max(g.duration_sum, d);
}

void set_duration(plan& p, double d, std::vector<std::string>& changes) {
  if (!(d >= 0.1 && d <= 86400)) throw plan_error(fmt::format("--duration {:g}: 0.1 to 86400 seconds", d));
  const std::string durations = values_of(p.tests, &test_spec::duration);
  const std::string warmups = values_of(p.tests, &test_spec::warmup);
  p.duration = d;
  p.warmup = std::min(p.warmup, d / 2);
  bool warmup_changed = false;
  for (auto& t : p.tests) {
    t.duration = d;
    // A long test's warmup would leave nothing of a short one.
    warmup_changed = warmup_changed || t.warmup > d / 2;
    t.warmup = std::min(t.warmup, d / 2);
    if (!t.search) continue;
    // No first trial longer than the finals; a duration sum holds at least one final trial.
    for (auto& g : t.search->goals) {
      changes.push_back(
          fmt::format("test {}: search goal {}: final_trial_duration {:g} s -> {:g} s, initial_trial_duration "
                      "{:g} s -> {:g} s, duration_sum {:g} s -> {:g} s",
                      t.name, g.name, g.final_trial_duration, d, g.initial_trial_duration,
                      std::min(g.initial_trial_duration, d), g.duration_sum, searched_sum(*t.search, g, d)));
      g.duration_sum = searched_sum(*t.search, g, d);
      g.final_trial_duration = d;
      g.initial_trial_duration = std::min(g.initial_trial_duration, d);
    }
  }
  changes.push_back(fmt::format("duration {} -> {:g} s", durations, d));
  if (warmup_changed)
    changes.push_back(
        fmt::format("warmup {} -> {} (at most half of a test)", warmups, values_of(p.tests, &test_spec::warmup)));
}

void set_repeats(plan& p, int n, std::vector<std::string>& changes) {
  if (n < 1 || n > 1000) throw plan_error(fmt::format("--repeats {}: 1 to 1000", n));
  std::set<int> old;
  for (auto& t : p.tests) old.insert(std::exchange(t.repeats, n));
  p.repeats = n;
  changes.push_back(fmt::format("repeats {} -> {}", fmt::join(old, ", "), n));
}

std::string header(const plan& p, const plan_overrides& o, const std::vector<std::string>& changes, bool rewritten) {
  std::string out =
      fmt::format("# The plan as it ran: the command line's {} changed {}:\n", o.command_line(), p.source_path);
  for (const auto& c : changes) out += fmt::format("#   {}\n", c);
  out += rewritten
             ? "# The values below are rewritten to match; the tests left out are commented out.\n"
             : "# NOTE: the values below are the plan file's, NOT what ran (this layout could not be rewritten in\n"
               "# place): the lines above say what ran; environment.json's \"overrides\" too.\n";
  return out + "\n";
}

}  // namespace

std::string plan_overrides::command_line() const {
  std::vector<std::string> words;
  if (duration) words.push_back(fmt::format("--duration {:g}", *duration));
  if (repeats) words.push_back(fmt::format("--repeats {}", *repeats));
  for (const auto& n : only) words.push_back(fmt::format("--only {}", n));
  return fmt::format("{}", fmt::join(words, " "));
}

std::vector<std::string> apply_overrides(plan& p, const plan_overrides& o) {
  std::vector<std::string> changes;
  if (o.empty()) return changes;
  if (!o.only.empty()) keep_only(p, o.only, changes);
  if (o.duration) set_duration(p, *o.duration, changes);
  if (o.repeats) set_repeats(p, *o.repeats, changes);
  const auto rewritten = rewrite_plan_text(p.source_text, p, o);
  p.override_options = o.command_line();
  p.overrides = changes;
  p.source_text = header(p, o, changes, rewritten.has_value()) + rewritten.value_or(p.source_text);
  return changes;
}

}  // namespace harness
