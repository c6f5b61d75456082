#include "bench/output/export.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "core/json_file.hpp"

namespace dmabench::table_export {

using nlohmann::json;

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {
      "name", "status", "pattern", "in_place", "engine", "options", "timing", "pipeline_depth", "devices", "ranks",
      "bytes", "bytes_per_rank", "host_memory.kind", "host_memory.numa", "layout.kind", "rotate", "beside",
      "iterations", "latency_us.p50", "latency_us.p99", "latency_us.mean", "latency_us.min", "latency_us.max",
      "algbw_GBps", "busbw_GBps", "power.active_W", "power.energy_per_op_J", "power.energy_per_GB_J",
      "overlap.comm_with_us", "overlap.comm_slowdown_pct", "overlap.compute_slowdown_pct",
      "overlap.busbw_with_GBps", "overlap.overlap_efficiency", "reason"};
  return c;
}

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);  // the shortest exact digits; exponent below 1e-4 and from 1e16, as repr
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

// The value at a dotted path, or null where a step is missing.
const json* field(const json& record, const std::string& path) {
  const json* v = &record;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return v;
}

std::string text(const json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  if (v->is_number_float())  // not finite: null in the results file, so an empty cell as export_csv.py's
    return std::isfinite(v->get<double>()) ? python_float(v->get<double>()) : std::string();
  if (v->is_number()) return v->dump();
  if (v->is_string()) return v->get<std::string>();
  return v->dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string md_field(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '|' ? std::string("\\|") : c == '\n' || c == '\r' ? std::string(" ") : std::string(1, c);
  return out;
}

}  // namespace

std::string cell(const json& record, const std::string& column) {
  if (column == "options") {
    std::string out;
    if (const json* o = field(record, "options"); o && o->is_object())
      for (const auto& [k, v] : o->items()) {
        if (!out.empty()) out += ',';
        out += k + "=" + text(&v);
      }
    return out;
  }
  if (column == "devices") {
    std::string out;
    if (const json* d = field(record, "devices"); d && d->is_array())
      for (const json& v : *d) {  // appended piece by piece: GCC 12 -Wrestrict false positive on "x" + string&& (-Werror)
        if (!out.empty()) out += ' ';
        out += text(&v);
      }
    return out;
  }
  if (column == "beside") {
    const std::string name = record.value("name", "");
    const std::size_t at = name.find("/beside=");
    return at == std::string::npos ? "" : name.substr(at + 8);
  }
  return text(field(record, column));
}

std::string csv(const std::vector<json>& records) {
  std::string out;
  for (std::size_t i = 0; i < columns().size(); ++i) {
    if (i) out += ',';
    out += csv_field(columns()[i]);
  }
  out += "\n";
  for (const json& r : records) {
    for (std::size_t i = 0; i < columns().size(); ++i) {
      if (i) out += ',';
      out += csv_field(cell(r, columns()[i]));
    }
    out += "\n";
  }
  return out;
}

std::string markdown(const std::vector<json>& records) {
  std::vector<std::string> cols;
  for (const std::string& c : columns()) {
    bool any = c == "name" || c == "status";
    for (const json& r : records) any = any || !cell(r, c).empty();
    if (any) cols.push_back(c);
  }
  std::string out = "|", rule = "|";
  for (const std::string& c : cols) {
    out += ' ';
    out += c;
    out += " |";
    rule += " --- |";
  }
  out += '\n';
  out += rule;
  out += '\n';
  for (const json& r : records) {
    out += "|";
    for (const std::string& c : cols) {
      out += ' ';
      out += md_field(escape_non_utf8(cell(r, c)));
      out += " |";
    }
    out += "\n";
  }
  return out;
}

void write_csv(const std::string& path, const std::vector<json>& records) { write_text_atomically(path, csv(records)); }

void write_markdown(const std::string& path, const std::vector<json>& records) {
  write_text_atomically(path, markdown(records));
}

std::string avg_busbw_line(const std::vector<json>& records) {
  double sum = 0;
  std::size_t n = 0;
  for (const json& r : records) {
    const json* b = field(r, "busbw_GBps");
    if (r.value("status", "") != "ok" || !b || !b->is_number()) continue;
    const double v = b->get<double>();
    if (!std::isfinite(v) || v <= 0) continue;
    sum += v;
    ++n;
  }
  if (n == 0) return "# Avg bus bandwidth    : n/a (no ok case has a busbw figure)\n";
  return fmt::format("# Avg bus bandwidth    : {:.3f} GB/s (the mean over {} ok case{} with a busbw figure, of {})\n",
                     sum / static_cast<double>(n), n, n == 1 ? "" : "s", records.size());
}

}  // namespace dmabench::table_export
