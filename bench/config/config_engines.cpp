// Config engines: each "engines" entry expanded into its variants (the product of its option lists).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"
#include "core/suggest.hpp"

namespace dmabench::config_parse {
namespace {

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& s : engine_specs()) out.push_back(s.name);
  return out;
}

}  // namespace

// Cartesian product of option axes -> variants, each with every option filled in.
std::vector<EngineVariant> parse_engine(const json& item, const std::string& field) {
  std::string name;
  json options = json::object();
  if (item.is_string()) {
    name = item.get<std::string>();
  } else if (item.is_object()) {
    for (const auto& [k, _] : item.items())
      if (k != "name" && k != "options") fail(fmt::format("{}.{}", field, k), "unknown key; accepted: name, options");
    if (!item.contains("name") || !item["name"].is_string()) fail(field, "an engine object needs a string 'name'");
    name = item["name"].get<std::string>();
    if (item.contains("options")) {
      options = item["options"];
      if (!options.is_object()) fail(field + ".options", fmt::format("expected an object, got {}", show(options)));
    }
  } else {
    fail(field, fmt::format("expected an engine name or {{\"name\": ..., \"options\": {{...}}}}, got {}", show(item)));
  }
  const EngineSpec* spec = find_engine_spec(name);
  if (!spec) fail(field, fmt::format("unknown engine '{}'{}; accepted: {}", name, did_you_mean(name, engine_names()),
                                      fmt::join(engine_names(), ", ")));

  std::vector<EngineVariant> variants = {EngineVariant{name, json::object()}};
  for (const auto& [key, value] : options.items()) {
    auto it = std::find_if(spec->options.begin(), spec->options.end(), [&](const OptionSpec& o) { return o.name == key; });
    if (it == spec->options.end()) {
      std::vector<std::string> known;
      for (const auto& o : spec->options) known.push_back(o.name);
      fail(fmt::format("{}.options.{}", field, key),
           fmt::format("engine '{}' has no option '{}'; its options: {}", name, key,
                       known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
    }
    const json values = value.is_array() ? value : json::array({value});
    if (values.empty()) fail(fmt::format("{}.options.{}", field, key), "the list is empty");
    std::vector<EngineVariant> next;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!it->accepts(values[i]))
        fail(fmt::format("{}.options.{}", field, key),
             fmt::format("{} is not accepted; accepted: {}", show(values[i]), it->accepted()));
      if (it->check)
        if (const WhyNot problem = it->check(values[i]))
          fail(fmt::format("{}.options.{}", field, key), *problem);
      for (auto v : variants) {
        v.options[key] = values[i];
        next.push_back(std::move(v));
      }
    }
    variants = std::move(next);
    if (variants.size() > kMaxVariants)
      fail(fmt::format("{}.options", field), fmt::format("the option lists make more than {} variants of engine '{}'",
                                                         kMaxVariants, name));
  }
  for (auto& v : variants) v.options = with_defaults(name, std::move(v.options));
  return variants;
}

std::vector<EngineVariant> parse_engines(const json& doc) {
  std::vector<EngineVariant> out;
  auto add = [&](const json& item, const std::string& field) {
    for (auto& v : parse_engine(item, field)) out.push_back(std::move(v));
  };
  if (!doc.contains("engines")) {
    for (const auto& spec : engine_specs()) add(spec.name, "engines");
    return out;
  }
  const json& e = doc["engines"];
  const json list = e.is_array() ? e : json::array({e});
  if (list.empty()) fail("engines", "the list is empty");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("engines[{}]", i);
    if (list[i].is_string() && list[i].get<std::string>() == "all") {
      for (const auto& spec : engine_specs()) add(spec.name, field);
    } else {
      add(list[i], field);
    }
  }
  return out;
}

}  // namespace dmabench::config_parse
