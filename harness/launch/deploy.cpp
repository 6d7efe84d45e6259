#include "harness/launch/deploy.hpp"

#include "core/base/text.hpp"

#include "core/base/version.hpp"
#include "harness/launch/deploy_steps.hpp"
#include "harness/launch/launcher.hpp"
#include "harness/launch/process_group.hpp"
#include "harness/launch/stop_signals.hpp"
#include "harness/process/process.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <stdlib.h>

namespace harness {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace deploying;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  return text.str();
}

std::string failed(const std::string& what, const nb::process_outcome& o) {
  if (o.timed_out) return fmt::format("{} took too long (killed)", what);
  return fmt::format("{} failed (status {}): {}", what, o.exit_code, nb::first_line(o.stderr_text));
}

class deployer {
 public:
  deployer(asio::io_context& io, const plan& p, std::string source)
      : io_(io), plan_(p), source_(std::move(source)), group_(io) {
    char tmpl[] = "/tmp/harness-ssh-XXXXXX";  // ssh control socket paths are limited to ~100 bytes
    if (!::mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary folder for ssh control sockets");
    control_dir_ = tmpl;
  }
  ~deployer() {
    std::error_code ec;
    fs::remove_all(control_dir_, ec);
  }
  deployer(const deployer&) = delete;
  deployer& operator=(const deployer&) = delete;

  // Returns the number of hosts that failed.
  asio::awaitable<int> run_all(std::vector<std::string> hosts);
  // A second call kills what the first stopped.
  void cancel() {
    cancelled_ ? group_.kill() : group_.stop();
    cancelled_ = true;
  }
  bool cancelled() const { return cancelled_; }

 private:
  asio::awaitable<nb::process_outcome> run(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                           const std::string* input = nullptr);
  asio::awaitable<void> check_local();
  asio::awaitable<std::string> deploy_host(const host& h);
  asio::awaitable<std::string> update(const host_steps& s);
  asio::awaitable<void> copy_one(const file_steps& f);
  asio::awaitable<void> check_versions(const host_steps& s);
  void host_done(const host& h, std::exception_ptr e, const std::string& line, int& failures);

  asio::io_context& io_;
  const plan& plan_;
  std::string source_, control_dir_;
  std::map<std::string, std::string> content_, digest_;  // program -> bytes, SHA-256
  process_group group_;
  bool cancelled_ = false;
};

asio::awaitable<nb::process_outcome> deployer::run(const std::vector<std::string>& argv,
                                                   std::chrono::milliseconds limit, const std::string* input) {
  if (cancelled_) throw std::runtime_error("interrupted");
  nb::process_outcome o = co_await group_.run(argv, limit, input);
  if (cancelled_) throw std::runtime_error("interrupted");
  co_return o;
}

// Read once: what is hashed is what is sent.
asio::awaitable<void> deployer::check_local() {
  for (const char* name : programs) {
    const std::string path = local_program(source_, name);
    content_[name] = read_file(path);
    digest_[name] = sha256_hex(content_[name]);
    const std::vector<std::string> argv{path, "--version"};
    const auto o = co_await run(argv, 10s);
    if (o.exit_code != 0) throw std::runtime_error(failed(fmt::format("'{} --version'", path), o));
    if (const auto v = nb::version_word(o.stdout_text); v != nb::version)
      throw std::runtime_error(
          fmt::format("{} is version {}, the harness is {}: copy programs of the harness's own "
                      "build (--from DIR)",
                      path, v, nb::version));
  }
}

asio::awaitable<int> deployer::run_all(std::vector<std::string> hosts) {
  int failures = 0;
  std::vector<std::unique_ptr<launcher>> launchers;
  bool checked = false;
  std::size_t pending = 0;
  asio::steady_timer all_done(io_, std::chrono::steady_clock::time_point::max());
  for (const auto& name : hosts) {
    const host& h = plan_.hosts.at(name);
    if (h.launcher != launcher_kind::ssh) {
      fmt::print("{}: {}\n", header(h), nothing_to_copy(h));
      continue;
    }
    if (const auto problem = host_problem(h)) {
      fmt::print(stderr, "harness: {}\n", *problem);
      ++failures;
      continue;
    }
    if (!checked) co_await check_local();  // only when there is somewhere to copy to
    checked = true;
    ++pending;
    // In parallel: a slow host holds up no other.
    asio::co_spawn(io_, deploy_host(h), [&, hp = &h](std::exception_ptr e, std::string line) {
      host_done(*hp, e, line, failures);
      if (--pending == 0) all_done.cancel();
    });
  }
  if (pending > 0) co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return failures;
}

void deployer::host_done(const host& h, std::exception_ptr e, const std::string& line, int& failures) {
  if (!e) {
    fmt::print("{}: {}\n", header(h), line);
    return;
  }
  ++failures;
  if (cancelled_) return;  // said once for all
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    fmt::print(stderr, "harness: {}: {}\n", header(h), x.what());
  }
}

