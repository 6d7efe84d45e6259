#pragma once
// Text a peer sent, made safe for one log line: control characters and DEL are shown as \n, \t, \xNN
// (a backslash as \\), so a peer can neither end our line and forge the next nor send terminal escapes.
// Everything else, UTF-8 included, is kept as given.
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace nb {

inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

}  // namespace nb
