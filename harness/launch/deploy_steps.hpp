#pragma once
// The commands of `harness deploy` for one host: what deploy.cpp runs and its dry run prints.
#include "harness/launch/launcher.hpp"
#include "harness/plan/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness::deploying {

inline constexpr const char* programs[] = {"netload", "netserve"};

struct file_steps {
  std::string name, local, remote, staged;  // staged: bin_dir/.NAME.new
  std::vector<std::string> copy;            // stdin is the file
};

struct host_steps {
  const launcher* l = nullptr;
  std::vector<std::string> open, list, close;  // list: each file's SHA-256, "missing" if none
  std::vector<file_steps> files;

  std::vector<std::string> verify(const std::vector<const file_steps*>& some) const;
  std::vector<std::string> install(const std::vector<const file_steps*>& some) const;
  std::vector<std::string> versions() const;
  std::vector<const file_steps*> all() const;
};

host_steps steps_for(const launcher& l, const std::string& source);

std::string header(const host& h);  // "host NAME (ADDRESS)"
// nullopt when deploy can serve it.
std::optional<std::string> host_problem(const host& h);
std::string nothing_to_copy(const host& h);

}  // namespace harness::deploying
