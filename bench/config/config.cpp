#include "bench/config/config.hpp"

#include "core/json_input.hpp"
#include "core/quote.hpp"
#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/config_parse.hpp"
#include "core/errors.hpp"
#include "patterns/pattern.hpp"
#include "core/read_file.hpp"
#include "core/units.hpp"
#include "engines/backend.hpp"
#include "power/source.hpp"

namespace dmabench {
using namespace config_parse;
namespace {

constexpr int kMaxRotate = 4096;

// The keys a config may have: its own, then the run settings' (config_run.cpp).
const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"name",     "description", "sizes",  "patterns",    "engines",   "devices",
                                  "timing",   "power",       "sweeps", "in_place",    "rotate",    "layout",
                                  "host_memory", "alltoallv", "backend"};
    k.insert(k.end(), run_setting_keys().begin(), run_setting_keys().end());
    return k;
  }();
  return keys;
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

// "power": true | false | {"source": one of power::source_names(), "window_s": seconds}
void parse_power(const json& v, Config& c) {
  if (v.is_boolean()) {
    c.power = v.get<bool>();
    return;
  }
  if (!v.is_object()) fail("power", fmt::format("expected true, false or {{\"source\", \"window_s\"}}, got {}", show(v)));
  c.power = true;
  for (const auto& [k, x] : v.items()) {
    if (k == "source") {
      if (!x.is_string() || !power::is_source_name(x.get<std::string>()))
        fail("power.source", fmt::format("{} is not a power source; accepted: {}", show(x), fmt::join(power::source_names(), ", ")));
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

}  // namespace

std::string_view to_string(Timing t) { return t == Timing::oneshot ? "oneshot" : "pipelined"; }

namespace {

// "name", "description" and "backend".
void parse_labels(const json& doc, Config& c) {
  if (doc.contains("backend")) {
    const json& v = doc["backend"];
    if (!v.is_string() || !known_backend_choice(v.get<std::string>()))
      fail("backend", fmt::format("unknown backend {}{}; accepted: {}", show(v),
                                  v.is_string() ? did_you_mean(v.get<std::string>(), backend_choices()) : std::string(),
                                  fmt::join(backend_choices(), ", ")));
    c.backend = v.get<std::string>();
  }
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) fail("name", "expected a string");
    c.name = doc["name"].get<std::string>();
  }
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) fail("description", "expected a string");
    c.description = doc["description"].get<std::string>();
  }
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
Config parse_sweep(const json& doc, const std::string& base_dir) {
  Config c;
  parse_labels(doc, c);
  if (doc.contains("layout")) c.layouts = parse_layouts(doc["layout"]);
  if (doc.contains("host_memory")) c.host = parse_host(doc["host_memory"]);
  c.patterns = doc.contains("patterns") ? parse_names(doc["patterns"], "patterns", pattern_names()) : pattern_names();
  // routed patterns (alltoallv) take their size from their routings
  const bool routed = std::any_of(c.patterns.begin(), c.patterns.end(), [](const std::string& p) { return find_pattern(p)->routed(); });
  const bool all_routed = std::all_of(c.patterns.begin(), c.patterns.end(), [](const std::string& p) { return find_pattern(p)->routed(); });
  if (doc.contains("alltoallv")) {
    if (!routed) fail("alltoallv", fmt::format("applies to the alltoallv pattern; the patterns here are {}", fmt::join(c.patterns, ", ")));
    c.routings = parse_routings(doc["alltoallv"], base_dir);
  }
  const bool counted = std::all_of(c.layouts.begin(), c.layouts.end(), [](const Layout& l) { return l.count > 0; });
  if (doc.contains("sizes") && counted)
    fail("sizes", "every layout gives its blocks count, which sets the size (blocks x block_bytes): leave sizes out");
  if (doc.contains("sizes") && all_routed)
    fail("sizes", "alltoallv takes its size from its routing (alltoallv.tokens_per_rank x token_bytes): leave sizes out");
  if (!doc.contains("sizes") && !counted && !all_routed)
    fail("sizes", "missing; give a size, a list, or a range {\"from\", \"to\", \"factor\"}");
  if (doc.contains("sizes")) c.sizes = parse_sizes(doc["sizes"]);
  if (routed && std::any_of(c.layouts.begin(), c.layouts.end(), [](const Layout& l) { return l.blocks; }))
    fail("layout", "alltoallv lays its tokens out itself (alltoallv.tokens: \"packed\" or \"scattered\"); give block layouts "
                   "in a sweep without alltoallv");
  c.engines = parse_engines(doc);
  c.devices = doc.contains("devices") ? parse_devices(doc["devices"]) : std::vector<DeviceSet>{DeviceSet{true, {}}};
  c.timings = doc.contains("timing") ? parse_timings(doc["timing"])
                                     : std::vector<Timing>{Timing::oneshot, Timing::pipelined};
  parse_run_settings(doc, c.run);
  if (doc.contains("rotate")) c.rotate = parse_rotate(doc["rotate"]);
  if (doc.contains("power")) parse_power(doc["power"], c);
  if (doc.contains("in_place")) c.in_place = parse_in_place(doc["in_place"], c.patterns);
  return c;
}

}  // namespace

