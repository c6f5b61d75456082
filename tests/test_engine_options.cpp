// Skip reasons of the GPU engines' option combinations: decided before touching a GPU, so they
// are tested on any machine (the engines exist in every build with a GPU backend, cuda or hip).
#include <gtest/gtest.h>

#include "bench/patterns/pattern.hpp"
#include "engines/engine.hpp"

using namespace dmabench;
using json = nlohmann::json;

#ifdef DMABENCH_HAVE_GPU
namespace {

Options with_defaults(const std::string& engine, json given) {
  for (const auto& o : find_engine_spec(engine)->options)
    if (!given.contains(o.name)) given[o.name] = o.default_value;
  return given;
}

std::string reason(const std::string& engine, json options, const Plan& plan, int ops_per_sample = 1) {
  std::string why;
  auto e = make_engine(engine, &why);
  EXPECT_NE(e, nullptr) << why;
  auto r = e->unsupported(plan, with_defaults(engine, std::move(options)), ops_per_sample);
  return r.value_or("");
}

}  // namespace

TEST(EngineOptions, InvalidCombinationsAreSkippedWithAReason) {
  const Plan ag = allgather_pattern().plan({0, 1}, 4096);
  const Plan cp = copy_pattern().plan({0, 1}, 4096);
  const std::string batch_graph = reason("ce-batch", {{"graph", true}}, ag);
  EXPECT_TRUE(batch_graph.find("cudaMemcpyBatchAsync cannot be captured in a graph") != std::string::npos ||
              batch_graph.find("hipMemcpyBatchAsync is not captured into a graph") != std::string::npos)
      << batch_graph;
  EXPECT_NE(reason("ce-batch", {{"schedule", "pcpy"}}, ag).find("schedule pcpy does not apply"), std::string::npos);
  EXPECT_NE(reason("ce", {{"trigger", "gpu-flag"}}, ag).find("needs completion gpu-poll"), std::string::npos);
  EXPECT_NE(reason("ce", {{"trigger", "gpu-flag"}, {"completion", "flag-spin"}}, ag).find("gpu-poll"), std::string::npos);
  EXPECT_NE(reason("ce", {{"trigger", "gpu-flag"}, {"completion", "gpu-poll"}}, ag, 20).find("use timing oneshot"),
            std::string::npos);
  EXPECT_NE(reason("ce", {{"gate", "spin-kernel"}}, ag).find("needs trigger host-flag or gpu-flag"), std::string::npos);
#if defined(DMABENCH_HAVE_RCCL)
  // RCCL has no copy-engine collectives: every cta_policy zero case is skipped, saying so
  for (const Plan* p : {&ag, &cp}) {
    const std::string zero = reason("nccl", {{"cta_policy", "zero"}}, *p);
    EXPECT_NE(zero.find("cta_policy zero needs NCCL >= 2.28"), std::string::npos) << zero;
    EXPECT_NE(zero.find("RCCL"), std::string::npos) << zero;
  }
#elif defined(DMABENCH_HAVE_NCCL)
  EXPECT_NE(reason("nccl", {{"cta_policy", "zero"}}, cp).find("covers allgather and alltoall"), std::string::npos);
#endif
}

TEST(EngineOptions, RegistryDescribesEveryOption) {
  for (const char* name : {"ce", "ce-batch"}) {
    const EngineSpec* s = find_engine_spec(name);
    ASSERT_NE(s, nullptr);
    std::vector<std::string> names;
    for (const auto& o : s->options) {
      names.push_back(o.name);
      EXPECT_FALSE(o.help.empty());
      EXPECT_TRUE(o.accepts(o.default_value)) << o.name;
    }
    std::vector<std::string> want = {"schedule", "streams", "trigger", "completion", "graph", "issue", "gate", "local"};
    if (std::string(name) == "ce-batch") want.push_back("overlap_hint");
    EXPECT_EQ(names, want);
  }
  const EngineSpec* nccl = find_engine_spec("nccl");
  ASSERT_EQ(nccl->options.size(), 2u);
  EXPECT_TRUE(nccl->options[0].accepts(true));
  EXPECT_FALSE(nccl->options[1].accepts("sometimes"));
}
#else
TEST(EngineOptions, NoGpuBackendInThisBuild) { GTEST_SKIP() << "the GPU engines are not in this build"; }
#endif
