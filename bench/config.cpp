#include "bench/config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "bench/patterns/pattern.hpp"
#include "core/host_memory.hpp"
#include "core/read_file.hpp"
#include "core/units.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxSizes = 4096;
constexpr int kMaxRotate = 4096;
constexpr std::size_t kMaxVariants = 4096;  // variants of one engine entry (the product of its option lists)

const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = {"name",    "description", "sizes",      "patterns",      "engines",
                                                "devices", "timing",      "warmup",     "iterations",    "pipeline_depth", "breakdown", "power",
                                                "overlap", "sweeps", "in_place", "max_timed_bytes", "min_iterations", "rotate",
                                                "layout", "host_memory"};
  return keys;
}

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw InputError(fmt::format("config: {}: {}", field, what));
}

std::string show(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::vector<std::string> pattern_names() {
  std::vector<std::string> out;
  for (const Pattern* p : all_patterns()) out.emplace_back(p->name());
  return out;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& s : engine_specs()) out.push_back(s.name);
  return out;
}

int parse_int(const json& v, const std::string& field, int min, int max) {
  if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > max)
    fail(field, fmt::format("expected an integer from {} to {}, got {}", min, max, show(v)));
  return v.get<int>();
}

std::uint64_t parse_size(const json& v, const std::string& field) {
  if (v.is_string()) return parse_bytes(v.get<std::string>(), field);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() >= 1) return v.get<std::uint64_t>();
  fail(field, fmt::format("expected a byte count (an integer >= 1 or a string such as \"64KiB\"), got {}", show(v)));
}

std::vector<std::uint64_t> parse_sizes(const json& v) {
  const std::string field = "sizes";
  std::vector<std::uint64_t> out;
  if (v.is_string() || v.is_number()) {
    out.push_back(parse_size(v, field));
  } else if (v.is_array()) {
    if (v.empty()) fail(field, "the list is empty; give at least one size");
    if (v.size() > kMaxSizes) fail(field, fmt::format("{} sizes; at most {} are accepted", v.size(), kMaxSizes));
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(parse_size(v[i], fmt::format("sizes[{}]", i)));
  } else if (v.is_object()) {
    for (const auto& [k, _] : v.items())
      if (k != "from" && k != "to" && k != "factor" && k != "step")
        fail(fmt::format("sizes.{}", k), "unknown key; accepted: from, to, and one of factor or step");
    if (!v.contains("from") || !v.contains("to")) fail(field, "a range needs 'from' and 'to'");
    const std::uint64_t from = parse_size(v["from"], "sizes.from"), to = parse_size(v["to"], "sizes.to");
    if (from > to)
      fail(field, fmt::format("empty range: from {} is above to {}", format_bytes(from), format_bytes(to)));
    if (v.contains("factor") == v.contains("step")) fail(field, "a range needs exactly one of 'factor' or 'step'");
    if (v.contains("factor")) {
      const json& f = v["factor"];
      if (!f.is_number() || !(f.get<double>() > 1.0))
        fail("sizes.factor", fmt::format("expected a number above 1, got {}", show(f)));
      const double factor = f.get<double>();
      for (std::uint64_t s = from; s <= to;) {
        out.push_back(s);
        if (out.size() > kMaxSizes) fail(field, fmt::format("the range has more than {} sizes", kMaxSizes));
        const double grown = std::round(static_cast<double>(s) * factor);
        if (grown > static_cast<double>(to)) break;  // also keeps the next size inside 64 bits
        const auto next = static_cast<std::uint64_t>(grown);
        if (next <= s) fail("sizes.factor", fmt::format("{} does not grow {} bytes by a whole byte", factor, s));
        s = next;
      }
    } else {
      const std::uint64_t step = parse_size(v["step"], "sizes.step");
      for (std::uint64_t s = from;; s += step) {
        out.push_back(s);
        if (out.size() > kMaxSizes) fail(field, fmt::format("the range has more than {} sizes", kMaxSizes));
        if (to - s < step) break;  // the next size would pass `to` (or wrap past 2^64)
      }
    }
  } else {
    fail(field, fmt::format("expected a size, a list of sizes or a range {{\"from\", \"to\", \"factor\"}}, got {}", show(v)));
  }
  return out;
}

