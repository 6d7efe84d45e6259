#include "core/json/json_text.hpp"

namespace nb {
namespace {

struct nested_too_deep {};

}  // namespace

nlohmann::json parse_json_bounded(std::string_view text, int max_depth, bool* too_deep) {
  if (too_deep) *too_deep = false;
  // Throwing from the callback stops the parser before the tree below the level too many exists.
  using event = nlohmann::json::parse_event_t;
  const nlohmann::json::parser_callback_t guard = [max_depth](int depth, event e, nlohmann::json&) {
    if ((e == event::array_start || e == event::object_start) && depth >= max_depth) throw nested_too_deep{};
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), guard, false);
  } catch (const nested_too_deep&) {
    if (too_deep) *too_deep = true;
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

}  // namespace nb
