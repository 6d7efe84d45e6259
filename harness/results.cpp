#include "harness/results.hpp"

#include "harness/report.hpp"

#include "core/json_text.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path make_results_dir(const fs::path& root, const std::string& plan_name) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  fs::path dir = root / fmt::format("{}-{:%Y%m%dT%H%M%SZ}", plan_name, now);
  // Two runs within one second (tests do this) get a suffix rather than mixing their files.
  for (int n = 2; fs::exists(dir); ++n) dir = root / fmt::format("{}-{:%Y%m%dT%H%M%SZ}-{}", plan_name, now, n);
  fs::create_directories(dir / "raw");
  return dir;
}

void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  }
  fs::rename(tmp, path);  // never a half-written file under the real name
}

void write_json(const fs::path& path, const json& j) { write_file(path, j.dump(2) + "\n"); }

namespace {

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  bool too_deep = false;
  json j = nb::parse_json_bounded(text, nb::max_json_depth, &too_deep);
  if (j.is_discarded() && too_deep)
    throw std::runtime_error(fmt::format("{}: nested deeper than {} levels", path.string(), nb::max_json_depth));
  if (j.is_discarded()) throw std::runtime_error(fmt::format("{}: not valid JSON", path.string()));
  return j;
}

}  // namespace

run_record load_run(const fs::path& run_dir) {
  const json spec = read_json(run_dir / "run.json");
  run_record r = run_from_json(spec);
  for (const auto& planned : spec.at("instances")) {
    const fs::path file = run_dir / (planned.at("name").get<std::string>() + ".json");
    if (!fs::exists(file)) {  // the run was interrupted before this instance ended
      instance_record i;
      i.name = planned.at("name").get<std::string>();
      i.client = planned.at("client").get<std::string>();
      i.server = planned.at("server").get<std::string>();
      i.error = "no raw file (the run was interrupted)";
      r.instances.push_back(i);
      continue;
    }
    try {
      r.instances.push_back(instance_from_json(read_json(file)));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", file.string(), e.what()));
    }
  }
  return r;
}

std::vector<json> load_searches(const fs::path& dir) {
  std::vector<std::pair<int, json>> found;
  for (const auto& e : fs::directory_iterator(dir / "raw"))
    if (e.is_directory() && fs::exists(e.path() / "search.json")) {
      json j = read_json(e.path() / "search.json");
      found.emplace_back(j.value("order", 0), std::move(j));
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
    if (e.is_directory() && fs::exists(e.path() / "run.json"))
      runs.emplace_back(read_json(e.path() / "run.json").at("order").get<int>(), e.path());
  std::sort(runs.begin(), runs.end());
  std::vector<run_record> out;
  for (const auto& [order, path] : runs) out.push_back(load_run(path));
  return out;
}

std::vector<run_summary> write_reports(const fs::path& dir) {
  std::vector<run_summary> summaries;
  for (auto& r : load_raw(dir)) summaries.push_back(summarize(std::move(r)));
  const auto searches = load_searches(dir);
  // A search is a run of its own in the summary: its MRR, results and trials under "search".
  json all = {{"schema", "harness.summary/1"}, {"runs", json::array()}};
  for (const auto& s : summaries) all["runs"].push_back(to_json(s));
  for (const auto& s : searches)
    all["runs"].push_back({{"run", s.at("id")}, {"test", s.at("test")}, {"role", s.at("role")},
                           {"topology", s.at("topology")}, {"kind", s.at("kind")}, {"message_size", s.at("message_size")},
                           {"search", s.at("search")}});
  write_json(dir / "summary.json", all);
  write_file(dir / "summary.csv", summary_csv(summaries));
  write_file(dir / "report.md", report_markdown(summaries, searches, dir));
  return summaries;
}

}  // namespace harness