std::vector<std::string> parse_names(const json& v, const std::string& field, const std::vector<std::string>& accepted) {
  std::vector<std::string> out;
  auto add = [&](const json& item, const std::string& where) {
    if (!item.is_string()) fail(where, fmt::format("expected a string, got {}", show(item)));
    const std::string s = item.get<std::string>();
    if (s == "all") {
      for (const auto& a : accepted)
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
      return;
    }
    if (std::find(accepted.begin(), accepted.end(), s) == accepted.end())
      fail(where, fmt::format("unknown value '{}'; accepted: {} (or \"all\")", s, fmt::join(accepted, ", ")));
    if (std::find(out.begin(), out.end(), s) != out.end()) fail(where, fmt::format("'{}' is listed twice", s));
    out.push_back(s);
  };
  if (v.is_string()) {
    add(v, field);
  } else if (v.is_array() && !v.empty()) {
    for (std::size_t i = 0; i < v.size(); ++i) add(v[i], fmt::format("{}[{}]", field, i));
  } else {
    fail(field, fmt::format("expected a non-empty list of names from {}, got {}", fmt::join(accepted, ", "), show(v)));
  }
  return out;
}

// Cartesian product of option axes -> variants, each with every option filled in.
std::vector<EngineVariant> parse_engine(const json& item, const std::string& field) {
  std::string name;
  json options = json::object();
  if (item.is_string()) {
    name = item.get<std::string>();
  } else if (item.is_object()) {
    for (const auto& [k, _] : item.items())
      if (k != "name" && k != "options") fail(fmt::format("{}.{}", field, k), "unknown key; accepted: name, options");
    if (!item.contains("name") || !item["name"].is_string()) fail(field, "an engine object needs a string 'name'");
    name = item["name"].get<std::string>();
    if (item.contains("options")) {
      options = item["options"];
      if (!options.is_object()) fail(field + ".options", fmt::format("expected an object, got {}", show(options)));
    }
  } else {
    fail(field, fmt::format("expected an engine name or {{\"name\": ..., \"options\": {{...}}}}, got {}", show(item)));
  }
  const EngineSpec* spec = find_engine_spec(name);
  if (!spec) fail(field, fmt::format("unknown engine '{}'; accepted: {}", name, fmt::join(engine_names(), ", ")));

  std::vector<EngineVariant> variants = {EngineVariant{name, json::object()}};
  for (const auto& [key, value] : options.items()) {
    auto it = std::find_if(spec->options.begin(), spec->options.end(), [&](const OptionSpec& o) { return o.name == key; });
    if (it == spec->options.end()) {
      std::vector<std::string> known;
      for (const auto& o : spec->options) known.push_back(o.name);
      fail(fmt::format("{}.options.{}", field, key),
           fmt::format("engine '{}' has no option '{}'; its options: {}", name, key,
                       known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
    }
    const json values = value.is_array() ? value : json::array({value});
    if (values.empty()) fail(fmt::format("{}.options.{}", field, key), "the list is empty");
    std::vector<EngineVariant> next;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!it->accepts(values[i]))
        fail(fmt::format("{}.options.{}", field, key),
             fmt::format("{} is not accepted; accepted: {}", show(values[i]), it->accepted()));
      if (it->check)
        if (const WhyNot problem = it->check(values[i]))
          fail(fmt::format("{}.options.{}", field, key), *problem);
      for (auto v : variants) {
        v.options[key] = values[i];
        next.push_back(std::move(v));
      }
    }
    variants = std::move(next);
    if (variants.size() > kMaxVariants)
      fail(fmt::format("{}.options", field), fmt::format("the option lists make more than {} variants of engine '{}'",
                                                         kMaxVariants, name));
  }
  for (auto& v : variants) v.options = with_defaults(name, std::move(v.options));
  return variants;
}

