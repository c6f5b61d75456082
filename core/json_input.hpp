#pragma once
// The one parser of JSON that comes from outside (a config, a routing trace, a --check file): limits checked while
// parsing, never after — nesting depth (each level costs memory beyond its bytes, and a deep value is what a stack
// overflows on when it is printed or destroyed), no NUL byte, no key twice in one object (JSON allows it; a file
// that says one thing twice is a mistake, and the last one would silently win), numbers that fit a double.
#include <string>

#include <nlohmann/json.hpp>

namespace dmabench {

// Throws InputError "<what>: <problem>" (values quoted with core/quote.hpp's cap).
nlohmann::json parse_input_json(const std::string& text, const std::string& what, int max_depth);

}  // namespace dmabench
