// AMD helpers (amd/), which need no GPU: the engine map file, engine selection, the kernel driver's
// topology, the DMA environment pitfalls, the hsa engine's map-file option, and every shipped config
// (the AMD ones included) loading in this build.
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "amd/engine_map.hpp"
#include "amd/environment.hpp"
#include "amd/topology.hpp"
#include "bench/config/config.hpp"
#include "core/errors.hpp"
#include "engines/registry.hpp"

using namespace dmabench;
namespace fs = std::filesystem;

namespace {

std::vector<amd::MapEntry> parse(const std::string& text) {
  std::istringstream in(text);
  return amd::parse_engine_map(in, "test.map");
}

std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("dmabench-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(EngineMap, ParsesLinesCommentsAndSpaces) {
  const auto m = parse("# header\n0,2,1\n\n 1 , 3 , 0  # trailing comment\r\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], (amd::MapEntry{0, 2, 1}));
  EXPECT_EQ(m[1], (amd::MapEntry{1, 3, 0}));
  EXPECT_EQ(amd::map_engine(m, 1, 0), 3);
  EXPECT_EQ(amd::map_engine(m, 0, 3), std::nullopt);
}

TEST(EngineMap, BadLinesNameFileLineAndWhatIsAccepted) {
  const std::string e = parse_error("0,2,1\n0,2\n");
  EXPECT_NE(e.find("test.map:2"), std::string::npos) << e;
  EXPECT_NE(e.find("2 field(s), expected 3"), std::string::npos) << e;
  EXPECT_NE(e.find("accepted: one 'src,engine,dst' line"), std::string::npos) << e;
  EXPECT_NE(parse_error("a,1,2\n").find("src 'a' is not a GPU id"), std::string::npos);
  EXPECT_NE(parse_error("0,32,1\n").find("engine '32' is not an SDMA engine index"), std::string::npos);
  EXPECT_NE(parse_error("0,-1,1\n").find("engine '-1'"), std::string::npos);
  EXPECT_NE(parse_error("0,1,\n").find("dst '' is not a GPU id"), std::string::npos);
  EXPECT_NE(parse_error("0,1,1\n0,2,1\n").find("test.map:2: GPU pair 0 -> 1 is already mapped"), std::string::npos);
  EXPECT_NE(parse_error("# nothing\n").find("no 'src,engine,dst' line"), std::string::npos);
}

// Only a regular file within the limit is read: a FIFO with no writer would wait forever (this test would
// hang), /dev/zero never ends.
TEST(EngineMap, OnlyARegularFileWithinTheLimitIsRead) {
  const std::string dir = ::testing::TempDir() + "dmabench_map_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  {
    std::ofstream big(dir + "/big.map");
    for (int i = 0; i < 110000; ++i) big << "# padding\n";
    big << "0,2,1\n";
  }
  for (const auto& [path, fragment] : std::vector<std::pair<std::string, std::string>>{
           {dir + "/fifo", "not a regular file (a FIFO)"}, {"/dev/zero", "not a regular file (a device)"},
           {dir, "not a regular file (a directory)"}, {dir + "/big.map", "larger than 1024 KiB"}}) {
    try {
      amd::load_engine_map(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
}

// Each GPU pair once, checked in log time: 102400 pairs (about 0.9 MB, within the limit) took 2.7 CPU seconds when
// every line was compared with every earlier one.
TEST(EngineMap, DuplicateCheckIsNotQuadratic) {
  std::string text;
  for (int src = 0; src < 1024; ++src)
    for (int dst = 0; dst < 100; ++dst) text += std::to_string(src) + ",1," + std::to_string(dst) + "\n";
  ASSERT_LT(text.size(), amd::kMaxMapBytes);
  std::istringstream in(text);
  const std::clock_t start = std::clock();
  EXPECT_EQ(amd::parse_engine_map(in, "big.map").size(), 102400u);
  const double cpu_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_LT(cpu_s, 0.5) << "102400 map lines took " << cpu_s << " CPU s";
}

TEST(EngineMap, MissingFileNamesThePath) {
  try {
    amd::load_engine_map("/nonexistent/dir/x.map");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.map: cannot read"), std::string::npos) << e.what();
  }
}

TEST(EngineSelection, PoliciesParse) {
  EXPECT_EQ(amd::parse_selection("runtime")->policy, amd::Policy::runtime);
  EXPECT_EQ(amd::parse_selection("preferred")->policy, amd::Policy::preferred);
  EXPECT_EQ(amd::parse_selection("round-robin")->policy, amd::Policy::round_robin);
  EXPECT_EQ(amd::parse_selection("map:a/b.map")->map_file, "a/b.map");
  EXPECT_EQ(amd::parse_selection("map:"), std::nullopt);
  EXPECT_EQ(amd::parse_selection("fastest"), std::nullopt);
}

TEST(EngineSelection, RoundRobinCountsPerSourceGpu) {
  EXPECT_EQ(amd::round_robin({0, 0, 1, 0, 1, 0}, 3), (std::vector<int>{0, 1, 0, 2, 1, 0}));
  EXPECT_THROW(amd::round_robin({0}, 0), std::invalid_argument);
}

TEST(EngineSelection, PreferredMaskSpreadsOverItsEngines) {
  EXPECT_EQ(amd::nth_engine(0b10100, 0), 2);
  EXPECT_EQ(amd::nth_engine(0b10100, 1), 4);
  EXPECT_EQ(amd::nth_engine(0b10100, 2), 2);  // wraps around
  EXPECT_EQ(amd::nth_engine(0, 0), -1);
  EXPECT_EQ(amd::engine_bit(15), 0x8000u);
}

TEST(KfdTopology, ReadsSdmaCountsOfGpuNodes) {
  const fs::path root = temp_dir("kfd");
  write(root / "0" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "2" / "properties",
        "simd_count 1216\ndomain 0\nlocation_id 3072\ngfx_target_version 90402\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 14\n");
  write(root / "1" / "properties", "simd_count 1216\ndomain 1\nlocation_id 2057\n");  // an older kernel: no SDMA counts
  const auto nodes = amd::read_kfd_nodes(root.string());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 1);
  EXPECT_EQ(nodes[0].bus_id(), "0001:08:01.1");
  EXPECT_EQ(nodes[0].sdma_engines, -1);
  EXPECT_EQ(nodes[1].bus_id(), "0000:0c:00.0");
  EXPECT_EQ(nodes[1].sdma_engines, 2);
  EXPECT_EQ(nodes[1].sdma_xgmi_engines, 14);
  EXPECT_EQ(amd::kfd_node_for_bus(nodes, "0000:0c:00.0")->gfx_target_version, 90402u);
  EXPECT_EQ(amd::kfd_node_for_bus(nodes, "0000:0d:00.0"), std::nullopt);
  EXPECT_TRUE(amd::read_kfd_nodes((root / "absent").string()).empty());
  fs::remove_all(root);
}

TEST(KfdTopology, ReadsRecommendedSdmaEnginesOfLinks) {
  const fs::path root = temp_dir("kfd-links");
  const std::string link = "type 11\nversion_major 0\nversion_minor 0\nweight 15\nmin_latency 0\nmax_latency 0\n";
  write(root / "0" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "0" / "io_links" / "0" / "properties", "type 2\nnode_from 0\nnode_to 1\nrecommended_sdma_engine_id_mask 0\n");
  write(root / "1" / "io_links" / "1" / "properties",
        link + "node_from 1\nnode_to 2\nrecommended_transfer_size 0\nrecommended_sdma_engine_id_mask 16384\nflags 3\n");
  write(root / "1" / "io_links" / "0" / "properties", "type 2\nnode_from 1\nnode_to 0\nrecommended_sdma_engine_id_mask 0\n");
  write(root / "2" / "io_links" / "0" / "properties", link + "node_from 2\nnode_to 1\nrecommended_sdma_engine_id_mask 65532\n");
  write(root / "2" / "p2p_links" / "0" / "properties", link + "node_from 2\nnode_to 3\nrecommended_sdma_engine_id_mask 4\n");
  write(root / "3" / "io_links" / "0" / "properties", link + "node_from 3\nnode_to 2\n");  // an older kernel: no mask
  const auto links = amd::read_recommended_engines(root.string());
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].src_node, 1);
  EXPECT_EQ(links[0].dst_node, 2);
  EXPECT_EQ(links[0].mask, 16384u);
  EXPECT_EQ(amd::single_engine(links[0].mask), 14);
  EXPECT_EQ(links[1].src_node, 2);
  EXPECT_EQ(links[1].dst_node, 1);
  EXPECT_EQ(amd::single_engine(links[1].mask), -1);  // every xGMI engine: no single recommendation
  EXPECT_EQ(links[2].dst_node, 3);
  EXPECT_EQ(amd::single_engine(links[2].mask), 2);
  EXPECT_EQ(amd::single_engine(0), -1);
  EXPECT_EQ(amd::single_engine(1), 0);
  EXPECT_EQ(amd::single_engine(0x80000000u), 31);
  EXPECT_TRUE(amd::read_recommended_engines((root / "absent").string()).empty());
  fs::remove_all(root);
}

// libhsakmt numbers only the nodes it can open (a container exposing some GPUs hides the rest), so sysfs node 3 can be
// libhsakmt node 2: the recommended engines must follow the GPUs by PCI location, never by node id.
TEST(KfdTopology, RecommendedEnginesFollowTheGpuWhenLibhsakmtHidesOne) {
  const fs::path root = temp_dir("kfd-hidden");
  write(root / "0" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "1" / "properties", "simd_count 1216\ndomain 0\nlocation_id 3072\n");  // 0000:0c:00.0, visible
  write(root / "2" / "properties", "simd_count 1216\ndomain 0\nlocation_id 8192\n");  // 0000:20:00.0, hidden
  write(root / "3" / "properties", "simd_count 1216\ndomain 0\nlocation_id 16384\n");  // 0000:40:00.0, visible
  auto link = [&](int from, int to, int engine) {
    write(root / std::to_string(from) / "io_links" / std::to_string(to) / "properties",
          fmt::format("type 11\nnode_from {}\nnode_to {}\nrecommended_sdma_engine_id_mask {}\nflags 1\n", from, to, 1u << engine));
  };
  link(1, 2, 14), link(1, 3, 12), link(2, 1, 2), link(2, 3, 10), link(3, 1, 4), link(3, 2, 8);
  // libhsakmt's view: node 1 = 0000:0c:00.0, node 2 = 0000:40:00.0 (sysfs node 3)
  const auto m = amd::recommended_by_bus({"0000:0c:00.0", "0000:40:00.0"}, root.string());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0][1], 12);  // sysfs 1 -> 3; by node id (1 -> 2) it would be 14, the hidden GPU's link
  EXPECT_EQ(m[1][0], 4);   // sysfs 3 -> 1; by node id (2 -> 1) it would be 2
  EXPECT_EQ(m[0][0], -1);
  EXPECT_EQ(m[1][1], -1);
  const auto absent = amd::recommended_by_bus({"0000:0c:00.0", "0000:99:00.0"}, root.string());
  EXPECT_EQ(absent[0][1], -1);  // a GPU sysfs does not list has no recommendation
  fs::remove_all(root);
}