DeviceSet parse_device_set(const json& v, const std::string& field) {
  DeviceSet set;
  if (v.is_string() && v.get<std::string>() == "all") {
    set.all = true;
    return set;
  }
  if (v.is_string() && v.get<std::string>() == "pairs") {
    set.pairs = true;
    return set;
  }
  if (v.is_object() && v.size() == 1 && v.contains("pairs")) {  // {"pairs": [ids]}: the pairs of these devices
    set = parse_device_set(v["pairs"], field + ".pairs");
    if (set.all) fail(field + ".pairs", "expected a list of device ids (\"pairs\" alone takes every device)");
    set.pairs = true;
    return set;
  }
  if (!v.is_array() || v.empty())
    fail(field, fmt::format("expected \"all\", \"pairs\", {{\"pairs\": [ids]}} or a non-empty list of device ids, got {}", show(v)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const int id = parse_int(v[i], fmt::format("{}[{}]", field, i), 0, 1 << 20);
    if (std::find(set.ids.begin(), set.ids.end(), id) != set.ids.end())
      fail(field, fmt::format("device {} is listed twice", id));
    set.ids.push_back(id);
  }
  return set;
}

std::vector<DeviceSet> parse_devices(const json& v) {
  // "all" | "pairs" | {"pairs": [0, 1, 2]} | [0, 1] | [[0, 1], "all", ...]
  if (v.is_array() && !v.empty() && (v[0].is_array() || v[0].is_string() || v[0].is_object())) {
    std::vector<DeviceSet> sets;
    for (std::size_t i = 0; i < v.size(); ++i) sets.push_back(parse_device_set(v[i], fmt::format("devices[{}]", i)));
    return sets;
  }
  return {parse_device_set(v, "devices")};
}

std::vector<Timing> parse_timings(const json& v) {
  std::vector<Timing> out;
  for (const auto& name : parse_names(v, "timing", {"oneshot", "pipelined"}))
    out.push_back(name == "oneshot" ? Timing::oneshot : Timing::pipelined);
  return out;
}

// "power": true | false | {"source": "auto"|"nvml"|"rocm-smi"|"rapl"|"none", "window_s": seconds}
void parse_power(const json& v, Config& c) {
  if (v.is_boolean()) {
    c.power = v.get<bool>();
    return;
  }
  if (!v.is_object()) fail("power", fmt::format("expected true, false or {{\"source\", \"window_s\"}}, got {}", show(v)));
  c.power = true;
  for (const auto& [k, x] : v.items()) {
    if (k == "source") {
      const std::vector<std::string> names = {"auto", "nvml", "rocm-smi", "rapl", "none"};
      if (!x.is_string() || std::find(names.begin(), names.end(), x.get<std::string>()) == names.end())
        fail("power.source", fmt::format("{} is not a power source; accepted: {}", show(x), fmt::join(names, ", ")));
      c.power_source = x.get<std::string>();
    } else if (k == "window_s") {
      if (!x.is_number() || x.get<double>() < 0.2 || x.get<double>() > 600)
        fail("power.window_s", fmt::format("expected seconds from 0.2 to 600, got {}", show(x)));
      c.power_window_s = x.get<double>();
    } else {
      fail(fmt::format("power.{}", k), "unknown key; accepted: source, window_s");
    }
  }
}

std::vector<Location> parse_host(const json& v);

// The keys of a "transfer" workload (compute/transfer_load.cpp): what moves, how, in which host memory.
bool parse_transfer_key(const std::string& k, const json& x, compute::Spec& spec) {
  const std::string field = "overlap." + k;
  if (k == "pattern") {
    if (!x.is_string() || x == "all") fail(field, fmt::format("expected one pattern name, got {}", show(x)));
    spec.pattern = parse_names(x, field, pattern_names()).at(0);
  } else if (k == "engine") {
    const auto variants = parse_engine(x, field);
    if (variants.size() != 1)
      fail(field, fmt::format("the option lists make {} variants; a background transfer is one variant", variants.size()));
    spec.engine = variants[0].engine;
    spec.options = variants[0].options;
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
    j["engine"] = {{"name", o->compute.engine}, {"options", o->compute.options}};
    j.erase("options");
  }
  j["duration_ms"] = o->duration_ms;
  j["rounds"] = o->rounds;
  j["min_samples"] = o->min_samples;
  return j;
}


// A value or a list of values (an axis), each parsed by `one` with its field name.
template <class T>
std::vector<T> axis(const json& v, const std::string& field, const std::function<T(const json&, const std::string&)>& one) {
  std::vector<T> out;
  if (!v.is_array()) {
    out.push_back(one(v, field));
    return out;
  }
  if (v.empty()) fail(field, "the list is empty");
  for (std::size_t i = 0; i < v.size(); ++i) {
    T x = one(v[i], fmt::format("{}[{}]", field, i));
    if (std::find(out.begin(), out.end(), x) != out.end()) fail(field, fmt::format("{} is listed twice", show(v[i])));
    out.push_back(std::move(x));
  }
  return out;
}

constexpr std::uint64_t kMaxBlocks = 1 << 15;       // blocks per transfer (sm's grid takes one job per row)
constexpr std::uint64_t kMaxPoolSlots = 1 << 24;    // slots of a random pool (its permutation is built per case)

// One "layout" entry: "contiguous", {"kind": "contiguous"} or {"kind": "blocks", "block_bytes", "blocks",
// "order", "stride_bytes", "pool_bytes", "seed", "sides"}; lists in block_bytes, blocks and order are axes.
std::vector<Layout> parse_layout_entry(const json& v, const std::string& field) {
  if (v.is_string() && v.get<std::string>() == "contiguous") return {Layout{}};
  if (!v.is_object())
    fail(field, fmt::format("expected \"contiguous\" or {{\"kind\": \"blocks\", \"block_bytes\": ...}}, got {}", show(v)));
  const std::vector<std::string> keys = {"kind", "block_bytes", "blocks", "order", "stride_bytes", "pool_bytes", "seed", "sides"};
  for (const auto& [k, _] : v.items())
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      fail(field + "." + k, fmt::format("unknown key; accepted: {}", fmt::join(keys, ", ")));
  if (!v.contains("kind") || !v["kind"].is_string() || (v["kind"] != "blocks" && v["kind"] != "contiguous"))
    fail(field + ".kind", "expected \"contiguous\" or \"blocks\"");
  if (v["kind"] == "contiguous") {
    if (v.size() > 1) fail(field, "a contiguous layout takes no other keys");
    return {Layout{}};
  }
  if (!v.contains("block_bytes")) fail(field + ".block_bytes", "missing; give the block size (e.g. \"32KiB\") or a list");
  Layout base;
  base.blocks = true;
  if (v.contains("sides")) {
    const json& x = v["sides"];
    if (x == "both") base.sides = Layout::Sides::both;
    else if (x == "src") base.sides = Layout::Sides::src;
    else if (x == "dst") base.sides = Layout::Sides::dst;
    else fail(field + ".sides", fmt::format("{} is not accepted; accepted: \"both\", \"src\", \"dst\"", show(x)));
  }
  if (v.contains("seed")) base.seed = static_cast<std::uint64_t>(parse_int(v["seed"], field + ".seed", 0, 1 << 30));
  const auto sizes = axis<std::uint64_t>(v["block_bytes"], field + ".block_bytes", parse_size);
  const auto counts = v.contains("blocks")
                          ? axis<std::uint64_t>(v["blocks"], field + ".blocks",
                                                [](const json& x, const std::string& f) {
                                                  return static_cast<std::uint64_t>(parse_int(x, f, 1, kMaxBlocks));
                                                })
                          : std::vector<std::uint64_t>{0};
  const auto orders = v.contains("order") ? axis<std::string>(v["order"], field + ".order",
                                                                [](const json& x, const std::string& f) {
                                                                  if (x != "sequential" && x != "strided" && x != "random")
                                                                    fail(f, fmt::format("{} is not accepted; accepted: \"sequential\", \"strided\", \"random\"", show(x)));
                                                                  return x.get<std::string>();
                                                                })
                                          : std::vector<std::string>{"sequential"};
  const std::uint64_t stride = v.contains("stride_bytes") ? parse_size(v["stride_bytes"], field + ".stride_bytes") : 0;
  const std::uint64_t pool = v.contains("pool_bytes") ? parse_size(v["pool_bytes"], field + ".pool_bytes") : 0;
  if (stride && std::find(orders.begin(), orders.end(), "strided") == orders.end())
    fail(field + ".stride_bytes", "belongs to order \"strided\"");
  if (pool && std::find(orders.begin(), orders.end(), "random") == orders.end())
    fail(field + ".pool_bytes", "belongs to order \"random\"");
  std::vector<Layout> out;
  for (std::uint64_t b : sizes)
    for (std::uint64_t n : counts)
      for (const std::string& o : orders) {
        Layout l = base;
        l.block_bytes = b;
        l.count = n;
        l.order = o == "random" ? Layout::Order::random : o == "strided" ? Layout::Order::strided : Layout::Order::sequential;
        if (l.order == Layout::Order::strided) {
          if (!stride) fail(field + ".stride_bytes", "order \"strided\" needs stride_bytes (the distance between block starts)");
          if (stride < b)
            fail(field + ".stride_bytes", fmt::format("{} is less than block_bytes {}: strided blocks would overlap",
                                                      format_bytes(stride), format_bytes(b)));
          l.stride_bytes = stride;
        }
        if (l.order == Layout::Order::random && pool) {
          if (pool < b) fail(field + ".pool_bytes", fmt::format("{} is smaller than one block of {}", format_bytes(pool), format_bytes(b)));
          if (n && pool / b < n)
            fail(field + ".pool_bytes", fmt::format("a pool of {} holds {} blocks of {}, fewer than blocks ({})", format_bytes(pool),
                                                    pool / b, format_bytes(b), n));
          if (pool / b > kMaxPoolSlots)
            fail(field + ".pool_bytes", fmt::format("a pool of {} has {} slots of {}; at most {} are accepted", format_bytes(pool),
                                                    pool / b, format_bytes(b), kMaxPoolSlots));
          l.pool_bytes = pool;
        }
        out.push_back(l);
      }
  return out;
}

std::vector<Layout> parse_layouts(const json& v) {
  const json list = v.is_array() ? v : json::array({v});
  if (list.empty()) fail("layout", "the list is empty");
  std::vector<Layout> out;
  for (std::size_t i = 0; i < list.size(); ++i)
    for (const Layout& l : parse_layout_entry(list[i], v.is_array() ? fmt::format("layout[{}]", i) : "layout")) {
      if (std::find(out.begin(), out.end(), l) != out.end()) fail("layout", "a layout is listed twice");
      out.push_back(l);
    }
  if (out.size() > kMaxVariants) fail("layout", fmt::format("more than {} layouts", kMaxVariants));
  return out;
}

// "host_memory": {"kind": kind | [kinds] | "all", "numa": "local" | "remote" | node | "all" | [...]}
std::vector<Location> parse_host(const json& v) {
  if (!v.is_object()) fail("host_memory", fmt::format("expected {{\"kind\": ..., \"numa\": ...}}, got {}", show(v)));
  for (const auto& [k, _] : v.items())
    if (k != "kind" && k != "numa") fail("host_memory." + k, "unknown key; accepted: kind, numa");
  std::vector<std::string> kind_names;
  for (HostKind k : all_host_kinds()) kind_names.emplace_back(to_string(k));
  std::vector<HostKind> kinds = {HostKind::pinned};
  if (v.contains("kind")) {
    kinds.clear();
    for (const auto& name : parse_names(v["kind"], "host_memory.kind", kind_names))
      kinds.push_back(all_host_kinds()[std::find(kind_names.begin(), kind_names.end(), name) - kind_names.begin()]);
  }
  std::vector<NumaRequest> numas = {NumaRequest{}};
  if (v.contains("numa")) {
    numas.clear();
    const json list = v["numa"].is_array() ? v["numa"] : json::array({v["numa"]});
    if (list.empty()) fail("host_memory.numa", "the list is empty");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string f = v["numa"].is_array() ? fmt::format("host_memory.numa[{}]", i) : "host_memory.numa";
      const json& x = list[i];
      std::vector<NumaRequest> add;
      if (x == "local") add.push_back({NumaRequest::Mode::local, -1});
      else if (x == "remote") add.push_back({NumaRequest::Mode::remote, -1});
      else if (x == "all")
        for (int n : hostmem::nodes()) add.push_back({NumaRequest::Mode::node, n});
      else if (x.is_number_integer()) {
        const int n = parse_int(x, f, 0, 1023);
        if (!hostmem::node_exists(n))
          fail(f, fmt::format("NUMA node {} does not exist on this machine; its nodes: {}", n, fmt::join(hostmem::nodes(), ", ")));
        add.push_back({NumaRequest::Mode::node, n});
      } else {
        fail(f, fmt::format("{} is not accepted; accepted: \"local\", \"remote\", a node number, \"all\"", show(x)));
      }
      for (const auto& r : add) {
        if (std::find(numas.begin(), numas.end(), r) != numas.end()) fail("host_memory.numa", fmt::format("{} is listed twice", r.label()));
        numas.push_back(r);
      }
    }
  }
  std::vector<Location> out;
  for (HostKind k : kinds)
    for (const auto& n : numas) {
      Location l = host_location();
      l.kind = k;
      l.numa = n;
      out.push_back(l);
    }
  return out;
}

}  // namespace

