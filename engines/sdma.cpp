#include "engines/sdma.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace dmabench::sdma {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::optional<int> small_int(const std::string& s, int max) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const int v = std::stoi(s);
  if (v > max) return std::nullopt;
  return v;
}

}  // namespace

// ---- engine map ------------------------------------------------------------------------------------
std::vector<MapEntry> parse_engine_map(std::istream& in, const std::string& name) {
  std::vector<MapEntry> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string text = trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) f.push_back(trim(part));
    if (text.back() == ',') f.push_back("");
    auto bad = [&](const std::string& what) {
      return std::invalid_argument(fmt::format(
          "engine map {}:{}: {} in '{}'; accepted: one 'src,engine,dst' line per GPU pair (GPU ids 0-1023, "
          "engine 0-{}), '#' comments, blank lines",
          name, n, what, text, kMaxEngines - 1));
    };
    if (f.size() != 3) throw bad(fmt::format("{} field(s), expected 3", f.size()));
    const auto src = small_int(f[0], 1023), engine = small_int(f[1], kMaxEngines - 1), dst = small_int(f[2], 1023);
    if (!src) throw bad(fmt::format("src '{}' is not a GPU id", f[0]));
    if (!engine) throw bad(fmt::format("engine '{}' is not an SDMA engine index", f[1]));
    if (!dst) throw bad(fmt::format("dst '{}' is not a GPU id", f[2]));
    for (const auto& e : out)
      if (e.src == *src && e.dst == *dst)
        throw bad(fmt::format("GPU pair {} -> {} is already mapped (to engine {})", *src, *dst, e.engine));
    out.push_back({*src, *engine, *dst});
  }
  if (out.empty())
    throw std::invalid_argument(fmt::format("engine map {}: no 'src,engine,dst' line; accepted: one such line per GPU pair", name));
  return out;
}

std::vector<MapEntry> load_engine_map(const std::string& path) {
  std::ifstream f(path);
  if (!f)
    throw std::invalid_argument(fmt::format("engine map {}: cannot read the file (a path relative to the working directory "
                                            "{}; scripts/sdma_map.py writes one from the kernel driver's topology)",
                                            path, std::filesystem::current_path().string()));
  return parse_engine_map(f, path);
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

// ---- topology ----------------------------------------------------------------------------------------
std::string KfdNode::bus_id() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{}", domain, location_id >> 8, (location_id >> 3) & 0x1f, location_id & 7);
}

std::vector<KfdNode> read_kfd_nodes(const std::string& root) {
  std::vector<KfdNode> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::ifstream f(entry.path() / "properties");
    if (!f) continue;
    KfdNode n;
    try {
      n.node = std::stoi(entry.path().filename().string());
    } catch (...) {
      continue;
    }
    bool gpu = false;
    std::string key;
    long long value = 0;
    while (f >> key >> value) {
      if (key == "simd_count") gpu = value > 0;
      else if (key == "domain") n.domain = static_cast<std::uint32_t>(value);
      else if (key == "location_id") n.location_id = static_cast<std::uint32_t>(value);
      else if (key == "gfx_target_version") n.gfx_target_version = static_cast<std::uint32_t>(value);
      else if (key == "num_sdma_engines") n.sdma_engines = static_cast<int>(value);
      else if (key == "num_sdma_xgmi_engines") n.sdma_xgmi_engines = static_cast<int>(value);
    }
    if (gpu) out.push_back(n);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id) {
  for (const auto& n : nodes)
    if (n.bus_id() == bus_id) return n;
  return std::nullopt;
}

// ---- environment -------------------------------------------------------------------------------------
nlohmann::json DmaEnvironment::to_json() const {
  auto opt = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {{"HSA_ENABLE_SDMA", opt(hsa_enable_sdma)},
          {"HSA_ENABLE_PEER_SDMA", opt(hsa_enable_peer_sdma)},
          {"GPU_MAX_HW_QUEUES", opt(gpu_max_hw_queues)},
          {"max_hw_queues", max_hw_queues},
          {"sdma_off", sdma_off},
          {"peer_sdma_off", peer_sdma_off},
          {"warnings", warnings}};
}

