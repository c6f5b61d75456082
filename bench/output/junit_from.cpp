#include "bench/output/junit_from.hpp"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <initializer_list>

#include <fmt/format.h>
#include <unistd.h>

#include "bench/output/out_file.hpp"
#include "bench/output/report.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/quote.hpp"
#include "core/read_file.hpp"

namespace dmabench::junit {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxCasesBytes = std::size_t{256} << 20;  // 256 MiB: a record per case of a 200000-case run
constexpr int kMaxDepth = 32;                                    // a record nests 4 levels below a case
constexpr int kIdleSeconds = 60;                                 // a pipe whose writer sends nothing this long

// Reads the document's parts, each error naming the document (`what`) and the place in it.
struct Reader {
  std::string what;

  // `where` (a path in the document such as cases[2].outcome; "" for the document itself) and what is wrong there.
  [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
    throw InputError(fmt::format("{}: {}: {}", what, where.empty() ? "the document" : where, problem));
  }

  static std::string at(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

  // `object` at `where`, with no key but `accepted`.
  void keys(const json& object, const std::string& where, std::initializer_list<const char*> accepted) const {
    if (!object.is_object()) fail(where, fmt::format("{} is not an object", quote_json(object)));
    std::string names;
    for (const char* k : accepted) names += (names.empty() ? "" : ", ") + std::string(k);
    for (const auto& item : object.items())
      if (!is_one_of(item.key(), accepted))
        fail(where, fmt::format("unknown key '{}'; accepted: {}", quote(item.key()), names));
  }

  static bool is_one_of(const std::string& key, std::initializer_list<const char*> accepted) {
    for (const char* k : accepted)
      if (key == k) return true;
    return false;
  }

  // The string at object[key] ("" where absent and not `required`).
  std::string text(const json& object, const char* key, const std::string& where, bool required = false) const {
    if (!object.contains(key)) {
      if (required) fail(where, fmt::format("no '{}'; a test case has a name and a classname", key));
      return "";
    }
    const json& v = object[key];
    if (!v.is_string()) fail(at(where, key), fmt::format("{} is not a string", quote_json(v)));
    return v.get<std::string>();
  }

  // A list of [name, value] pairs of strings.
  Properties pairs(const json& list, const std::string& where) const {
    if (!list.is_array()) fail(where, fmt::format("{} is not a list of [name, value] pairs", quote_json(list)));
    Properties out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& p = list[i];
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
        fail(fmt::format("{}[{}]", where, i), fmt::format("{} is not a [name, value] pair of strings", quote_json(p)));
      out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
    return out;
  }

  TestCase test_case(const json& c, const std::string& where) const;
  Suite suite(const json& doc) const;
};

// A case's outcome from its name.
TestCase::Outcome outcome_of(const Reader& r, const std::string& name, const std::string& where) {
  using O = TestCase::Outcome;
  if (name == "passed") return O::passed;
  if (name == "failure") return O::failed;
  if (name == "skipped") return O::skipped;
  if (name == "error") return O::error;
  r.fail(where, fmt::format("'{}' is not an outcome; accepted: passed, failure, skipped, error", quote(name)));
}

TestCase Reader::test_case(const json& c, const std::string& where) const {
  keys(c, where, {"name", "classname", "time", "outcome", "message", "kind", "output", "properties", "record"});
  TestCase t;
  t.name = text(c, "name", where, true);
  t.classname = text(c, "classname", where, true);
  if (c.contains("time")) {
    const json& s = c["time"];
    if (!s.is_number() || !std::isfinite(s.get<double>()) || s.get<double>() < 0)
      fail(where + ".time", fmt::format("{} is not a number of seconds >= 0", quote_json(s)));
    t.seconds = s.get<double>();
  }
  const std::string outcome = c.contains("outcome") ? text(c, "outcome", where) : "passed";
  t.outcome = outcome_of(*this, outcome, where + ".outcome");
  t.message = text(c, "message", where);
  t.type = text(c, "kind", where);
  if (t.type.empty() && (t.outcome == TestCase::Outcome::failed || t.outcome == TestCase::Outcome::error)) t.type = outcome;
  t.output = text(c, "output", where);
  if (c.contains("properties") && c.contains("record"))
    fail(where, "both 'properties' and 'record'; give one: the figures, or the record they are taken from");
  if (c.contains("properties")) t.properties = pairs(c["properties"], where + ".properties");
  if (c.contains("record")) {
    if (!c["record"].is_object()) fail(where + ".record", fmt::format("{} is not a results record (an object)", quote_json(c["record"])));
    t.properties = record_properties(c["record"]);
  }
  return t;
}

// "YYYY-MM-DDTHH:MM:SS" (the schema's timestamp, as the run writes it).
bool is_timestamp(const std::string& s) {
  if (s.size() != 19) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : '0';
    if (want == '0' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != want) return false;
  }
  return true;
}

Suite Reader::suite(const json& doc) const {
  keys(doc, "", {"cases", "properties", "timestamp", "hostname"});
  if (!doc.contains("cases") || !doc["cases"].is_array())
    fail("cases", "missing or not a list; accepted: {\"cases\": [{\"name\": ..., \"classname\": ...}, ...]}");
  Suite s;
  if (doc.contains("properties")) s.properties = pairs(doc["properties"], "properties");
  s.timestamp = text(doc, "timestamp", "");
  if (!s.timestamp.empty() && !is_timestamp(s.timestamp))
    fail("timestamp", fmt::format("'{}' is not YYYY-MM-DDTHH:MM:SS (UTC)", quote(s.timestamp)));
  s.hostname = text(doc, "hostname", "");
  const json& cases = doc["cases"];
  for (std::size_t i = 0; i < cases.size(); ++i) s.cases.push_back(test_case(cases[i], fmt::format("cases[{}]", i)));
  return s;
}

std::string this_host() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

Suite read_suite(const nlohmann::json& doc, const std::string& what) { return Reader{what}.suite(doc); }

int write_from(const std::string& cases_path, const std::string& out) {
  const std::string what = "--junit-from " + quote(cases_path);
  Maybe<std::string> text = read_small_input(cases_path, kMaxCasesBytes, kIdleSeconds, nullptr, "the --junit-from file");
  if (!text)
    throw InputError(fmt::format("{}: {}; accepted: a regular file, or - (standard input), /dev/stdin or /dev/fd/N (a "
                                 "pipe), of at most {} MiB holding the test cases as JSON",
                                 what, text.why_not(), kMaxCasesBytes >> 20));
  Suite suite = read_suite(parse_input_json(*text, what, kMaxDepth), what);
  const OutPath path = check_output_file("--junit", out, "", /*creates_directories=*/true);  // after the input is read
  if (suite.timestamp.empty()) suite.timestamp = utc_iso8601_ms(std::chrono::system_clock::now()).substr(0, 19);
  if (suite.hostname.empty()) suite.hostname = this_host();
  write(path.path, suite.cases, suite.timestamp, suite.hostname, suite.properties);
  return 0;
}

}  // namespace dmabench::junit
