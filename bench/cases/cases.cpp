#include "bench/cases/cases.hpp"

#include "core/datagen.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "patterns/pattern.hpp"
#include "core/units.hpp"
#include "engines/registry.hpp"

namespace dmabench {
namespace {

constexpr std::uint64_t kMaxCases = 200000;  // per run: a 16k-case sweep is large; this one would not fit in memory

const Pattern* pattern_of(const std::string& name, bool in_place) {
  const Pattern* p = find_pattern(name);
  if (!p) throw std::invalid_argument(fmt::format("unknown pattern '{}'", name));
  return in_place ? p->in_place() : p;
}

// A case's largest byte count (a rank's buffers over every rotated set) must fit in 64 bits with
// room to spare, or the plans' offsets and "needs N GiB" figures would wrap.
void check_byte_range(std::uint64_t bytes, int ranks, int rotate) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
  const std::uint64_t factor = static_cast<std::uint64_t>(std::max(ranks, 2)) * static_cast<std::uint64_t>(rotate);
  if (bytes > kLimit / factor)
    throw InputError(fmt::format("sizes: {} bytes per rank on {} ranks with rotate {} does not fit in 64-bit byte counts "
                                 "(at most 2^62 bytes per rank's buffers)",
                                 bytes, ranks, rotate));
}

// The ids of a device set, checked against the machine.
std::vector<int> device_ids(const DeviceSet& set, int device_count, const std::vector<int>& all_devices,
                            const std::string& device_word) {
  const std::vector<int> ids = set.all || (set.pairs && set.ids.empty()) ? all_devices : set.ids;
  for (int id : ids)
    if (id >= device_count)
      throw InputError(fmt::format("devices: {} {} does not exist; this machine has {}s 0..{}", device_word, id,
                                   device_word, device_count - 1));
  if (ids.empty()) throw InputError(fmt::format("devices: no {} is visible", device_word));
  return ids;
}

// devices "pairs": the device lists a pattern runs on, one case each. Two-device patterns (copy, bidir) get
// every ordered pair, one-device patterns (h2d, d2h, h2d-bidir) every device alone (patterns/pattern.hpp:
// pairing); where there is no pair (one device) the whole list, so that the case is skipped with the pattern's reason.
std::vector<std::vector<int>> device_pairs(const std::string& pattern_name, const std::vector<int>& ids) {
  const Pattern* p = pattern_of(pattern_name, false);
  const std::string_view kind = pairing(*p);
  const bool one = kind == "one-device";
  const bool two = kind == "two-device";
  if (!one && !two) {
    std::vector<std::string_view> paired;
    for (const Pattern* q : all_patterns())
      if (!pairing(*q).empty()) paired.push_back(q->name());
    throw InputError(fmt::format("devices: \"pairs\" applies to patterns on one or two devices ({}); '{}' runs on all "
                                 "its devices at once: give it a device list",
                                 fmt::join(paired, ", "), pattern_name));
  }
  std::vector<std::vector<int>> out;
  for (int a : ids) {
    if (one) out.push_back({a});
    else
      for (int b : ids)
        if (a != b) out.push_back({a, b});
  }
  if (out.empty()) out.push_back(ids);
  return out;
}

// The sizes of a pattern's cases under one layout: the config's sizes, the layout's count of blocks, or (routed
// patterns) one per routing, tokens_per_rank x token_bytes.
std::vector<std::pair<std::uint64_t, std::optional<Routing>>> size_points(const Config& config, const Pattern& pattern,
                                                                         const Layout& layout) {
  std::vector<std::pair<std::uint64_t, std::optional<Routing>>> out;
  if (pattern.routed())
    for (const Routing& r : config.routings) out.emplace_back(r.tokens_per_rank * r.token_bytes, r);
  else if (layout.count)
    out.emplace_back(layout.count * layout.block_bytes, std::nullopt);
  else
    for (std::uint64_t bytes : config.sizes) out.emplace_back(bytes, std::nullopt);
  return out;
}

// Free host memory (bytes; 0 when the system does not say).
std::uint64_t free_host_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

// Every case of one pattern form on one device set, in sweep order.
void add_pattern_cases(const Config& config, const std::string& pattern_name, bool in_place, const std::vector<int>& ids,
                       const std::string& device_word, std::vector<Case>& out) {
  const Pattern* pattern = pattern_of(pattern_name, in_place);
  if (!pattern) return;  // no in-place form: no in-place case
  const int used = pattern->ranks_used(static_cast<int>(ids.size()));
  const std::vector<int> devs = used > 0 ? std::vector<int>(ids.begin(), ids.begin() + used) : ids;
  const std::string not_runnable =
      used > 0 ? std::string()
               : fmt::format("{}{} cannot run on {} {}(s)", pattern_name, in_place ? " in place" : "", ids.size(), device_word);
  // host kinds and NUMA requests apply to patterns that use host memory; the others get the default once
  const std::vector<Location> hosts = pattern->uses_host_memory() ? config.host : std::vector<Location>{host_location(true)};
  for (const Layout& layout : config.layouts)
    for (const Location& host : hosts)
      for (const auto& engine : config.engines)
        for (Timing timing : config.timings)
          for (int rotate : config.rotate)
            for (const auto& [bytes, routing] : size_points(config, *pattern, layout)) {
              check_byte_range(bytes, std::max(static_cast<int>(devs.size()), routing ? routing->ranks : 0), rotate);
              Case c{.pattern = pattern_name,
                     .variant = engine,
                     .devices = devs,
                     .bytes_per_rank = bytes,
                     .timing = timing,
                     .in_place = in_place,
                     .run = config.run,
                     .rotate = rotate,
                     .layout = layout,
                     .routing = routing,
                     .host = host,
                     .not_runnable = not_runnable,
                     .plan = std::nullopt};
              if (routing && c.not_runnable.empty())  // a routing too costly to make here is skipped, with the reason
                c.not_runnable = routing_too_costly(*routing, routing->ranks > 0 ? routing->ranks : static_cast<int>(devs.size()),
                                                    free_host_bytes());
              plan_case(c);
              out.push_back(std::move(c));
            }
}

// a * b, or kMaxCases + 1 where it is larger (no overflow however long the axes)
std::uint64_t times(std::uint64_t a, std::uint64_t b) { return b != 0 && a > kMaxCases / b ? kMaxCases + 1 : a * b; }

// The cases one config (or one sweep of it) expands to, counted from its axes without making them (before
// names merge equal cases: never fewer than expand() makes), capped at kMaxCases + 1. `all_devices`: the
// devices "all" means (a set's ids are checked when it is expanded).
std::uint64_t count_cases(const Config& config, const std::vector<int>& all_devices) {
  std::uint64_t total = 0;
  for (const auto& part : config.sweeps) total = std::min(kMaxCases + 1, total + count_cases(part, all_devices));
  if (!config.sweeps.empty()) return total;
  for (const DeviceSet& set : config.devices)
    for (const auto& pattern_name : config.patterns)
      for (bool in_place : config.in_place) {
        const Pattern* pattern = pattern_of(pattern_name, in_place);
        if (!pattern) continue;  // no in-place form
        std::uint64_t n = 1;     // placements of the set: one, or its devices / ordered pairs with "pairs"
        if (set.pairs) {
          const std::uint64_t ids = set.all || set.ids.empty() ? all_devices.size() : set.ids.size();
          n = device_pairs(pattern_name, {0, 1, 2}).size() == 3 ? ids : times(ids, ids > 0 ? ids - 1 : 0);
        }
        std::uint64_t sizes = 0;
        for (const Layout& layout : config.layouts) sizes += size_points(config, *pattern, layout).size();
        n = times(n, times(sizes, pattern->uses_host_memory() ? config.host.size() : 1));
        for (std::size_t axis : {config.engines.size(), config.timings.size(), config.rotate.size()}) n = times(n, axis);
        total = std::min(kMaxCases + 1, total + n);
      }
  return total;
}

}  // namespace

