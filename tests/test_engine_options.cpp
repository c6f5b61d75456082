// The engines' option tables and typed parsers (engines/*_options.cpp, compiled in every build),
// and the skip reasons of the GPU engines' option combinations: decided before touching a GPU, so
// they are tested on any machine (the engines exist in every build with a GPU backend, cuda or hip).
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "patterns/pattern.hpp"
#include "engines/options/ce.hpp"
#include "engines/registry.hpp"
#include "engines/options/hsa.hpp"
#include "engines/options/sdma.hpp"
#include "engines/options/nccl.hpp"
#include "engines/options/sm.hpp"

using namespace dmabench;
using json = nlohmann::json;

TEST(EngineOptions, EveryTableIsComplete) {
  for (const auto& s : engine_specs()) {
    std::set<std::string> names;
    for (const auto& o : s.options) {
      EXPECT_TRUE(names.insert(o.name).second) << s.name << " repeats " << o.name;
      EXPECT_FALSE(o.help.empty()) << s.name << " " << o.name;
      EXPECT_TRUE(o.accepts(o.default_value)) << s.name << " " << o.name;
    }
  }
}

namespace {

// The typed parser of `engine` on `options` (the host engine has no options).
void parse(const std::string& engine, const Options& options) {
  if (engine == "ce" || engine == "ce-batch") CeOptions::from(options, engine == "ce-batch");
  if (engine == "sm") SmOptions::from(options);
  if (engine == "nccl") NcclOptions::from(options);
  if (engine == "hsa") HsaOptions::from(options);
  if (engine == "sdma") SdmaOptions::from(options);
}

}  // namespace

// Each typed parser reads every option of its engine's table, at its default and at each word, and
// throws when one is missing.

TEST(EngineOptions, ParsersReadTheTablesAndNeverInventDefaults) {
  for (const auto& s : engine_specs()) {
    const Options defaults = with_defaults(s.name, json::object());
    EXPECT_EQ(defaults.size(), s.options.size()) << s.name;
    EXPECT_NO_THROW(parse(s.name, defaults)) << s.name;
    for (const auto& o : s.options) {
      for (const auto& word : o.choices) {
        Options given = defaults;
        given[o.name] = word;
        EXPECT_NO_THROW(parse(s.name, given)) << s.name << " " << o.name << "=" << word.dump();
      }
      Options missing = defaults;
      missing.erase(o.name);  // the config layer always fills it: its absence is an internal error
      EXPECT_THROW(parse(s.name, missing), std::logic_error) << s.name << " without " << o.name;
    }
  }
  EXPECT_THROW(with_defaults("warp", json::object()), std::invalid_argument);
}

TEST(EngineOptions, TypedValues) {
  const CeOptions ce = CeOptions::from(with_defaults("ce", {{"schedule", "pcpy"}, {"streams", 4}}), false);
  EXPECT_EQ(ce.schedule, Schedule::pcpy);
  EXPECT_EQ(ce.streams, 4);
  EXPECT_EQ(ce.trigger, Trigger::enqueue);
  EXPECT_EQ(ce.completion, Completion::event);
  EXPECT_FALSE(ce.graph || ce.thread_per_gpu || ce.peer_bounce || ce.overlap_hint || ce.event_before || ce.batch ||
               ce.needs_memops());
  EXPECT_EQ(ce.gate, Gate::wait_value);
  const CeOptions batch = CeOptions::from(
      with_defaults("ce-batch", {{"trigger", "gpu-flag"}, {"completion", "gpu-poll"}, {"issue", "thread-per-gpu"},
                                 {"gate", "spin-kernel"}, {"local", "peer-bounce"}, {"graph", true}}),
      true);
  EXPECT_EQ(batch.schedule, Schedule::b2b);
  EXPECT_EQ(batch.streams, 0);  // auto
  EXPECT_EQ(batch.trigger, Trigger::gpu_flag);
  EXPECT_EQ(batch.completion, Completion::gpu_poll);
  EXPECT_EQ(batch.gate, Gate::spin_kernel);
  EXPECT_TRUE(batch.batch && batch.graph && batch.thread_per_gpu && batch.peer_bounce && batch.overlap_hint &&
              batch.event_before);
  EXPECT_FALSE(CeOptions::from(with_defaults("ce-batch", {{"overlap_hint", false}}), true).overlap_hint);
  EXPECT_FALSE(CeOptions::from(with_defaults("ce-batch", {{"event_before", false}}), true).event_before);
  EXPECT_EQ(SmOptions::from(with_defaults("sm", json::object())).blocks, 0);  // auto
  EXPECT_EQ(SmOptions::from({{"blocks", 7}, {"sms", "auto"}, {"coalesce", false}}).blocks, 7);
  EXPECT_THROW(SmOptions::from({{"blocks", "many"}, {"sms", "auto"}, {"coalesce", false}}), std::logic_error);
  EXPECT_EQ(SmOptions::from(with_defaults("sm", json::object())).sms, 0);  // no SM budget
  EXPECT_EQ(SmOptions::from(with_defaults("sm", {{"sms", 12}})).sms, 12);
  EXPECT_EQ(SmOptions::from(with_defaults("sm", {{"sms", "all"}})).sms, SmOptions::kAllSms);
  EXPECT_THROW(SmOptions::from({{"blocks", "auto"}, {"sms", "some"}, {"coalesce", false}}), std::logic_error);
  EXPECT_FALSE(SmOptions::from(with_defaults("sm", json::object())).coalesce);
  EXPECT_TRUE(SmOptions::from(with_defaults("sm", {{"coalesce", true}})).coalesce);
  EXPECT_THROW(SmOptions::from({{"blocks", "auto"}}), std::logic_error);  // sms missing: the config layer fills it
  const NcclOptions nccl = NcclOptions::from(with_defaults("nccl", {{"cta_policy", "zero"}}));
  EXPECT_TRUE(nccl.cta_zero);
  EXPECT_FALSE(nccl.graph);
  const HsaOptions hsa = HsaOptions::from(with_defaults("hsa", {{"engines", "map:a/b.map"}, {"schedule", "pcpy"}}));
  EXPECT_EQ(hsa.selection.policy, amd::Policy::map);
  EXPECT_EQ(hsa.selection.map_file, "a/b.map");
  EXPECT_TRUE(hsa.pcpy);
  EXPECT_FALSE(hsa.host_flag);
  EXPECT_EQ(hsa.packet, HsaPacket::linear);
  EXPECT_EQ(HsaOptions::from(with_defaults("hsa", json::object())).selection.policy, amd::Policy::runtime);
}

