#include "bench/run/gbench_flags.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/suggest.hpp"
#include "core/units.hpp"

namespace dmabench::gbench {

namespace {

enum class Value { boolean, count, seconds, choice, text, pairs };

struct FlagSpec {
  Flag flag;
  const char* name;
  Value value;
  std::vector<std::string> choices;  // Value::choice
  bool library = true;               // given to Google Benchmark; false: dmabench implements it around the library
  const char* refused = nullptr;     // set: the flag (or a true boolean) is refused, with this reason
};

constexpr const char* kAggregates = "not supported; dmabench records every case from its runs (the results file has the statistics)";

// Google Benchmark's flags (1.7: benchmark.cc) and what dmabench accepts of each: the one list of them.
const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
      {Flag::filter, "--benchmark_filter", Value::text, {}, false},
      {Flag::repetitions, "--benchmark_repetitions", Value::count, {}},
      {Flag::min_time, "--benchmark_min_time", Value::seconds, {}},
      {Flag::min_warmup_time, "--benchmark_min_warmup_time", Value::seconds, {}},
      {Flag::format, "--benchmark_format", Value::choice, {"console", "json"}},
      {Flag::out, "--benchmark_out", Value::text, {}, false},
      {Flag::out_format, "--benchmark_out_format", Value::choice, {"console", "json", "csv"}, false},
      {Flag::color, "--benchmark_color", Value::choice, {"auto", "true", "false", "yes", "no"}},
      {Flag::counters_tabular, "--benchmark_counters_tabular", Value::boolean, {}},
      {Flag::context, "--benchmark_context", Value::pairs, {}},
      {Flag::enable_random_interleaving, "--benchmark_enable_random_interleaving", Value::boolean, {}, true,
       "not supported; dmabench keeps one case's buffers alive at a time"},
      {Flag::list_tests, "--benchmark_list_tests", Value::boolean, {}},
      {Flag::report_aggregates_only, "--benchmark_report_aggregates_only", Value::boolean, {}, true, kAggregates},
      {Flag::display_aggregates_only, "--benchmark_display_aggregates_only", Value::boolean, {}, true, kAggregates},
      {Flag::perf_counters, "--benchmark_perf_counters", Value::text, {}, true,
       "not supported; dmabench's times are manual times of the copies"},
      {Flag::time_unit, "--benchmark_time_unit", Value::text, {}, true,
       "not supported; dmabench reports microseconds (latency_us)"},
  };
  return specs;
}

const FlagSpec& spec_of(Flag f) {
  const auto& specs = flag_specs();
  return *std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return s.flag == f; });
}

// A flag's name in an argument: "--benchmark_out" of "--benchmark_out=x.json".
std::string name_of(const std::string& arg) { return arg.substr(0, arg.find('=')); }

// The spec of the flag `arg` names, or nullptr when Google Benchmark has no such flag.
const FlagSpec* spec_named(const std::string& arg) {
  const std::string name = name_of(arg);
  const auto& specs = flag_specs();
  const auto f = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return name == s.name; });
  return f == specs.end() ? nullptr : &*f;
}

}  // namespace

