#include "core/quote.hpp"

#include <fmt/format.h>

#include "core/json_file.hpp"

namespace dmabench {
namespace {

// The length of the well-formed UTF-8 character at text[i] (1 to 4) and its code point; 0 where the bytes there are
// not one (a stray continuation byte, a truncated or overlong sequence, a surrogate).
std::size_t utf8_char(std::string_view text, std::size_t i, char32_t& cp) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  const std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3Fu);
  }
  static constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kLeast[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// How one character is shown: C0 and C1 control characters and DEL as \xNN (\n, \t, \r by name), the Unicode line
// and paragraph separators as \u2028 / \u2029, a byte that is not UTF-8 as \xNN — what python/dmabench/text.py's
// printable does, so that neither side lets a name end, break or rewrite a terminal line; a backslash doubled where
// `backslash` (a quoted value, whose escapes must read back one way), else kept (text already escaped once).
std::string shown(char32_t cp, std::string_view bytes, bool backslash) {
  if (cp == '\n') return "\\n";
  if (cp == '\t') return "\\t";
  if (cp == '\r') return "\\r";
  if (cp == '\\' && backslash) return "\\\\";
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xA0)) return fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
  if (cp == 0x2028 || cp == 0x2029) return fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
  return std::string(bytes);
}

// `text` escaped as `shown` says; at most `limit` characters of output (0: no limit) and the number of input bytes it
// took (never inside a UTF-8 character).
std::string escaped(std::string_view text, std::size_t limit, std::size_t& taken, bool backslash = true) {
  std::string out;
  for (taken = 0; taken < text.size();) {
    char32_t cp = 0;
    std::size_t n = utf8_char(text, taken, cp);
    const std::string piece = n ? shown(cp, text.substr(taken, n), backslash)
                                : fmt::format("\\x{:02x}", static_cast<unsigned char>(text[taken]));
    if (limit && out.size() + piece.size() > limit) break;
    out += piece;
    taken += n ? n : 1;
  }
  return out;
}

// The position at or before `pos` that starts a UTF-8 character.
std::size_t boundary(const std::string& s, std::size_t pos) {
  while (pos > 0 && pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

}  // namespace

std::string quote(std::string_view text, std::size_t cap) {
  std::size_t taken = 0;
  std::string out = escaped(text, cap, taken);
  if (taken < text.size()) out += fmt::format("…({} more bytes)", text.size() - taken);
  return out;
}

std::string quote_json(const nlohmann::json& value, std::size_t cap) {
  // a string or number is dumped whole (bounded by the file it came from); a container only to the cap
  if (!value.is_structured()) return quote(dump_json(value), cap);
  std::string head = value.is_array() ? "[" : "{";
  std::size_t shown = 0;
  for (auto it = value.begin(); it != value.end() && head.size() < cap; ++it, ++shown) {
    if (shown) head += ",";
    if (value.is_object()) head += dump_json(it.key()) + ":";
    head += quote_json(*it, cap - std::min(cap, head.size()));
  }
  if (shown < value.size() || head.size() >= cap)
    return quote(head, cap) + fmt::format("…({} elements)", value.size()) + (value.is_array() ? "]" : "}");
  return head + (value.is_array() ? "]" : "}");
}

std::string printable(std::string_view text) {
  std::size_t taken = 0;
  return escaped(text, 0, taken, false);
}

std::string one_line(std::string_view message, std::size_t cap) {
  std::size_t taken = 0;
  const std::string all = escaped(message, 0, taken);
  if (all.size() <= cap) return all;
  const std::size_t head = boundary(all, cap / 2), tail = boundary(all, all.size() - cap / 2);
  return all.substr(0, head) + fmt::format("…({} characters left out)…", tail - head) + all.substr(tail);
}

}  // namespace dmabench
