// A test's `search`: RFC 9971's goal parameters, or the older form mapped onto goals.
#include "harness/plan/plan.hpp"
#include "harness/plan/plan_toml.hpp"

#include <algorithm>
#include <set>

namespace harness {
namespace {

using nb::search::goal;

// CSIT's names; other loss ratios are named by themselves.
std::string goal_name_for(double loss_ratio) {
  if (loss_ratio == 0) return "NDR";
  if (loss_ratio == 0.005) return "PDR";
  return fmt::format("loss ratio {:g}", loss_ratio);
}

// Every key but loss_ratio defaults to CSIT's value.
goal parse_goal(const toml::node& n, toml_reader& sr, std::size_t index) {
  toml_reader gr(sr.table(n, "goals"), fmt::format("{} goals[{}]", sr.context(), index));
  goal g;
  g.loss_ratio = gr.number(gr.need("loss_ratio"), "loss_ratio", 0, 0.5);
  g.name = gr.string_or("name", goal_name_for(g.loss_ratio));
  if (g.name.empty()) fail_at(gr.need("name").source(), fmt::format("{}: 'name' is empty", gr.context()));
  if (const toml::node* name = gr.find("name"))
    check_name(name->source(), gr.context(), "name", g.name, name_use::text);
  // RFC 9971 section 4.6.
  g.exceed_ratio = gr.number_or("exceed_ratio", g.exceed_ratio, 0, 0.99);
  g.final_trial_duration = gr.number_or("final_trial_duration", g.final_trial_duration, 0.2, 86400);
  g.duration_sum = gr.number_or("duration_sum", std::max(g.duration_sum, g.final_trial_duration), 0.2, 864000);
  g.width = gr.number_or("width", g.width, 0.0001, 0.5);
  g.initial_trial_duration =
      gr.number_or("initial_trial_duration", std::min(g.initial_trial_duration, g.final_trial_duration), 0.2, 86400);
  if (g.duration_sum < g.final_trial_duration)
    fail_at(gr.need("duration_sum").source(),
            fmt::format("{}: duration_sum {:g} s is shorter than one final trial ({:g} s)", gr.context(),
                        g.duration_sum, g.final_trial_duration));
  if (g.initial_trial_duration > g.final_trial_duration)
    fail_at(gr.need("initial_trial_duration").source(),
            fmt::format("{}: initial_trial_duration {:g} s is longer than final_trial_duration {:g} s", gr.context(),
                        g.initial_trial_duration, g.final_trial_duration));
  gr.done();
  return g;
}

std::vector<goal> parse_goals(const toml::node& n, toml_reader& sr) {
  std::vector<goal> goals;
  std::set<std::string> names;
  for (const toml::node& e : sr.array(n, "goals")) {
    goals.push_back(parse_goal(e, sr, goals.size()));
    if (!names.insert(goals.back().name).second)
      fail_at(e.source(), fmt::format("{}: two goals are named '{}'", sr.context(), goals.back().name));
  }
  if (goals.empty()) fail_at(n.source(), fmt::format("{}: 'goals' is empty", sr.context()));
  return goals;
}

// The older form as goals: loss / 100, its trial and final durations, width precision / 100; duration_sum =
// final and exceed_ratio 0 keep its rule of one full trial at the rate, none over the target.
std::vector<goal> parse_older_form(toml_reader& sr) {
  std::vector<double> loss_pct{0.0, 0.5};
  if (const toml::node* loss = sr.find("loss")) {
    loss_pct.clear();
    for (const toml::node& e : sr.array(*loss, "loss")) loss_pct.push_back(sr.number(e, "loss", 0, 50));
    if (loss_pct.empty()) fail_at(loss->source(), fmt::format("{}: 'loss' is empty", sr.context()));
    std::sort(loss_pct.begin(), loss_pct.end());
    loss_pct.erase(std::unique(loss_pct.begin(), loss_pct.end()), loss_pct.end());
  }
  const double trial = sr.number_or("trial", 2, 0.2, 3600);
  const double final_s = sr.number_or("final", 30, 0.2, 86400);
  const double precision = sr.number_or("precision", 1, 0.1, 50);
  sr.integer_or("max_finals", 3, 1, 10);  // accepted and ignored: the duration sums decide
  std::vector<goal> goals;
  for (double pct : loss_pct) {
    goal g;
    g.loss_ratio = pct / 100;
    g.name = pct == 0 ? "NDR" : pct == 0.5 ? "PDR" : fmt::format("loss {:g} %", pct);
    g.exceed_ratio = 0;
    g.final_trial_duration = final_s;
    g.duration_sum = final_s;
    g.width = precision / 100;
    g.initial_trial_duration = std::min(trial, final_s);
    goals.push_back(g);
  }
  return goals;
}

}  // namespace

std::vector<goal> search_spec::default_search_goals() { return {nb::search::ndr_goal(), nb::search::pdr_goal()}; }

// `goals` (or [[tests.search.goals]]), or the older loss/trial/final/precision keys.
void parse_search(test_spec& t, toml_reader& r) {
  const toml::node* n = r.find("search");
  if (!n) return;
  if (t.kind != nb::test_kind::udp_stream)
    fail_at(n->source(), fmt::format("{}: 'search' needs a loss ratio, which only UDP_STREAM has", r.context()));
  if (t.loads.size() != 1 || t.loads.front().pps || t.loads.front().rate)
    fail_at(n->source(),
            fmt::format("{}: 'search' finds the rate itself: give it without 'pps' or 'rate'", r.context()));
  toml_reader sr(r.table(*n, "search"), r.context() + " search");
  search_spec s;
  const toml::node* goals = sr.find("goals");
  for (const char* older : {"loss", "trial", "final", "precision", "max_finals"})
    if (sr.has(older)) {
      if (goals)
        fail_at(goals->source(),
                fmt::format("{}: give 'goals' or the older '{}' (loss, trial, final, precision), not both",
                            sr.context(), older));
      s.older_form = true;
    }
  if (goals) s.goals = parse_goals(*goals, sr);
  else if (s.older_form) s.goals = parse_older_form(sr);
  s.max_trials = static_cast<int>(sr.integer_or("max_trials", s.max_trials, 2, 10000));
  sr.done();
  t.search = s;
}

}  // namespace harness
