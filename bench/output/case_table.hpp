#pragma once
// dmabench's console table (the default --benchmark_format=console): a header, then one row per case with its
// size, pattern, engine variant, timing, devices, the p50 with its 95% interval, the samples, algbw, busbw, the
// status (ok, noisy, skipped, FAILED) and, for a skipped or failed case, the reason on the same line (newlines
// escaped, cut to the terminal's width or 80 characters). Units are readable and ASCII ("us", not the micro
// sign: the table is read in logs and CI consoles of any encoding). Google Benchmark stays the sampler; this is
// only what the console shows (docs/user-guide.md, "The console").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dmabench::table {

// 3 significant digits, no exponent: 0.0123 -> "0.0123", 1.5 -> "1.50", 12.34 -> "12.3", 1234.5 -> "1235".
std::string sig3(double v);
// A time given in microseconds, with the unit that keeps it in [1, 1000): "512 ns", "12.3 us", "1.50 ms", "2.00 s".
std::string format_time_us(double us);
// A byte count with a binary unit, the number below 1024: "512 B", "4 KiB", "1.5 MiB", "1 GiB".
std::string format_size(std::uint64_t bytes);
// The interval's half-width over the p50 (a fraction) as a percentage: "1.2%", "15%", "inf%".
std::string format_noise(double fraction);
// One line of at most `width` characters: newlines, tabs and other control characters escaped ("\n"), and
// a longer text cut with "..." at its end.
std::string one_line(const std::string& text, std::size_t width);

// What one row shows: the table's view of a case's record.
struct CaseRow {
  std::uint64_t bytes = 0;  // per rank, as the case name says
  std::string pattern;      // with "-inplace" for an in-place case
  std::string variant;      // the engine and its options not at their default, as the case name spells them
  std::string timing;
  std::string devices;      // "0,1"
  std::string status;       // "ok", "noisy", "skipped" or "FAILED"
  std::optional<double> p50_us, noise;  // timed cases: the p50 and its interval's half-width over it
  std::optional<double> algbw_GBps, busbw_GBps;
  std::size_t samples = 0;
  std::string reason;  // skipped or failed: why; ok at -v: how the sampling stopped and the setup time
};

// The widths of the columns whose values vary from sweep to sweep (the longest of the sweep's cases).
struct Widths {
  std::size_t pattern = 7, variant = 7, timing = 6, devices = 7;
};

class CaseTable {
 public:
  // verbosity: 0 (-q) shows FAILED rows alone, 1 every row, 2 also the ok rows' detail. columns > 0: the terminal's
  // width, which cuts the reason so that the line never wraps; 0 (a log, a pipe): the reason is cut at 80.
  CaseTable(int verbosity, Widths widths, std::size_t columns = 0);
  std::string header() const;
  // The text to print for the case: its row, after the header when it is the first row shown; "" when the
  // verbosity hides it.
  std::string row(const CaseRow& r);

 private:
  std::string cells(const CaseRow& r) const;
  int verbosity_;
  Widths w_;
  std::size_t columns_;
  bool header_shown_ = false;
};

}  // namespace dmabench::table
