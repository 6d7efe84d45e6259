#include "harness/report/results.hpp"

#include "core/sys/eintr.hpp"
#include "core/sys/file_beneath.hpp"
#include "harness/report/model/stats.hpp"
#include "harness/report/report.hpp"
#include "harness/toml/toml_bounds.hpp"

#include "core/json/json_text.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path make_results_dir(const fs::path& root, const std::string& plan_name) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  fs::path dir = root / fmt::format("{}-{:%Y%m%dT%H%M%SZ}", plan_name, now);
  // Two runs within one second (tests do) get a suffix rather than mixing files.
  for (int n = 2; fs::exists(dir); ++n) dir = root / fmt::format("{}-{:%Y%m%dT%H%M%SZ}-{}", plan_name, now, n);
  fs::create_directories(dir / "raw");
  return dir;
}

void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  // POSIX calls: the first errno is the reason, and close() is checked too (some file systems report ENOSPC there).
  auto fail = [&](const char* what, int err) {
    ::unlink(tmp.c_str());
    throw write_error(fmt::format("cannot write {}: {}: {}", path.string(), what, std::strerror(err)));
  };
  // A foreign PATH.tmp may be a symlink: removed, never written through.
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw write_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = nb::retry_eintr([&] { return ::write(fd, text.data() + done, text.size() - done); });
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail("write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename", errno);  // never half a file under the real name
}

void write_json(const fs::path& path, const json& j) { write_file(path, j.dump(2) + "\n"); }

namespace {

// Errors name the file, never a bare JSON type error.
template <class F>
auto in_file(const fs::path& path, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
}

// A whole number an int holds (a foreign file may say 1e300); 0 when an older search has none.
int order_of(const json& j, bool required) {
  const auto it = j.is_object() ? j.find("order") : j.end();
  if (it == j.end() && !required) return 0;
  if (it == j.end()) throw std::runtime_error("field 'order' is missing");
  const bool fits = it->is_number_unsigned()  ? it->get<std::uint64_t>() <= INT_MAX
                    : it->is_number_integer() ? it->get<std::int64_t>() >= INT_MIN && it->get<std::int64_t>() <= INT_MAX
                                              : false;
  if (!fits) throw std::runtime_error(fmt::format("field 'order' is {}, not a whole number of an int", it->dump()));
  return it->get<int>();
}

}  // namespace

std::optional<std::string> read_results_file(const fs::path& dir, const fs::path& relative, std::size_t max_bytes) {
  return nb::read_file_beneath(dir, relative, max_bytes);
}

json read_results_json(const fs::path& dir, const fs::path& relative) {
  const fs::path path = dir / relative;
  const auto text = read_results_file(dir, relative);
  if (!text) throw std::runtime_error(fmt::format("cannot read {}: no such file", path.string()));
  bool too_deep = false;
  json j = nb::parse_json_bounded(*text, nb::max_json_depth, &too_deep);
  if (j.is_discarded() && too_deep)
    throw std::runtime_error(fmt::format("{}: nested deeper than {} levels", path.string(), nb::max_json_depth));
  if (j.is_discarded()) throw std::runtime_error(fmt::format("{}: not valid JSON", path.string()));
  return j;
}

std::string read_plan_copy(const fs::path& dir) {
  return read_results_file(dir, "plan.toml", max_toml_bytes).value_or("");
}

json read_environment(const fs::path& dir) {
  if (!fs::exists(dir / "environment.json")) return json::object();
  json env = read_results_json(dir, "environment.json");
  return env.is_object() ? env : json::object();
}

