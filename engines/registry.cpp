// What engines and backends exist, which of them this build has, and their options.
#include "engines/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/options/ce.hpp"
#include "engines/engine_factories.hpp"
#include "engines/options/hsa.hpp"
#include "engines/options/nccl.hpp"
#include "engines/options/sdma.hpp"
#include "engines/options/sm.hpp"

namespace dmabench {
namespace {

// The GPU backend this build has ("cuda" or "hip"); "cuda" in a host-only build.
std::string gpu_backend() {
#if defined(DMABENCH_HAVE_HIP)
  return "hip";
#else
  return "cuda";
#endif
}

// Where sdma runs in this build: on KFD queues in a hip build with libhsakmt, else on the software engine.
std::string sdma_backend() {
#if defined(DMABENCH_HAVE_KFD)
  return "hip";
#else
  return "host";
#endif
}

}  // namespace

bool EngineSpec::runs_on(std::string_view run_backend) const {
  return run_backend == backend ||
         (run_backend == "host" && std::find(backends.begin(), backends.end(), "host") != backends.end());
}

const std::vector<EngineSpec>& engine_specs() {
  static const std::vector<EngineSpec> specs = {
      {"host", "host", "CPU threads, one per rank, memcpy between per-rank host buffers", {}, {"host"}},
      {"ce", gpu_backend(),
       "cudaMemcpyAsync / hipMemcpyAsync per copy on the issuing GPU's streams: the copy (DMA / SDMA) engines",
       ce_option_specs(false), {"cuda", "hip"}},
      {"ce-batch", gpu_backend(),
       "one cudaMemcpyBatchAsync (CUDA >= 12.8) / hipMemcpyBatchAsync (HIP >= 7.1) per stream for all of a GPU's "
       "copies (stream order, prefer overlap with compute)",
       ce_option_specs(true), {"cuda", "hip"}},
      {"sm", gpu_backend(), "a GPU-core copy kernel per issuing GPU, storing into peer memory over NVLink / xGMI",
       sm_option_specs(), {"cuda", "hip"}},
      {"nccl", gpu_backend(),
       "NCCL (RCCL on AMD) over a single-process communicator: ncclAllGather, ncclAlltoAll (RCCL: ncclAllToAll), ncclSend/ncclRecv",
       nccl_option_specs(), {"cuda", "hip"}},
      {"hsa", "hip",
       "AMD only: HSA async copies on the SDMA engines (hsa_amd_memory_async_copy[_on_engine]), completion by spinning "
       "on the HSA completion signal",
       hsa_option_specs(), {"hip"}},
      {"sdma", sdma_backend(),
       "AMD SDMA queues driven with raw packets, as DMA-Latte does (KFD user-mode queues through libhsakmt on the hip "
       "backend; on the host backend a software SDMA engine runs the same packets, its times not hardware times)",
       sdma_option_specs(), {"hip", "host"}},
  };
  return specs;
}

const EngineSpec* find_engine_spec(std::string_view name) {
  for (const auto& s : engine_specs())
    if (s.name == name) return &s;
  return nullptr;
}

Options with_defaults(std::string_view engine, Options given) {
  const EngineSpec* spec = find_engine_spec(engine);
  if (!spec) throw std::invalid_argument(fmt::format("unknown engine '{}'", engine));
  for (const auto& o : spec->options)
    if (!given.contains(o.name)) given[o.name] = o.default_value;
  return given;
}

nlohmann::json engine_specs_json() {
  nlohmann::json engines = nlohmann::json::array();
  for (const auto& s : engine_specs()) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : s.options)
      options.push_back({{"name", o.name},
                         {"default", o.default_value},
                         {"choices", o.choices},
                         {"integers", o.positive_integer ? nlohmann::json{{"min", 1}, {"max", o.max_integer}} : nlohmann::json()},
                         {"prefix", o.prefix.empty() ? nlohmann::json()
                                                     : nlohmann::json{{"value", o.prefix}, {"form", o.prefix_form()}}},
                         {"help", o.help}});
    engines.push_back({{"name", s.name},
                       {"backend", s.backend},
                       {"backends", s.backends},
                       {"description", s.description},
                       {"options", options}});
  }
  return engines;
}

Maybe<std::unique_ptr<Engine>> make_engine(std::string_view name, std::string_view backend) {
  if (name == "host") return make_host_engine();
  if (name == "sdma") {
    const EngineSpec* spec = find_engine_spec(name);
    return make_sdma_engine(backend.empty() ? std::string_view(spec->backend) : backend);
  }
#ifdef DMABENCH_HAVE_GPU
  if (name == "ce") return make_ce_engine();
  if (name == "ce-batch") return make_ce_batch_engine();
  if (name == "sm") return make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_HSA
  if (name == "hsa") return make_hsa_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
  if (name == "nccl") return make_nccl_engine();
#endif
  using Result = Maybe<std::unique_ptr<Engine>>;
  if (name == "nccl")
    return Result::no(gpu_backend() == "hip" ? "this build has no RCCL (not found at configure time; Debian has no RCCL package)"
                                         : "this build has no NCCL (NCCL was not found at configure time)");
  if (name == "hsa")
    return Result::no("this build has no hsa engine (AMD only: configure with HIP and the HSA runtime, -DDMABENCH_HIP=ON)");
  return Result::no(fmt::format("this build has no {} engine (configure with a CUDA compiler for the cuda backend or with "
                            "hipcc for the hip backend)",
                            name));
}

std::vector<std::string> built_backends() {
#if defined(DMABENCH_HAVE_CUDA)
  return {"cuda", "host"};
#elif defined(DMABENCH_HAVE_HIP)
  return {"hip", "host"};
#else
  return {"host"};
#endif
}

const std::vector<std::string>& backend_choices() {
  static const std::vector<std::string> choices = {"auto", "gpu", "host", "cuda", "hip"};
  return choices;
}

bool known_backend_choice(std::string_view choice) {
  return std::find(backend_choices().begin(), backend_choices().end(), choice) != backend_choices().end();
}

Maybe<std::unique_ptr<Backend>> make_backend(std::string_view name) {
  using Result = Maybe<std::unique_ptr<Backend>>;
  if (name == "host") return make_host_backend();
  if (name == "cuda" || name == "hip") {
#ifdef DMABENCH_HAVE_GPU
    if (name == gpu_backend()) return make_gpu_backend();
#endif
    return Result::no(name == "cuda" ? "this build has no cuda backend (no CUDA compiler at configure time)"
                                 : "this build has no hip backend (no hipcc / HIP CMake package at configure time)");
  }
  return Result::no(fmt::format("unknown backend '{}'", name));
}

std::string variant_label(std::string_view engine, const Options& options) {
  std::string label(engine);
  const EngineSpec* spec = find_engine_spec(engine);
  for (const auto& o : spec ? spec->options : std::vector<OptionSpec>{}) {
    if (!options.contains(o.name) || options[o.name] == o.default_value) continue;
    const auto& v = options[o.name];
    label += fmt::format(",{}={}", o.name, v.is_string() ? v.get<std::string>() : v.dump());
  }
  return label;
}

}  // namespace dmabench