// xGMI links per ordered pair of GPUs, by PCI location: KFD's type-11 io links, a PCIe link not counted, a hidden GPU
// shifting nothing.
TEST(KfdTopology, XgmiLinksBetweenGpusByPciLocation) {
  const fs::path root = temp_dir("kfd-xgmi");
  write(root / "0" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "1" / "properties", "simd_count 1216\ndomain 0\nlocation_id 3072\n");   // 0000:0c:00.0
  write(root / "2" / "properties", "simd_count 1216\ndomain 0\nlocation_id 8192\n");   // 0000:20:00.0
  write(root / "3" / "properties", "simd_count 1216\ndomain 0\nlocation_id 16384\n");  // 0000:40:00.0
  auto link = [&](int from, int to, int type) {
    write(root / std::to_string(from) / "io_links" / std::to_string(to) / "properties",
          fmt::format("type {}\nnode_from {}\nnode_to {}\nflags 1\n", type, from, to));
  };
  link(1, 0, 2), link(1, 3, 11), link(3, 1, 11), link(1, 2, 2), link(2, 1, 2);  // 1-3 xGMI; 1-2 PCIe only; 2-3 none
  // GPUs 0000:0c, 0000:20, 0000:40, and one KFD does not list
  const auto m = amd::xgmi_links_by_bus({"0000:0c:00.0", "0000:20:00.0", "0000:40:00.0", "0000:99:00.0"}, root.string());
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0][2], 1);
  EXPECT_EQ(m[2][0], 1);
  EXPECT_EQ(m[0][1], 0);
  EXPECT_EQ(m[1][2], 0);
  EXPECT_EQ(m[0][3], -1);  // not a KFD node
  EXPECT_EQ(m[0][0], -1);  // the diagonal
  EXPECT_EQ(amd::xgmi_links_by_bus({"0000:0c:00.0", "0000:40:00.0"}, (root / "absent").string())[0][1], -1);
  fs::remove_all(root);
}

