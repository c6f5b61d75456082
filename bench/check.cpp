#include "bench/check.hpp"

#include "bench/verdict.hpp"
#include "bench/output/console.hpp"
#include "patterns/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/quote.hpp"
#include "core/read_file.hpp"
#include "core/units.hpp"
#include "bench/run/record.hpp"

namespace dmabench::check {
namespace {

using json = nlohmann::json;

const std::set<std::string> kMatchKeys = {"pattern", "engine", "timing", "min_bytes", "max_bytes", "host_kind", "devices"};
const std::set<std::string> kEntryKeys = {"pattern", "engine", "timing", "min_bytes", "max_bytes", "host_kind", "devices",
                                          "metric", "expect", "link", "links", "GBps_per_link", "efficiency",
                                          "reference", "tolerance_pct", "note"};
const std::vector<std::string> kMetrics = {"busbw_GBps", "algbw_GBps", "p50_us"};

[[noreturn]] void bad(const std::string& path, const std::string& field, const std::string& what) {
  throw InputError(fmt::format("--check {}: {}: {}", quote(path), field, what));
}

double number(const json& v, const std::string& path, const std::string& field, double lo, double hi) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    bad(path, field, fmt::format("expected a number from {} to {}, got {}", lo, hi, quote_json(v)));
  return v.get<double>();
}

// A string or a list of strings: the accepted values of a match key.
void check_names(const json& v, const std::string& path, const std::string& field) {
  const json list = v.is_array() ? v : json::array({v});
  if (list.empty()) bad(path, field, "the list is empty");
  for (const auto& x : list)
    if (!x.is_string()) bad(path, field, fmt::format("expected a name or a list of names, got {}", quote_json(v)));
}

bool name_matches(const json& want, const json& have) {
  if (want.is_null()) return true;
  const json list = want.is_array() ? want : json::array({want});
  return std::find(list.begin(), list.end(), have) != list.end();
}

// A check entry, validated; byte bounds are stored as numbers.
json validated_entry(const json& e, const std::string& path, const std::string& where, bool have_reference) {
  if (!e.is_object()) bad(path, where, fmt::format("expected an object, got {}", quote_json(e)));
  json out = e;
  for (const auto& [k, v] : e.items()) {
    if (!kEntryKeys.count(k))
      bad(path, where + "." + k, fmt::format("unknown key; accepted: {}", fmt::join(kEntryKeys, ", ")));
    if (k == "pattern" || k == "engine" || k == "timing" || k == "host_kind") check_names(v, path, where + "." + k);
    if (k == "min_bytes" || k == "max_bytes") out[k] = parse_bytes(v.is_string() ? v.get<std::string>() : v.dump(), fmt::format("--check {}: {}.{}", path, where, k));
  }
  if (e.contains("devices") && (!e["devices"].is_array() || e["devices"].empty()))
    bad(path, where + ".devices", "expected a list of device ids");
  const std::string metric = e.value("metric", "busbw_GBps");
  if (std::find(kMetrics.begin(), kMetrics.end(), metric) == kMetrics.end())
    bad(path, where + ".metric", fmt::format("'{}' is not a metric; accepted: {}", metric, fmt::join(kMetrics, ", ")));
  out["metric"] = metric;
  const int ways = e.contains("expect") + e.contains("link") + e.contains("reference");
  if (ways != 1) bad(path, where, "give exactly one of expect (a number), link (\"pcie\" or \"links\") and reference (true)");
  if (e.contains("expect")) number(e["expect"], path, where + ".expect", 1e-9, 1e12);
  if (e.contains("reference") && (e["reference"] != true || !have_reference))
    bad(path, where + ".reference", "true, with a top-level \"reference\" results file");
  if (e.contains("link")) {
    if (metric == "p50_us") bad(path, where + ".link", "a link's rate is a bandwidth: use metric busbw_GBps or algbw_GBps");
    if (e["link"] == "links") {
      if (e.value("links", json()) != "machine") number(e.value("links", json()), path, where + ".links", 1, 1024);
      number(e.value("GBps_per_link", json()), path, where + ".GBps_per_link", 1e-3, 1e6);
    } else if (e["link"] != "pcie") {
      bad(path, where + ".link", fmt::format("{} is not accepted; accepted: \"pcie\" (the GPU's PCIe generation x width, "
                                             "from the machine) or \"links\" (links x GBps_per_link; links a number or \"machine\")", quote_json(e["link"])));
    }
  }
  if (e.contains("efficiency")) number(e["efficiency"], path, where + ".efficiency", 1e-3, 1);
  if (e.contains("tolerance_pct")) number(e["tolerance_pct"], path, where + ".tolerance_pct", 0, 100);
  return out;
}

// Reads a JSON file dmabench did not write through the one reader of input files (core/read_file: a
// regular file only, never a FIFO that would hang the run, and bounded: a large sweep's results are tens of MB).
// Nesting is bounded too: each level costs memory beyond its bytes (30 MB of '[' took 1.4 GB and 9 s to parse).
json read_json_file(const std::string& path, const std::string& what) {
  constexpr std::size_t kMaxBytes = std::size_t{512} << 20;
  constexpr int kMaxDepth = 64;  // a results file nests about 8 levels
  auto text = read_small_file(path, kMaxBytes, "the " + (what.rfind("the ", 0) == 0 ? what.substr(4) : what) + " of --check");
  if (!text) throw InputError(fmt::format("--check: {} '{}': {}", what, quote(path), text.why_not()));
  return parse_input_json(*text, fmt::format("--check: {} '{}'", what, quote(path)), kMaxDepth);
}

// The key a record is matched to the reference by: its case's full identity (case_key, as compare.py and history.py
// match cases), less the workload it ran beside: a case beside a workload is checked against the same case alone.
std::string reference_key(const json& record) {
  json key = case_key(record);
  key["beside"] = "";
  return key.dump();
}

bool beside_a_workload(const json& record) { return !case_key(record)["beside"].get<std::string>().empty(); }

// A number field of a record, or nullopt (absent, null, not a finite number).
std::optional<double> figure(const json& r, const char* key) {
  const json v = r.value(key, json());
  return v.is_number() && std::isfinite(v.get<double>()) ? std::optional<double>(v.get<double>()) : std::nullopt;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); }