std::string Case::name() const {
  // Options at their default value are left out of the name (they are all in the result's `options`).
  const std::string engine_part = variant_label(variant.engine, variant.options);
  const Pattern* p = find_pattern(pattern);
  const std::string host_part = p && p->uses_host_memory()
                                    ? fmt::format("/host={},numa={}", to_string(host.kind), host.numa.label())
                                    : std::string();
  return fmt::format("{}{}/{}/{}/dev={}/{}{}{}{}{}{}", pattern, in_place ? "-inplace" : "", engine_part, to_string(timing),
                     fmt::join(devices, ","), format_bytes(bytes_per_rank), host_part,
                     layout.blocks ? fmt::format("/{}", layout.label(bytes_per_rank)) : std::string(),
                     routing ? fmt::format("/moe={}", routing->label()) : std::string(),
                     rotate > 1 ? fmt::format("/rotate={}", rotate) : std::string(),
                     run.overlap ? fmt::format("/beside={}", run.overlap->compute.label()) : std::string());
}

int Case::ops_per_sample() const { return timing == Timing::pipelined ? run.pipeline_depth : 1; }

int Case::timed_iterations() const {
  if (!run.max_timed_bytes || !plan || plan->total_bytes == 0) return run.iterations;
  const double per_sample = static_cast<double>(plan->total_bytes) * ops_per_sample();
  const double fit = std::floor(static_cast<double>(*run.max_timed_bytes) / per_sample);
  const int fewest = std::min(run.min_iterations, run.iterations);
  return static_cast<int>(std::clamp(fit, static_cast<double>(fewest), static_cast<double>(run.iterations)));
}

