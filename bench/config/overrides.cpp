// Command-line overrides of the config document (bench/cli.hpp's sweep and sampling flags, --set, --axis): set in the
// JSON document before parse_config checks it, and the parser's errors on those keys named by their flags.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config.hpp"
#include "bench/config/config_parse.hpp"
#include "core/errors.hpp"

namespace dmabench {
using namespace config_parse;
namespace {

// The run-wide keys a sweep may not set (config.cpp's parse_config).
bool run_wide(const std::string& top) {
  return top == "name" || top == "description" || top == "power" || top == "sweeps" || top == "backend";
}

std::vector<std::string> segments(const std::string& key) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    out.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

void set_key(json& doc, const ConfigOverride& o) {
  const std::vector<std::string> path = segments(o.key);
  json* at = &doc;
  std::string where;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    where += (where.empty() ? "" : ".") + path[i];
    if (!at->contains(path[i])) (*at)[path[i]] = json::object();
    at = &(*at)[path[i]];
    if (!at->is_object())
      throw InputError(fmt::format("{}: the config's {} is {}, not an object with keys; set {} whole", o.flag, where,
                                   show(*at), where));
  }
  (*at)[path.back()] = o.value;
}

// Whether config field `field` (as an error names it: "sizes.from", "sizes[2]", "alltoallv") is `key` or lies
// inside or around it.
bool overlaps(const std::string& key, const std::string& field) {
  const auto inside = [](const std::string& a, const std::string& b) {  // a is b or inside b
    return a.rfind(b, 0) == 0 && (a.size() == b.size() || a[b.size()] == '.' || a[b.size()] == '[');
  };
  return inside(field, key) || inside(key, field);
}

}  // namespace

json flags_document() { return {{"name", "flags"}, {"timing", "oneshot"}}; }

void apply_overrides(json& doc, const std::vector<ConfigOverride>& overrides) {
  if (!doc.is_object()) throw InputError("config: the document must be a JSON object");
  for (const auto& o : overrides) {
    set_key(doc, o);
    const std::string top = segments(o.key).front();
    if (run_wide(top) || !doc.contains("sweeps") || !doc["sweeps"].is_array()) continue;
    for (auto& sweep : doc["sweeps"])  // a sweep that sets the key itself would otherwise win over the flag
      if (sweep.is_object() && sweep.contains(top)) set_key(sweep, o);
  }
}

Config parse_config(json doc, const std::vector<ConfigOverride>& overrides, const std::string& base_dir) {
  apply_overrides(doc, overrides);
  try {
    return parse_config(doc, base_dir);
  } catch (const InputError& e) {
    // "config: FIELD: WHAT" or "FIELD: WHAT" (a byte count's, core/units.hpp; FIELD may list two: "iterations,
    // min_samples"): the flags that set FIELD name it
    const std::string m = e.what(), head = m.rfind("config: ", 0) == 0 ? "config: " : "";
    for (const auto& o : overrides)  // a key the config does not have
      if (m.find(fmt::format("key '{}' is unknown", segments(o.key).front())) != std::string::npos)
        throw InputError(fmt::format("{}: {}", o.flag, m));
    const std::size_t colon = m.find(": ", head.size());
    if (colon == std::string::npos) throw;
    const std::string fields = m.substr(head.size(), colon - head.size());
    std::vector<std::string> flags;
    for (std::size_t start = 0; start <= fields.size();) {
      const std::size_t comma = fields.find(", ", start);
      const std::string field = fields.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      for (const auto& o : overrides)
        if (overlaps(o.key, field) && std::find(flags.begin(), flags.end(), o.flag) == flags.end()) flags.push_back(o.flag);
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    if (flags.empty()) throw;
    throw InputError(fmt::format("{} (the config's {}): {}", fmt::join(flags, " and "), fields, m.substr(colon + 2)));
  }
}

}  // namespace dmabench
