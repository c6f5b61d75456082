// --csv / --md and the closing average busbw line (bench/output/export.hpp): cells as export_csv.py writes them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/output/export.hpp"

using namespace dmabench;
using nlohmann::json;

TEST(Export, FloatsAsPythonsRepr) {
  EXPECT_EQ(table_export::python_float(1.0), "1.0");
  EXPECT_EQ(table_export::python_float(0.1), "0.1");
  EXPECT_EQ(table_export::python_float(12.5), "12.5");
  EXPECT_EQ(table_export::python_float(1e-05), "1e-05");
  EXPECT_EQ(table_export::python_float(0.0001), "0.0001");
  EXPECT_EQ(table_export::python_float(1e15), "1000000000000000.0");
  EXPECT_EQ(table_export::python_float(1e16), "1e+16");
  EXPECT_EQ(table_export::python_float(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(table_export::python_float(-2.5), "-2.5");
}

TEST(Export, CellsAsExportCsv) {
  const json r = {{"name", "copy/host/dev=0,1/4KiB/beside=gemm-x"}, {"status", "ok"}, {"in_place", false},
                  {"options", {{"lanes", 2}, {"mode", "a"}}}, {"devices", {0, 1}}, {"bytes", 4096},
                  {"latency_us", {{"p50", 3.0}}}, {"reason", nullptr}, {"layout", {{"kind", "contiguous"}}}};
  EXPECT_EQ(table_export::cell(r, "in_place"), "false");
  EXPECT_EQ(table_export::cell(r, "options"), "lanes=2,mode=a");
  EXPECT_EQ(table_export::cell(r, "devices"), "0 1");
  EXPECT_EQ(table_export::cell(r, "beside"), "gemm-x");
  EXPECT_EQ(table_export::cell(r, "bytes"), "4096");
  EXPECT_EQ(table_export::cell(r, "latency_us.p50"), "3.0");
  EXPECT_EQ(table_export::cell(r, "latency_us.p99"), "");
  EXPECT_EQ(table_export::cell(r, "reason"), "");
  EXPECT_EQ(table_export::cell(r, "layout"), R"({"kind":"contiguous"})");
}

TEST(Export, CsvQuotesAsPythonsCsvModule) {
  const std::string text = table_export::csv({{{"name", "a,b"}, {"status", "skipped"}, {"reason", "say \"no\"\nnow"}}});
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header.rfind("name,status,pattern,in_place,engine,options,", 0), 0u);
  EXPECT_EQ(header.substr(header.size() - 7), ",reason");
  // 34 columns: name, status, 31 empty cells, reason (what Python's csv.writer writes for this row)
  EXPECT_EQ(text.substr(header.size() + 1), "\"a,b\",skipped" + std::string(32, ',') + "\"say \"\"no\"\"\nnow\"\n");
}

TEST(Export, MarkdownLeavesOutEmptyColumnsAndEscapesPipes) {
  const std::string md = table_export::markdown({{{"name", "a|b"}, {"status", "ok"}, {"busbw_GBps", 2.0}}});
  EXPECT_EQ(md, "| name | status | busbw_GBps |\n| --- | --- | --- |\n| a\\|b | ok | 2.0 |\n");
}

TEST(Export, AverageBusbwOverOkCasesWithAFigure) {
  const std::vector<json> records = {{{"status", "ok"}, {"busbw_GBps", 10.0}},
                                     {{"status", "ok"}, {"busbw_GBps", 20.0}},
                                     {{"status", "ok"}, {"busbw_GBps", nullptr}},
                                     {{"status", "skipped"}, {"busbw_GBps", nullptr}},
                                     {{"status", "failed"}, {"busbw_GBps", 99.0}}};
  EXPECT_EQ(table_export::avg_busbw_line(records),
            "# Avg bus bandwidth    : 15.000 GB/s (the mean over 2 ok cases with a busbw figure, of 5)\n");
  EXPECT_EQ(table_export::avg_busbw_line({records[3]}), "# Avg bus bandwidth    : n/a (no ok case has a busbw figure)\n");
  EXPECT_EQ(table_export::avg_busbw_line({}), "# Avg bus bandwidth    : n/a (no ok case has a busbw figure)\n");
}