TEST(EngineOptions, SpecsAsData) {
  const json all = engine_specs_json();
  ASSERT_EQ(all.size(), engine_specs().size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const EngineSpec& s = engine_specs()[i];
    const json& e = all[i];
    EXPECT_EQ(e["name"], s.name);
    EXPECT_EQ(e["backend"], s.backend);
    EXPECT_EQ(e["backends"], s.backends);
    EXPECT_EQ(e["description"], s.description);
    ASSERT_EQ(e["options"].size(), s.options.size()) << s.name;
    for (std::size_t k = 0; k < s.options.size(); ++k) {
      const json& o = e["options"][k];
      EXPECT_EQ(o["name"], s.options[k].name);
      EXPECT_EQ(o["default"], s.options[k].default_value);
      EXPECT_EQ(o["help"], s.options[k].help);
      EXPECT_EQ(o["choices"], json(s.options[k].choices));
    }
  }
  const json ce = all[1];
  ASSERT_EQ(ce["name"], "ce");
  EXPECT_EQ(ce["options"][1]["name"], "streams");
  EXPECT_EQ(ce["options"][1]["integers"], (json{{"min", 1}, {"max", 16}}));
  EXPECT_TRUE(ce["options"][0]["integers"].is_null() && ce["options"][0]["prefix"].is_null());
  const json hsa = all[all.size() - 2];
  ASSERT_EQ(hsa["name"], "hsa");
  EXPECT_EQ(hsa["options"][0]["prefix"], (json{{"value", "map:"}, {"form", "map:FILE"}}));
  EXPECT_EQ(hsa["backends"], json::array({"hip"}));
}

TEST(EngineOptions, RegistryDescribesEveryOption) {
  for (const char* name : {"ce", "ce-batch"}) {
    const EngineSpec* s = find_engine_spec(name);
    ASSERT_NE(s, nullptr);
    std::vector<std::string> names;
    for (const auto& o : s->options) names.push_back(o.name);
    std::vector<std::string> want = {"schedule", "streams", "trigger", "completion", "graph", "issue", "gate", "local", "coalesce"};
    if (std::string(name) == "ce-batch") want.insert(want.end(), {"overlap_hint", "event_before"});
    EXPECT_EQ(names, want);
  }
  const EngineSpec* nccl = find_engine_spec("nccl");
  ASSERT_EQ(nccl->options.size(), 2u);
  EXPECT_TRUE(nccl->options[0].accepts(true));
  EXPECT_FALSE(nccl->options[1].accepts("sometimes"));
}

#ifdef DMABENCH_HAVE_GPU
namespace {

std::string reason(const std::string& engine, json options, const Plan& plan, int ops_per_sample = 1) {
  auto e = make_engine(engine).value();
  auto r = e->unsupported(plan, *e->parse(with_defaults(engine, std::move(options))), ops_per_sample);
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

#else
TEST(EngineOptions, SkipReasonsNeedAGpuBackend) { GTEST_SKIP() << "the GPU engines are not in this build"; }
#endif
