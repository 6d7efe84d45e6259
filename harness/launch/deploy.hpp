#pragma once
// harness deploy: netload and netserve copied over one ssh master per host to bin_dir. Files with the
// local SHA-256 are left alone; a changed one is staged as .NAME.new, checked, then renamed, so a running
// binary is never half overwritten.
#include "harness/plan/plan.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace harness {

struct deploy_request {
  std::string plan_path;
  std::string from;  // empty: the static build of this harness's tree
  bool dry_run = false;
  std::string self_exe;
};

// 0 when every host is current; 1 when one failed (named on stderr, the others still tried). Errors
// concerning no single host are thrown.
int deploy(const deploy_request& req);

std::string sha256_hex(std::string_view data);
// `from`, else build/static/bin beside this harness's build folder; throws naming what is missing.
std::string find_deploy_source(const std::string& self_exe, const std::string& from);
// DIR/NAME/NAME in a build tree.
std::string local_program(const std::string& dir, const std::string& name);
std::vector<std::string> hosts_to_deploy(const plan& p);
// One quoted command a line per host; an ssh host without bin_dir goes to `errors` instead.
std::string deploy_dry_run(const plan& p, const std::string& source_dir, std::vector<std::string>& errors);

}  // namespace harness
