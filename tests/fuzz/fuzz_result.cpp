// Fuzz target for reading netload results back (the harness reads them from other hosts' output).
#include "core/json/json_text.hpp"
#include "core/result/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // As the harness reads a netload's output: nesting bounded while parsing.
  const auto j = nb::parse_json_bounded(std::string_view(reinterpret_cast<const char*>(data), size));
  if (j.is_discarded()) return 0;
  try {
    nb::test_result r = nb::result_from_json(j);
    nb::test_result again = nb::result_from_json(nb::to_json(r));
    if (again.sender.packets != r.sender.packets) __builtin_trap();
  } catch (const std::exception&) {
  }
  return 0;
}
