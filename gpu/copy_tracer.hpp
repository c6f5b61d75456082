#pragma once
// Engine-side timestamps of memory copies, for the latency breakdown: the interface a backend's copy
// tracer implements (engines/backend.hpp hands it to the harness) and the GPU layer's tracer.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/why_not.hpp"

namespace dmabench {

// Engine-side start and end of the memory copies a device executed, on the host's
// std::chrono::steady_clock (ns since its epoch), so they line up with the harness's host stamps.
struct CopyInterval {
  double start_ns = 0, end_ns = 0;
  std::uint64_t bytes = 0;
};

// Now on that clock: std::chrono::steady_clock, ns since its epoch (every tracer's stamps and the breakdown's).
inline double steady_now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

class CopyTracer {
 public:
  virtual ~CopyTracer() = default;
  virtual void start() = 0;
  // Stops tracing and returns every copy executed since start().
  virtual std::vector<CopyInterval> stop() = 0;
  // Where the times come from and how they reach the host clock (the breakdown's `tracer` field).
  virtual std::string source() const = 0;
};

namespace gpu {
// This build's copy tracer: CUPTI's copy records (NVIDIA) or HSA's copy timestamps (AMD); the reason
// where the build has neither or the tracer refuses. GPU builds only.
Maybe<std::unique_ptr<CopyTracer>> make_copy_tracer();
}  // namespace gpu

}  // namespace dmabench