asio::awaitable<std::string> deployer::deploy_host(const host& h) {
  const auto l = make_launcher(h, "", control_dir_);
  const host_steps s = steps_for(*l, source_);
  std::string line;
  std::exception_ptr failure;
  try {
    auto o = co_await run(s.open, std::chrono::seconds(h.ssh.connect_timeout + 10));
    if (o.exit_code != 0) throw std::runtime_error(failed("ssh", o));
    line = co_await update(s);
  } catch (...) {
    failure = std::current_exception();
  }
  // Also after an error or a signal: a master left behind lives on for its ControlPersist.
  co_await nb::run_command(s.close, 10s);
  if (failure) std::rethrow_exception(failure);
  co_return line;
}

// "missing" for a file not there.
std::vector<std::string> digests_of(const nb::process_outcome& o, std::size_t count, const std::string& what) {
  if (o.exit_code != 0) throw std::runtime_error(failed(what, o));
  std::vector<std::string> out;
  std::istringstream lines(o.stdout_text);
  for (std::string l; out.size() < count && std::getline(lines, l);) out.push_back(l);
  if (out.size() != count) throw std::runtime_error(fmt::format("{}: {} line(s), not {}", what, out.size(), count));
  return out;
}

asio::awaitable<std::string> deployer::update(const host_steps& s) {
  auto listed = co_await run(s.list, 20s);
  const auto there = digests_of(listed, s.files.size(), "listing the sha256 there");
  std::vector<const file_steps*> changed;
  for (std::size_t i = 0; i < s.files.size(); ++i)
    if (there[i] != digest_.at(s.files[i].name)) changed.push_back(&s.files[i]);
  if (changed.empty()) co_return "current, nothing copied";
  std::size_t bytes = 0;
  std::string names;
  for (const file_steps* f : changed) {
    co_await copy_one(*f);
    bytes += content_.at(f->name).size();
    names += (names.empty() ? "" : ", ") + f->name;
  }
  // Named: GCC 12 mis-destroys non-trivial temporaries living across a co_await.
  const auto verify = s.verify(changed), install = s.install(changed);
  auto verified = co_await run(verify, 20s);
  const auto copies = digests_of(verified, changed.size(), "the sha256 of the copies");
  for (std::size_t i = 0; i < changed.size(); ++i)
    if (copies[i] != digest_.at(changed[i]->name))
      throw std::runtime_error(fmt::format("the copy {} has sha256 {}, not {} as {} here", changed[i]->staged,
                                           copies[i], digest_.at(changed[i]->name), changed[i]->local));
  // One rename once every copy is checked: a failed copy leaves both old programs in place.
  auto moved = co_await run(install, 20s);
  if (moved.exit_code != 0) throw std::runtime_error(failed("mv into place", moved));
  co_await check_versions(s);
  co_return fmt::format("copied {} ({} bytes)", names, bytes);
}

asio::awaitable<void> deployer::copy_one(const file_steps& f) {
  const std::string& data = content_.at(f.name);
  // The time a slow path (128 kB a second) takes, and 30 s to spare.
  const auto limit = 30s + std::chrono::milliseconds(data.size() / 128);
  auto copied = co_await run(f.copy, limit, &data);
  if (copied.exit_code != 0)
    throw std::runtime_error(failed(fmt::format("copying {} to {}", f.name, f.staged), copied));
}

asio::awaitable<void> deployer::check_versions(const host_steps& s) {
  const auto versions = s.versions();
  auto o = co_await run(versions, 20s);
  if (o.exit_code != 0) throw std::runtime_error(failed("--version there", o));
  std::istringstream lines(o.stdout_text);
  for (const auto& f : s.files) {
    std::string line;
    std::getline(lines, line);
    if (nb::version_word(line) != nb::version)
      throw std::runtime_error(
          fmt::format("{} there says '{}', not version {}", f.remote, nb::trim(line), nb::version));
  }
}

}  // namespace

int deploy(const deploy_request& req) {
  const plan p = load_plan(req.plan_path);
  const auto hosts = hosts_to_deploy(p);
  const bool any_ssh = std::any_of(hosts.begin(), hosts.end(),
                                   [&](const std::string& n) { return p.hosts.at(n).launcher == launcher_kind::ssh; });
  const std::string source = any_ssh ? find_deploy_source(req.self_exe, req.from) : "";
  if (req.dry_run) {
    std::vector<std::string> errors;
    fmt::print("{}", deploy_dry_run(p, source, errors));
    for (const auto& e : errors) fmt::print(stderr, "harness: {}\n", e);
    return errors.empty() ? 0 : 1;
  }
  asio::io_context io;
  deployer d(io, p, source);
  stop_signals signals(io, "command", [&d](int) { d.cancel(); });
  int failures = 0;
  try {
    failures = nb::run_on(io, d.run_all(hosts), [&signals] { signals.close(); });
  } catch (const std::exception&) {
    if (d.cancelled()) throw std::runtime_error("interrupted");  // whatever a stopped command was doing
    throw;
  }
  if (d.cancelled()) throw std::runtime_error("interrupted");
  return failures == 0 ? 0 : 1;
}

}  // namespace harness
