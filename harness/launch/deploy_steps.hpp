#pragma once
// The commands of `harness deploy` for one host, as the launcher gives them: what deploy.cpp runs and
// what its dry run prints.
#include "harness/launch/launcher.hpp"
#include "harness/plan/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness::deploying {

inline constexpr const char* programs[] = {"netload", "netserve"};

// One program on one host.
struct file_steps {
  std::string name, local, remote, staged;  // staged: bin_dir/.NAME.new, renamed to `remote` once checked
  std::vector<std::string> copy;            // its standard input is the file
};

struct host_steps {
  const launcher* l = nullptr;
  std::vector<std::string> open, list, close;  // list: the SHA-256 of each file there, "missing" if none
  std::vector<file_steps> files;

  // For some of the files: their copies' SHA-256 (one line each), their renaming into place.
  std::vector<std::string> verify(const std::vector<const file_steps*>& some) const;
  std::vector<std::string> install(const std::vector<const file_steps*>& some) const;
  // Every program's --version, one line each.
  std::vector<std::string> versions() const;
  std::vector<const file_steps*> all() const;
};

host_steps steps_for(const launcher& l, const std::string& source);

std::string header(const host& h);  // "host NAME (ADDRESS)"
// Why deploy cannot serve this host; nullopt when it can (or has nothing to copy).
std::optional<std::string> host_problem(const host& h);
// What a local or netns host gets: nothing.
std::string nothing_to_copy(const host& h);

}  // namespace harness::deploying