// A reference record's figures agree with each other, as dmabench writes them: the p50 inside its own interval, algbw =
// S / p50, algbw's interval from the p50 interval's ends, busbw the same multiple of algbw as its interval. A record
// whose p50 and algbw were edited and whose intervals were left would judge every case against nothing it measured.
void check_reference_record(const json& r, const std::string& path, std::size_t i) {
  const std::string where = fmt::format("results[{}] ({})", i, quote(r.value("name", std::string())));
  const auto fail = [&](const std::string& what) {
    bad(path, where, what + "; a reference must be a results file as dmabench wrote it (its figures agree with each other)");
  };
  const json lat = r.value("latency_us", json());
  const auto p50 = lat.is_object() ? figure(lat, "p50") : std::nullopt;
  if (!p50 || *p50 <= 0) fail("latency_us.p50 is not a number above 0");
  const json iv = r.value("p50_interval_us", json());
  if (iv.is_array() && iv.size() == 2 && iv[0].is_number() && iv[1].is_number() &&
      (*p50 < iv[0].get<double>() * (1 - 1e-9) || *p50 > iv[1].get<double>() * (1 + 1e-9)))
    fail(fmt::format("latency_us.p50 {} lies outside its own p50_interval_us [{}, {}]", *p50, iv[0].get<double>(), iv[1].get<double>()));
  const auto bytes = figure(r, "bytes"), algbw = figure(r, "algbw_GBps"), busbw = figure(r, "busbw_GBps");
  if (bytes && algbw && !near(*algbw, *bytes / (*p50 * 1e3)))
    fail(fmt::format("algbw_GBps {} is not bytes / p50 = {}", *algbw, *bytes / (*p50 * 1e3)));
  const json ai = r.value("algbw_interval_GBps", json()), bi = r.value("busbw_interval_GBps", json());
  if (bytes && iv.is_array() && iv.size() == 2 && iv[1].is_number() && ai.is_array() && !ai.empty() && ai[0].is_number() &&
      iv[1].get<double>() > 0 && !near(ai[0].get<double>(), *bytes / (iv[1].get<double>() * 1e3)))
    fail(fmt::format("algbw_interval_GBps starts at {}, not at bytes / the p50 interval's high end = {}", ai[0].get<double>(),
                     *bytes / (iv[1].get<double>() * 1e3)));
  if (algbw && busbw && *algbw > 0 && ai.is_array() && bi.is_array() && !ai.empty() && !bi.empty() && ai[0].is_number() &&
      bi[0].is_number() && ai[0].get<double>() > 0 && !near(*busbw / *algbw, bi[0].get<double>() / ai[0].get<double>()))
    fail(fmt::format("busbw_GBps is {} x algbw_GBps but its interval {} x algbw's", *busbw / *algbw,
                     bi[0].get<double>() / ai[0].get<double>()));
}

