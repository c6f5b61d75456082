#pragma once
// AMD SDMA (copy engine) helpers that need no vendor header, so both builds compile and test them:
// the SDMA engine map file, engine selection policies of the `hsa` engine, the kernel driver's
// topology (engine counts per GPU), the environment variables that change the DMA path, and the
// version each AMD feature needs (for --features and skip reasons).
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::sdma {

// ---- engine map file --------------------------------------------------------------------------
// One `src,engine,dst` line per GPU pair: copies from GPU src to GPU dst go to SDMA engine `engine`
// (0-based, the bit index of HSA's hsa_amd_sdma_engine_id_t mask). '#' starts a comment; blank
// lines are ignored; spaces around fields are allowed.
struct MapEntry {
  int src = 0, engine = 0, dst = 0;
  bool operator==(const MapEntry&) const = default;
};
inline constexpr int kMaxEngines = 32;  // HSA's engine id is a 32-bit mask
// Throws std::invalid_argument naming `name`, the line number and what is accepted.
std::vector<MapEntry> parse_engine_map(std::istream& in, const std::string& name);
// Reads and parses a file; throws std::invalid_argument (unreadable file or a bad line).
std::vector<MapEntry> load_engine_map(const std::string& path);
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

// ---- kernel driver topology ---------------------------------------------------------------------
struct KfdNode {
  int node = -1;
  std::uint32_t domain = 0, location_id = 0;  // location_id = (bus << 8) | (device << 3) | function
  std::uint32_t gfx_target_version = 0;       // e.g. 90402 (gfx942)
  int sdma_engines = -1;                      // num_sdma_engines (host-facing), -1 unknown
  int sdma_xgmi_engines = -1;                 // num_sdma_xgmi_engines, -1 unknown
  std::string bus_id() const;                 // "0000:06:00.0"
};
// GPU nodes of /sys/class/kfd/kfd/topology/nodes (or `root`), CPU nodes left out; empty when absent.
std::vector<KfdNode> read_kfd_nodes(const std::string& root = "/sys/class/kfd/kfd/topology/nodes");
std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id);

// ---- environment ----------------------------------------------------------------------------------
// HSA_ENABLE_SDMA=0 / HSA_ENABLE_PEER_SDMA=0 turn the DMA engines off (copies become blit kernels);
// GPU_MAX_HW_QUEUES (default 4) bounds the hardware queues, so more concurrent streams serialize.
struct DmaEnvironment {
  std::optional<std::string> hsa_enable_sdma, hsa_enable_peer_sdma, gpu_max_hw_queues;
  int max_hw_queues = 4;
  bool sdma_off = false, peer_sdma_off = false;
  std::vector<std::string> warnings;
  nlohmann::json to_json() const;
};
using Getenv = std::function<const char*(const char*)>;
DmaEnvironment dma_environment(const Getenv& getenv);
DmaEnvironment dma_environment();  // the process environment
// The warning for `streams` concurrent streams per GPU, or "" when they fit in the hardware queues.
std::string hw_queue_warning(const DmaEnvironment& env, int streams);

// ---- what each AMD feature needs ----------------------------------------------------------------
struct Feature {
  std::string name;    // e.g. "hsa engines=preferred"
  std::string needs;   // e.g. "ROCm >= 5.7 (hsa_amd_memory_get_preferred_copy_engine)"
  bool built = false;  // this build has it
  std::string note;    // why not, or how it is done
};
struct BuildFacts {  // what configure found (compile-time macros), so the text is testable
  bool hip = false, hsa = false, rccl = false;
  bool hip_nocu = false, hip_batch = false, hip_wall_clock_rate = false;
  bool hsa_copy_on_engine = false, hsa_batch_copy = false, hsa_sdma_info = false;
  std::string hip_version, hsa_interface;  // "5.2", "1.0"
};
BuildFacts this_build();
std::vector<Feature> amd_features(const BuildFacts& b);
// "needs X; this build has Y" for a feature this build lacks, or "" when it has it.
std::string missing(const BuildFacts& b, const std::string& feature);

}  // namespace dmabench::sdma
