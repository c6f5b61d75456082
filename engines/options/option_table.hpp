#pragma once
// Helpers of the engines' option tables (engines/options/*.cpp). Each table sits next to its
// engine's typed parser: an option's accepted words are listed once, each with the typed value it
// stands for (Named), its default is written once (OptionSpec::default_value), and the parser reads
// the options the config layer has already filled in and validated against the table. A parser
// that finds an option missing or outside its table has met an internal error: it throws
// std::logic_error, it never falls back to a default of its own.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engines/options/option.hpp"

namespace dmabench {

// One accepted word of an option and the value it stands for.
template <class T>
struct Named {
  const char* name;
  T value;
};

// The words of a list of Named values, as OptionSpec::choices.
template <class T, std::size_t N>
std::vector<nlohmann::json> names_of(const Named<T> (&named)[N]) {
  std::vector<nlohmann::json> out;
  for (const auto& n : named) out.emplace_back(n.name);
  return out;
}

[[noreturn]] inline void bad_option(std::string_view engine, std::string_view key, std::string_view problem) {
  throw std::logic_error(fmt::format("internal error: engine {} option '{}' {} (the config layer fills in and validates "
                                     "every option against the engine's table)",
                                     engine, key, problem));
}

// The value of option `key`; throws std::logic_error when it is missing.
inline const nlohmann::json& option_value(const Options& options, std::string_view engine, std::string_view key) {
  const auto it = options.find(std::string(key));
  if (it == options.end()) bad_option(engine, key, "is missing");
  return *it;
}

// The value a word option stands for.
template <class T, std::size_t N>
T option_named(const Options& options, std::string_view engine, std::string_view key, const Named<T> (&named)[N]) {
  const nlohmann::json& v = option_value(options, engine, key);
  if (v.is_string())
    for (const auto& n : named)
      if (v.get_ref<const std::string&>() == n.name) return n.value;
  bad_option(engine, key, fmt::format("is {}, not one of its words", v.dump()));
}

// A boolean option.
inline bool option_flag(const Options& options, std::string_view engine, std::string_view key) {
  const nlohmann::json& v = option_value(options, engine, key);
  if (!v.is_boolean()) bad_option(engine, key, fmt::format("is {}, not true or false", v.dump()));
  return v.get<bool>();
}

// An option that is the word `word` (returned as 0) or a positive integer.
inline int option_count(const Options& options, std::string_view engine, std::string_view key, std::string_view word) {
  const nlohmann::json& v = option_value(options, engine, key);
  if (v.is_string() && v.get<std::string>() == word) return 0;
  if (!v.is_number_integer() || v.get<long long>() < 1)
    bad_option(engine, key, fmt::format("is {}, neither \"{}\" nor a positive integer", v.dump(), word));
  return v.get<int>();
}

}  // namespace dmabench
