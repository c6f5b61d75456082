#pragma once
// AMD SDMA engine choice, needing no vendor header (compiled and tested in every build): the engine
// map file and the engine selection policies of the `hsa` engine.
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace dmabench::amd {

// ---- engine map file --------------------------------------------------------------------------
// One `src,engine,dst` line per GPU pair: copies from GPU src to GPU dst go to SDMA engine `engine`
// (0-based, the bit index of HSA's hsa_amd_sdma_engine_id_t mask). '#' starts a comment; blank
// lines are ignored; spaces around fields are allowed.
struct MapEntry {
  int src = 0, engine = 0, dst = 0;
  bool operator==(const MapEntry&) const = default;
};
inline constexpr int kMaxEngines = 32;  // HSA's engine id is a 32-bit mask
inline constexpr std::size_t kMaxMapBytes = 1 << 20;  // 1 MiB: a map of 64 GPUs is 4032 lines, about 40 KiB
// Throws std::invalid_argument naming `name`, the line number and what is accepted.
std::vector<MapEntry> parse_engine_map(std::istream& in, const std::string& name);
// Reads and parses a file: a regular file (never a FIFO or a device: nothing waits) of at most kMaxMapBytes;
// throws std::invalid_argument (a file that is not that, or a bad line).
std::vector<MapEntry> load_engine_map(const std::string& path);
// For an engine option's value: when it is "map:FILE", why FILE does not load (the parse error), else
// nullopt (other values, or a map that loads). The option tables of hsa and sdma check with it.
std::optional<std::string> map_option_problem(const std::string& value);
// The engine the map gives for src -> dst, or nullopt.
std::optional<int> map_engine(const std::vector<MapEntry>& map, int src, int dst);

// ---- engine selection ---------------------------------------------------------------------------
enum class Policy { runtime, preferred, round_robin, map };
struct Selection {
  Policy policy = Policy::runtime;
  std::string map_file;  // Policy::map
};
// "runtime", "preferred", "round-robin", "map:FILE"; nullopt for anything else.
std::optional<Selection> parse_selection(const std::string& value);
inline constexpr const char* kSelectionAccepted = "\"runtime\", \"preferred\", \"round-robin\" or \"map:FILE\"";

// Round-robin: the i-th copy issued by a GPU goes to engine (i mod engines), counted per source GPU.
// `sources[i]` is the issuing GPU of copy i; returns one engine per copy.
std::vector<int> round_robin(const std::vector<int>& sources, int engines);
// The n-th set bit of `mask` (wrapping around), or -1 for an empty mask: how a preferred-engine
// mask (hsa_amd_memory_get_preferred_copy_engine) spreads copies over its engines.
int nth_engine(std::uint32_t mask, int n);
inline std::uint32_t engine_bit(int engine) { return std::uint32_t{1} << engine; }

}  // namespace dmabench::amd
