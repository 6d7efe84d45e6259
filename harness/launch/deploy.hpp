#pragma once
// harness deploy: the self-contained netload and netserve copied over ssh to the bin_dir of every ssh
// host a plan's tests use, through one ssh master connection per host. A host whose two files already
// have the local files' SHA-256 is left alone; a changed file goes to bin_dir/.NAME.new, is checked
// there and only then renamed into place (a running old binary is never half overwritten); the
// programs there must then say the harness's version. Local and netns hosts run this machine's
// programs: nothing to copy.
#include "harness/plan/plan.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace harness {

struct deploy_request {
  std::string plan_path;
  std::string from;  // --from DIR; empty: the static build of the tree this harness comes from
  bool dry_run = false;
  std::string self_exe;
};

// The exit status: 0 every host current or updated; 1 a host failed (each named on stderr, the others
// still attempted). Errors that concern no single host (the plan, the local programs) are thrown.
int deploy(const deploy_request& req);

// The SHA-256 of `data` in lower-case hex (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view data);
// Where the programs to copy are: `from` (DIR/netload or the build tree's DIR/netload/netload), else
// build/static/bin next to this harness's build folder. Throws a one-line error naming what is missing.
std::string find_deploy_source(const std::string& self_exe, const std::string& from);
// One program in such a folder: DIR/NAME/NAME in a build tree, else DIR/NAME.
std::string local_program(const std::string& dir, const std::string& name);
// The hosts the plan's tests use, by name.
std::vector<std::string> hosts_to_deploy(const plan& p);
// What deploy would run, per host, one quoted command a line; an ssh host without bin_dir is an entry
// of `errors` (naming the host) instead.
std::string deploy_dry_run(const plan& p, const std::string& source_dir, std::vector<std::string>& errors);

}  // namespace harness
