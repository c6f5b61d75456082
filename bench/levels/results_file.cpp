#include "bench/levels/results_file.hpp"

#include <cctype>
#include <cerrno>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/quote.hpp"
#include "core/read_file.hpp"

namespace dmabench::levels {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxBytes = std::size_t{1} << 30;  // python/dmabench/files.py MAX_INPUT_BYTES
constexpr int kMaxDepth = 64;                            // a results file nests about 8 levels (its config's too)
constexpr const char* kJournalSuffix = ".journal";
constexpr const char* kJournalSchema = "dmabench-journal/1";
constexpr const char* kSchema = "dmabench/1";

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// JSON text with every lone surrogate escape (`\ud800` not in a pair: no character, which the parser refuses) written
// as its escaped text (the six characters `\ud800`), as python/dmabench/reader.py escape_surrogates reads it: a name
// from a file that holds one is still read, printed and written. Pairs and everything else are left as they are.
std::string escape_lone_surrogates(const std::string& text) {
  const auto code = [&](std::size_t at) -> long {  // the 4 hex digits of `\uXXXX` at `at`, or -1
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
    for (std::size_t i = at + 2; i < at + 6; ++i)
      if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return -1;
    return std::stol(text.substr(at + 2, 4), nullptr, 16);
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    const long c = code(i);
    const long next = c >= 0xD800 && c <= 0xDBFF ? code(i + 6) : -1;
    if (c >= 0xD800 && c <= 0xDFFF && !(next >= 0xDC00 && next <= 0xDFFF)) out += '\\';  // lone: escaped
    const std::size_t n = next >= 0xDC00 && next <= 0xDFFF ? 12 : 2;  // a pair whole, else the escape's first two
    out.append(text, i, n);
    i += n - 1;
  }
  return out;
}

json parse(const std::string& text, const std::string& what) { return parse_input_json(escape_lone_surrogates(text), what, kMaxDepth); }

// The file's text; nullopt where there is no file (`missing_ok`), else InputError naming it.
std::optional<std::string> read_text(const std::string& path, const char* what, bool missing_ok) {
  struct stat st {};
  if (missing_ok && ::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  for (const char* compressed : {".xz", ".gz"})
    if (ends_with(path, compressed))
      bad(path, fmt::format("a compressed file ({}); dmabench reads plain JSON: decompress it first", compressed));
  const Maybe<std::string> text = read_small_file(path, kMaxBytes, what);
  if (!text) bad(path, text.why_not());
  return *text;
}

// The journal's document, its torn line (0: none); a document null where not even the header line is complete.
std::pair<json, std::size_t> parse_journal(const std::string& path, const std::string& data) {
  std::vector<json> values;
  std::size_t torn = 0, start = 0, line = 1;
  for (std::size_t nl; (nl = data.find('\n', start)) != std::string::npos; start = nl + 1, ++line) {
    try {
      values.push_back(parse(data.substr(start, nl - start), fmt::format("{}: line {}", path, line)));
    } catch (const InputError&) {
      if (nl + 1 != data.size()) throw;  // a bad line before the last
      torn = line;                       // the last line: torn (the run was killed while writing it)
    }
  }
  if (start < data.size()) torn = line;  // no newline at its end
  if (values.empty()) return {json(), torn};
  const json& header = values.front();
  if (!header.is_object() || header.value("schema", json()) != kJournalSchema)
    bad(path, fmt::format("line 1: not a dmabench journal (expected a header with 'schema': '{}')", kJournalSchema));
  if (header.value("results_schema", json()) != kSchema)
    bad(path, fmt::format("line 1: header.results_schema is {}; dmabench reads '{}'",
                          quote_json(header.value("results_schema", json()), 40), kSchema));
  if (!header.contains("context") || !header["context"].is_object()) bad(path, "line 1: header.context: expected an object");
  json doc = {{"schema", kSchema}, {"context", header["context"]}, {"results", json::array()}};
  for (std::size_t i = 1; i < values.size(); ++i) doc["results"].push_back(std::move(values[i]));
  try {
    check_results(doc, [](std::size_t i) { return fmt::format("line {}: results[{}]", i + 2, i); });
  } catch (const InputError& e) {
    bad(path, e.what());
  }
  return {doc, torn};
}

json read_file(const std::string& path) {
  json doc = parse(*read_text(path, "the results file", false), path);
  try {
    check_results(doc, [](std::size_t i) { return fmt::format("results[{}]", i); });
  } catch (const InputError& e) {
    bad(path, e.what());
  }
  return doc;
}

std::string torn_note(std::size_t torn) { return torn ? fmt::format("; its torn line {} ignored", torn) : ""; }

// ---- the checks of what the merge reads (check_results) ----------------------------------------------------------

[[noreturn]] void wrong(const std::string& where, const std::string& want, const json& got) {
  throw InputError(fmt::format("{}: expected {}, got {}", where, want, quote_json(got, 40)));
}

const json& field(const json& j, const char* key) {
  static const json none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

// `r[key]` is there (else "<where>.<key>: missing") and of the kind `is` tests (else "expected <want>").
void need(const json& r, const char* key, const std::string& where, bool (json::*is)() const noexcept, const char* want) {
  const std::string at = where.empty() ? key : fmt::format("{}.{}", where, key);
  if (!r.contains(key)) throw InputError(at + ": missing");
  if (!(r[key].*is)()) wrong(at, want, r[key]);
}

// A number >= 0 (`positive`: > 0) at `where`.
void need_number(const json& v, const std::string& where, bool positive = false) {
  if (!v.is_number() || (positive ? v.get<double>() <= 0 : v.get<double>() < 0))
    wrong(where, positive ? "a positive number" : "a number >= 0", v);
}

// An ok record's figures: latency_us, algbw and busbw; the interval, noise and sampling where present.
void check_figures(const json& r, const std::string& where) {
  need(r, "latency_us", where, &json::is_object, "an object");
  for (const char* stat : {"min", "p50", "mean", "p95", "p99", "max", "stddev"})
    need_number(field(r["latency_us"], stat), fmt::format("{}.latency_us.{}", where, stat), stat == std::string("p50"));
  for (const char* bw : {"algbw_GBps", "busbw_GBps"}) need_number(field(r, bw), fmt::format("{}.{}", where, bw));
  if (const json& pair = field(r, "p50_interval_us"); r.contains("p50_interval_us")) {
    if (!pair.is_array() || pair.size() != 2) wrong(where + ".p50_interval_us", "a list of two numbers", pair);
    for (std::size_t i = 0; i < 2; ++i) need_number(pair[i], fmt::format("{}.p50_interval_us[{}]", where, i));
  }
  if (r.contains("noise")) need_number(r["noise"], where + ".noise");
  if (!r.contains("sampling")) return;
  need(r, "sampling", where, &json::is_object, "an object");
  const json& s = r["sampling"];
  if (!field(s, "samples").is_number_integer() || field(s, "samples").get<double>() < 1)
    wrong(where + ".sampling.samples", "a positive integer", field(s, "samples"));
  need_number(field(s, "seconds"), where + ".sampling.seconds");
}

void check_record(const json& r, const std::string& where) {
  if (!r.is_object()) wrong(where, "an object", r);
  need(r, "name", where, &json::is_string, "a string");
  need(r, "status", where, &json::is_string, "a string");
  const std::string status = r["status"].get<std::string>();
  if (status != "ok" && status != "skipped" && status != "failed")
    wrong(where + ".status", "one of ok, skipped, failed", r["status"]);
  if (r.contains("reason")) need(r, "reason", where, &json::is_string, "a string");
  if (status == "ok") check_figures(r, where);
}

}  // namespace

void check_results(const json& doc, const std::function<std::string(std::size_t)>& where) {
  if (!doc.is_object())
    throw InputError(fmt::format("not a dmabench results file: the top level is {}, not an object", doc.type_name()));
  const json& schema = field(doc, "schema");
  if (!schema.is_string() || schema.get<std::string>().rfind("dmabench/", 0) != 0)
    throw InputError(fmt::format("not a dmabench results file (no 'schema': '{}'; got {})", kSchema, quote_json(schema, 40)));
  if (schema != kSchema) throw InputError(fmt::format("has schema {}; dmabench reads '{}'", quote_json(schema, 40), kSchema));
  need(doc, "context", "", &json::is_object, "an object");
  need(doc, "results", "", &json::is_array, "a list");
  if (doc["context"].contains("dmabench")) need(doc["context"], "dmabench", "context", &json::is_object, "an object");
  for (std::size_t i = 0; i < doc["results"].size(); ++i) check_record(doc["results"][i], where(i));
}


ResultsRead read_results(const std::string& path) {
  if (ends_with(path, kJournalSuffix)) {
    auto [doc, torn] = parse_journal(path, *read_text(path, "the journal", false));
    if (doc.is_null()) bad(path, "line 1: no complete header line (the run was killed before it wrote one)");
    return {doc, torn ? fmt::format("{}: line {} is torn (the run was killed while writing it); ignored", path, torn) : ""};
  }
  const std::string journal = path + kJournalSuffix;
  const std::optional<std::string> journal_text = read_text(journal, "the journal", true);
  if (!journal_text) return {read_file(path), ""};
  auto [jdoc, torn] = parse_journal(journal, *journal_text);
  std::optional<json> doc;
  try {
    doc = read_file(path);
  } catch (const InputError&) {
    if (jdoc.is_null()) throw;
  }
  if (jdoc.is_null() || (doc && (*doc)["results"].size() >= jdoc["results"].size())) return {*doc, ""};
  return {jdoc, fmt::format("{}: the run that writes {} has not finished; reading its journal ({} records, {} in {}{})",
                            journal, path, jdoc["results"].size(), doc ? (*doc)["results"].size() : 0, path,
                            torn_note(torn))};
}

}  // namespace dmabench::levels
