#pragma once
// --csv FILE and --md FILE: the run's records as a table, one row per case (docs/user-guide.md, "CSV and markdown"),
// and nccl-tests' closing "# Avg bus bandwidth" line. The CSV has the columns, cells and quoting of
// `dmabench-results export-csv` (python/dmabench/export_csv.py, COLUMNS): the two give the same text for one results
// file. The markdown table has the same columns less those empty in every row.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::table_export {

// export_csv.py's default columns, in its order.
const std::vector<std::string>& columns();

// A cell of a record (results/SCHEMA.md) as export_csv.py writes it: empty where absent or null, true/false,
// integers as they are, floats in their shortest exact form as Python's repr (1.0, 1e-05, 1e+16), strings as they
// are, objects and lists as compact JSON; `options` as option=value pairs joined by ',', `devices` space-separated,
// `beside` the workload after "/beside=" in the name.
std::string cell(const nlohmann::json& record, const std::string& column);
// A double as Python's repr writes it.
std::string python_float(double v);

// The CSV text: a header row, then a row per record ("\n" line ends; a cell with ',', '"', '\r' or '\n' quoted).
std::string csv(const std::vector<nlohmann::json>& records);
// The markdown table ('|' in a cell as "\|", line breaks as spaces); columns empty in every row left out.
std::string markdown(const std::vector<nlohmann::json>& records);
// Writes csv() / markdown() to `path` atomically; throws std::runtime_error naming the path.
void write_csv(const std::string& path, const std::vector<nlohmann::json>& records);
void write_markdown(const std::string& path, const std::vector<nlohmann::json>& records);

// nccl-tests' closing line over the ok records that have a positive busbw_GBps:
// "# Avg bus bandwidth    : 12.345 GB/s (N ok cases with a busbw figure of M cases)\n"; where none has one:
// "# Avg bus bandwidth    : n/a (no ok case has a busbw figure)\n".
std::string avg_busbw_line(const std::vector<nlohmann::json>& records);

}  // namespace dmabench::table_export
