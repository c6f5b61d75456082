#pragma once
// Compute workloads that run beside communication (overlap cases): the harness starts one on
// every device of a case, runs the case's operation while it runs, and reads how long the
// workload took as its devices measured it. A workload is written once per kind behind this
// interface; the harness drives it and owns the arithmetic (bench/overlap.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"
#include "core/plan.hpp"
#include "engines/registry.hpp"

namespace dmabench {
class Backend;
}

namespace dmabench::beside {

struct Spec {
  // "gemm" (BLAS GEMM, tensor cores), "stream" (memory-bound copy) or "transfer" (a pattern's bytes
  // moved by an engine: DMA beside DMA; bench/run/transfer_load.cpp)
  std::string kind = "gemm";
  int m = 8192, n = 8192, k = 8192;
  std::string dtype = "bf16";          // gemm: bf16 or fp16
  std::uint64_t bytes = 1ull << 30;    // stream: bytes read (and written) per launch; transfer: bytes per rank
  // transfer: what moves and how (an engine variant with every option filled in), in which host memory
  std::string pattern = "d2h";
  EngineVariant variant = {"ce", nlohmann::json::object()};
  Location host = host_location();
  int depth = 4;                       // operations per launch, back to back
  bool operator==(const Spec&) const = default;

  // Stable short form for case names, e.g. "gemm-bf16-8192x8192x8192" or "stream-1GiB".
  std::string label() const;
  nlohmann::json to_json() const;
  // Work of one launch: floating-point operations (gemm: 2mnk) or bytes moved (stream: 2 x bytes;
  // transfer: depth x S, its plan's total bytes, known once the workload exists: Load::work_per_launch).
  double work_per_launch() const;
  // The rate unit of work_per_launch per second, scaled: "TFLOP/s" or "GB/s".
  std::string rate_unit() const;
  // work_per_launch (or `work`, the workload's own figure) x launches / ms, in rate_unit.
  double rate(double launches, double ms, std::optional<double> work = std::nullopt) const;
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
  // The work of one launch where only the workload knows it (a transfer: its plan's bytes); nullopt:
  // Spec::work_per_launch.
  virtual std::optional<double> work_per_launch() const { return std::nullopt; }
  // Workloads that move data check it: what the runs since the last call wrote wrong, or nullopt
  // (called after wait_ms; a compute kernel's output is not checked).
  virtual std::optional<std::string> data_problem() { return std::nullopt; }
};

// Why `backend` cannot run `spec` in this build, or nullopt (cheap: allocates nothing).
WhyNot unsupported(const Backend& backend, const Spec& spec);

// What makes a "transfer" workload: a case's own operation on an engine, which only the case runner can set up
// (bench/run/transfer_load.hpp). The caller that sees both rooms passes it: this room never calls up into run/.
using TransferMaker = std::function<std::unique_ptr<Load>(Backend&, const Spec&, const std::vector<int>&)>;

// Creates a workload of `spec` on `devices` of `backend`, or the reason it cannot; a "transfer" spec through
// `transfer` (none given: the reason).
Maybe<std::unique_ptr<Load>> make_load(Backend& backend, const Spec& spec, const std::vector<int>& devices,
                                       const TransferMaker& transfer = {});

}  // namespace dmabench::beside
