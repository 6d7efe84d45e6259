#pragma once
// The plan parser's own part of the TOML reading (harness/toml/toml_reader.hpp): its mistakes are plan_errors,
// and the declarations its files share.
#include "harness/plan/plan.hpp"
#include "harness/toml/toml_reader.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

[[noreturn]] inline void fail_at(const toml::source_region& r, const std::string& message) {
  throw plan_error(fmt::format("{}: {}", where(r), message));
}

using toml_reader = basic_toml_reader<plan_error>;

// Shared by the plan parser's files.
std::string host_ref(const plan& p, const toml_reader& r, const toml::node& n, const char* key);
void parse_tests(plan& p, const toml::node& n);
void parse_search(test_spec& t, toml_reader& r);  // plan_search.cpp
std::vector<std::uint16_t> parse_ports(const toml_reader& r, const toml::node& n);

// A name the plan gives is printed on terminals, in logs and OpenMetrics labels: it may hold no control
// character (C0, DEL, C1). A name that is also part of a file or folder name under --results (the plan's,
// a test's, a host's: name_use::path) must be a safe path component besides: not empty, not '.' or '..',
// no '/', at most max_path_name_bytes. Refused where given rather than mapped to some other name, so that
// the folder, the reports, the store and the metrics all show the name the plan says, and two names can
// never share a folder. Throws plan_error "file:line:col: <context>: <what> '<name, escaped>' ...".
enum class name_use { text, path };
inline constexpr std::size_t max_path_name_bytes = 64;
void check_name(const toml::source_region& at, const std::string& context, std::string_view what, std::string_view name,
                name_use use);
// Why `name` is refused, empty when it is not (the check above, without a place in a file).
std::string name_problem(std::string_view name, name_use use);

}  // namespace harness
