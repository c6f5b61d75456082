#pragma once
// Google Benchmark's flags as dmabench checks them: the flag table, Flags (the --benchmark_* flags of a run, each
// checked as it is added) and the helpers that read their values. Nothing here knows a case, an engine or a record,
// so parsing the command line (bench/cli) does not pull in the runner; gbench.hpp (the Session, Loops, Filter)
// includes this.
#include <initializer_list>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace dmabench::gbench {

// Google Benchmark's flags (those of 1.7, the version Debian 12 ships), each a row of one table (gbench_flags.cpp
// flag_specs(): its spelling, its value, whether dmabench refuses it, whether Google Benchmark is given it).
enum class Flag {
  filter, repetitions, min_time, min_warmup_time, format, out, out_format, color, counters_tabular, context,
  enable_random_interleaving, list_tests, report_aggregates_only, display_aggregates_only, perf_counters, time_unit
};
// Its spelling: "--benchmark_filter".
const char* flag_name(Flag f);

// The --benchmark_* flags of a run. Each is checked once, as it is added: add() refuses (InputError, one line) a
// flag Google Benchmark does not know, a value it would reject (it prints its usage and exits) or that makes no
// sense, a flag dmabench cannot honour, a flag given twice, and a filter that is not a regular expression. What a
// Flags holds has passed; it is read by Flag, never by name.
class Flags {
 public:
  Flags() = default;
  Flags(std::initializer_list<std::string> args);  // add() of each, in order
  explicit Flags(const std::vector<std::string>& args);
  void add(const std::string& arg);
  bool has(Flag f) const;
  // The value as given; "" when the flag is not given or is a boolean given bare.
  std::string value(Flag f) const;
  // A boolean flag given bare or as true, yes or 1.
  bool on(Flag f) const;
  const std::vector<std::string>& args() const { return args_; }
  // The flags Google Benchmark itself is given: all but those dmabench implements around it
  // (--benchmark_filter: dmabench selects the cases, Filter; --benchmark_out and --benchmark_out_format:
  // the Session writes that file, once for the whole sweep).
  std::vector<std::string> library_args() const;

 private:
  const std::string* find(Flag f) const;
  std::vector<std::string> args_;
};

// --benchmark_repetitions times the most iterations of a case: the samples dmabench keeps for one case,
// at most 10^7 (InputError).
void check_samples(const Flags& flags, int most_iterations);

// The readers of values Flags::add checks with, shared with what reads a held flag's value (Loops, Filter).

// A decimal number of seconds (digits, then optionally '.' and digits): no sign, hex, exponent, nan or inf; -1 for
// anything else (core/units.hpp reads it).
double decimal(const std::string& v);
// A count of digits alone: at most 999999; 0 for anything else.
long long count_value(const std::string& v);
// --benchmark_filter's expression, compiled: none for every case (empty, "all", "."); a leading '-' negates.
// InputError when it is not a valid regular expression.
std::optional<std::regex> compiled_filter(const std::string& filter, bool& negate);

}  // namespace dmabench::gbench
