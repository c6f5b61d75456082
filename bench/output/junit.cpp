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
// measured); 0 for a time that is not a finite number.
double written_seconds(double seconds) {
  return std::isfinite(seconds) ? std::ceil(std::max(0.0, seconds) * 1e6) / 1e6 : 0.0;
}

// A <properties> block at `indent` spaces ("" for no pairs).
std::string properties(const Properties& pairs, int indent) {
  if (pairs.empty()) return "";
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string xml = pad + "<properties>\n";
  for (const auto& [name, value] : pairs)
    xml += fmt::format("{}  <property name=\"{}\" value=\"{}\"/>\n", pad, escape(name, true), escape(value, true));
  return xml + pad + "</properties>\n";
}

// A case's outcome element: none (passed), <skipped/>, or <failure>/<error> with its line in the attribute and the
// text as it is in the element.
std::string outcome(const TestCase& c) {
  switch (c.outcome) {
    case TestCase::Outcome::passed: return "";
    case TestCase::Outcome::skipped: return fmt::format("      <skipped message=\"{}\"/>\n", escape(c.message, true));
    case TestCase::Outcome::failed:
    case TestCase::Outcome::error: break;
  }
  const char* tag = c.outcome == TestCase::Outcome::error ? "error" : "failure";
  return fmt::format("      <{} type=\"{}\" message=\"{}\">{}</{}>\n", tag, escape(c.type, true), escape(c.message, true),
                     escape(c.message, false), tag);
}

std::string testcase(const TestCase& c) {
  const std::string head = fmt::format(R"(    <testcase classname="{}" name="{}" time="{:.6f}")", escape(c.classname, true),
                                       escape(c.name, true), written_seconds(c.seconds));
  std::string body = properties(c.properties, 6) + outcome(c);
  if (!c.output.empty()) body += fmt::format("      <system-out>{}</system-out>\n", escape(c.output, false));
  return body.empty() ? head + "/>\n" : head + ">\n" + body + "    </testcase>\n";
}

}  // namespace

Properties record_properties(const nlohmann::json& record) {
  static const std::vector<std::string> paths = {
      "bytes", "bytes_per_rank", "latency_us.p50", "latency_us.p99", "latency_us.mean", "latency_us.min",
      "latency_us.max", "algbw_GBps", "busbw_GBps", "noise", "sampling.samples", "sampling.seconds", "power.active_W",
      "power.energy_per_GB_J"};
  Properties out;
  if (!record.is_object() || !record.value("status", nlohmann::json()).is_string() || record["status"] != "ok") return out;
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
                     const std::string& hostname, const Properties& suite_properties) {
  std::size_t failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const auto& c : cases) {
    failures += c.outcome == TestCase::Outcome::failed;
    errors += c.outcome == TestCase::Outcome::error;
    skipped += c.outcome == TestCase::Outcome::skipped;
    seconds += written_seconds(c.seconds);
  }
  const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.6f}")", cases.size(),
                                         failures, errors, skipped, seconds);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"{}\" {}>\n", escape(suite, true), counts);
  xml += fmt::format("  <testsuite name=\"{}\" {} timestamp=\"{}\" hostname=\"{}\">\n", escape(suite, true), counts,
                     escape(timestamp, true), escape(hostname, true));
  xml += properties(suite_properties, 4);
  for (const auto& c : cases) xml += testcase(c);
  return xml + "  </testsuite>\n</testsuites>\n";
}

void write(const std::string& path, const std::vector<TestCase>& cases, const std::string& timestamp,
           const std::string& hostname, const Properties& properties) {
  write_text_atomically(path, document(cases, "dmabench", timestamp, hostname, properties));
}

}  // namespace dmabench::junit
