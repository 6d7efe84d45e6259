#pragma once
// The plan parser's part of TOML reading: its mistakes are plan_errors.
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

std::string host_ref(const plan& p, const toml_reader& r, const toml::node& n, const char* key);
void parse_tests(plan& p, const toml::node& n);
void parse_search(test_spec& t, toml_reader& r);
std::vector<std::uint16_t> parse_ports(const toml_reader& r, const toml::node& n);

// Names reach terminals, logs and metric labels: no control character. A path name (plan, test, host) is a
// safe path component besides; refused, never mapped, so no two names share a folder.
enum class name_use { text, path };
inline constexpr std::size_t max_path_name_bytes = 64;
void check_name(const toml::source_region& at, const std::string& context, std::string_view what, std::string_view name,
                name_use use);
// Empty when fine.
std::string name_problem(std::string_view name, name_use use);

}  // namespace harness
