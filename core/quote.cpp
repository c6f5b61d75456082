#include "core/quote.hpp"

#include <fmt/format.h>

#include "core/json_file.hpp"

namespace dmabench {
namespace {

// `text` with control characters and backslashes escaped; at most `limit` characters of output (0: no limit) and the
// number of input bytes it took.
std::string escaped(std::string_view text, std::size_t limit, std::size_t& taken) {
  std::string out;
  for (taken = 0; taken < text.size(); ++taken) {
    const unsigned char c = static_cast<unsigned char>(text[taken]);
    std::string piece = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\\' ? "\\\\"
                        : (c < 0x20 || c == 0x7f) ? fmt::format("\\x{:02x}", c) : std::string(1, static_cast<char>(c));
    if (limit && out.size() + piece.size() > limit) {
      while (taken > 0 && (static_cast<unsigned char>(text[taken]) & 0xC0) == 0x80) {  // not inside a UTF-8 character
        --taken;
        out.pop_back();
      }
      break;
    }
    out += piece;
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

std::string one_line(std::string_view message, std::size_t cap) {
  std::size_t taken = 0;
  const std::string all = escaped(message, 0, taken);
  if (all.size() <= cap) return all;
  const std::size_t head = boundary(all, cap / 2), tail = boundary(all, all.size() - cap / 2);
  return all.substr(0, head) + fmt::format("…({} characters left out)…", tail - head) + all.substr(tail);
}

}  // namespace dmabench
