#pragma once
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

namespace nb {

// 0 when `s` starts with no valid UTF-8 character (overlong, surrogate, cut short).
inline std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  const std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || s.size() < n) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  if ((c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) >= 0xa0) || (c == 0xf0 && b(1) < 0x90) ||
      (c == 0xf4 && b(1) >= 0x90))
    return 0;
  return n;
}

// Text a peer sent, escaped so it can neither forge a log line nor send a terminal escape; UTF-8 is kept.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {  // C1 controls and stray bytes (0x9b: CSI) are terminal escapes too
      const std::size_t n = utf8_length(s.substr(i));
      if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0)
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      else if (n) out.append(s.substr(i, n));
      else out += fmt::format("\\x{:02x}", c);
      i += n ? n : 1;
      continue;
    }
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
    ++i;
  }
  return out;
}

// printable, cut to `most` bytes so that one huge field name cannot fill the log.
inline std::string printable_bounded(std::string_view s, std::size_t most = 256) {
  if (s.size() <= most) return printable(s);
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  return fmt::format("{}... ({} bytes)", printable(s.substr(0, cut)), s.size());
}

inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

inline std::string first_line(std::string_view s) { return trim(s.substr(0, s.find('\n'))); }

// "netload 0.3.0" -> "0.3.0".
inline std::string version_word(std::string_view out) {
  const std::string line = first_line(out);
  const auto space = line.find_last_of(' ');
  return space == std::string::npos ? line : line.substr(space + 1);
}

inline std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./,:=+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A POSIX shell (ssh's remote one too) reads it back as the same argv.
inline std::string quote_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

}  // namespace nb