std::string_view to_string(Timing t) { return t == Timing::oneshot ? "oneshot" : "pipelined"; }

namespace {

// "name" and "description".
void parse_labels(const json& doc, Config& c) {
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) fail("name", "expected a string");
    c.name = doc["name"].get<std::string>();
  }
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) fail("description", "expected a string");
    c.description = doc["description"].get<std::string>();
  }
}

// "engines": names or {name, options} objects ("all": every engine), each expanded into its
// option variants; absent: every engine with default options.
std::vector<EngineVariant> parse_engines(const json& doc) {
  std::vector<EngineVariant> out;
  auto add = [&](const json& item, const std::string& field) {
    for (auto& v : parse_engine(item, field)) out.push_back(std::move(v));
  };
  if (!doc.contains("engines")) {
    for (const auto& spec : engine_specs()) add(spec.name, "engines");
    return out;
  }
  const json& e = doc["engines"];
  const json list = e.is_array() ? e : json::array({e});
  if (list.empty()) fail("engines", "the list is empty");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("engines[{}]", i);
    if (list[i].is_string() && list[i].get<std::string>() == "all") {
      for (const auto& spec : engine_specs()) add(spec.name, field);
    } else {
      add(list[i], field);
    }
  }
  return out;
}

std::vector<int> parse_rotate(const json& v) {
  const json list = v.is_array() ? v : json::array({v});
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const int n = parse_int(list[i], v.is_array() ? fmt::format("rotate[{}]", i) : "rotate", 1, kMaxRotate);
    if (std::find(out.begin(), out.end(), n) != out.end()) fail("rotate", fmt::format("{} is listed twice", n));
    out.push_back(n);
  }
  if (out.empty()) fail("rotate", "the list is empty");
  return out;
}

