// The plan's text with overrides written where toml++ says each value is; comments and layout stay. The
// result must parse back to the plan that runs, or nullopt.
#include "harness/plan/overrides.hpp"
#include "harness/toml/toml_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace harness {

namespace {

// Shortest text reading back as the same double.
std::string num(double v) { return fmt::format("{}", v); }

struct edit {
  std::size_t at, end;  // bytes [at, end) replaced by `text`
  std::string text;
};

class rewriter {
 public:
  explicit rewriter(const std::string& text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }

  // toml++ counts columns in code points, from 1.
  std::size_t offset(const toml::source_position& pos) const {
    if (pos.line == 0 || pos.line > starts_.size()) throw plan_error("position outside the text");
    std::size_t o = starts_[pos.line - 1];
    for (toml::source_index c = 1; c < pos.column && o < text_.size(); ++c) {
      ++o;
      while (o < text_.size() && (static_cast<unsigned char>(text_[o]) & 0xC0) == 0x80) ++o;
    }
    return o;
  }

  void replace(const toml::node& n, std::string value) {
    edits_.push_back({offset(n.source().begin), offset(n.source().end), std::move(value)});
  }

  void set(const toml::table& t, const std::string& key, const std::string& value) {
    if (const toml::node* n = t.get(key)) return replace(*n, value);
    if (t.is_inline()) {  // before its closing brace
      const std::size_t end = offset(t.source().end);
      if (end == 0 || text_[end - 1] != '}') throw plan_error("inline table without its brace");
      edits_.push_back({end - 1, end - 1, fmt::format("{} {} = {} ", t.empty() ? "" : ",", key, value)});
      return;
    }
    insert_line_after(t.source().begin.line, fmt::format("{} = {}", key, value));
  }

  void insert_line_after(toml::source_index line, const std::string& text) {
    if (line < starts_.size()) return edits_.push_back({starts_[line], starts_[line], text + "\n"});
    append("\n" + text + "\n");
  }

  void append(const std::string& text) {
    const bool newline = text_.empty() || text_.back() == '\n';
    edits_.push_back({text_.size(), text_.size(), (newline ? "" : "\n") + text});
  }

  void comment_out(toml::source_index first, toml::source_index last) {
    for (auto l = first; l <= last && l <= starts_.size(); ++l)
      if (starts_[l - 1] < text_.size()) edits_.push_back({starts_[l - 1], starts_[l - 1], "# "});
  }

  toml::source_index lines() const { return static_cast<toml::source_index>(starts_.size()); }

  std::string apply() const {
    auto sorted = edits_;
    std::stable_sort(sorted.begin(), sorted.end(), [](const edit& a, const edit& b) { return a.at > b.at; });
    std::string out = text_;
    for (const auto& e : sorted) out.replace(e.at, e.end - e.at, e.text);
    return out;
  }

 private:
  const std::string& text_;
  std::vector<std::size_t> starts_;
  std::vector<edit> edits_;
};

// A test's block ends before the next header.
void header_lines(const toml::node& n, std::set<toml::source_index>& out) {
  if (const toml::table* t = n.as_table()) {
    if (!t->is_inline()) out.insert(t->source().begin.line);
    for (const auto& [k, v] : *t) header_lines(v, out);
  } else if (const toml::array* a = n.as_array()) {
    for (const auto& e : *a) header_lines(e, out);
  }
}

bool same_goals(const std::vector<nb::search::goal>& a, const std::vector<nb::search::goal>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && x.loss_ratio == y.loss_ratio && x.exceed_ratio == y.exceed_ratio &&
           x.final_trial_duration == y.final_trial_duration && x.duration_sum == y.duration_sum && x.width == y.width &&
           x.initial_trial_duration == y.initial_trial_duration;
  });
}

std::string goal_text(const nb::search::goal& g) {
  return fmt::format(
      "{{ name = \"{}\", loss_ratio = {}, exceed_ratio = {}, final_trial_duration = {}, duration_sum = {}, "
      "width = {}, initial_trial_duration = {} }}",
      g.name, num(g.loss_ratio), num(g.exceed_ratio), num(g.final_trial_duration), num(g.duration_sum), num(g.width),
      num(g.initial_trial_duration));
}

