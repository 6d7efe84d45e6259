#include "harness/launch/launcher.hpp"

#include "core/base/whole_number.hpp"
#include "harness/process/process.hpp"

#include <fmt/format.h>

#include <filesystem>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace harness {
namespace {

namespace fs = std::filesystem;

class local_launcher final : public launcher {
 public:
  local_launcher(host h, std::string bin) : launcher(std::move(h), std::move(bin)) {}
  std::vector<std::string> wrap(const std::vector<std::string>& command) const override { return command; }
};

class netns_launcher final : public launcher {
 public:
  netns_launcher(host h, std::string bin) : launcher(std::move(h), std::move(bin)) {}
  // `ip netns exec` execs the program itself: its pid and signals are the program's.
  std::vector<std::string> wrap(const std::vector<std::string>& command) const override {
    std::vector<std::string> argv{"ip", "netns", "exec", host_.netns};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  std::optional<std::string> unreachable() const override {
    if (netns_exists(host_.netns)) return std::nullopt;
    return fmt::format("network namespace '{}' does not exist (`ip netns list` does not show it)", host_.netns);
  }
};

class ssh_launcher final : public launcher {
 public:
  ssh_launcher(host h, std::string control_dir) : launcher(std::move(h), ""), control_dir_(std::move(control_dir)) {}

  std::vector<std::string> wrap(const std::vector<std::string>& command) const override {
    return remote(command, false);  // reads nothing from us
  }
  bool stops_remotely() const override { return true; }
  std::vector<std::string> wrap_announcing_pid(const std::vector<std::string>& command) const override {
    // A fixed script; the command stays separate words ("$@").
    std::vector<std::string> argv{"sh", "-c", fmt::format("echo {}$$; exec \"$@\"", remote_pid_prefix), "sh"};
    argv.insert(argv.end(), command.begin(), command.end());
    return remote(argv, true);
  }
  std::vector<std::string> wrap_with_stdin(const std::vector<std::string>& command) const override {
    return remote(command, true);
  }
  // One master per host, started up front (-f -N) with output on /dev/null so no background ssh holds our pipes.
  std::vector<std::string> open_argv() const override {
    auto argv = base("yes");
    for (const char* a : {"-o", "ControlPersist=120", "-f", "-N", "--"}) argv.push_back(a);
    argv.push_back(host_.address);
    return argv;
  }
  std::vector<std::string> close_argv() const override {
    auto argv = base("no");
    for (const char* a : {"-O", "exit", "--"}) argv.push_back(a);
    argv.push_back(host_.address);
    return argv;
  }

 private:
  std::vector<std::string> remote(const std::vector<std::string>& command, bool with_stdin) const {
    auto argv = base("no");
    if (!with_stdin) argv.push_back("-n");
    argv.push_back("--");
    argv.push_back(host_.address);
    // ssh hands the remote shell one string: each word quoted, so no plan value is ever shell syntax.
    argv.push_back(nb::quote_argv(command));
    return argv;
  }
  std::vector<std::string> base(const char* master) const {
    std::vector<std::string> argv{"ssh",
                                  "-o",
                                  "BatchMode=yes",
                                  "-o",
                                  fmt::format("ConnectTimeout={}", host_.ssh.connect_timeout),
                                  "-o",
                                  fmt::format("ControlMaster={}", master),
                                  "-o",
                                  fmt::format("ControlPath={}/%C", control_dir_)};
    if (host_.ssh.port) argv.insert(argv.end(), {"-p", std::to_string(host_.ssh.port)});
    if (!host_.ssh.user.empty()) argv.insert(argv.end(), {"-l", host_.ssh.user});
    if (!host_.ssh.identity.empty()) argv.insert(argv.end(), {"-i", host_.ssh.identity, "-o", "IdentitiesOnly=yes"});
    for (const auto& o : host_.ssh.options) argv.insert(argv.end(), {"-o", o});
    return argv;
  }
  std::string control_dir_;
};

}  // namespace

std::string launcher::program(const std::string& name) const {
  const std::string& dir = host_.bin_dir.empty() ? default_bin_dir_ : host_.bin_dir;
  if (dir.empty()) return name;
  // The build tree keeps each program in its own folder.
  if (host_.bin_dir.empty() && fs::exists(fs::path(dir) / name / name)) return (fs::path(dir) / name / name).string();
  return (fs::path(dir) / name).string();
}

bool netns_exists(const std::string& name, const std::string& run_dir) {
  std::error_code ec;
  return !name.empty() && fs::exists(fs::path(run_dir) / name, ec);
}

bool may_enter_netns() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return ::geteuid() == 0;
  return (data[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))) != 0;
}

std::unique_ptr<launcher> make_launcher(const host& h, const std::string& local_bin_dir,
                                        const std::string& control_dir) {
  switch (h.launcher) {
    case launcher_kind::local: return std::make_unique<local_launcher>(h, local_bin_dir);
    case launcher_kind::netns: return std::make_unique<netns_launcher>(h, local_bin_dir);
    case launcher_kind::ssh: return std::make_unique<ssh_launcher>(h, control_dir);
  }
  throw std::logic_error("launcher kind");
}

std::optional<int> remote_pid_of(std::string_view line) {
  if (!line.starts_with(remote_pid_prefix)) return std::nullopt;
  // `kill` of 0 or below would signal a whole process group.
  return nb::parse_whole<int>(line.substr(remote_pid_prefix.size()), 1);
}

std::string find_local_bin_dir(const std::string& self_exe, const std::string& override_dir) {
  if (!override_dir.empty()) return fs::absolute(override_dir).string();
  std::error_code ec;
  const fs::path self = fs::canonical(self_exe, ec);
  if (ec) return {};
  const fs::path here = self.parent_path();
  if (fs::is_regular_file(here.parent_path() / "netserve" / "netserve")) return here.parent_path().string();
  if (fs::exists(here / "netserve") && fs::is_regular_file(here / "netserve")) return here.string();
  return {};
}

}  // namespace harness