// ROCr's rule for its SDMA completion (BlitSdma::Initialize, amd_topology.cpp RegisterLinkInfo): the link to the first
// CPU node; typed links are atomic-capable unless Override (bit 0) is set with NoAtomics64bit (bit 3).
TEST(KfdTopology, HostAtomicsComeFromTheLinkToTheFirstCpu) {
  const fs::path root = temp_dir("kfd-atomics");
  write(root / "0" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "1" / "properties", "cpu_cores_count 64\nsimd_count 0\n");
  write(root / "2" / "properties", "simd_count 1216\n");
  write(root / "2" / "io_links" / "0" / "properties", "type 2\nnode_from 2\nnode_to 0\nflags 13\n");  // 1|4|8: no atomics
  write(root / "2" / "io_links" / "1" / "properties", "type 2\nnode_from 2\nnode_to 1\nflags 1\n");
  write(root / "2" / "io_links" / "2" / "properties", "type 11\nnode_from 2\nnode_to 3\nflags 1\n");
  // The CPU nodes are KFD nodes too, but no GPU's (read_kfd_nodes leaves them out); the first CPU node is taken in
  // libhsakmt's numbering where the GPUs are opened (gpu/kfd.cpp kfd_gpus), not read from sysfs.
  const auto gpus = amd::read_kfd_nodes(root.string());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].node, 2);
  const auto links = amd::read_io_links(2, root.string());
  ASSERT_EQ(links.size(), 3u);
  const auto no = amd::host_atomics(links, 0);
  EXPECT_FALSE(no.available);
  EXPECT_NE(no.why.find("NoAtomics64bit"), std::string::npos) << no.why;
  EXPECT_TRUE(amd::host_atomics(links, 1).available);  // another CPU node's link has them
  EXPECT_TRUE(amd::host_atomics({{2, 0, 2, 0}}, 0).available);  // PCIe without Override: ROCr's default
  EXPECT_FALSE(amd::host_atomics({{2, 0, 9, 0}}, 0).available);  // InfiniBand: no default
  EXPECT_FALSE(amd::host_atomics({}, 0).available);               // no link to the CPU at all
  EXPECT_FALSE(amd::host_atomics(links, -1).available);            // no CPU node
  fs::remove_all(root);
}

