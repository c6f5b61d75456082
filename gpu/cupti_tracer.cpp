// Copy tracing through CUPTI's activity API: MEMCPY (and MEMCPY2, peer-to-peer) records carry the
// copy engine's start and end. CUPTI converts GPU timestamps to the host clock it is given: here
// std::chrono::steady_clock, the harness's clock.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <cupti.h>

#include "gpu/call_error.hpp"
#include "gpu/cupti_tracer.hpp"

namespace dmabench::gpu {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;

std::mutex g_mu;
std::vector<CopyInterval> g_records;

std::uint64_t CUPTIAPI steady_ns() { return static_cast<std::uint64_t>(steady_now_ns()); }

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard lock(g_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
      g_records.push_back({static_cast<double>(m->start), static_cast<double>(m->end), m->bytes});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
      g_records.push_back({static_cast<double>(m->start), static_cast<double>(m->end), m->bytes});
    }
  }
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* s = "unknown";
  cuptiGetResultString(r, &s);
  return s;
}

#define DMABENCH_CUPTI_CHECK(call)                                                                         \
  do {                                                                                                     \
    CUptiResult dmabench_cr_ = (call);                                                                     \
    if (dmabench_cr_ != CUPTI_SUCCESS)                                                                     \
      throw_call_error("CUPTI", #call, __FILE__, __LINE__, dmabench_cr_, cupti_error(dmabench_cr_));       \
  } while (0)

// CUPTI converts GPU timestamps onto the host clock by interpolating between calibration points;
// over seconds of a run the conversion was seen to drift by several microseconds. Each traced
// pass therefore attaches CUPTI afresh (register, enable) and detaches it (cuptiFinalize) after.
void attach() {
  DMABENCH_CUPTI_CHECK(cuptiActivityRegisterTimestampCallback(steady_ns));  // before any kind is enabled
  DMABENCH_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
}

class CuptiCopyTracer final : public CopyTracer {
 public:
  std::string source() const override {
    return "CUPTI copy records (GPU clock), converted onto the host steady clock by CUPTI";
  }
  void start() override {
    {
      std::lock_guard lock(g_mu);
      g_records.clear();
    }
    attach();
    DMABENCH_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    DMABENCH_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
  }
  std::vector<CopyInterval> stop() override {
    DMABENCH_CUPTI_CHECK(cuptiActivityFlushAll(1));
    DMABENCH_CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
    DMABENCH_CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    DMABENCH_CUPTI_CHECK(cuptiActivityFlushAll(1));
    DMABENCH_CUPTI_CHECK(cuptiFinalize());
    std::lock_guard lock(g_mu);
    return std::exchange(g_records, {});
  }
};

}  // namespace

Maybe<std::unique_ptr<CopyTracer>> make_cupti_tracer() { return std::make_unique<CuptiCopyTracer>(); }

}  // namespace dmabench::gpu