Config parse_config(const json& doc, const std::string& base_dir) {
  if (!doc.is_object()) throw InputError("config: the document must be a JSON object");
  for (const auto& [k, _] : doc.items())
    if (std::find(config_keys().begin(), config_keys().end(), k) == config_keys().end())
      throw InputError(fmt::format("config: key '{}' is unknown{}; accepted: {}", k, did_you_mean(k, config_keys()),
                                   fmt::join(config_keys(), ", ")));
  if (!doc.contains("sweeps")) return parse_sweep(doc, base_dir);
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
    merged.erase("backend");  // run-wide: the whole config's (c.backend), not a part's
    for (const auto& [k, v] : list[i].items()) {
      if (k == "sweeps" || k == "power" || k == "description" || k == "backend")
        fail(where + "." + k, "not allowed in a sweep (sweeps do not nest; power, description and backend are run-wide)");
      if (std::find(config_keys().begin(), config_keys().end(), k) == config_keys().end())
        fail(where + "." + k, fmt::format("unknown key{}; accepted: {}", did_you_mean(k, config_keys()),
                                          fmt::join(config_keys(), ", ")));
      merged[k] = v;
    }
    try {
      c.sweeps.push_back(parse_sweep(merged, base_dir));
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

constexpr int kIdleSeconds = 60;                  // a pipe whose writer sends nothing for this long is given up

std::string read_config_text(const std::string& path, bool& regular) {
  // a regular file or a pipe, at most the cap: /dev/zero never ends, a directory is no config
  Maybe<std::string> text = read_small_input(path, kMaxConfigBytes, kIdleSeconds, &regular, "the --config file");
  if (!text)
    throw InputError(fmt::format("--config {}: {}; accepted: a regular file, or - (standard input), /dev/stdin or /dev/fd/N "
                                 "(a pipe), of at most {} KiB holding a JSON config", quote(path), text.why_not(),
                                 kMaxConfigBytes >> 10));
  return std::move(text).value();
}

}  // namespace

bool config_read_once(const std::string& path) {
  struct stat st {};
  const bool by_descriptor = path == "/dev/stdin" || path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0;
  return path == "-" || (by_descriptor && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode));
}

Config load_config(const std::string& path, const std::vector<ConfigOverride>& overrides) {
  if (path.empty()) {
    if (overrides.empty()) throw InputError("no config: give --config FILE, a preset (dmabench --presets) or sweep flags: -b 1KiB -e 1MiB -f 2");
    try {
      return parse_config(flags_document(), overrides);
    } catch (const InputError& e) {
      if (std::string(e.what()).rfind("config: sizes: missing", 0) != 0) throw;
      throw InputError("no sizes to sweep: give -b SIZE (with -e SIZE and -f FACTOR for a range) or --sizes LIST, or a "
                       "config (--config FILE or a preset)");
    }
  }
  bool regular = false;
  json doc = parse_input_json(read_config_text(path, regular), fmt::format("config '{}'", quote(path)), kMaxDepth);
  const std::size_t slash = path.find_last_of('/');
  // relative paths in a piped config are read against the working directory
  return parse_config(std::move(doc), overrides, !regular ? "" : slash == std::string::npos ? "." : path.substr(0, slash + 1));
}

json to_json(const Config& c) {
  // nlohmann::json's objects keep their keys sorted: the order below is not the file's
  json doc = {{"name", c.name},
              {"description", c.description},
              {"power", c.power ? json{{"source", c.power_source}, {"window_s", c.power_window_s}} : json(false)}};
  if (!c.backend.empty()) doc["backend"] = c.backend;
  if (!c.sweeps.empty()) {
    json parts = json::array();
    for (const auto& p : c.sweeps) parts.push_back(to_json(p));
    doc["sweeps"] = parts;
    return doc;
  }
  json engines = json::array();
  for (const auto& e : c.engines) engines.push_back({{"name", e.engine}, {"options", e.options}});
  json devices = json::array();
  for (const auto& d : c.devices)
    devices.push_back(d.pairs ? (d.ids.empty() ? json("pairs") : json{{"pairs", d.ids}}) : d.all ? json("all") : json(d.ids));
  json timings = json::array();
  for (auto t : c.timings) timings.push_back(to_string(t));
  doc.update({{"sizes", c.sizes},
          {"patterns", c.patterns}, {"engines", engines},       {"devices", devices},
          {"timing", timings},  {"rotate", c.rotate},
          {"in_place", c.in_place},
          {"layout", layouts_json(c.layouts)},
          {"host_memory", host_json(c.host)},
          {"alltoallv", routings_json(c.routings)}});
  doc.update(run_settings_json(c.run));
  return doc;
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
    list.push_back(static_cast<int>(*whole_number(item)));  // at most 7 digits
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
