#pragma once
// How a command reaches a host: here, through ssh, or in a network namespace. Plan values only become argv
// elements; the one string ssh needs remotely is quoted word by word.
#include "harness/plan/plan.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

inline constexpr std::string_view remote_pid_prefix = "harness-remote-pid ";
// nullopt for any line but "harness-remote-pid 1234".
std::optional<int> remote_pid_of(std::string_view line);

class launcher {
 public:
  virtual ~launcher() = default;
  virtual std::string program(const std::string& name) const;
  virtual std::vector<std::string> wrap(const std::vector<std::string>& command) const = 0;
  // A signal to the local ssh client does not reach the remote program: stopping runs `kill` there.
  virtual bool stops_remotely() const { return false; }
  // The remote side first prints remote_pid_prefix and its pid where stops_remotely(); stdin is ours.
  virtual std::vector<std::string> wrap_announcing_pid(const std::vector<std::string>& command) const {
    return wrap(command);
  }
  // stdin is ours (deploy copies a file through it).
  virtual std::vector<std::string> wrap_with_stdin(const std::vector<std::string>& command) const {
    return wrap(command);
  }
  // Known before anything runs: a netns host whose namespace does not exist.
  virtual std::optional<std::string> unreachable() const { return std::nullopt; }
  // The ssh master connection.
  virtual std::vector<std::string> open_argv() const { return {}; }
  virtual std::vector<std::string> close_argv() const { return {}; }
  const host& target() const { return host_; }

 protected:
  launcher(host h, std::string default_bin_dir) : host_(std::move(h)), default_bin_dir_(std::move(default_bin_dir)) {}
  host host_;
  std::string default_bin_dir_;
};

// /run/netns/NAME, where `ip netns exec` opens it.
bool netns_exists(const std::string& name, const std::string& run_dir = "/run/netns");

// CAP_SYS_ADMIN, which `ip netns exec` needs for setns and its mount of /sys.
bool may_enter_netns();

// control_dir holds ssh's multiplexing sockets; local_bin_dir serves hosts without a bin_dir.
std::unique_ptr<launcher> make_launcher(const host& h, const std::string& local_bin_dir,
                                        const std::string& control_dir);

// --bin-dir, else beside the harness binary, else empty (PATH).
std::string find_local_bin_dir(const std::string& self_exe, const std::string& override_dir);

}  // namespace harness
