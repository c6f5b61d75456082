#include "amd/environment.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "amd/text.hpp"

namespace dmabench::amd {

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
    const auto v = detail::small_int(detail::trim(*e.gpu_max_hw_queues), 1 << 16);
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

}  // namespace dmabench::amd