TEST(KfdTopology, Mi308xKeepsOnlyItsEvenEngines) {
  const auto mi300x = amd::usable_engines(0x74a1, 2, 14);
  EXPECT_EQ(mi300x.mask, 0xFFFFu);
  EXPECT_TRUE(mi300x.note.empty());
  const auto mi308x = amd::usable_engines(0x74a2, 2, 6);  // KFD counts 8, 4 are physical (ROCm/mori PR #693)
  EXPECT_EQ(mi308x.mask, 0x55u);
  EXPECT_NE(mi308x.note.find("mori"), std::string::npos);
  EXPECT_EQ(amd::usable_engines(0, -1, -1).mask, 0u);  // an older kernel: no counts, no engines
}

TEST(DmaEnvironment, DetectsSdmaOffAndHardwareQueues) {
  auto env_of = [](std::map<std::string, std::string> vars) {
    return amd::dma_environment([vars](const char* k) -> const char* {
      static thread_local std::string v;
      auto it = vars.find(k);
      if (it == vars.end()) return nullptr;
      v = it->second;
      return v.c_str();
    });
  };
  const auto plain = env_of({});
  EXPECT_FALSE(plain.sdma_off);
  EXPECT_EQ(plain.max_hw_queues, 4);
  EXPECT_TRUE(plain.warnings.empty());
  EXPECT_EQ(amd::hw_queue_warning(plain, 4), "");
  EXPECT_NE(amd::hw_queue_warning(plain, 8).find("GPU_MAX_HW_QUEUES is 4 (default)"), std::string::npos);

  const auto off = env_of({{"HSA_ENABLE_SDMA", "0"}, {"GPU_MAX_HW_QUEUES", "8"}});
  EXPECT_TRUE(off.sdma_off);
  EXPECT_TRUE(off.peer_sdma_off);
  EXPECT_EQ(off.max_hw_queues, 8);
  ASSERT_EQ(off.warnings.size(), 1u);
  EXPECT_NE(off.warnings[0].find("HSA_ENABLE_SDMA=0"), std::string::npos);
  EXPECT_EQ(amd::hw_queue_warning(off, 8), "");
  const nlohmann::json j = off.to_json();
  EXPECT_EQ(j["HSA_ENABLE_SDMA"], "0");
  EXPECT_TRUE(j["HSA_ENABLE_PEER_SDMA"].is_null());

  const auto peer = env_of({{"HSA_ENABLE_PEER_SDMA", "0"}, {"GPU_MAX_HW_QUEUES", "many"}});
  EXPECT_FALSE(peer.sdma_off);
  EXPECT_TRUE(peer.peer_sdma_off);
  EXPECT_EQ(peer.max_hw_queues, 4);
  EXPECT_EQ(peer.warnings.size(), 2u);
}

