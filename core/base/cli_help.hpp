#pragma once
// Help that reads like netperf's or iperf3's, and one way to refuse a command line.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nb::cli {

inline constexpr int usage_status = 2;

// `usage` after "Usage: " (empty: the app's name and [OPTIONS]); no CLI11 type tags or {false} values.
class help_formatter : public CLI::Formatter {
 public:
  // show_usage false: a second option list under the first.
  explicit help_formatter(std::string usage = {}, bool show_usage = true)
      : usage_(std::move(usage)), show_usage_(show_usage) {
    column_width(32);
    label("Subcommands", "Commands");
  }
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_positionals(const CLI::App* app) const override;
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override;
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;

 private:
  std::string usage_;
  bool show_usage_ = true;
};

// Call it after adding the options and subcommands: it moves -h/--help to the end.
void set_help(CLI::App& app, const std::string& program, const std::string& usage = {});

template <class T>
CLI::Option* option(CLI::App& app, const std::string& names, T& into, const std::string& help,
                    const std::string& value_name, const std::string& group = {}) {
  CLI::Option* o = app.add_option(names, into, help)->option_text(value_name);
  return group.empty() ? o : o->group(group);
}

// The "did you mean" suggestion: the nearest of `known` within one edit (two in a longer name).
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& known);

std::vector<std::string> option_names(const CLI::App& app);

struct unknown_option {
  std::string name;
  const CLI::App* app = nullptr;
};

// The misspelled option itself; CLI11's error names the last argument it could not place.
std::optional<unknown_option> find_unknown_option(const CLI::App& app);

// `also`: names a program reads before CLI11 does.
std::string describe(const unknown_option& u, const std::vector<std::string>& also = {});

// An unknown option is said first, whatever error the arguments after it caused.
std::string describe(const CLI::App& app, const CLI::Error& e);

// Help and version to stdout (0); anything else "program: reason" on stderr (usage_status).
int report(const CLI::App& app, const CLI::Error& e, const std::string& program);

// Thrown by the validators below so that CLI11 does not prefix the text with its own option name.
struct refusal : CLI::ParseError {
  explicit refusal(const std::string& msg) : CLI::ParseError("refusal", msg, usage_status) {}
};
CLI::Validator positive(const std::string& name, const std::string& unit);
CLI::Validator non_negative(const std::string& name, const std::string& unit);
CLI::Validator whole_in(const std::string& name, long long lo, long long hi);
CLI::Validator number_in(const std::string& name, double lo, double hi, const std::string& unit);

}  // namespace nb::cli