// "in_place": true, false or a list of them; true needs a pattern that has an in-place form.
std::vector<bool> parse_in_place(const json& v, const std::vector<std::string>& patterns) {
  const json list = v.is_array() ? v : json::array({v});
  std::vector<bool> out;
  for (const auto& x : list) {
    if (!x.is_boolean()) fail("in_place", fmt::format("expected true, false or a list of them, got {}", show(v)));
    if (std::find(out.begin(), out.end(), x.get<bool>()) != out.end())
      fail("in_place", fmt::format("{} is listed twice", x.dump()));
    out.push_back(x.get<bool>());
  }
  if (out.empty()) fail("in_place", "the list is empty");
  const bool any_form = std::any_of(patterns.begin(), patterns.end(),
                                    [](const std::string& p) { return find_pattern(p)->in_place() != nullptr; });
  if (std::find(out.begin(), out.end(), true) != out.end() && !any_form) {
    std::vector<std::string> with;
    for (const Pattern* p : all_patterns())
      if (p->in_place()) with.emplace_back(p->name());
    fail("in_place", fmt::format("true needs a pattern with an in-place form ({}); the patterns here are {}",
                                 fmt::join(with, ", "), fmt::join(patterns, ", ")));
  }
  return out;
}

// One sweep: the whole document when it has no "sweeps", else the top level merged with one entry.
Config parse_sweep(const json& doc) {
  Config c;
  parse_labels(doc, c);
  if (doc.contains("layout")) c.layouts = parse_layouts(doc["layout"]);
  if (doc.contains("host_memory")) c.host = parse_host(doc["host_memory"]);
  const bool counted = std::all_of(c.layouts.begin(), c.layouts.end(), [](const Layout& l) { return l.count > 0; });
  if (doc.contains("sizes") && counted)
    fail("sizes", "every layout gives its blocks count, which sets the size (blocks x block_bytes): leave sizes out");
  if (!doc.contains("sizes") && !counted)
    fail("sizes", "missing; give a size, a list, or a range {\"from\", \"to\", \"factor\"}");
  if (doc.contains("sizes")) c.sizes = parse_sizes(doc["sizes"]);
  c.patterns = doc.contains("patterns") ? parse_names(doc["patterns"], "patterns", pattern_names()) : pattern_names();
  c.engines = parse_engines(doc);
  c.devices = doc.contains("devices") ? parse_devices(doc["devices"]) : std::vector<DeviceSet>{DeviceSet{true, {}}};
  c.timings = doc.contains("timing") ? parse_timings(doc["timing"])
                                     : std::vector<Timing>{Timing::oneshot, Timing::pipelined};
  if (doc.contains("warmup")) c.warmup = parse_int(doc["warmup"], "warmup", 0, 1000000);
  if (doc.contains("iterations")) c.iterations = parse_int(doc["iterations"], "iterations", 1, 10000000);
  if (doc.contains("pipeline_depth")) c.pipeline_depth = parse_int(doc["pipeline_depth"], "pipeline_depth", 1, 1000000);
  if (doc.contains("rotate")) c.rotate = parse_rotate(doc["rotate"]);
  if (doc.contains("max_timed_bytes")) c.max_timed_bytes = parse_size(doc["max_timed_bytes"], "max_timed_bytes");
  if (doc.contains("min_iterations")) {
    c.min_iterations = parse_int(doc["min_iterations"], "min_iterations", 1, 10000000);
    if (c.min_iterations > c.iterations)
      fail("min_iterations", fmt::format("{} is more than iterations ({})", c.min_iterations, c.iterations));
  }
  if (doc.contains("power")) parse_power(doc["power"], c);
  if (doc.contains("breakdown")) {
    if (!doc["breakdown"].is_boolean()) fail("breakdown", fmt::format("expected true or false, got {}", show(doc["breakdown"])));
    c.breakdown = doc["breakdown"].get<bool>();
  }
  if (doc.contains("overlap")) c.overlap = parse_overlap(doc["overlap"]);
  if (doc.contains("in_place")) c.in_place = parse_in_place(doc["in_place"], c.patterns);
  return c;
}

}  // namespace

