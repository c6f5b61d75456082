#pragma once
// Text helpers of the amd/ parsers (engine map lines, environment values).
#include <optional>
#include <string>

namespace dmabench::amd::detail {

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// A decimal integer of at most six digits and at most `max`, or nullopt.
inline std::optional<int> small_int(const std::string& s, int max) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const int v = std::stoi(s);
  if (v > max) return std::nullopt;
  return v;
}

}  // namespace dmabench::amd::detail
