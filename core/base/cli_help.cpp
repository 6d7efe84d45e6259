#include "core/base/cli_help.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace nb::cli {
namespace {

std::string tail(const std::string& msg, const std::string& after) {
  auto at = msg.find(after);
  return at == std::string::npos ? msg : msg.substr(at + after.size());
}

std::string lower_first(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

bool read_number(const std::string& text, double& v) { return CLI::detail::lexical_cast(text, v) && std::isfinite(v); }

// "--PPS" and "-pps" are near "--pps".
std::string bare(const std::string& name) {
  std::string s = name.substr(std::min(name.find_first_not_of('-'), name.size()));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A swap of neighbours is one edit ("psp" to "pps").
std::size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// Not "-", "--" nor a negative number.
bool names_option(const std::string& arg) {
  double v = 0;
  return arg.size() > 1 && arg[0] == '-' && arg != "--" && !CLI::detail::lexical_cast(arg, v);
}

struct left_over {
  std::string arg;
  const CLI::App* app;
  bool after_mark;  // after "--": an argument
};

void collect_left_over(const CLI::App& app, std::vector<left_over>& out) {
  bool after_mark = false;
  for (const std::string& arg : app.remaining()) {
    if (arg == "--") after_mark = true;
    else out.push_back({arg, &app, after_mark});
  }
  for (const CLI::App* sub : app.get_subcommands()) collect_left_over(*sub, out);
}

// From remaining(), as CLI11's ExtrasError lists them last first.
std::optional<std::string> first_left_over(const CLI::App& app) {
  std::vector<left_over> all;
  collect_left_over(app, all);
  if (all.empty()) return std::nullopt;
  return all.front().arg;
}

}  // namespace

std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& known) {
  const std::string w = bare(word);
  if (w.size() < 3) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_edits = w.size() < 6 ? 2 : 3;  // one edit in a short name, two in a longer one
  for (const std::string& name : known) {
    const std::string k = bare(name);
    if (k.size() < 2) continue;
    if (const std::size_t e = edits(w, k); e < best_edits) {
      best = name;
      best_edits = e;
    }
  }
  return best;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::optional<unknown_option> find_unknown_option(const CLI::App& app) {
  std::vector<left_over> all;
  collect_left_over(app, all);
  for (const left_over& l : all)
    if (!l.after_mark && names_option(l.arg)) return unknown_option{l.arg.substr(0, l.arg.find('=')), l.app};
  return std::nullopt;
}

std::string describe(const unknown_option& u, const std::vector<std::string>& also) {
  std::vector<std::string> known = option_names(*u.app);
  known.insert(known.end(), also.begin(), also.end());
  const auto near = nearest(u.name, known);
  return near ? fmt::format("unknown option '{}' (did you mean '{}'?)", u.name, *near)
              : fmt::format("unknown option '{}'", u.name);
}

std::string help_formatter::make_usage(const CLI::App* app, std::string name) const {
  if (!show_usage_) return {};
  std::string usage = usage_.empty() ? CLI::Formatter::make_usage(app, std::move(name)) : "Usage: " + usage_ + "\n";
  return usage + CLI::Formatter::make_description(app) + "\n";
}

std::string help_formatter::make_description(const CLI::App* app) const {
  return show_usage_ ? std::string() : CLI::Formatter::make_description(app);
}

std::string help_formatter::make_positionals(const CLI::App* app) const {
  std::string s = CLI::Formatter::make_positionals(app);
  return s.empty() ? s : s + "\n";
}

// One blank line between groups (CLI11 puts two).
std::string help_formatter::make_group(std::string group, bool is_positional,
                                       std::vector<const CLI::Option*> opts) const {
  std::string s = CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
  return s.empty() || s[0] != '\n' ? s : s.substr(1);
}

// CLI11 shows a negated flag as "--no-gso{false}": the name is what the user types.
std::string help_formatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  std::string s = CLI::Formatter::make_option_name(opt, is_positional);
  for (auto open = s.find('{'); open != std::string::npos; open = s.find('{')) {
    auto close = s.find('}', open);
    s.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
  }
  return s;
}

std::string help_formatter::make_option_opts(const CLI::Option* opt) const {
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_type_size() == 0) return {};
  std::string type = opt->get_type_name();
  type = type.substr(0, type.find(':'));
  if (type == "INT" || type == "UINT") type = "N";
  else if (type == "FLOAT") type = "NUM";
  return type.empty() ? std::string() : " " + type;
}