DmaEnvironment dma_environment(const Getenv& getenv) {
  DmaEnvironment e;
  auto get = [&](const char* k) -> std::optional<std::string> {
    const char* v = getenv(k);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  e.hsa_enable_sdma = get("HSA_ENABLE_SDMA");
  e.hsa_enable_peer_sdma = get("HSA_ENABLE_PEER_SDMA");
  e.gpu_max_hw_queues = get("GPU_MAX_HW_QUEUES");
  e.sdma_off = e.hsa_enable_sdma && *e.hsa_enable_sdma == "0";
  e.peer_sdma_off = e.sdma_off || (e.hsa_enable_peer_sdma && *e.hsa_enable_peer_sdma == "0");
  if (e.sdma_off)
    e.warnings.push_back("HSA_ENABLE_SDMA=0: the runtime copies with blit kernels, not the SDMA engines; "
                         "ce and hsa results do not measure DMA");
  else if (e.peer_sdma_off)
    e.warnings.push_back("HSA_ENABLE_PEER_SDMA=0: GPU-to-GPU copies use blit kernels, not the SDMA engines");
  if (e.gpu_max_hw_queues) {
    const auto v = small_int(trim(*e.gpu_max_hw_queues), 1 << 16);
    if (v && *v > 0)
      e.max_hw_queues = *v;
    else
      e.warnings.push_back(fmt::format("GPU_MAX_HW_QUEUES='{}' is not a positive integer; assuming the default 4",
                                       *e.gpu_max_hw_queues));
  }
  return e;
}

DmaEnvironment dma_environment() {
  return dma_environment([](const char* k) -> const char* { return std::getenv(k); });
}

std::string hw_queue_warning(const DmaEnvironment& env, int streams) {
  if (streams <= env.max_hw_queues) return "";
  return fmt::format("{} streams per GPU but GPU_MAX_HW_QUEUES is {}{}: streams beyond it share hardware queues and "
                     "serialize (set GPU_MAX_HW_QUEUES={} or more)",
                     streams, env.max_hw_queues, env.gpu_max_hw_queues ? "" : " (default)", streams);
}

// ---- features ------------------------------------------------------------------------------------------
BuildFacts this_build() {
  BuildFacts b;
#ifdef DMABENCH_HAVE_HIP
  b.hip = true;
#endif
#ifdef DMABENCH_HAVE_HSA
  b.hsa = true;
#endif
#ifdef DMABENCH_HAVE_RCCL
  b.rccl = true;
#endif
#ifdef DMABENCH_HIP_HAS_NOCU
  b.hip_nocu = true;
#endif
#ifdef DMABENCH_HIP_HAS_BATCH
  b.hip_batch = true;
#endif
#ifdef DMABENCH_HIP_HAS_WALL_CLOCK_RATE
  b.hip_wall_clock_rate = true;
#endif
#ifdef DMABENCH_HSA_HAS_COPY_ON_ENGINE
  b.hsa_copy_on_engine = true;
#endif
#ifdef DMABENCH_HSA_HAS_BATCH_COPY
  b.hsa_batch_copy = true;
#endif
#ifdef DMABENCH_HSA_HAS_SDMA_INFO
  b.hsa_sdma_info = true;
#endif
#ifdef DMABENCH_HIP_VERSION_STRING
  b.hip_version = DMABENCH_HIP_VERSION_STRING;
#endif
#ifdef DMABENCH_HSA_INTERFACE_STRING
  b.hsa_interface = DMABENCH_HSA_INTERFACE_STRING;
#endif
  return b;
}

std::vector<Feature> amd_features(const BuildFacts& b) {
  const std::string hip = b.hip ? "HIP " + b.hip_version : "no HIP";
  const std::string hsa = b.hsa ? "HSA AMD interface " + b.hsa_interface : "no HSA";
  auto f = [](std::string name, std::string needs, bool built, std::string yes, std::string no) {
    return Feature{std::move(name), std::move(needs), built, built ? std::move(yes) : std::move(no)};
  };
  return {
      f("hip backend: ce, sm, trigger host-flag, completion event/flag-spin/gpu-poll, graph",
        "ROCm >= 5.2 (HIP with hipStreamWaitValue32 / hipStreamWriteValue32)", b.hip, hip,
        "this build has no HIP (configure where hipcc and the HIP CMake package are found, or -DDMABENCH_HIP=ON)"),
      f("ce SDMA-only copy kind (hipMemcpyDeviceToDeviceNoCU)", "ROCm >= 6.2 (headers declare hipMemcpyDeviceToDeviceNoCU)",
        b.hip && b.hip_nocu, "ce copies with hipMemcpyDeviceToDeviceNoCU",
        fmt::format("{}: ce uses hipMemcpyDefault (the runtime may pick a blit kernel instead of SDMA)", hip)),
      f("ce-batch (hipMemcpyBatchAsync)", "HIP >= 7.1 (headers declare hipMemcpyBatchAsync with hipMemcpyAttributes)",
        b.hip && b.hip_batch, "hipMemcpyBatchAsync, source access order stream, overlap flag per overlap_hint",
        fmt::format("{} has no hipMemcpyBatchAsync", hip)),
      f("trigger gpu-flag (GPU clock: s_memrealtime at hipDeviceAttributeWallClockRate)",
        "ROCm >= 5.5 (hipDeviceAttributeWallClockRate)", b.hip && b.hip_wall_clock_rate, "",
        fmt::format("{} has no hipDeviceAttributeWallClockRate to convert GPU clock ticks", hip)),
      f("nccl engine on AMD (RCCL)", "RCCL (find_package(rccl))", b.rccl, "RCCL",
        "RCCL was not found at configure time (find_package(rccl); Debian 12 has no RCCL, ROCm 7 packages have librccl-dev)"),
      f("hsa engine, engines=runtime (hsa_amd_memory_async_copy), pre-launch behind a dependency signal, "
        "completion by spinning on the HSA signal, breakdown from hsa_amd_profiling_get_async_copy_time",
        "ROCm >= 5.2 (HSA AMD interface 1.0)", b.hip && b.hsa, hsa, "this build has no HSA runtime (hsa-runtime64)"),
      f("hsa engines=preferred|round-robin|map:FILE (hsa_amd_memory_async_copy_on_engine, "
        "hsa_amd_memory_get_preferred_copy_engine)",
        "ROCm >= 5.7", b.hip && b.hsa && b.hsa_copy_on_engine, hsa,
        fmt::format("{}: the headers have no hsa_amd_memory_async_copy_on_engine", hsa)),
      f("hsa packet=broadcast|swap (hsa_amd_memory_async_batch_copy)", "an HSA header that declares hsa_amd_memory_async_batch_copy (ROCm 7.2's does not)",
        false, "",
        b.hsa_batch_copy ? "the headers declare hsa_amd_memory_async_batch_copy, but dmabench's path for it is not written yet"
                         : fmt::format("{}: the headers have no hsa_amd_memory_async_batch_copy", hsa)),
      f("SDMA engine counts from the runtime (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG / _XGMI_ENG)", "ROCm >= 5.7",
        b.hip && b.hsa && b.hsa_sdma_info, "from the HSA agent",
        "read from /sys/class/kfd/kfd/topology/nodes/*/properties (num_sdma_engines, num_sdma_xgmi_engines) instead"),
  };
}

std::string missing(const BuildFacts& b, const std::string& feature) {
  for (const auto& f : amd_features(b))
    if (f.name.rfind(feature, 0) == 0) return f.built ? "" : fmt::format("{} needs {}; {}", feature, f.needs, f.note);
  return fmt::format("{}: unknown feature", feature);
}

}  // namespace dmabench::sdma
