#pragma once
// How a command reaches a host: run here, through ssh, or inside a network namespace. A launcher turns
// the command meant for the host (argv) into the argv this machine executes; plan values only ever
// become argv elements, and the one string ssh needs for the remote side is quoted word by word.
#include "harness/plan/plan.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// What the remote side of wrap_announcing_pid prints first: this, then its pid.
inline constexpr std::string_view remote_pid_prefix = "harness-remote-pid ";
// The pid of a line printed so ("harness-remote-pid 1234"); nullopt for any other line.
std::optional<int> remote_pid_of(std::string_view line);

class launcher {
 public:
  virtual ~launcher() = default;
  // The path of one of our programs (netserve, netload) on that host.
  virtual std::string program(const std::string& name) const;
  // The argv to execute on this machine so that `command` runs on the host.
  virtual std::vector<std::string> wrap(const std::vector<std::string>& command) const = 0;
  // ssh: a signal to the local ssh client does not reach the remote program, so stopping a server
  // means running `kill` there with the pid from its ready line.
  virtual bool stops_remotely() const { return false; }
  // Like wrap, but where stops_remotely() the remote side first prints remote_pid_prefix and its pid on
  // stdout, so the program (netload has no ready line) can be stopped on cancel; and the program's
  // standard input is ours (netload reads its start instant from it), where wrap gives it none.
  virtual std::vector<std::string> wrap_announcing_pid(const std::vector<std::string>& command) const {
    return wrap(command);
  }
  // Like wrap, but the program's standard input is ours (harness deploy copies a file through it).
  virtual std::vector<std::string> wrap_with_stdin(const std::vector<std::string>& command) const {
    return wrap(command);
  }
  // Why the host cannot be reached before anything runs (std::nullopt when nothing is known against it):
  // a netns host whose namespace does not exist.
  virtual std::optional<std::string> unreachable() const { return std::nullopt; }
  // Commands to run once before / after all others (the ssh master connection), possibly empty.
  virtual std::vector<std::string> open_argv() const { return {}; }
  virtual std::vector<std::string> close_argv() const { return {}; }
  const host& target() const { return host_; }

 protected:
  launcher(host h, std::string default_bin_dir) : host_(std::move(h)), default_bin_dir_(std::move(default_bin_dir)) {}
  host host_;
  std::string default_bin_dir_;
};

// Whether the network namespace `name` exists where `ip netns exec` opens it: /run/netns/NAME (the folder
// `ip netns list` lists). `run_dir` for tests.
bool netns_exists(const std::string& name, const std::string& run_dir = "/run/netns");

// Whether this process may enter a network namespace as `ip netns exec` does (setns, and a mount of /sys
// there): CAP_SYS_ADMIN in its effective set, which root has.
bool may_enter_netns();

// control_dir: where ssh keeps its multiplexing sockets (one per host); local_bin_dir: where netserve
// and netload are found for local and netns hosts without a bin_dir of their own.
std::unique_ptr<launcher> make_launcher(const host& h, const std::string& local_bin_dir,
                                        const std::string& control_dir);

// The folder holding this machine's netserve and netload: --bin-dir, else next to the harness binary
// (build tree layout ../netserve/netserve), else empty (PATH).
std::string find_local_bin_dir(const std::string& self_exe, const std::string& override_dir);

}  // namespace harness
