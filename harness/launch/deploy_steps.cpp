#include "harness/launch/deploy_steps.hpp"

#include "harness/launch/deploy.hpp"
#include "harness/plan/expand.hpp"
#include "harness/process/process.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <filesystem>
#include <optional>
#include <set>

namespace harness {

namespace fs = std::filesystem;

namespace deploying {
namespace {

// Fixed scripts run as `sh -c SCRIPT sh ARG...`: paths are arguments, never script. Each command is a
// round trip (more with a login profile), so what goes together goes in one.
constexpr const char* hash_script =
    "command -v sha256sum >/dev/null || { echo \"no sha256sum on this host\" >&2; exit 127; }; "
    "for f; do h=$(sha256sum 2>/dev/null < \"$f\") || h=missing; echo \"${h%% *}\"; done";
constexpr const char* copy_script = "mkdir -p -- \"$1\" && cat > \"$2\" && chmod 755 -- \"$2\"";
constexpr const char* install_script = "while [ $# -gt 1 ]; do mv -f -- \"$1\" \"$2\" || exit; shift 2; done";
constexpr const char* version_script = "for p; do \"$p\" --version || exit; done";

}  // namespace

std::vector<std::string> host_steps::verify(const std::vector<const file_steps*>& some) const {
  std::vector<std::string> argv{"sh", "-c", hash_script, "sh"};
  for (const auto* f : some) argv.push_back(f->staged);
  return l->wrap(argv);
}

std::vector<std::string> host_steps::install(const std::vector<const file_steps*>& some) const {
  std::vector<std::string> argv{"sh", "-c", install_script, "sh"};
  for (const auto* f : some) argv.insert(argv.end(), {f->staged, f->remote});
  return l->wrap(argv);
}

std::vector<std::string> host_steps::versions() const {
  std::vector<std::string> argv{"sh", "-c", version_script, "sh"};
  for (const auto& f : files) argv.push_back(f.remote);
  return l->wrap(argv);
}

std::vector<const file_steps*> host_steps::all() const {
  std::vector<const file_steps*> out;
  for (const auto& f : files) out.push_back(&f);
  return out;
}

host_steps steps_for(const launcher& l, const std::string& source) {
  const host& h = l.target();
  host_steps s;
  s.l = &l;
  s.open = l.open_argv();
  s.close = l.close_argv();
  std::vector<std::string> list{"sh", "-c", hash_script, "sh"};
  for (const char* name : programs) {
    file_steps f;
    f.name = name;
    f.local = local_program(source, name);
    f.remote = l.program(name);  // where the runner will run it from
    f.staged = (fs::path(h.bin_dir) / fmt::format(".{}.new", name)).string();
    f.copy = l.wrap_with_stdin({"sh", "-c", copy_script, "sh", h.bin_dir, f.staged});
    list.push_back(f.remote);
    s.files.push_back(std::move(f));
  }
  s.list = l.wrap(list);
  return s;
}

std::string header(const host& h) { return fmt::format("host {} ({})", h.name, h.address); }

std::optional<std::string> host_problem(const host& h) {
  if (h.launcher == launcher_kind::ssh && h.bin_dir.empty())
    return fmt::format("{}: deploy needs a bin_dir for an ssh host (the folder there for netload and netserve)",
                       header(h));
  return std::nullopt;
}

std::string nothing_to_copy(const host& h) {
  if (h.launcher == launcher_kind::netns) return fmt::format("local (netns {}): nothing to copy", h.netns);
  return "local: nothing to copy";
}

}  // namespace deploying

using namespace deploying;

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (libcrypto)");
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::string local_program(const std::string& dir, const std::string& name) {
  const fs::path in_tree = fs::path(dir) / name / name;
  return (fs::is_regular_file(in_tree) ? in_tree : fs::path(dir) / name).string();
}

std::string find_deploy_source(const std::string& self_exe, const std::string& from) {
  const auto has_both = [](const fs::path& dir) {
    for (const char* name : programs)
      if (!fs::is_regular_file(local_program(dir.string(), name))) return false;
    return true;
  };
  if (!from.empty()) {
    const fs::path dir = fs::absolute(from);
    if (!has_both(dir))
      throw std::runtime_error(fmt::format("--from {}: netload and netserve are not both there", from));
    return dir.string();
  }
  // build/<preset>/harness/harness -> build/static/bin
  std::error_code ec;
  const fs::path self = fs::canonical(self_exe, ec);
  const fs::path dir = self.parent_path().parent_path().parent_path() / "static" / "bin";
  if (!ec && has_both(dir)) return dir.string();
  throw std::runtime_error(
      "no self-contained netload and netserve to copy: build them (cmake --preset static && "
      "cmake --build --preset static) or pass --from DIR");
}

std::vector<std::string> hosts_to_deploy(const plan& p) {
  std::set<std::string> used;
  for (const auto& r : expand(p)) {
    for (const auto& s : r.servers) used.insert(s.host);
    for (const auto& i : r.instances) used.insert(i.client);
  }
  return {used.begin(), used.end()};
}

std::string deploy_dry_run(const plan& p, const std::string& source_dir, std::vector<std::string>& errors) {
  std::string hosts;
  bool any_ssh = false;
  for (const auto& name : hosts_to_deploy(p)) {
    const host& h = p.hosts.at(name);
    if (h.launcher != launcher_kind::ssh) {
      hosts += fmt::format("\n## {}: {}\n", header(h), nothing_to_copy(h));
      continue;
    }
    if (const auto problem = host_problem(h)) {
      errors.push_back(*problem);
      continue;
    }
    any_ssh = true;
    const auto l = make_launcher(h, "", "/tmp/harness-ssh-XXXXXX");
    const host_steps s = steps_for(*l, source_dir);
    hosts += fmt::format("\n## {}: to {}\n", header(h), h.bin_dir);
    hosts += "  connect: " + nb::quote_argv(s.open) + "\n";
    hosts += "  list:    " + nb::quote_argv(s.list) + "\n";
    hosts += "  # what follows only when a sha256 there differs from the one here, for each such file\n";
    for (const auto& f : s.files)
      hosts += "  copy:    " + nb::quote_argv(f.copy) + " < " + nb::shell_quote(f.local) + "\n";
    hosts += "  verify:  " + nb::quote_argv(s.verify(s.all())) + "\n";
    hosts += "  install: " + nb::quote_argv(s.install(s.all())) + "\n";
    hosts += "  version: " + nb::quote_argv(s.versions()) + "\n";
    hosts += "  close:   " + nb::quote_argv(s.close) + "\n";
  }
  std::string out = fmt::format("# deploy of plan '{}' ({}): what would run; nothing runs\n", p.name, p.source_path);
  if (any_ssh) {
    out += fmt::format("\n## this machine, first: the programs to copy, from {}\n", source_dir);
    for (const char* name : programs)
      out += "  version: " + nb::quote_argv({local_program(source_dir, name), "--version"}) + "\n";
  }
  return out + hosts;
}

}  // namespace harness
