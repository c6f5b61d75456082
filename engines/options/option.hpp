#pragma once
// The vocabulary of engine options: an engine's options as a config gives them (Options) and one option
// with the values it accepts (OptionSpec). Each engine's table and typed parser is engines/options/<engine>.cpp;
// the registry (engines/registry.hpp) assembles the tables. Nothing here knows an engine.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"

namespace dmabench {

using Options = nlohmann::json;  // an object: option name -> value (recorded as-is in results)

// One engine option, with the values a config may give it.
struct OptionSpec {
  std::string name;
  std::string help;
  nlohmann::json default_value;
  std::vector<nlohmann::json> choices;  // accepted literal values
  bool positive_integer = false;        // any integer from 1 to max_integer is accepted too
  long long max_integer = 1 << 30;
  std::string prefix = {};              // non-empty: any string starting with it (and more) is accepted too
  std::string prefix_help = {};         // how accepted() shows such values, e.g. "map:FILE"
  // Deeper check of an accepted value (e.g. that a file named by it parses): the problem, or nullopt.
  std::function<WhyNot(const nlohmann::json&)> check = {};
  std::string prefix_form() const;       // how prefixed values are shown: prefix_help, or the prefix and "..."
  std::string accepted() const;         // human-readable list, for error messages
  bool accepts(const nlohmann::json& value) const;
};

}  // namespace dmabench
