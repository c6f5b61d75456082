// Config values: scalars, sizes and name lists, and the wording of config errors.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"
#include "core/suggest.hpp"

#include "core/quote.hpp"
#include "patterns/pattern.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"

namespace dmabench::config_parse {
namespace {

constexpr std::size_t kMaxSizes = 4096;

}  // namespace


[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw InputError(fmt::format("config: {}: {}", field, what));
}

std::string show(const json& v) { return quote_json(v, 60); }

std::vector<std::string> pattern_names() {
  std::vector<std::string> out;
  for (const Pattern* p : all_patterns()) out.emplace_back(p->name());
  return out;
}

int parse_int(const json& v, const std::string& field, int min, int max) {
  if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > max)
    fail(field, fmt::format("expected an integer from {} to {}, got {}", min, max, show(v)));
  return v.get<int>();
}

std::uint64_t parse_size(const json& v, const std::string& field) {
  if (v.is_string()) return parse_bytes(v.get<std::string>(), field);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() >= 1) return v.get<std::uint64_t>();
  fail(field, fmt::format("expected a byte count (an integer >= 1 or a string such as \"64KiB\"), got {}", show(v)));
}

std::vector<std::uint64_t> parse_sizes(const json& v) {
  const std::string field = "sizes";
  std::vector<std::uint64_t> out;
  if (v.is_string() || v.is_number()) {
    out.push_back(parse_size(v, field));
  } else if (v.is_array()) {
    if (v.empty()) fail(field, "the list is empty; give at least one size");
    if (v.size() > kMaxSizes) fail(field, fmt::format("{} sizes; at most {} are accepted", v.size(), kMaxSizes));
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(parse_size(v[i], fmt::format("sizes[{}]", i)));
  } else if (v.is_object()) {
    for (const auto& [k, _] : v.items())
      if (k != "from" && k != "to" && k != "factor" && k != "step")
        fail(fmt::format("sizes.{}", k), "unknown key; accepted: from, to, and one of factor or step");
    if (!v.contains("from") || !v.contains("to")) fail(field, "a range needs 'from' and 'to'");
    const std::uint64_t from = parse_size(v["from"], "sizes.from"), to = parse_size(v["to"], "sizes.to");
    if (from > to)
      fail(field, fmt::format("empty range: from {} is above to {}", format_bytes(from), format_bytes(to)));
    if (v.contains("factor") == v.contains("step")) fail(field, "a range needs exactly one of 'factor' or 'step'");
    if (v.contains("factor")) {
      const json& f = v["factor"];
      if (!f.is_number() || !(f.get<double>() > 1.0))
        fail("sizes.factor", fmt::format("expected a number above 1, got {}", show(f)));
      const double factor = f.get<double>();
      for (std::uint64_t s = from; s <= to;) {
        out.push_back(s);
        if (out.size() > kMaxSizes) fail(field, fmt::format("the range has more than {} sizes", kMaxSizes));
        const double grown = std::round(static_cast<double>(s) * factor);
        if (grown > static_cast<double>(to)) break;  // also keeps the next size inside 64 bits
        const auto next = static_cast<std::uint64_t>(grown);
        if (next <= s) fail("sizes.factor", fmt::format("{} does not grow {} bytes by a whole byte", factor, s));
        s = next;
      }
    } else {
      const std::uint64_t step = parse_size(v["step"], "sizes.step");
      for (std::uint64_t s = from;; s += step) {
        out.push_back(s);
        if (out.size() > kMaxSizes) fail(field, fmt::format("the range has more than {} sizes", kMaxSizes));
        if (to - s < step) break;  // the next size would pass `to` (or wrap past 2^64)
      }
    }
  } else {
    fail(field, fmt::format("expected a size, a list of sizes or a range {{\"from\", \"to\", \"factor\"}}, got {}", show(v)));
  }
  return out;
}

std::vector<std::string> parse_names(const json& v, const std::string& field, const std::vector<std::string>& accepted) {
  std::vector<std::string> out;
  auto add = [&](const json& item, const std::string& where) {
    if (!item.is_string()) fail(where, fmt::format("expected a string, got {}", show(item)));
    const std::string s = item.get<std::string>();
    if (s == "all") {
      for (const auto& a : accepted)
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
      return;
    }
    if (std::find(accepted.begin(), accepted.end(), s) == accepted.end())
      fail(where, fmt::format("unknown value '{}'{}; accepted: {} (or \"all\")", s, did_you_mean(s, accepted),
                              fmt::join(accepted, ", ")));
    if (std::find(out.begin(), out.end(), s) != out.end()) fail(where, fmt::format("'{}' is listed twice", s));
    out.push_back(s);
  };
  if (v.is_string()) {
    add(v, field);
  } else if (v.is_array() && !v.empty()) {
    for (std::size_t i = 0; i < v.size(); ++i) add(v[i], fmt::format("{}[{}]", field, i));
  } else {
    fail(field, fmt::format("expected a non-empty list of names from {}, got {}", fmt::join(accepted, ", "), show(v)));
  }
  return out;
}

}  // namespace dmabench::config_parse
