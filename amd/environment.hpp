#pragma once
// The environment variables that change AMD's DMA path, and the warnings they call for.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::amd {

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

}  // namespace dmabench::amd
