#include "core/json_input.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/quote.hpp"

namespace dmabench {

nlohmann::json parse_input_json(const std::string& text, const std::string& what, int max_depth) {
  using json = nlohmann::json;
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw InputError(fmt::format("{}: a NUL byte at offset {}; expected JSON text", what, nul));
  std::vector<std::set<std::string>> keys;  // per open object
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth) throw InputError(fmt::format("{}: nested more than {} levels deep", what, max_depth));
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw InputError(fmt::format("{}: key '{}' appears twice in one object", what, quote_json(parsed)));
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", what, quote(std::string(e.what()), 200)));
  } catch (const json::out_of_range& e) {  // a number past a double's range (1e400)
    const std::string w = e.what();
    throw InputError(fmt::format("{}: {}; a number must fit in a 64-bit float", what,
                                 quote(w.substr(w.find("] ") == std::string::npos ? 0 : w.find("] ") + 2), 200)));
  }
}

}  // namespace dmabench
