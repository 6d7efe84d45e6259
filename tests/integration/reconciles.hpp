#pragma once
// The check every stream test makes of a netload JSON result: it ran, and its counts reconcile
// (sent = received + lost, lost = path + receiver kernel drops).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>

namespace nb::test {

inline void require_reconciles(const nlohmann::json& r) {
  auto sent = r["sender"]["packets"].get<std::uint64_t>();
  auto got = r["receiver"]["packets"].get<std::uint64_t>();
  auto lost = r["loss"]["packets"].get<std::uint64_t>();
  REQUIRE(r["ok"] == true);
  REQUIRE(r["loss"]["reconciles"] == true);
  REQUIRE(sent == got + lost);
  REQUIRE(lost == r["loss"]["path"].get<std::uint64_t>() + r["loss"]["receiver_kernel_drops"].get<std::uint64_t>());
  REQUIRE(sent > 0);
}

}  // namespace nb::test
