#include "engines/options/option.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dmabench {
std::string OptionSpec::prefix_form() const { return prefix_help.empty() ? prefix + "..." : prefix_help; }

std::string OptionSpec::accepted() const {
  std::vector<std::string> parts;
  for (const auto& c : choices) parts.push_back(c.dump());
  if (positive_integer) parts.push_back(fmt::format("an integer from 1 to {}", max_integer));
  if (!prefix.empty()) parts.push_back(fmt::format("\"{}\"", prefix_form()));
  return fmt::format("{}", fmt::join(parts, " or "));
}

bool OptionSpec::accepts(const nlohmann::json& value) const {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return true;
  if (!prefix.empty() && value.is_string() && value.get<std::string>().size() > prefix.size() &&
      value.get<std::string>().rfind(prefix, 0) == 0)
    return true;
  return positive_integer && value.is_number_integer() && value.get<long long>() >= 1 &&
         value.get<long long>() <= max_integer;
}

}  // namespace dmabench