TEST(HsaOptions, EnginesOptionChecksTheMapFile) {
  const EngineSpec* hsa = find_engine_spec("hsa");
  ASSERT_NE(hsa, nullptr);
  EXPECT_EQ(hsa->backends, (std::vector<std::string>{"hip"}));
  const OptionSpec& engines = hsa->options[0];
  ASSERT_EQ(engines.name, "engines");
  EXPECT_TRUE(engines.accepts("round-robin"));
  EXPECT_TRUE(engines.accepts("map:x.map"));
  EXPECT_FALSE(engines.accepts("map:"));
  EXPECT_FALSE(engines.accepts("fastest"));
  EXPECT_NE(engines.accepted().find("\"map:FILE\""), std::string::npos);
  const fs::path dir = temp_dir("map");
  write(dir / "bad.map", "0,1,1\n0;1;2\n");
  const std::string cfg = R"({"sizes": "1KiB", "engines": [{"name": "hsa", "options": {"engines": "map:)" +
                          (dir / "bad.map").string() + R"("}}]})";
  try {
    parse_config(nlohmann::json::parse(cfg));
    FAIL() << "a bad map file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("engines[0].options.engines"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.map:2"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
  for (const char* name : {"ce", "ce-batch", "sm", "nccl"})
    EXPECT_EQ(find_engine_spec(name)->backends, (std::vector<std::string>{"cuda", "hip"})) << name;
}

// Every shipped config parses in every build (engines a build lacks are skipped at run time, not
// rejected here); map files are named relative to the repository root, where dmabench runs.
TEST(Configs, EveryShippedConfigLoads) {
  const fs::path root = DMABENCH_SOURCE_DIR;
  struct Cwd {  // back to the test's directory however the test ends
    fs::path was = fs::current_path();
    ~Cwd() { fs::current_path(was); }
  } cwd;
  fs::current_path(root);
  int n = 0;
  for (const auto& entry : fs::directory_iterator(root / "configs")) {
    if (entry.path().extension() != ".json") continue;
    ++n;
    EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
  }
  const Config mi = load_config((root / "configs" / "mi300x.json").string());
  EXPECT_GE(n, 7);
  EXPECT_EQ(mi.devices.size(), 1u);
}
