#pragma once
// What the three programs share on the command line: help that reads like netperf's or iperf3's (the
// program's name in Usage, grouped options, examples in a footer, no CLI11 type tags), and one way to
// refuse a command line: "program: reason" on stderr, exit status 2.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nb::cli {

// Exit status of a command line that cannot run, in every program.
inline constexpr int usage_status = 2;

// Help as the programs print it: `usage` after "Usage: " (empty: the app's name and [OPTIONS]), option
// names without CLI11's {false} flag values, an option's own text (SECONDS, N) instead of type tags.
class help_formatter : public CLI::Formatter {
 public:
  // show_usage false: a second option list printed under the first (netload's options after "--").
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

// Names the app `program` (not argv[0]'s path) and gives it, and its subcommands, help_formatter; its
// -h/--help goes to the end, in group "Other". Call it after adding the options and subcommands.
void set_help(CLI::App& app, const std::string& program, const std::string& usage = {});

// An option that takes a value, as every program adds one: its value's name in the help (SECONDS, N)
// instead of a type tag, and its help group (none: CLI11's "Options").
template <class T>
CLI::Option* option(CLI::App& app, const std::string& names, T& into, const std::string& help,
                    const std::string& value_name, const std::string& group = {}) {
  CLI::Option* o = app.add_option(names, into, help)->option_text(value_name);
  return group.empty() ? o : o->group(group);
}

// The nearest of `known` to `word` when near enough to be its misspelling (a letter wrong, missing, added, or
// two swapped; two in a longer name; case and leading dashes aside): the suggestion of "did you mean".
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& known);

// Every name of the app's options as typed ("--pps", "-m"), in the order they were added.
std::vector<std::string> option_names(const CLI::App& app);

// An option CLI11 could not place: its name as typed ("--psp" of "--psp=1000", "-durration") and the app
// (or subcommand) whose options it was looked for among.
struct unknown_option {
  std::string name;
  const CLI::App* app = nullptr;
};

// The first option CLI11 could not place, in `app` or the subcommands it parsed (a negative number or an
// argument after "--" is none). CLI11's own error names the last argument it could not place, often the
// misspelled option's value or a file after it: this names the option.
std::optional<unknown_option> find_unknown_option(const CLI::App& app);

// "unknown option '--psp' (did you mean '--pps'?)": the suggestion from `u.app`'s options and `also`
// (names a program reads before CLI11 does).
std::string describe(const unknown_option& u, const std::vector<std::string>& also = {});

// A CLI11 error in words, one line: what a user wrote wrong, without CLI11's type names. An unknown
// option left in `app` is said first, whatever error the arguments after it caused.
std::string describe(const CLI::App& app, const CLI::Error& e);

// For CLI11 errors: help and version go to stdout (status 0), anything else is refused as
// "program: reason" on stderr with usage_status. Returns the exit status.
int report(const CLI::App& app, const CLI::Error& e, const std::string& program);

// Validators that say what is wrong in words ("-l must be a positive number of seconds"); `name` is the
// option as the user knows it. A refusal is thrown as refusal (a ParseError) so its text is not
// prefixed with CLI11's own option name.
struct refusal : CLI::ParseError {
  explicit refusal(const std::string& msg) : CLI::ParseError("refusal", msg, usage_status) {}
};
CLI::Validator positive(const std::string& name, const std::string& unit);
CLI::Validator non_negative(const std::string& name, const std::string& unit);
CLI::Validator whole_in(const std::string& name, long long lo, long long hi);
CLI::Validator number_in(const std::string& name, double lo, double hi, const std::string& unit);

}  // namespace nb::cli