// The pattern says whether the four-phase breakdown applies (Pattern::has_breakdown: one issuer's copies); its passes
// launch one operation and wait for it, whatever the case's timing mode.
bool Case::breakdown_applies() const {
  const Pattern* p = find_pattern(pattern);
  return run.breakdown && p != nullptr && p->has_breakdown();
}

std::uint64_t Case::seed() const {
  // What the case is, not how its name spells it: every engine option (defaults included, where the
  // name leaves them out), so a default that changes or an option the name shows differently does not
  // change the data of a case that is the same. (JSON objects dump with sorted keys: one spelling.)
  nlohmann::json options = variant.options;
  try {
    options = with_defaults(variant.engine, options);
  } catch (const std::invalid_argument&) {  // an engine the registry does not know (tests): as given
  }
  const Pattern* p = find_pattern(pattern);
  nlohmann::json id = {
      {"pattern", pattern},
      {"in_place", in_place},
      {"engine", variant.engine},
      {"options", options},
      {"devices", devices},
      {"bytes_per_rank", bytes_per_rank},
      {"timing", to_string(timing)},
      {"pipeline_depth", ops_per_sample()},
      {"rotate", rotate},
      {"layout", to_json(layout)},
      {"host", p && p->uses_host_memory() ? nlohmann::json{{"kind", to_string(host.kind)}, {"numa", host.numa.label()}}
                                          : nlohmann::json()},
      {"beside", run.overlap ? run.overlap->compute.to_json() : nlohmann::json()}};
  if (routing) id["routing"] = routing->to_json();  // only where there is one: every other case keeps its seed
  return fnv1a(id.dump());
}

void plan_case(Case& c) {
  c.plan.reset();
  if (!c.not_runnable.empty()) return;
  const Pattern* p = pattern_of(c.pattern, c.in_place);
  if (!p) throw std::invalid_argument(fmt::format("pattern '{}' has no in-place form", c.pattern));
  c.plan = c.routing ? p->plan_routed(c.devices, *c.routing) : p->plan(c.devices, c.bytes_per_rank);
  for (auto* at : {&c.plan->src_at, &c.plan->dst_at})
    for (Location& l : *at)
      if (l.host) l = c.host;
  apply_layout(*c.plan, c.layout);
  c.plan->sets = c.rotate;
}

void for_each_part(Config& config, const std::function<void(Config&)>& fn) {
  if (config.sweeps.empty()) return fn(config);
  for (auto& s : config.sweeps) fn(s);
}

std::vector<Case> expand(const Config& config, int device_count, const std::vector<int>& all_devices,
                         const std::string& device_word) {
  if (const std::uint64_t n = count_cases(config, all_devices); n > kMaxCases)
    throw InputError(fmt::format("the config expands to more than {} cases{}; split it into several runs", kMaxCases,
                                 config.sweeps.empty() ? "" : " (all its sweeps together)"));
  std::vector<Case> all;
  if (!config.sweeps.empty()) {
    for (const auto& part : config.sweeps)
      for (auto& c : expand(part, device_count, all_devices, device_word)) all.push_back(std::move(c));
  } else {
    std::vector<std::vector<int>> seen_sets;  // "all" and [0, 1] may be one set: compared as resolved
    for (const DeviceSet& set : config.devices) {
      const std::vector<int> ids = device_ids(set, device_count, all_devices, device_word);
      if (auto at = std::find(seen_sets.begin(), seen_sets.end(), ids); at != seen_sets.end())
        throw InputError(fmt::format("devices: the device set {} is listed twice (devices[{}] and devices[{}]); list each "
                                     "set once",
                                     fmt::join(ids, ","), at - seen_sets.begin(), seen_sets.size()));
      seen_sets.push_back(ids);
      for (const auto& pattern_name : config.patterns)
        for (bool in_place : config.in_place)
          for (const auto& each : set.pairs ? device_pairs(pattern_name, ids) : std::vector<std::vector<int>>{ids})
            add_pattern_cases(config, pattern_name, in_place, each, device_word, all);
    }
  }
  std::vector<Case> cases;  // the first case of each name
  std::set<std::string> seen;
  for (auto& c : all)
    if (seen.insert(c.name()).second) {
      c.index = cases.size();
      cases.push_back(std::move(c));
    }
  return cases;
}

void shuffle_cases(std::vector<const Case*>& cases, std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::size_t i = cases.size(); i > 1; --i) {
    state = datagen::mix64(state);
    std::swap(cases[i - 1], cases[state % i]);
  }
}

}  // namespace dmabench
