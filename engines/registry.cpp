// What engines and backends exist, which of them this build has, and their options.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/engine_factories.hpp"

namespace dmabench {

std::string OptionSpec::accepted() const {
  std::vector<std::string> parts;
  for (const auto& c : choices) parts.push_back(c.dump());
  if (positive_integer) parts.push_back("an integer >= 1");
  return fmt::format("{}", fmt::join(parts, " or "));
}

bool OptionSpec::accepts(const nlohmann::json& value) const {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return true;
  return positive_integer && value.is_number_integer() && value.get<long long>() >= 1 && value.get<long long>() <= (1 << 30);
}

const std::vector<EngineSpec>& engine_specs() {
  static const std::vector<EngineSpec> specs = {
      {"host", "host", "CPU threads, one per rank, memcpy between per-rank host buffers", {}},
      {"ce", "cuda", "cudaMemcpyAsync per transfer on the issuing GPU's stream: the copy (DMA) engines", {}},
      {"sm", "cuda", "a GPU-core copy kernel per issuing GPU, storing into peer memory over NVLink",
       {OptionSpec{.name = "blocks",
                   .help = "thread blocks per launch, shared by the launch's transfers (auto: 2 per multiprocessor)",
                   .default_value = "auto",
                   .choices = {"auto"},
                   .positive_integer = true}}},
      {"nccl", "cuda", "NCCL over a single-process communicator: ncclAllGather, ncclAlltoAll, ncclSend/ncclRecv", {}},
  };
  return specs;
}

const EngineSpec* find_engine_spec(std::string_view name) {
  for (const auto& s : engine_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::unique_ptr<Engine> make_engine(std::string_view name, std::string* why_not) {
  if (name == "host") return make_host_engine();
#ifdef DMABENCH_HAVE_CUDA
  if (name == "ce") return make_ce_engine();
  if (name == "sm") return make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
  if (name == "nccl") return make_nccl_engine();
#endif
  if (why_not) {
    if (name == "nccl")
      *why_not = "this build has no NCCL (NCCL was not found at configure time)";
    else
      *why_not = fmt::format("this build has no {} engine (configure with a CUDA compiler for the cuda backend)", name);
  }
  return nullptr;
}

std::vector<std::string> built_backends() {
#ifdef DMABENCH_HAVE_CUDA
  return {"cuda", "host"};
#else
  return {"host"};
#endif
}

std::unique_ptr<Backend> make_backend(std::string_view name, std::string* why_not) {
  if (name == "host") return make_host_backend();
  if (name == "cuda") {
#ifdef DMABENCH_HAVE_CUDA
    return make_cuda_backend(why_not);
#else
    if (why_not) *why_not = "this build has no cuda backend (no CUDA compiler at configure time)";
    return nullptr;
#endif
  }
  if (why_not) *why_not = fmt::format("unknown backend '{}'", name);
  return nullptr;
}

}  // namespace dmabench
