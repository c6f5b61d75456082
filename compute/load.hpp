#pragma once
// Compute workloads that run beside communication (overlap cases): the harness starts one on
// every device of a case, runs the case's operation while it runs, and reads how long the
// workload took as its devices measured it. A workload is written once per kind behind this
// interface; the harness drives it and owns the arithmetic (bench/overlap.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"

namespace dmabench {
class Backend;
}

namespace dmabench::compute {

struct Spec {
  std::string kind = "gemm";  // "gemm" (BLAS GEMM, tensor cores) or "stream" (memory-bound copy)
  int m = 8192, n = 8192, k = 8192;
  std::string dtype = "bf16";          // gemm: bf16 or fp16
  std::uint64_t bytes = 1ull << 30;    // stream: bytes read (and written) per launch

  // Stable short form for case names, e.g. "gemm-bf16-8192x8192x8192" or "stream-1GiB".
  std::string label() const;
  nlohmann::json to_json() const;
  // Work of one launch: floating-point operations (gemm: 2mnk) or bytes moved (stream: 2 x bytes).
  double work_per_launch() const;
  // The rate unit of work_per_launch per second, scaled: "TFLOP/s" or "GB/s".
  std::string rate_unit() const;
  // work_per_launch / seconds in rate_unit.
  double rate(double launches, double ms) const;
};

class Load {
 public:
  virtual ~Load() = default;
  // Queues `launches` kernels back to back on every device's compute stream, between two timing
  // marks, and returns at once.
  virtual void start(int launches) = 0;
  // Whether every device has finished what start() queued (non-blocking).
  virtual bool finished() = 0;
  // Waits for every device; per device, milliseconds from its start mark to its stop mark as the
  // device measured them (GPU events; the host backend: steady_clock in its worker thread).
  virtual std::vector<double> wait_ms() = 0;
  // Records what the workload is where it runs (e.g. "clock": "gpu-events").
  virtual nlohmann::json details() const = 0;
};

// Why `backend` cannot run `spec` in this build, or nullopt (cheap: allocates nothing).
WhyNot unsupported(const Backend& backend, const Spec& spec);

// Creates a workload of `spec` on `devices` of `backend`, or the reason it cannot.
Maybe<std::unique_ptr<Load>> make_load(const Backend& backend, const Spec& spec, const std::vector<int>& devices);

}  // namespace dmabench::compute
