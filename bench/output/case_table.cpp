#include "bench/output/case_table.hpp"

#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/quote.hpp"

namespace dmabench::table {

namespace {

constexpr std::size_t kReasonWidth = 80;      // a reason's characters where the console is no terminal
constexpr std::size_t kLeastReasonWidth = 20;  // on a narrow terminal the line wraps rather than say less

// The decimals that keep 3 significant digits of |v| (> 0).
int decimals_for(double a) { return std::max(0, 2 - static_cast<int>(std::floor(std::log10(a)))); }

// Without trailing zeros after a decimal point ("1.50" -> "1.5", "2.00" -> "2").
std::string trimmed(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string cell(const std::string& text, std::size_t width, bool right) {
  return right ? fmt::format("{:>{}}", text, width) : fmt::format("{:<{}}", text, width);
}

}  // namespace

std::string sig3(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::abs(v);
  int decimals = decimals_for(a);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  // rounding may carry into a new digit (9.996 -> "10.00"): one decimal fewer keeps 3 significant digits
  if (decimals > 0 && decimals_for(std::abs(std::stod(s))) < decimals) s = fmt::format("{:.{}f}", v, --decimals);
  return s;
}

std::string format_time_us(double us) {
  if (!std::isfinite(us) || us < 0) return "-";
  if (us == 0) return "0 us";
  static constexpr std::array<std::string_view, 4> kUnits = {"ns", "us", "ms", "s"};
  std::size_t unit = us < 1 ? 0 : us < 1e3 ? 1 : us < 1e6 ? 2 : 3;
  double v = us * std::pow(1e3, 1.0 - static_cast<double>(unit));
  std::string s = sig3(v);
  if (unit + 1 < kUnits.size() && std::stod(s) >= 1000) s = sig3(v /= 1e3), ++unit;  // 999.7 us is "1.00 ms"
  return fmt::format("{} {}", s, kUnits[unit]);
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::string_view, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  double scale = 1;
  while (unit + 1 < kUnits.size() && static_cast<double>(bytes) >= scale * 1024) scale *= 1024, ++unit;
  if (bytes % static_cast<std::uint64_t>(scale) == 0)
    return fmt::format("{} {}", bytes / static_cast<std::uint64_t>(scale), kUnits[unit]);
  return fmt::format("{} {}", trimmed(sig3(static_cast<double>(bytes) / scale)), kUnits[unit]);
}

std::string format_noise(double fraction) {
  if (!std::isfinite(fraction)) return "inf%";
  const double pct = fraction * 100;
  return pct < 9.95 ? fmt::format("{:.1f}%", pct) : fmt::format("{:.0f}%", pct);
}

std::string one_line(const std::string& text, std::size_t width) {
  const std::string out = printable(text);  // core/quote: control characters (C0, C1), separators, stray bytes
  if (out.size() <= width) return out;
  std::size_t keep = width > 3 ? width - 3 : 0;
  while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) --keep;  // not inside a UTF-8 character
  return out.substr(0, keep) + "...";
}

CaseTable::CaseTable(int verbosity, Widths widths, std::size_t columns)
    : verbosity_(verbosity), w_(widths), columns_(columns) {}

std::string CaseTable::header() const {
  CaseRow h;
  h.pattern = "pattern", h.variant = "variant", h.timing = "timing", h.devices = "devices", h.status = "status";
  std::string line = cells(h);
  // the figures' headers in the places of the figures (cells() leaves them blank for a row without them)
  const std::size_t figures = 9 + 2 + w_.pattern + 2 + w_.variant + 2 + w_.timing + 2 + w_.devices + 2;
  line.replace(0, 9, cell("size/rank", 9, true));  // bytes per rank, not nccl-tests' all-gather total
  line.replace(figures, 9 + 4 + 6 + 2 + 8 + 2 + 10 + 2 + 10,
               fmt::format("{:>9} +- {:>6}  {:>8}  {:>10}  {:>10}", "p50", "95%", "samples", "algbw GB/s", "busbw GB/s"));
  return fmt::format("{}\n", line.substr(0, line.find_last_not_of(' ') + 1));
}

// The row's cells, each padded to its column's width, up to and including the status (no newline).
std::string CaseTable::cells(const CaseRow& r) const {
  const bool timed = r.p50_us.has_value();
  const std::string p50 = timed ? format_time_us(*r.p50_us) : "";
  const std::string noise = timed && r.noise ? format_noise(*r.noise) : "";
  const auto gbps = [](const std::optional<double>& v) { return v ? sig3(*v) : std::string(); };
  // the cells that come from case names are escaped as the reason is: no control character reaches the console
  const auto text = [](const std::string& s, std::size_t width) { return cell(one_line(s, std::string::npos), width, false); };
  return fmt::format("{}  {}  {}  {}  {}  {:>9} {} {:>6}  {:>8}  {:>10}  {:>10}  {:<7}",
                     cell(format_size(r.bytes), 9, true),
                     text(r.pattern, w_.pattern), text(r.variant, w_.variant),
                     text(r.timing, w_.timing), text(r.devices, w_.devices), p50,
                     noise.empty() ? "  " : "+-", noise, timed ? fmt::format("{}", r.samples) : "", gbps(r.algbw_GBps),
                     gbps(r.busbw_GBps), r.status);
}

std::string CaseTable::row(const CaseRow& r) {
  if (verbosity_ <= 0 && r.status != "FAILED") return "";
  std::string text;
  if (!header_shown_) {
    header_shown_ = true;
    text = header();
  }
  std::string line = cells(r);
  const bool detail = r.status == "skipped" || r.status == "FAILED" || verbosity_ >= 2;
  if (detail && !r.reason.empty()) {
    const std::size_t width = columns_ == 0                                     ? kReasonWidth
                              : columns_ > line.size() + 2 + kLeastReasonWidth ? columns_ - 1 - line.size() - 2
                                                                               : kLeastReasonWidth;
    line += "  " + one_line(r.reason, width);
  }
  return text + line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
}

}  // namespace dmabench::table