json reference_records(const json& doc, const std::string& path) {
  if (!doc.contains("results") || !doc["results"].is_array()) bad(path, "results", "a reference must be a dmabench results file");
  json by_key = json::object();
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    if (!r.is_object() || r.value("status", "") != "ok" || !r.contains("name") || !r["name"].is_string()) continue;
    check_reference_record(r, path, i);
    // the case measured alone is the reference of the case beside a workload: kept over one measured beside
    const std::string key = reference_key(r);
    if (!by_key.contains(key) || !beside_a_workload(r)) by_key[key] = r;
  }
  return by_key;
}

// "32.0 GT/s PCIe" x "16": GB/s per direction after line coding (8b/10b to 5 GT/s, 128b/130b above).
std::optional<std::pair<double, std::string>> pcie_GBps(const json& machine, int device) {
  if (!machine.contains("devices") || !machine["devices"].is_array()) return std::nullopt;
  for (const auto& d : machine["devices"]) {
    if (d.value("id", -1) != device || !d.contains("pcie_link")) continue;
    const json& l = d["pcie_link"];
    if (!l.value("speed", json()).is_string() || !l.value("width", json()).is_string()) return std::nullopt;
    const std::string speed = l["speed"].get<std::string>(), width = l["width"].get<std::string>();
    try {
      const double gts = std::stod(speed), lanes = std::stod(width);
      const double coding = gts <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
      return std::make_pair(gts * lanes * coding / 8.0, fmt::format("PCIe {} x{}", speed.substr(0, speed.find(" PCIe")), width));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The links a check counts for a case between two GPUs: the file's number, or with "links": "machine" the
// count the results context gives for the case's first two devices (context.machine.peer_links[a][b].links:
// NVLink through NVML, xGMI through KFD). nullopt with `problem` set when the machine cannot say.
std::optional<std::pair<double, std::string>> link_count(const json& e, const json& machine, const json& devices,
                                                         std::string& problem) {
  if (e["links"] != "machine") return std::make_pair(e["links"].get<double>(), std::string("links"));
  if (devices.size() < 2) {
    problem = "\"links\": \"machine\" counts links between two GPUs; this case has one";
    return std::nullopt;
  }
  const int a = devices[0].get<int>(), b = devices[1].get<int>();
  const json::json_pointer at(fmt::format("/peer_links/{}/{}/links", a, b));
  const json n = machine.contains(at) ? machine.at(at) : json();
  if (!n.is_number_integer()) {
    problem = fmt::format("the machine does not say how many links join GPU {} and GPU {}{}", a, b,
                          machine.contains("peer_links_unknown") ? " (" + machine["peer_links_unknown"].get<std::string>() + ")" : "");
    return std::nullopt;
  }
  if (n.get<int>() <= 0) {
    problem = fmt::format("the machine reports no NVLink or xGMI link between GPU {} and GPU {}", a, b);
    return std::nullopt;
  }
  const json::json_pointer kind(fmt::format("/peer_links/{}/{}/link_kind", a, b));
  return std::make_pair(n.get<double>(), fmt::format("{} links (from the machine)",
                                                     machine.contains(kind) && machine.at(kind).is_string() ? machine.at(kind).get<std::string>() : "?"));
}

bool entry_matches(const json& e, const json& r) {
  for (const char* k : {"pattern", "engine", "timing"})
    if (!name_matches(e.value(k, json()), r.value(k, json()))) return false;
  const std::uint64_t bytes = r.value("bytes_per_rank", std::uint64_t{0});
  if (e.contains("min_bytes") && bytes < e["min_bytes"].get<std::uint64_t>()) return false;
  if (e.contains("max_bytes") && bytes > e["max_bytes"].get<std::uint64_t>()) return false;
  if (e.contains("host_kind") &&
      !(r.contains("host_memory") && name_matches(e["host_kind"], r["host_memory"].value("kind", json()))))
    return false;
  if (e.contains("devices") && e["devices"] != r.value("devices", json())) return false;
  return true;
}

// The figure a record gives for a metric: beside a workload, what it kept beside it.
std::optional<double> measured_figure(const json& r, const std::string& metric) {
  const json& ov = r.contains("overlap") && r["overlap"].contains("busbw_with_GBps") ? r["overlap"] : json();
  json v;
  if (metric == "p50_us") v = ov.is_null() ? r.value("latency_us", json::object()).value("p50", json()) : ov.value("comm_with_us", json());
  else v = ov.is_null() ? r.value(metric, json()) : ov.value(metric == "busbw_GBps" ? "busbw_with_GBps" : "algbw_with_GBps", json());
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

// The interval a record gives around a metric's figure (p50_interval_us, busbw_interval_GBps, algbw_interval_GBps; a
// bandwidth interval's high end null: unbounded), or nullopt: none (files written before intervals, figures beside a
// workload).
std::optional<std::pair<double, double>> figure_interval(const json& r, const std::string& metric) {
  if (r.contains("overlap") && r["overlap"].contains("busbw_with_GBps")) return std::nullopt;
  const char* key = metric == "p50_us" ? "p50_interval_us" : metric == "busbw_GBps" ? "busbw_interval_GBps" : "algbw_interval_GBps";
  const json v = r.value(key, json());
  if (!v.is_array() || v.size() != 2 || !v[0].is_number()) return std::nullopt;
  return std::pair{v[0].get<double>(), v[1].is_number() ? v[1].get<double>() : std::numeric_limits<double>::infinity()};
}

// What a record's interval spans: "between N processes" in a levels file, else "within one process".
std::string interval_kind(const json& r) {
  const json l = r.value("levels", json());
  if (l.is_object() && l.value("interval", "") == "between processes")
    return fmt::format("between {} processes", l.value("processes", 0));
  return "within one process";
}

// The verdict on a measured figure: inside the band (at most expected x (1 + tolerance) for a latency, at least
// expected x (1 - tolerance) for a bandwidth) passes. Outside it, where the record has an interval, a FAIL needs the
// whole interval outside the band, and against a reference with an interval the band is drawn from the reference
// interval's near end (the two intervals apart in the failing direction); otherwise PASS, within noise.
void decide(Verdict& v, const json& r) {
  const double slack = v.tolerance_pct / 100.0;
  const bool lower = v.metric == "p50_us";
  const auto inside = [&](double figure, double expected) {
    return lower ? figure <= expected * (1 + slack) : figure >= expected * (1 - slack);
  };
  v.pass = inside(*v.measured, *v.expected);
  const bool better = lower ? *v.measured < *v.expected * (1 - slack) : *v.measured > *v.expected * (1 + slack);
  v.word = v.pass ? (better ? "faster" : "same") : "slower";
  v.measured_interval = figure_interval(r, v.metric);
  if (v.measured_interval) v.measured_interval_kind = interval_kind(r);
  if (v.pass || !v.measured_interval) return;
  const double near = lower ? v.measured_interval->first : v.measured_interval->second;
  const double expected = v.expected_interval ? (lower ? v.expected_interval->second : v.expected_interval->first) : *v.expected;
  v.within_noise = v.pass = inside(near, expected);
  if (v.within_noise) v.word = "ambiguous";
}

// A levels record's per-process p50s (levels.p50_us, the processes that had it ok), or empty.
std::vector<double> process_draws(const json& r) {
  std::vector<double> out;
  const json l = r.value("levels", json());
  if (!l.is_object() || !l.contains("p50_us") || !l["p50_us"].is_array()) return out;
  for (const json& x : l["p50_us"])
    if (x.is_number() && x.get<double>() > 0) out.push_back(x.get<double>());
  return out;
}

// The bytes one command of the case moves (python/dmabench/keys.py command_bytes): a block of a block layout, a pair's
// tokens of a packed alltoallv, one token otherwise, else the bytes per rank; under 1 MiB the case is launch-bound.
bool launch_bound(const json& r) {
  const auto num = [](const json& o, const char* k) { return o.is_object() && o.value(k, json()).is_number() ? o[k].get<double>() : 0.0; };
  const double size = num(r, "bytes") > 0 ? num(r, "bytes") : num(r, "bytes_per_rank");
  const json lay = r.value("layout", json()), moe = r.value("alltoallv", json());
  double command = num(r, "bytes_per_rank");
  if (lay.is_object() && lay.value("kind", "") == "blocks" && num(lay, "blocks_per_op") > 0) {
    command = size / num(lay, "blocks_per_op");
  } else if (moe.is_object() && moe.value("tokens", "") == "packed") {
    double pairs = 0;
    for (const json& row : moe.value("pair_tokens", json::array()))
      if (row.is_array())
        for (const json& t : row) pairs += t.is_number() && t.get<double>() > 0;
    if (pairs > 0) command = size / pairs;
  } else if (num(moe, "token_bytes") > 0) {
    command = num(moe, "token_bytes");
  }
  return command < 1024.0 * 1024.0;
}

// "; within noise: the measured interval [a, b] reaches ..." on the line of a PASS that its interval made, else "".
std::string noise_note(const Verdict& v) {
  if (!v.within_noise) return "";
  const auto& m = *v.measured_interval;
  const std::string band = v.expected_interval ? fmt::format("the band drawn from the reference interval [{:.4g}, {:.4g}]",
                                                             v.expected_interval->first, v.expected_interval->second)
                                               : std::string("the allowed band");
  return fmt::format("; within noise: the measured interval [{:.4g}, {:.4g}] reaches {}", m.first, m.second, band);
}

}  // namespace

double Verdict::deviation_pct() const {
  return measured && expected && *expected != 0 ? (*measured / *expected - 1.0) * 100.0 : 0.0;
}

Expectations Expectations::load(const std::string& path) {
  Expectations x;
  x.path_ = path;
  const json doc = read_json_file(path, "the expectations or reference file");
  if (!doc.is_object()) bad(path, "document", "expected a JSON object");
  if (doc.contains("results") && doc.contains("context")) {  // a results file: a reference for every case
    x.reference_ = reference_records(doc, path);
    x.checks_.push_back({{"reference", true}, {"metric", "busbw_GBps"}});
    return x;
  }
  if (doc.value("schema", "") != "dmabench-expectations/1")
    bad(path, "schema", "expected \"dmabench-expectations/1\" (or give a dmabench results file as a reference)");
  for (const auto& [k, _] : doc.items())
    if (k != "schema" && k != "name" && k != "source" && k != "tolerance_pct" && k != "reference" && k != "checks")
      bad(path, k, "unknown key; accepted: schema, name, source, tolerance_pct, reference, checks");
  if (doc.contains("tolerance_pct")) x.tolerance_pct_ = number(doc["tolerance_pct"], path, "tolerance_pct", 0, 100);
  if (doc.contains("reference")) {
    if (!doc["reference"].is_string()) bad(path, "reference", "expected the path of a results file (relative to this file)");
    const auto ref = std::filesystem::path(path).parent_path() / doc["reference"].get<std::string>();
    x.reference_ = reference_records(read_json_file(ref.string(), "reference"), ref.string());
  }
  if (!doc.contains("checks") || !doc["checks"].is_array() || doc["checks"].empty())
    bad(path, "checks", "expected a non-empty list of checks");
  for (std::size_t i = 0; i < doc["checks"].size(); ++i)
    x.checks_.push_back(validated_entry(doc["checks"][i], path, fmt::format("checks[{}]", i), !x.reference_.is_null()));
  return x;
}

std::optional<Verdict> Expectations::judge(const json& r, const json& machine) const {
  const std::string status = r.value("status", "");
  if (status == "skipped") return std::nullopt;
  const auto entry = std::find_if(checks_.begin(), checks_.end(), [&](const json& e) { return entry_matches(e, r); });
  if (entry == checks_.end()) return std::nullopt;
  const json& e = *entry;
  Verdict v;
  v.name = r.value("name", "?");
  v.metric = e["metric"].get<std::string>();
  v.tolerance_pct = e.value("tolerance_pct", tolerance_pct_);
  const Pattern* pattern = find_pattern(r.value("pattern", ""));
  const bool bidirectional = pattern != nullptr && pattern->bidirectional();
  const double efficiency = e.value("efficiency", 1.0);
  if (e.contains("expect")) {
    v.expected = e["expect"].get<double>();
    v.basis = e.value("note", "expected");
  } else if (e.contains("reference")) {
    const std::string key = reference_key(r);
    if (!reference_.contains(key)) return std::nullopt;  // the reference did not measure it: nothing to check
    const auto ref = measured_figure(reference_[key], v.metric);
    if (!ref) return std::nullopt;
    v.expected = *ref;
    v.expected_interval = figure_interval(reference_[key], v.metric);
    if (v.expected_interval) v.expected_interval_kind = interval_kind(reference_[key]);
    v.basis = "reference";
    v.expected_draws = process_draws(reference_[key]);
  } else if (e["link"] == "links") {
    const auto links = link_count(e, machine, r.value("devices", json::array()), v.problem);
    if (links) {
      v.expected = links->first * e["GBps_per_link"].get<double>() * efficiency * (bidirectional ? 2 : 1);
      v.basis = fmt::format("{} {} x {} GB/s{}{}", links->first, links->second, e["GBps_per_link"].get<double>(),
                            efficiency < 1 ? fmt::format(" x {}", efficiency) : "", bidirectional ? " x 2 directions" : "");
    }
  } else {
    const json devices = r.value("devices", json::array());
    const auto link = devices.empty() ? std::nullopt : pcie_GBps(machine, devices[0].get<int>());
    if (!link) v.problem = "the machine's PCIe link speed and width are unknown (context.machine.devices[].pcie_link)";
    else {
      v.expected = link->first * efficiency * (bidirectional ? 2 : 1);
      v.basis = fmt::format("{} = {:.1f} GB/s{}{}", link->second, link->first, efficiency < 1 ? fmt::format(" x {}", efficiency) : "",
                            bidirectional ? " x 2 directions" : "");
    }
  }
  if (status != "ok") {
    v.problem = "the case failed: " + r.value("reason", std::string("?"));
    return v;
  }
  v.measured = measured_figure(r, v.metric);
  if (!v.measured && v.problem.empty()) v.problem = "the record has no " + v.metric;
  if (!v.problem.empty()) return v;
  decide(v, r);
  if (v.expected_draws.size() >= 2 && process_draws(r).size() >= 2 && !r.contains("overlap")) {
    v.measured_draws = process_draws(r);
    v.launch_bound = launch_bound(r);
  } else {
    v.expected_draws.clear();
  }
  return v;
}

void judge_draws(std::vector<Verdict>& verdicts) {
  std::vector<Verdict*> ranked;
  std::vector<verdict::Case> cases;
  for (Verdict& v : verdicts)
    if (v.problem.empty() && !v.measured_draws.empty() && !v.expected_draws.empty()) {
      ranked.push_back(&v);
      cases.push_back({v.expected_draws, v.measured_draws, v.launch_bound});
    }
  const std::vector<verdict::Judged> judged = verdict::judge_all(cases);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    Verdict& v = *ranked[i];
    v.word = judged[i].verdict;
    v.pass = v.word != "slower";
    v.within_noise = false;
    v.p_value = judged[i].p;
    v.change = judged[i].change;
    v.family = ranked.size();
  }
}

std::map<std::string, std::string> failed_lines(const std::vector<Verdict>& verdicts) {
  std::map<std::string, std::string> lines;
  for (const auto& v : verdicts)
    if (!v.pass) lines.emplace(v.name, verdict_line(v));
  return lines;
}

std::string verdict_line(const Verdict& v) {
  if (!v.problem.empty()) return fmt::format("FAIL  {}  {}: {}", v.name, v.metric, v.problem);
  const char* outcome = v.pass ? "PASS" : "FAIL";
  if (v.p_value)  // the rule over per-process draws
    return fmt::format("{}  {}  {}: p50 {:+.1f}% (Hodges-Lehmann over {} x {} process p50s, this run against the "
                       "reference), rank-sum p {:.3g}{} at {} (Benjamini-Hochberg over {} cases); minimum {}% ({})",
                       outcome, v.name, v.word, *v.change * 100, v.measured_draws.size(), v.expected_draws.size(),
                       *v.p_value, v.word == "slower" || v.word == "faster" ? ", supported" : "", verdict::kAlpha,
                       v.family, (v.launch_bound ? verdict::kLaunchBoundMinChange : verdict::kBandwidthBoundMinChange) * 100,
                       v.launch_bound ? "launch-bound" : "bandwidth-bound");
  const bool lower = v.metric == "p50_us";
  std::string intervals;  // which intervals judged the row
  if (!v.measured_interval_kind.empty()) intervals = "; interval " + v.measured_interval_kind;
  if (!v.expected_interval_kind.empty()) intervals += ", the reference's " + v.expected_interval_kind;
  return fmt::format("{}  {}  {}: {} {:.4g}, expected {:.4g} ({:+.1f}%; {} {}{}% allowed; {}{}{})", outcome, v.name,
                     v.word, v.metric, *v.measured, *v.expected, v.deviation_pct(), lower ? "up to" : "down to",
                     lower ? "+" : "-", v.tolerance_pct, v.basis, noise_note(v), intervals);
}

bool print_verdicts(std::vector<Verdict>& verdicts, std::size_t unchecked, const std::string& path) {
  judge_draws(verdicts);
  std::size_t failed = 0;
  console::say("\ncheck against {}:\n", path);
  for (const auto& v : verdicts) {
    failed += !v.pass;
    console::say("{}\n", verdict_line(v));
  }
  console::say("check: {} PASS, {} FAIL, {} measured cases with no expectation\n", verdicts.size() - failed, failed, unchecked);
  return failed == 0;
}

}  // namespace dmabench::check
