#include "harness/lab/lab.hpp"

#include <fmt/format.h>

namespace lab {
namespace {

constexpr const char* usage =
    "Usage: harness lab up FILE        create the lab of FILE's [lab] table (idempotent)\n"
    "       harness lab down FILE      delete it: namespaces, veths, bridge, qdiscs, nft tables\n"
    "       harness lab status [FILE]  what exists (without FILE: every lab on this machine)\n"
    "       harness lab counters FILE  JSON: nft and tbf counters of the lab\n";

int dispatch(const std::vector<std::string>& args) {
  const std::string& cmd = args[0];
  if (cmd == "status" && args.size() == 1) {
    fmt::print("{}", lab_status(nullptr));
    return 0;
  }
  if (args.size() != 2) {
    fmt::print(stderr, "{}", usage);
    return 2;
  }
  const lab_spec spec = load_lab(args[1]);
  if (cmd == "up") {
    lab_up(spec);
    fmt::print("lab {} is up: device {} ({}), {} instances, circuit namespace {}\n", spec.name, spec.device.netns,
               format_ipv4(spec.device.address), spec.instances.size(), spec.circuit_netns);
  } else if (cmd == "down") {
    lab_down(spec);
    fmt::print("lab {} is down\n", spec.name);
  } else if (cmd == "status") {
    fmt::print("{}", lab_status(&spec));
  } else if (cmd == "counters") {
    fmt::print("{}", lab_counters(spec));
  } else {
    fmt::print(stderr, "{}", usage);
    return 2;
  }
  return 0;
}

}  // namespace

int lab_main(std::vector<std::string> args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    fmt::print(args.empty() ? stderr : stdout, "{}", usage);
    return args.empty() ? 2 : 0;
  }
  try {
    return dispatch(args);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lab: {}\n", e.what());
    return 1;
  }
}

}  // namespace lab
