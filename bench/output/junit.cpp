#include "bench/output/junit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/output/export.hpp"
#include "core/json_file.hpp"

namespace dmabench::junit {

std::string escape(const std::string& text, bool attribute) {
  const std::string utf8 = escape_non_utf8(text);  // a byte that is not UTF-8 (a lone surrogate too): \xNN
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto ch = static_cast<unsigned char>(utf8[i]);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += attribute ? "\\t" : "\t"; break;  // an attribute would fold them into spaces
      case '\n': out += attribute ? "\\n" : "\n"; break;
      case '\r': out += attribute ? "\\r" : "\r"; break;
      default:
        if (ch < 0x20 || ch == 0x7f) {  // XML 1.0 allows no other control character
          out += fmt::format("\\x{:02x}", ch);
        } else if (ch == 0xEF && i + 2 < utf8.size() && static_cast<unsigned char>(utf8[i + 1]) == 0xBF &&
                   (static_cast<unsigned char>(utf8[i + 2]) & 0xFE) == 0xBE) {  // U+FFFE, U+FFFF: not XML characters
          out += fmt::format("\\u{:04x}", 0xFFFE | (static_cast<unsigned char>(utf8[i + 2]) & 1));
          i += 2;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out;
}

namespace {

// A time attribute's seconds: never negative, rounded up to the microsecond it is written to (never below what was
// measured).
double written_seconds(double seconds) { return std::ceil(std::max(0.0, seconds) * 1e6) / 1e6; }

std::string properties(const TestCase& c) {
  if (c.properties.empty()) return "";
  std::string xml = "      <properties>\n";
  for (const auto& [name, value] : c.properties)
    xml += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", escape(name, true), escape(value, true));
  return xml + "      </properties>\n";
}

std::string testcase(const TestCase& c) {
  std::string xml = fmt::format(R"(    <testcase classname="{}" name="{}" time="{:.6f}")", escape(c.classname, true), escape(c.name, true),
                                written_seconds(c.seconds));
  if (!c.properties.empty()) xml += ">\n" + properties(c);
  const bool open = !c.properties.empty();
  switch (c.outcome) {
    case TestCase::Outcome::passed: return xml + (open ? "    </testcase>\n" : "/>\n");
    case TestCase::Outcome::skipped: return xml + fmt::format("{}      <skipped message=\"{}\"/>\n    </testcase>\n", open ? "" : ">\n", escape(c.message, true));
    case TestCase::Outcome::failed: break;
  }
  return xml + fmt::format("{}      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n", open ? "" : ">\n", escape(c.type, true),
                           escape(c.message, true), escape(c.message, false));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> record_properties(const nlohmann::json& record) {
  static const std::vector<std::string> paths = {
      "bytes", "bytes_per_rank", "latency_us.p50", "latency_us.p99", "latency_us.mean", "latency_us.min",
      "latency_us.max", "algbw_GBps", "busbw_GBps", "noise", "sampling.samples", "sampling.seconds", "power.active_W",
      "power.energy_per_GB_J"};
  std::vector<std::pair<std::string, std::string>> out;
  if (record.value("status", "") != "ok") return out;
  const auto add = [&](const std::string& name, const std::string& value) {
    if (!value.empty()) out.emplace_back(name, value);
  };
  for (const std::string& p : paths) add(p, table_export::cell(record, p));
  for (const char* interval : {"p50_interval_us", "busbw_interval_GBps"}) {
    const nlohmann::json ends = record.value(interval, nlohmann::json());
    if (!ends.is_array() || ends.size() != 2) continue;
    add(std::string(interval) + ".low", table_export::cell(nlohmann::json{{"v", ends[0]}}, "v"));
    add(std::string(interval) + ".high", table_export::cell(nlohmann::json{{"v", ends[1]}}, "v"));
  }
  return out;
}

std::vector<TestCase> test_cases(const std::vector<nlohmann::json>& records,
                                 const std::map<std::string, std::string>& failed_checks) {
  std::vector<TestCase> cases;
  for (const nlohmann::json& r : records) {
    const std::string engine = r.value("engine", ""), status = r.value("status", ""), reason = r.value("reason", "");
    TestCase t;
    t.classname = r.value("pattern", "") + "." + (engine.empty() ? "none" : engine);
    t.name = r.value("name", "");
    t.properties = record_properties(r);
    const nlohmann::json sampling = r.value("sampling", nlohmann::json::object());
    if (sampling.is_object() && sampling.value("seconds", nlohmann::json()).is_number())
      t.seconds = sampling["seconds"].get<double>();
    if (status == "failed") {
      t.outcome = TestCase::Outcome::failed;
      t.type = "failed";
      t.message = reason;
    } else if (status == "skipped") {
      t.outcome = TestCase::Outcome::skipped;
      t.message = reason;
    } else if (auto f = failed_checks.find(t.name); f != failed_checks.end()) {
      t.outcome = TestCase::Outcome::failed;
      t.type = "check";
      t.message = f->second;
    }
    cases.push_back(std::move(t));
  }
  return cases;
}

std::string document(const std::vector<TestCase>& cases, const std::string& suite, const std::string& timestamp,
                     const std::string& hostname) {
  std::size_t failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& c : cases) {
    failures += c.outcome == TestCase::Outcome::failed;
    skipped += c.outcome == TestCase::Outcome::skipped;
    seconds += written_seconds(c.seconds);
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6f}\">\n",
                     escape(suite, true), cases.size(), failures, skipped, seconds);
  xml += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6f}\" "
                     "timestamp=\"{}\" hostname=\"{}\">\n",
                     escape(suite, true), cases.size(), failures, skipped, seconds, escape(timestamp, true),
                     escape(hostname, true));
  for (const auto& c : cases) xml += testcase(c);
  return xml + "  </testsuite>\n</testsuites>\n";
}

void write(const std::string& path, const std::vector<TestCase>& cases, const std::string& timestamp,
           const std::string& hostname) {
  write_text_atomically(path, document(cases, "dmabench", timestamp, hostname));
}

}  // namespace dmabench::junit