namespace {

instance_record not_written(const json& planned, const run_record& r) {
  instance_record i;
  i.name = planned.at("name").get<std::string>();
  i.client = planned.at("client").get<std::string>();
  i.server = planned.at("server").get<std::string>();
  i.error = r.error.empty() ? "no raw file (the run was interrupted)" : "not run: the run failed";
  return i;
}

// Both directions started at one T0; each is reported as "<id>-forward" / "<id>-reverse".
std::vector<run_record> by_direction(run_record r) {
  if (!r.spec.value("bidirectional", false)) return {std::move(r)};
  const json& planned = r.spec.at("instances");
  std::vector<run_record> out;
  for (const char* dir : {"forward", "reverse"}) {
    const bool reverse = dir[0] == 'r';
    run_record part = r;
    part.instances.clear();
    for (std::size_t k = 0; k < r.instances.size() && k < planned.size(); ++k)
      if (planned[k].value("reverse", false) == reverse) part.instances.push_back(r.instances[k]);
    part.id = fmt::format("{}-{}", r.id, dir);
    part.role = fmt::format("{}, {} (both ways at once)", r.role, dir);
    part.spec["id"] = part.id;
    part.spec["direction"] = dir;
    part.spec["together_with"] = fmt::format("{}-{}", r.id, reverse ? "forward" : "reverse");
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace

namespace {

// Every file read beneath `dir`.
run_record load_run_in(const fs::path& dir, const fs::path& run) {
  const fs::path spec_file = dir / run / "run.json";
  const json spec = read_results_json(dir, run / "run.json");
  run_record r = in_file(spec_file, [&] { return run_from_json(spec); });
  // nullopt when never written (interrupted or failed first).
  auto record_of = [&](const json& planned) -> std::optional<instance_record> {
    const auto name = in_file(spec_file, [&] { return planned.at("name").get<std::string>(); });
    const fs::path file = run / (name + ".json");
    if (!fs::exists(dir / file)) return std::nullopt;
    const json j = read_results_json(dir, file);
    return in_file(dir / file, [&] { return instance_from_json(j); });
  };
  const json planned_all = in_file(spec_file, [&] { return spec.at("instances"); });
  for (const auto& planned : planned_all) {
    auto i = record_of(planned);
    r.instances.push_back(i ? std::move(*i) : in_file(spec_file, [&] { return not_written(planned, r); }));
  }
  // Older runs have no "probe".
  if (const json probe = spec.value("probe", json()); probe.is_object()) {
    const json planned = in_file(spec_file, [&] { return probe.at("instance"); });
    auto i = record_of(planned);
    r.probe = i ? std::move(*i) : in_file(spec_file, [&] { return not_written(planned, r); });
  }
  return r;
}

}  // namespace

run_record load_run(const fs::path& run_dir) { return load_run_in(run_dir, ""); }

std::vector<json> load_searches(const fs::path& dir) {
  std::vector<std::pair<int, json>> found;
  for (const auto& e : fs::directory_iterator(dir / "raw"))
    if (e.is_directory() && fs::exists(e.path() / "search.json")) {
      const fs::path file = fs::path("raw") / e.path().filename() / "search.json";
      json j = read_results_json(dir, file);
      const int order = in_file(dir / file, [&] { return order_of(j, false); });
      found.emplace_back(order, std::move(j));
    }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<json> out;
  for (auto& [order, j] : found) out.push_back(std::move(j));
  return out;
}

std::vector<run_record> load_raw(const fs::path& dir) {
  if (!fs::is_directory(dir / "raw")) throw std::runtime_error(fmt::format("{}: no raw/ folder", dir.string()));
  std::vector<std::pair<int, fs::path>> runs;
  for (const auto& e : fs::directory_iterator(dir / "raw"))
    if (e.is_directory() && fs::exists(e.path() / "run.json")) {
      const fs::path run = fs::path("raw") / e.path().filename();
      const json spec = read_results_json(dir, run / "run.json");
      runs.emplace_back(in_file(dir / run / "run.json", [&] { return order_of(spec, true); }), run);
    }
  std::sort(runs.begin(), runs.end());
  std::vector<run_record> out;
  for (const auto& [order, run] : runs)
    for (auto& part : by_direction(load_run_in(dir, run))) out.push_back(std::move(part));
  return out;
}

namespace {
// {"signal": N, "at_utc": T}; true is accepted as well.
const json* env_interruption(const json& env) {
  if (!env.is_object()) return nullptr;
  const auto it = env.find("interrupted");
  return it != env.end() && (it->is_object() || (it->is_boolean() && it->get<bool>())) ? &*it : nullptr;
}

json read_env(const fs::path& dir) {
  return fs::exists(dir / "environment.json") ? read_results_json(dir, "environment.json") : json();
}

bool env_interrupted(const fs::path& dir) { return env_interruption(read_env(dir)) != nullptr; }

std::string stop_words(const json& interruption) {
  // Anything but a whole number a signal can be names no signal.
  const json n = interruption.is_object() ? interruption.value("signal", json()) : json();
  const int sig = n.is_number_unsigned() && n.get<std::uint64_t>() < 256 ? n.get<int>() : 0;
  const char* abbrev = sig > 0 ? sigabbrev_np(sig) : nullptr;
  return abbrev ? fmt::format("stopped by SIG{} before it began", abbrev) : "stopped by a signal before it began";
}
}  // namespace

std::string interrupted_banner(const fs::path& dir) {
  if (!env_interrupted(dir)) return {};
  return "the plan was stopped by a signal before its end. An interrupted run shows what its instances had "
         "measured until the stop (partial figures, marked so); runs after it did not run.";
}

std::vector<unrun> runs_not_run(const fs::path& dir, bool stopped_only) {
  std::vector<unrun> out;
  const json env = read_env(dir);
  const json* stop = env_interruption(env);
  if (!env.is_object() || (stopped_only && !stop)) return out;
  in_file(dir / "environment.json", [&] {
    for (const auto& id : env.value("planned_runs", json::array())) {
      const fs::path run = dir / "raw" / id.get<std::string>();
      if (!fs::exists(run / "run.json") && !fs::exists(run / "search.json"))
        out.push_back({id.get<std::string>(), stop ? stop_words(*stop) : "missing from raw/", stop != nullptr});
    }
    return 0;
  });
  return out;
}

std::vector<std::string> folder_problems(const fs::path& dir, const std::vector<run_summary>& runs) {
  std::vector<std::string> out;
  for (const auto& u : runs_not_run(dir))
    out.push_back(u.stopped ? fmt::format("run {} not run: {}", u.id, u.why)
                            : fmt::format("run {} is missing from raw/", u.id));
  for (const auto& s : runs)
    if (s.run.interrupted) out.push_back(fmt::format("run {}: {}", s.run.id, until_stop_words(s)));
    else if (!s.ok)
      out.push_back(
          fmt::format("run {} failed: {}", s.run.id, s.failures.empty() ? "no instances" : s.failures.front()));
  if (runs.empty() && load_searches(dir).empty())
    out.push_back(fmt::format("{} holds no runs", (dir / "raw").string()));
  return out;
}

std::vector<run_summary> write_reports(const fs::path& dir) {
  std::vector<run_summary> summaries;
  for (auto& r : load_raw(dir)) summaries.push_back(summarize(std::move(r)));
  const auto searches = load_searches(dir);
  // A search is a run of its own in the summary.
  json all = {{"schema", "harness.summary/1"}, {"runs", json::array()}};
  for (const auto& s : summaries) all["runs"].push_back(to_json(s));
  for (const auto& s : searches)
    all["runs"].push_back({{"run", s.at("id")},
                           {"test", s.at("test")},
                           {"role", s.at("role")},
                           {"topology", s.at("topology")},
                           {"kind", s.at("kind")},
                           {"message_size", s.at("message_size")},
                           {"search", s.at("search")}});
  // A single run's figures are in "runs" already.
  all["repeats"] = json::array();
  for (const auto& g : group_repeats(summaries))
    if (is_repeated(g)) all["repeats"].push_back(to_json(g));
  // The runs a stop prevented (or that are missing).
  const auto unrun = runs_not_run(dir, true);
  all["not_run"] = json::array();
  for (const auto& u : unrun) all["not_run"].push_back({{"run", u.id}, {"why", u.why}});
  write_json(dir / "summary.json", all);
  write_file(dir / "summary.csv", summary_csv(summaries, unrun));
  write_file(dir / "report.md", report_markdown(summaries, searches, dir));
  return summaries;
}

}  // namespace harness