// The older form's keys, each goal table's, or default goals written out.
void rewrite_search(rewriter& w, const toml::table& t, const search_spec& want) {
  const toml::table* s = t["search"].as_table();
  if (!s) throw plan_error("search is not a table");
  if (want.older_form) {
    const auto& g = want.goals.front();
    w.set(*s, "final", num(g.final_trial_duration));
    w.set(*s, "trial", num(g.initial_trial_duration));
    return;
  }
  const toml::array* goals = (*s)["goals"].as_array();
  if (!goals) {
    std::string text;
    for (const auto& g : want.goals) text += (text.empty() ? "" : ", ") + goal_text(g);
    return w.set(*s, "goals", "[" + text + "]");
  }
  if (goals->size() != want.goals.size()) throw plan_error("goals differ");
  for (std::size_t i = 0; i < goals->size(); ++i) {
    const toml::table* g = goals->get(i)->as_table();
    if (!g) throw plan_error("a goal is not a table");
    w.set(*g, "final_trial_duration", num(want.goals[i].final_trial_duration));
    w.set(*g, "initial_trial_duration", num(want.goals[i].initial_trial_duration));
    w.set(*g, "duration_sum", num(want.goals[i].duration_sum));
  }
}

bool same_run(const plan& a, const plan& b) {
  if (a.duration != b.duration || a.warmup != b.warmup || a.repeats != b.repeats || a.tests.size() != b.tests.size())
    return false;
  for (std::size_t i = 0; i < a.tests.size(); ++i) {
    const test_spec &x = a.tests[i], &y = b.tests[i];
    if (x.name != y.name || x.duration != y.duration || x.warmup != y.warmup || x.repeats != y.repeats ||
        x.search.has_value() != y.search.has_value())
      return false;
    if (x.search && !same_goals(x.search->goals, y.search->goals)) return false;
  }
  return true;
}

void rewrite_defaults(rewriter& w, const toml::table& root, const plan& old, const plan& want,
                      const plan_overrides& o) {
  std::vector<std::pair<std::string, std::string>> keys;
  if (o.duration) keys.emplace_back("duration", num(want.duration));
  if (o.duration && want.warmup != old.warmup) keys.emplace_back("warmup", num(want.warmup));
  if (o.repeats) keys.emplace_back("repeats", std::to_string(want.repeats));
  if (const toml::table* d = root["defaults"].as_table()) {
    for (const auto& [k, v] : keys) w.set(*d, k, v);
  } else if (!keys.empty()) {
    std::string table = "\n[defaults]\n";
    for (const auto& [k, v] : keys) table += fmt::format("{} = {}\n", k, v);
    w.append(table);
  }
}

void rewrite_test(rewriter& w, const toml::table& t, const test_spec& want, const plan_overrides& o) {
  if (o.duration) {
    if (const toml::node* n = t.get("duration")) w.replace(*n, num(want.duration));
    if (const toml::node* n = t.get("warmup")) w.replace(*n, num(want.warmup));
    if (want.search) rewrite_search(w, t, *want.search);
  }
  if (const toml::node* n = t.get("repeats"); n && o.repeats) w.replace(*n, std::to_string(want.repeats));
}

}  // namespace

std::optional<std::string> rewrite_plan_text(const std::string& text, const plan& want, const plan_overrides& o) {
  try {
    const toml::table root = parse_toml_bounded<plan_error>(text, want.source_path);
    const plan old = parse_plan(text, want.source_path);
    rewriter w(text);
    rewrite_defaults(w, root, old, want, o);
    std::set<toml::source_index> headers;
    header_lines(root, headers);
    const toml::array* tests = root["tests"].as_array();
    if (!tests) return std::nullopt;
    for (const toml::node& e : *tests) {
      const toml::table* t = e.as_table();
      if (!t) return std::nullopt;
      const std::string name = (*t)["name"].value_or(std::string());
      const auto kept =
          std::find_if(want.tests.begin(), want.tests.end(), [&](const test_spec& s) { return s.name == name; });
      if (kept != want.tests.end()) {
        rewrite_test(w, *t, *kept, o);
        continue;
      }
      if (t->is_inline()) return std::nullopt;  // `tests = [{...}]`: not whole lines
      const auto first = t->source().begin.line;
      const auto next = headers.upper_bound(first);
      w.comment_out(first, next == headers.end() ? w.lines() : *next - 1);
    }
    std::string out = w.apply();
    if (!same_run(parse_plan(out, want.source_path), want)) return std::nullopt;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace harness