std::optional<std::regex> compiled_filter(const std::string& filter, bool& negate) {
  negate = false;
  if (filter.empty() || filter == "all" || filter == ".") return std::nullopt;
  negate = filter[0] == '-';
  try {
    return std::regex(negate ? filter.substr(1) : filter, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--benchmark_filter: '{}' is not a valid regular expression: {}", filter, e.what()));
  }
}

double decimal(const std::string& v) {
  const Maybe<double> n = decimal_number(v);
  return n ? *n : -1;
}

long long count_value(const std::string& v) {
  const Maybe<std::uint64_t> n = whole_number(v);
  return n && *n <= 999999 ? static_cast<long long>(*n) : 0;
}

namespace {

// Whether `v` is accepted for the flag; `accepted` says what is.
bool value_ok(const FlagSpec& f, const std::string& v, std::string& accepted) {
  switch (f.value) {
    case Value::boolean:
      accepted = "true, false, yes, no, 1, 0";
      return v == "true" || v == "false" || v == "yes" || v == "no" || v == "1" || v == "0";
    case Value::count:
      accepted = "an integer from 1 to 999999";
      return count_value(v) >= 1;
    case Value::seconds: {
      // --benchmark_min_time: Google Benchmark then runs up to 10^9 iterations, and dmabench keeps every sample
      const bool min_time = f.flag == Flag::min_time;
      accepted = min_time ? "a decimal number of seconds above 0, at most 60" : "a decimal number of seconds from 0 to 86400";
      return decimal(v) >= 0 && decimal(v) <= (min_time ? 60 : 86400) && (decimal(v) > 0 || !min_time);
    }
    case Value::choice:
      accepted = fmt::format("{}", fmt::join(f.choices, ", "));
      return std::find(f.choices.begin(), f.choices.end(), v) != f.choices.end();
    case Value::pairs:
      accepted = "key=value pairs separated by commas";
      for (std::size_t at = 0; at <= v.size();) {
        const std::size_t end = std::min(v.find(',', at), v.size());
        const std::string pair = v.substr(at, end - at);
        const std::size_t eq = pair.find('=');
        if (eq == 0 || eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) return false;
        at = end + 1;
      }
      return true;
    case Value::text:
      accepted = "a non-empty value";
      return !v.empty();
  }
  return false;
}

// The spec of the flag `arg` names, its value checked (InputError when Google Benchmark does not know it, its value is
// not accepted, or dmabench refuses it).
const FlagSpec& checked_spec(const std::string& arg) {
  const std::string name = name_of(arg);
  const FlagSpec* f = spec_named(arg);
  if (!f) {
    std::vector<std::string> names;
    for (const auto& s : flag_specs())
      if (!s.refused) names.emplace_back(s.name);
    throw InputError(fmt::format("unknown Google Benchmark flag '{}'{}; accepted: {}", name, did_you_mean(name, names),
                                 fmt::join(names, ", ")));
  }
  const bool has_value = arg.size() > name.size();
  if (!has_value && f->value != Value::boolean)
    throw InputError(fmt::format("{}: needs a value, as {}=VALUE (one argument)", name, name));
  const std::string v = has_value ? arg.substr(name.size() + 1) : "true";
  std::string accepted;
  if (!value_ok(*f, v, accepted)) throw InputError(fmt::format("{}: '{}' is not accepted; accepted: {}", name, v, accepted));
  const bool on = f->value != Value::boolean || v == "true" || v == "yes" || v == "1";
  if (f->refused && on) throw InputError(fmt::format("{}: {}", name, f->refused));
  return *f;
}

}  // namespace

const char* flag_name(Flag f) { return spec_of(f).name; }

Flags::Flags(std::initializer_list<std::string> args) {
  for (const auto& a : args) add(a);
}

Flags::Flags(const std::vector<std::string>& args) {
  for (const auto& a : args) add(a);
}

void Flags::add(const std::string& arg) {
  const FlagSpec& f = checked_spec(arg);
  if (has(f.flag)) throw InputError(fmt::format("{}: given twice; give it once", f.name));
  if (f.flag == Flag::filter) {  // a bad regex is refused before anything runs
    bool negate = false;
    compiled_filter(arg.substr(std::string(f.name).size() + 1), negate);
  }
  args_.push_back(arg);
}

const std::string* Flags::find(Flag f) const {
  const std::string name = flag_name(f);
  for (const auto& a : args_)
    if (name_of(a) == name) return &a;
  return nullptr;
}

bool Flags::has(Flag f) const { return find(f) != nullptr; }

std::string Flags::value(Flag f) const {
  const std::string* a = find(f);
  const std::size_t eq = a ? a->find('=') : std::string::npos;
  return eq == std::string::npos ? std::string() : a->substr(eq + 1);
}

bool Flags::on(Flag f) const {
  const std::string v = value(f);
  return has(f) && (v.empty() || v == "true" || v == "yes" || v == "1");
}

std::vector<std::string> Flags::library_args() const {
  std::vector<std::string> kept;
  for (const auto& a : args_)
    if (spec_named(a)->library) kept.push_back(a);  // every flag held was checked: its spec exists
  return kept;
}

void check_samples(const Flags& flags, int most_iterations) {
  constexpr long long kMaxSamples = 10000000;  // 80 MB of samples for one case
  const std::string reps = flags.value(Flag::repetitions);
  if (reps.empty() || flags.has(Flag::min_time)) return;
  if (const long long n = count_value(reps) * most_iterations; n > kMaxSamples)
    throw InputError(fmt::format("{}={}: {} repetitions of {} iterations are {} samples of a case, which dmabench keeps; "
                                 "accepted: at most {} samples per case (fewer repetitions or iterations)",
                                 flag_name(Flag::repetitions), reps, reps, most_iterations, n, kMaxSamples));
}

}  // namespace dmabench::gbench
