#include "amd/engine_map.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "amd/text.hpp"
#include "core/read_file.hpp"

namespace dmabench::amd {

// ---- engine map ------------------------------------------------------------------------------------
std::vector<MapEntry> parse_engine_map(std::istream& in, const std::string& name) {
  std::vector<MapEntry> out;
  std::map<std::pair<int, int>, int> engine_of;  // (src, dst) -> engine: each pair once, found in log time
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string text = detail::trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) f.push_back(detail::trim(part));
    if (text.back() == ',') f.push_back("");
    auto bad = [&](const std::string& what) {
      return std::invalid_argument(fmt::format(
          "engine map {}:{}: {} in '{}'; accepted: one 'src,engine,dst' line per GPU pair (GPU ids 0-1023, "
          "engine 0-{}), '#' comments, blank lines",
          name, n, what, text, kMaxEngines - 1));
    };
    if (f.size() != 3) throw bad(fmt::format("{} field(s), expected 3", f.size()));
    const auto src = detail::small_int(f[0], 1023), engine = detail::small_int(f[1], kMaxEngines - 1),
               dst = detail::small_int(f[2], 1023);
    if (!src) throw bad(fmt::format("src '{}' is not a GPU id", f[0]));
    if (!engine) throw bad(fmt::format("engine '{}' is not an SDMA engine index", f[1]));
    if (!dst) throw bad(fmt::format("dst '{}' is not a GPU id", f[2]));
    if (const auto [it, added] = engine_of.emplace(std::make_pair(*src, *dst), *engine); !added)
      throw bad(fmt::format("GPU pair {} -> {} is already mapped (to engine {})", *src, *dst, it->second));
    out.push_back({*src, *engine, *dst});
  }
  if (out.empty())
    throw std::invalid_argument(fmt::format("engine map {}: no 'src,engine,dst' line; accepted: one such line per GPU pair", name));
  return out;
}

std::vector<MapEntry> load_engine_map(const std::string& path) {
  const Maybe<std::string> text = read_small_file(path, kMaxMapBytes, "the engine map");
  if (!text) {
    std::error_code ec;
    throw std::invalid_argument(fmt::format("engine map {}: {}; accepted: a regular file of at most {} KiB (a path relative "
                                            "to the working directory {}; scripts/sdma_map.py writes one from the kernel "
                                            "driver's topology)",
                                            path, text.why_not(), kMaxMapBytes >> 10,
                                            std::filesystem::current_path(ec).string()));
  }
  std::istringstream in(*text);
  return parse_engine_map(in, path);
}

std::optional<int> map_engine(const std::vector<MapEntry>& map, int src, int dst) {
  for (const auto& e : map)
    if (e.src == src && e.dst == dst) return e.engine;
  return std::nullopt;
}

// ---- selection -----------------------------------------------------------------------------------
std::optional<Selection> parse_selection(const std::string& value) {
  if (value == "runtime") return Selection{Policy::runtime, ""};
  if (value == "preferred") return Selection{Policy::preferred, ""};
  if (value == "round-robin") return Selection{Policy::round_robin, ""};
  if (value.rfind("map:", 0) == 0 && value.size() > 4) return Selection{Policy::map, value.substr(4)};
  return std::nullopt;
}

std::vector<int> round_robin(const std::vector<int>& sources, int engines) {
  if (engines <= 0) throw std::invalid_argument("round-robin over no SDMA engine");
  std::vector<int> out;
  std::vector<std::pair<int, int>> next;  // source -> next engine
  for (int s : sources) {
    auto it = std::find_if(next.begin(), next.end(), [&](const auto& p) { return p.first == s; });
    if (it == next.end()) it = next.insert(next.end(), {s, 0});
    out.push_back(it->second);
    it->second = (it->second + 1) % engines;
  }
  return out;
}

int nth_engine(std::uint32_t mask, int n) {
  const int count = __builtin_popcount(mask);
  if (count == 0) return -1;
  n %= count;
  for (int b = 0; b < 32; ++b)
    if (mask & (std::uint32_t{1} << b)) {
      if (n == 0) return b;
      --n;
    }
  return -1;
}

std::optional<std::string> map_option_problem(const std::string& value) {
  if (value.rfind("map:", 0) != 0 || value.size() == 4) return std::nullopt;
  try {
    load_engine_map(value.substr(4));
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace dmabench::amd
