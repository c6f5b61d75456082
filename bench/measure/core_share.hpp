#pragma once
// Whether the core under the sampling thread was shared with another busy hardware thread while a case was sampled
// (results/SCHEMA.md `core_share`; issue 39's slow mode, results/LAB-NOTES.md "The slow mode is a shared core").
// In a VM the guest sees one thread per core, but the host may run another thread (another tenant's vCPU) on the same
// physical core. Code that issues many instructions per cycle, such as the GPU driver's submission path (1024
// cudaMemcpyBatchAsync descriptors: ~0.37 µs each alone, ~0.73 µs shared on the 1 x H200 VM), then runs up to twice
// as slow, while a chain of dependent instructions does not slow at all. A reading times both on the calling thread:
// `ratio` = ns per operation of 8 independent multiply-add chains over ns per operation of one dependent chain.
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::measure {

struct CoreShareReading {
  double throughput_ns = 0;  // per multiply-add, 8 independent chains (the core's issue width)
  double latency_ns = 0;     // per multiply-add, one dependent chain (the core's clock)
  double ratio() const { return latency_ns > 0 ? throughput_ns / latency_ns : 0; }
};

// One reading on the calling thread's CPU: 8 x 1024 operations of each loop, about 20 µs.
CoreShareReading read_core_share();

// Above this ratio a reading counts as shared. Measured on the 1 x H200 VM (Xeon, results/h200x1/levels/vcpu/): a
// core to itself reads 0.5-0.7, a shared one 0.8-1.6; in tools/vcpu_probe.cu's paired samples (the same loop, read
// just before each batch) 97% of the batches after a reading below it and 87% of those after one above it were in the
// batch's fast and slow mode. Other CPUs: check with tools/vcpu_probe.cu before trusting it.
inline constexpr double kSharedRatio = 0.75;

// A case's readings, one before each timed sample. What they tell is the share of the case's time its core was shared
// (on the H200 VM a case with half its readings shared ran ce-batch on 4 KiB pages 1.5x slower), not which samples
// were slow: there a sample after a shared reading was as slow as one after an unshared reading of the same case.
struct CoreShare {
  std::size_t probed = 0;  // readings (= samples)
  std::size_t shared = 0;  // of them, above kSharedRatio
  double ratio_p50 = 0;
  std::vector<double> ratios;  // every reading, in the samples' order
};
CoreShare summarize_core_share(const std::vector<double>& ratios);

// The record's `core_share` (results/SCHEMA.md); `with_ratios`: every reading too (when the record keeps samples_us).
nlohmann::json to_json(const CoreShare& c, bool with_ratios);

}  // namespace dmabench::measure
