#pragma once
// Derived from the lab name: labs coexist, and "<name>-v64" stays under the kernel's 15 characters.
#include "harness/lab/lab.hpp"

#include <fmt/format.h>

#include <string>

namespace lab {

inline std::string onprem_if(const lab_spec& s) { return s.name + "-op"; }  // circuit side, to the device
inline std::string bridge_if(const lab_spec& s) { return s.name + "-br"; }  // circuit side, the VPC
inline std::string vpc_port_if(const lab_spec& s, std::size_t k) { return fmt::format("{}-v{}", s.name, k + 1); }
inline std::string host_if(const lab_spec& s) { return s.name + "-e0"; }  // inside every host
inline std::string nft_table(const lab_spec& s) { return "nb_lab_" + s.name; }

}  // namespace lab
