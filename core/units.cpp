#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace dmabench {
namespace {

struct Unit {
  const char* name;
  double factor;
};

constexpr Unit kUnits[] = {
    {"", 1.0},
    {"b", 1.0},
    {"k", 1024.0},          {"kib", 1024.0},          {"kb", 1e3},
    {"m", 1048576.0},       {"mib", 1048576.0},       {"mb", 1e6},
    {"g", 1073741824.0},    {"gib", 1073741824.0},    {"gb", 1e9},
    {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
};

[[noreturn]] void bad(std::string_view text, std::string_view field, std::string_view why) {
  throw InputError(fmt::format(
      "{}: '{}' is not a byte count ({}); accepted: a positive integer or a number with a unit "
      "B, KiB, MiB, GiB, TiB (or K, M, G, T: powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. \"64KiB\"",
      field, text, why));
}

}  // namespace

std::uint64_t parse_bytes(std::string_view text, std::string_view field) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number(text.substr(start, i - start));
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) break;
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) bad(text, field, "trailing characters");
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) bad(text, field, "no number");

  const Unit* found = nullptr;
  for (const auto& u : kUnits)
    if (unit == u.name) found = &u;
  if (!found) bad(text, field, fmt::format("unknown unit '{}'", unit));

  double value = std::stod(number) * found->factor;
  if (!(value >= 1.0)) bad(text, field, "must be at least 1 byte");
  if (value > 1.8e19) bad(text, field, "too large");
  double whole = std::round(value);
  if (std::fabs(value - whole) > 1e-6 * value) bad(text, field, "not a whole number of bytes");
  return static_cast<std::uint64_t>(whole);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kNames[unit]);
}

}  // namespace dmabench
