#pragma once
// Values quoted back in messages (issue 40): whatever a file or an argument holds, a message names it in a few
// dozen characters — control characters escaped (a newline in a name cannot forge a line), long values cut with
// how much was left out — so that "one line naming what was wrong" stays a line a person reads.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dmabench {

inline constexpr std::size_t kQuoteCap = 80;  // characters of a value a message shows

// `text` with control characters and backslashes escaped (\n, \t, \xNN) and, past `cap` characters, cut:
// "abc…(1048500 more bytes)".
std::string quote(std::string_view text, std::size_t cap = kQuoteCap);
// A JSON value as JSON text, quoted as above (a string keeps its quotes: "\"abc\"").
std::string quote_json(const nlohmann::json& value, std::size_t cap = kQuoteCap);
// `text` with every character escaped as quote does, nothing cut, backslashes kept (names already escaped once, as
// case names are, are not escaped again): C0 and C1 control characters, DEL, the Unicode line and paragraph
// separators and bytes that are not UTF-8 (python/dmabench/text.py's printable).
std::string printable(std::string_view text);
// A whole message line: control characters escaped and, past `cap` characters, the middle cut
// ("…(N characters left out)…"), so that its start (what) and end (what is accepted) stay.
std::string one_line(std::string_view message, std::size_t cap = 600);

}  // namespace dmabench