Config parse_config(const json& doc) {
  if (!doc.is_object()) throw InputError("config: the document must be a JSON object");
  for (const auto& [k, _] : doc.items())
    if (std::find(config_keys().begin(), config_keys().end(), k) == config_keys().end())
      throw InputError(fmt::format("config: key '{}' is unknown; accepted: {}", k, fmt::join(config_keys(), ", ")));
  if (!doc.contains("sweeps")) return parse_sweep(doc);
  const json& list = doc["sweeps"];
  if (!list.is_array() || list.empty())
    fail("sweeps", fmt::format("expected a non-empty list of objects that override the top-level settings, got {}", show(list)));
  json base = doc;
  base.erase("sweeps");
  Config c;
  parse_labels(doc, c);
  if (doc.contains("power")) parse_power(doc["power"], c);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("sweeps[{}]", i);
    if (!list[i].is_object()) fail(where, fmt::format("expected an object, got {}", show(list[i])));
    json merged = base;
    merged.erase("name");
    for (const auto& [k, v] : list[i].items()) {
      if (k == "sweeps" || k == "power" || k == "description")
        fail(where + "." + k, "not allowed in a sweep (sweeps do not nest; power and description are run-wide)");
      if (std::find(config_keys().begin(), config_keys().end(), k) == config_keys().end())
        fail(where + "." + k, fmt::format("unknown key; accepted: {}", fmt::join(config_keys(), ", ")));
      merged[k] = v;
    }
    try {
      c.sweeps.push_back(parse_sweep(merged));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} ({})", e.what(), where));
    }
    if (c.sweeps.back().name.empty()) c.sweeps.back().name = fmt::format("{}[{}]", c.name, i);
  }
  return c;
}