std::string help_formatter::make_option_desc(const CLI::Option* opt) const {
  std::string s = opt->get_description();
  if (!opt->get_default_str().empty()) s += fmt::format(" (default {})", opt->get_default_str());
  if (opt->get_required()) s += " (required)";
  return s;
}

void set_help(CLI::App& app, const std::string& program, const std::string& usage) {
  app.name(program);
  app.set_help_flag();
  app.set_help_flag("-h,--help", "Print this help and exit")->group("Other");
  app.formatter(std::make_shared<help_formatter>(usage));
  for (CLI::App* sub : app.get_subcommands({})) {
    std::string line = fmt::format("{} {} [OPTIONS]", program, sub->get_name());
    for (const CLI::Option* opt : sub->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
      const std::string text = opt->get_option_text().empty() ? opt->get_name(true) : opt->get_option_text();
      line += opt->get_required() ? " " + text : " [" + text + "]";
    }
    sub->formatter(std::make_shared<help_formatter>(line));
  }
}

std::string describe(const CLI::App& app, const CLI::Error& e) {
  if (const auto unknown = find_unknown_option(app)) return describe(*unknown);
  const std::string msg = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::string listed = tail(msg, "expected: ");
    return fmt::format("unexpected argument '{}'", first_left_over(app).value_or(listed.substr(0, listed.find(' '))));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && msg.find(" missing") != std::string::npos)
    return fmt::format("{} needs a value", msg.substr(0, msg.find(':')));
  if (dynamic_cast<const CLI::ConversionError*>(&e) && msg.rfind("The value ", 0) == 0) {
    const std::string rest = msg.substr(10), sep = " is not an allowed value for ";
    const auto at = rest.rfind(sep);
    if (at != std::string::npos)
      return fmt::format("{}: '{}' is not a valid value", rest.substr(at + sep.size()), rest.substr(0, at));
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) && msg == "A subcommand is required") return "a command is required";
  return lower_first(msg);
}

int report(const CLI::App& app, const CLI::Error& e, const std::string& program) {
  if (dynamic_cast<const CLI::CallForHelp*>(&e) || dynamic_cast<const CLI::CallForAllHelp*>(&e)) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  if (dynamic_cast<const CLI::CallForVersion*>(&e)) {
    std::fputs(fmt::format("{} {}\n", program, e.what()).c_str(), stdout);
    return 0;
  }
  fmt::print(stderr, "{}: {}\n", program, describe(app, e));
  return usage_status;
}

CLI::Validator positive(const std::string& name, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!read_number(text, v) || v <= 0)
          throw refusal(fmt::format("{} must be a positive number of {}", name, unit));
        return {};
      },
      "");
}

CLI::Validator non_negative(const std::string& name, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!read_number(text, v) || v < 0)
          throw refusal(fmt::format("{} must be 0 or a positive number of {}", name, unit));
        return {};
      },
      "");
}

CLI::Validator whole_in(const std::string& name, long long lo, long long hi) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long v = 0;
        if (!CLI::detail::lexical_cast(text, v) || v < lo || v > hi)
          throw refusal(fmt::format("{} must be a whole number from {} to {}", name, lo, hi));
        return {};
      },
      "");
}

CLI::Validator number_in(const std::string& name, double lo, double hi, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!read_number(text, v) || v < lo || v > hi)
          throw refusal(fmt::format("{} must be {}from {:.15g} to {:.15g}", name,
                                    unit.empty() ? "" : "a number of " + unit + " ", lo, hi));
        return {};
      },
      "");
}

}  // namespace nb::cli
