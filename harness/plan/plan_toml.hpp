#pragma once
// The plan parser's own part of the TOML reading (harness/toml/toml_reader.hpp): its mistakes are plan_errors,
// and the declarations its files share.
#include "harness/plan/plan.hpp"
#include "harness/toml/toml_reader.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdint>
#include <string>
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

}  // namespace harness
