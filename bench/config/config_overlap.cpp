// Config overlap: the compute workload an overlap case runs beside ("overlap"), and it written back.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"

namespace dmabench::config_parse {
namespace {

// The keys of a "transfer" workload (bench/run/transfer_load.cpp): what moves, how, in which host memory.
bool parse_transfer_key(const std::string& k, const json& x, beside::Spec& spec) {
  const std::string field = "overlap." + k;
  if (k == "pattern") {
    if (!x.is_string() || x == "all") fail(field, fmt::format("expected one pattern name, got {}", show(x)));
    spec.pattern = parse_names(x, field, pattern_names()).at(0);
  } else if (k == "engine") {
    const auto variants = parse_engine(x, field);
    if (variants.size() != 1)
      fail(field, fmt::format("the option lists make {} variants; a background transfer is one variant", variants.size()));
    spec.variant = variants[0];
  } else if (k == "host_memory") {
    const auto locations = parse_host(x);
    if (locations.size() != 1) fail(field, "expected one host kind and one NUMA request for a background transfer");
    spec.host = locations[0];
  } else if (k == "pipeline_depth") {
    spec.depth = parse_int(x, field, 1, 1000);
  } else {
    return false;
  }
  return true;
}

}  // namespace

// "overlap": false | {"compute": "gemm" | "stream" | "transfer", "m", "n", "k", "dtype" (gemm), "bytes"
// (stream, transfer), "pattern", "engine", "host_memory", "pipeline_depth" (transfer), "duration_ms",
// "rounds", "min_samples"}
std::optional<OverlapConfig> parse_overlap(const json& v) {
  if (v.is_boolean() && !v.get<bool>()) return std::nullopt;
  const std::string kinds = "\"gemm\", \"stream\", \"transfer\"";
  if (!v.is_object())
    fail("overlap", fmt::format("expected false or an object {{\"compute\": {}, ...}}, got {}", kinds, show(v)));
  if (!v.contains("compute")) fail("overlap", "missing 'compute'; accepted: " + kinds);
  const json& kind = v["compute"];
  if (!kind.is_string() || (kind != "gemm" && kind != "stream" && kind != "transfer"))
    fail("overlap.compute", fmt::format("{} is not a compute workload; accepted: {}", show(kind), kinds));
  OverlapConfig o;
  o.compute.kind = kind.get<std::string>();
  if (o.compute.kind == "transfer") o.compute.bytes = 256ull << 20;
  const std::map<std::string, std::vector<std::string>> own = {
      {"gemm", {"m", "n", "k", "dtype"}}, {"stream", {"bytes"}},
      {"transfer", {"bytes", "pattern", "engine", "host_memory", "pipeline_depth"}}};
  for (const auto& [k, x] : v.items()) {
    const std::string field = "overlap." + k;
    const auto& mine = own.at(o.compute.kind);
    std::vector<std::string> owners;  // the workloads whose key it is
    for (const auto& [kind_name, keys] : own)
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) owners.push_back(fmt::format("\"{}\"", kind_name));
    if (!owners.empty() && std::find(mine.begin(), mine.end(), k) == mine.end())
      fail(field, fmt::format("{} belongs to compute {}, not \"{}\" (whose keys are {})", k, fmt::join(owners, " or "),
                              o.compute.kind, fmt::join(mine, ", ")));
    if (k == "compute" || parse_transfer_key(k, x, o.compute)) {
    } else if (k == "m" || k == "n" || k == "k") {
      const int d = parse_int(x, field, 1, 1 << 20);
      (k == "m" ? o.compute.m : k == "n" ? o.compute.n : o.compute.k) = d;
    } else if (k == "dtype") {
      if (!x.is_string() || (x != "bf16" && x != "fp16"))
        fail(field, fmt::format("{} is not a GEMM type; accepted: \"bf16\", \"fp16\"", show(x)));
      o.compute.dtype = x.get<std::string>();
    } else if (k == "bytes") {
      o.compute.bytes = parse_size(x, field);
    } else if (k == "duration_ms") {
      if (!x.is_number() || !(x.get<double>() >= 1) || x.get<double>() > 60000)
        fail(field, fmt::format("expected milliseconds from 1 to 60000, got {}", show(x)));
      o.duration_ms = x.get<double>();
    } else if (k == "rounds") {
      o.rounds = parse_int(x, field, 1, 1000);
    } else if (k == "min_samples") {
      o.min_samples = parse_int(x, field, 1, 1000000);
    } else {
      fail(field, fmt::format("unknown key; accepted: compute, {}, duration_ms, rounds, min_samples", fmt::join(mine, ", ")));
    }
  }
  return o;
}

json overlap_json(const std::optional<OverlapConfig>& o) {
  if (!o) return false;
  json j = o->compute.to_json();
  j["compute"] = j["kind"];
  j.erase("kind");
  if (o->compute.kind == "transfer") {  // written back as a config gives it
    j["engine"] = {{"name", o->compute.variant.engine}, {"options", o->compute.variant.options}};
    j.erase("options");
  }
  j["duration_ms"] = o->duration_ms;
  j["rounds"] = o->rounds;
  j["min_samples"] = o->min_samples;
  return j;
}

}  // namespace dmabench::config_parse