namespace {

// Limits on a config file, checked while it is read and parsed (never after the fact).
constexpr std::size_t kMaxConfigBytes = 1 << 20;  // 1 MiB: shipped configs are below 10 KiB
constexpr int kMaxDepth = 32;                     // nesting: the deepest valid config is 6 levels

std::string read_config_text(const std::string& path) {
  // a regular file only: a FIFO with no writer would wait forever, /dev/zero never ends
  Maybe<std::string> text = read_small_file(path, kMaxConfigBytes);
  if (!text)
    throw InputError(fmt::format("--config {}: {}; accepted: a regular file of at most {} KiB holding a JSON config", path,
                                 text.why_not(), kMaxConfigBytes >> 10));
  if (const auto nul = text->find('\0'); nul != std::string::npos)
    throw InputError(fmt::format("config '{}': a NUL byte at offset {}; a config is JSON text", path, nul));
  return std::move(text).value();
}

// Parses with the limits: nesting depth, and no key twice in one object (JSON allows it; a
// config that says one thing twice is a mistake, and the last one would silently win).
json parse_config_text(const std::string& text, const std::string& path) {
  std::vector<std::set<std::string>> keys;  // per open object
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth)
      throw InputError(fmt::format("config '{}': nested more than {} levels deep", path, kMaxDepth));
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw InputError(fmt::format("config '{}': key '{}' appears twice in one object", path,
                                   show(parsed)));
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("config '{}': not valid JSON: {}", path, e.what()));
  } catch (const json::out_of_range& e) {  // a number past a double's range (1e400)
    const std::string what = e.what();
    throw InputError(fmt::format("config '{}': {}; a number must fit in a 64-bit float", path,
                                 what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2)));
  }
}

}  // namespace

