// bench/output/case_table.hpp: the console table's units, its one-line reasons and its rows at each verbosity.
#include <gtest/gtest.h>

#include <string>

#include "bench/output/case_table.hpp"

using namespace dmabench::table;

TEST(CaseTable, ThreeSignificantDigitsWithoutExponent) {
  EXPECT_EQ(sig3(0), "0");
  EXPECT_EQ(sig3(1.5), "1.50");
  EXPECT_EQ(sig3(12.34), "12.3");
  EXPECT_EQ(sig3(123.4), "123");
  EXPECT_EQ(sig3(1234.6), "1235");  // no exponent: more digits rather than 1.23e+03
  EXPECT_EQ(sig3(0.01234), "0.0123");
  EXPECT_EQ(sig3(9.996), "10.0");   // the rounding's carry does not add a digit
  EXPECT_EQ(sig3(99.96), "100");
}

TEST(CaseTable, TimesInNanoMicroMilliOrSeconds) {
  EXPECT_EQ(format_time_us(0.512), "512 ns");
  EXPECT_EQ(format_time_us(0.0015), "1.50 ns");
  EXPECT_EQ(format_time_us(1), "1.00 us");
  EXPECT_EQ(format_time_us(12.34), "12.3 us");
  EXPECT_EQ(format_time_us(1812.49), "1.81 ms");  // Google Benchmark printed 1.81249k
  EXPECT_EQ(format_time_us(999.7), "1.00 ms");    // not "1000 us"
  EXPECT_EQ(format_time_us(0.99996), "1.00 us");
  EXPECT_EQ(format_time_us(2.5e6), "2.50 s");
  EXPECT_EQ(format_time_us(7200e6), "7200 s");  // seconds is the last unit
  EXPECT_EQ(format_time_us(0), "0 us");
  EXPECT_EQ(format_time_us(-1), "-");
}

TEST(CaseTable, SizesInBinaryUnits) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(1u << 20), "1 MiB");
  EXPECT_EQ(format_size(3u << 19), "1.5 MiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
  EXPECT_EQ(format_size(5ull << 40), "5 TiB");
  EXPECT_EQ(format_size((1ull << 20) + 1), "1 MiB");  // 3 significant digits: not exact, rounded
}

TEST(CaseTable, NoiseAndBandwidth) {
  EXPECT_EQ(format_noise(0.0123), "1.2%");
  EXPECT_EQ(format_noise(0.15), "15%");
  EXPECT_EQ(format_noise(1.0 / 0.0), "inf%");
  EXPECT_EQ(sig3(23.456), "23.5");  // GB/s
  EXPECT_EQ(sig3(0.000123), "0.000123");
}

TEST(CaseTable, ReasonsAreOneLineCut) {
  EXPECT_EQ(one_line("a\nb\tc\rd\x01", 80), "a\\nb\\tc\\rd\\x01");
  EXPECT_EQ(one_line(std::string(100, 'x'), 10), "xxxxxxx...");
  EXPECT_EQ(one_line("short", 5), "short");
  EXPECT_EQ(one_line("\xc2\xb5\xc2\xb5\xc2\xb5", 5), "\xc2\xb5...");  // never inside a UTF-8 character
}

namespace {
CaseRow ok_row() {
  CaseRow r;
  r.bytes = 65536, r.pattern = "copy", r.variant = "host", r.timing = "oneshot", r.devices = "0,1", r.status = "ok";
  r.p50_us = 12.34, r.noise = 0.012, r.algbw_GBps = 5.311, r.busbw_GBps = 5.311, r.samples = 100;
  return r;
}
}  // namespace

TEST(CaseTable, HeaderThenOneRowPerCase) {
  Widths w;
  w.timing = 7;  // "oneshot"
  CaseTable t(1, w);
  EXPECT_EQ(t.row(ok_row()),
            "size/rank  pattern  variant  timing   devices        p50 +-    95%   samples  algbw GB/s  busbw GB/s  status\n"
            "   64 KiB  copy     host     oneshot  0,1        12.3 us +-   1.2%       100        5.31        5.31  ok\n");
  CaseRow skipped;
  skipped.bytes = 4096, skipped.pattern = "copy", skipped.variant = "ce", skipped.timing = "oneshot";
  skipped.devices = "0,1", skipped.status = "skipped", skipped.reason = "engine ce runs on the cuda backend\nsecond line";
  EXPECT_EQ(t.row(skipped),
            "    4 KiB  copy     ce       oneshot  0,1" + std::string(4 + 2 + 53 + 2, ' ') +
                "skipped  engine ce runs on the cuda backend\\nsecond line\n");
}

TEST(CaseTable, QuietShowsFailuresAloneVerboseTheDetail) {
  CaseTable quiet(0, Widths{});
  EXPECT_EQ(quiet.row(ok_row()), "");
  CaseRow failed = ok_row();
  failed.status = "FAILED";
  failed.reason = "validation: 3 bytes differ";
  const std::string text = quiet.row(failed);
  EXPECT_EQ(text.substr(0, 9), "size/rank");  // the header before the first row shown
  EXPECT_TRUE(text.ends_with("FAILED   validation: 3 bytes differ\n")) << text;
  CaseRow ok = ok_row();
  ok.reason = "stopped: noise, setup 1.20 ms";
  EXPECT_TRUE(CaseTable(1, Widths{}).row(ok).ends_with("  ok\n"));  // the detail at -v only
  EXPECT_TRUE(CaseTable(2, Widths{}).row(ok).ends_with("  ok       stopped: noise, setup 1.20 ms\n"));
}

TEST(CaseTable, ReasonsCutToTheTerminalOr80) {
  CaseRow skipped = ok_row();
  skipped.status = "skipped";
  skipped.p50_us.reset();
  skipped.reason = std::string(200, 'r');
  std::string log = CaseTable(1, Widths{}).row(skipped);
  log = log.substr(log.find('\n') + 1);
  EXPECT_TRUE(log.ends_with(std::string(77, 'r') + "...\n")) << log;
  std::string term = CaseTable(1, Widths{}, 150).row(skipped);
  term = term.substr(term.find('\n') + 1);
  EXPECT_EQ(term.size(), 150u) << term;  // 149 characters and the newline: it never wraps
}
