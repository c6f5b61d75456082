#include "bench/output/matrix.hpp"
#include "bench/output/console.hpp"

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace dmabench {
namespace {

using json = nlohmann::json;

struct Table {
  std::set<std::string> rows, cols;
  std::map<std::pair<std::string, std::string>, double> cells;
};

// The pair a record measures: (source, destination) labels, or nullopt for records that are not one
// pair (a collective over several devices, a case that did not measure).
std::optional<std::pair<std::string, std::string>> pair_of(const json& r, const std::string& device_word) {
  const json devices = r.value("devices", json::array());
  const std::string pattern = r.value("pattern", "");
  auto dev = [&](std::size_t i) { return fmt::format("{} {}", device_word, devices[i].get<int>()); };
  if ((pattern == "copy" || pattern == "bidir") && devices.size() == 2) return std::make_pair(dev(0), dev(1));
  if ((pattern == "h2d" || pattern == "d2h" || pattern == "h2d-bidir") && devices.size() == 1) {
    const json node = r.contains("host_memory") ? r["host_memory"].value("numa_node", json()) : json();
    const std::string host = node.is_number() ? fmt::format("host node {}", node.get<int>()) : std::string("host");
    return pattern == "d2h" ? std::make_pair(dev(0), host) : std::make_pair(host, dev(0));
  }
  return std::nullopt;
}

std::string cell(const Table& t, const std::string& row, const std::string& col) {
  const auto it = t.cells.find({row, col});
  return it == t.cells.end() ? std::string("-") : fmt::format("{:.1f}", it->second);
}

void print_table(const std::string& key, const Table& t) {
  console::say("\n{}: busbw GB/s at the p50, rows = source, columns = destination\n{:>14}", key, "");
  for (const auto& c : t.cols) console::say(" {:>14}", c);
  console::say(" {:>10}\n", "row sum");
  double total = 0;
  for (const auto& r : t.rows) {
    double sum = 0;
    console::say("{:>14}", r);
    for (const auto& c : t.cols) {
      console::say(" {:>14}", cell(t, r, c));
      if (auto it = t.cells.find({r, c}); it != t.cells.end()) sum += it->second;
    }
    console::say(" {:>10.1f}\n", sum);
    total += sum;
  }
  console::say("{:>14} {} pairs measured, sum {:.1f} GB/s\n", "", t.cells.size(), total);
}

}  // namespace

std::size_t print_pair_matrices(const std::vector<json>& records, const std::string& device_word) {
  static const std::regex dev_part("/dev=[0-9,]+/");
  std::map<std::string, Table> tables;  // by case name with its devices as "*", in name order
  for (const auto& r : records) {
    const auto pair = pair_of(r, device_word);
    if (!pair || r.value("status", "") != "ok" || !r.value("busbw_GBps", json()).is_number()) continue;
    Table& t = tables[std::regex_replace(r.value("name", ""), dev_part, "/dev=*/")];
    t.rows.insert(pair->first);
    t.cols.insert(pair->second);
    t.cells[*pair] = r["busbw_GBps"].get<double>();
  }
  for (const auto& [key, t] : tables) print_table(key, t);
  return tables.size();
}

}  // namespace dmabench