Config load_config(const std::string& path) {
  return parse_config(parse_config_text(read_config_text(path), path));
}

namespace {

json layouts_json(const std::vector<Layout>& layouts) {
  json out = json::array();
  for (const Layout& l : layouts) out.push_back(to_json(l));
  return out;
}

json host_json(const std::vector<Location>& host) {
  json kinds = json::array(), numas = json::array();
  for (const Location& l : host) {
    if (std::find(kinds.begin(), kinds.end(), json(to_string(l.kind))) == kinds.end()) kinds.push_back(to_string(l.kind));
    if (std::find(numas.begin(), numas.end(), json(l.numa.label())) == numas.end()) numas.push_back(l.numa.label());
  }
  return {{"kind", kinds}, {"numa", numas}};
}

}  // namespace

json to_json(const Config& c) {
  if (!c.sweeps.empty()) {
    json parts = json::array();
    for (const auto& p : c.sweeps) parts.push_back(to_json(p));
    return {{"name", c.name},
            {"description", c.description},
            {"power", c.power ? json{{"source", c.power_source}, {"window_s", c.power_window_s}} : json(false)},
            {"sweeps", parts}};
  }
  json engines = json::array();
  for (const auto& e : c.engines) engines.push_back({{"name", e.engine}, {"options", e.options}});
  json devices = json::array();
  for (const auto& d : c.devices)
    devices.push_back(d.pairs ? (d.ids.empty() ? json("pairs") : json{{"pairs", d.ids}}) : d.all ? json("all") : json(d.ids));
  json timings = json::array();
  for (auto t : c.timings) timings.push_back(to_string(t));
  return {{"name", c.name},     {"description", c.description}, {"sizes", c.sizes},
          {"patterns", c.patterns}, {"engines", engines},       {"devices", devices},
          {"timing", timings},  {"warmup", c.warmup},           {"iterations", c.iterations},
          {"max_timed_bytes", c.max_timed_bytes ? json(*c.max_timed_bytes) : json()}, {"min_iterations", c.min_iterations}, {"rotate", c.rotate},
          {"pipeline_depth", c.pipeline_depth}, {"breakdown", c.breakdown},
          {"power", c.power ? json{{"source", c.power_source}, {"window_s", c.power_window_s}} : json(false)},
          {"overlap", overlap_json(c.overlap)},
          {"in_place", c.in_place},
          {"layout", layouts_json(c.layouts)},
          {"host_memory", host_json(c.host)}};
}

DeviceSet parse_device_list(const std::string& text, const std::string& field, bool repeats) {
  if (text == "all") return DeviceSet{true, {}};
  if (text == "pairs") {
    DeviceSet set;
    set.pairs = true;
    return set;
  }
  const std::string accepted = "accepted: \"all\", \"pairs\" or ids such as 0,1,3 (digits and commas only)";
  if (text.empty()) throw InputError(fmt::format("{}: empty; {}", field, accepted));
  json list = json::array();
  std::size_t start = 0;
  while (true) {  // every item between commas, the empty ones too ("0,1," has an empty last item)
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const bool digits = !item.empty() && item.size() <= 7 &&
                        std::all_of(item.begin(), item.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
    if (!digits) throw InputError(fmt::format("{}: '{}' is not a device id in '{}'; {}", field, item, text, accepted));
    list.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (repeats) {
    DeviceSet set;
    for (const auto& id : list) set.ids.push_back(id.get<int>());
    return set;
  }
  try {
    return parse_device_set(list, field);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()).substr(std::string("config: ").size()));
  }
}

}  // namespace dmabench
