#pragma once
// An engine says *how* bytes move. It prepares a Plan once (allocation, communicators: never
// timed) into an Operation; the harness launches and waits on that operation and owns all timing.
// Engines never time themselves. This is what an engine implements; which engines exist, their options
// and how to make one is the registry (engines/registry.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/host_memory.hpp"
#include "core/why_not.hpp"
#include "core/plan.hpp"
#include "engines/options/option.hpp"  // Options
#include "gpu/copy_tracer.hpp"  // CopyInterval, CopyTracer

namespace dmabench {

// First wrong destination byte found by validation.
struct Mismatch {
  int rank = 0;
  std::size_t offset = 0;
  unsigned expected = 0;
  unsigned got = 0;
};

// One prepared operation over a plan's buffers. Not thread-safe; used by one harness thread.
class Operation {
 public:
  virtual ~Operation() = default;
  // Untimed: posts ahead whatever the next `ops` launches will release (commands behind a flag,
  // polling kernels). The harness calls it before every sample, outside the timed region.
  virtual void arm(int ops) { (void)ops; }
  // Issue (or release) one whole operation on every issuing rank, without waiting for it where
  // the mechanism allows. Several launches before a wait run back to back.
  virtual void launch() = 0;
  // Block until every launched operation has completed.
  virtual void wait() = 0;
  // For operations timed on the GPU clock: the seconds between the GPU-side trigger and the
  // GPU-side observation of completion of the last operation (the longest over devices, each on
  // its own clock). nullopt: the harness times with the host clock.
  virtual std::optional<double> device_seconds() { return std::nullopt; }
  // What the engine wants recorded with the result (e.g. evidence of the path a library took).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
  // The copies one operation submits in this process (one per copy call, batch entry or kernel job, after
  // coalescing: the record's breakdown.descriptors); nullopt where the engine does not count them (a library call).
  virtual std::optional<std::size_t> descriptors() const { return std::nullopt; }
  // For engines that write device commands themselves (sdma): what the first operation wrote into
  // each queue (results/SCHEMA.md, "Packet dumps"); null for the others.
  virtual nlohmann::json packet_dump() const { return nullptr; }
  // Engine-side timestamps of this operation's copies (for the latency breakdown), for engines that
  // take their own (sdma: TIMESTAMP packets around every command's data packets); otherwise the reason
  // there are none, and the harness asks the backend's tracer.
  virtual Maybe<std::unique_ptr<CopyTracer>> copy_tracer() {
    return Maybe<std::unique_ptr<CopyTracer>>::no("the engine takes no timestamps of its own");
  }

  // The plan's host buffers as this operation allocated them (kind, node, placement verified, the time
  // to allocate and to pin), for the record's `host_memory`; empty when every buffer is device memory.
  virtual std::vector<hostmem::BufferInfo> host_buffers() const { return {}; }

  // Multi-process runs: waits for this process's work and drops its mappings of other processes'
  // buffers; the harness calls it on every process, and the processes meet, before any frees its own
  // buffers (which another process may not hold open when they go).
  virtual void close_peers() {}

  // Validation support: sources get datagen bytes for (seed, rank), destinations get poison.
  virtual void fill_sources(std::uint64_t seed) = 0;
  virtual void poison_destinations(std::uint64_t seed) = 0;
  // Checks every destination byte against what `expected` (the harness's plan, not the engine's
  // copy) says it must hold after one operation; the first mismatch, or nullopt.
  virtual std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) = 0;
};

// Operations an engine pre-posts behind a trigger in one arm(): gated work fills the stream or queue
// ahead of its own release, and a launch that blocks on a full queue would wait behind its own gate.
inline constexpr int kMaxPrePostedOps = 64;

// An engine's options in its own typed form (CeOptions, SdmaOptions, ...), parsed once per case from the
// variant's JSON options by Engine::parse and handed to every call of that case: nothing re-reads the JSON.
class TypedOptions {
 public:
  virtual ~TypedOptions() = default;
};
template <class T>
struct OptionsOf final : TypedOptions {
  explicit OptionsOf(T v) : value(std::move(v)) {}
  T value;
};
// An engine's own options type from what parse() gave (std::bad_cast: another engine's options).
template <class T>
const T& options_of(const TypedOptions& o) {
  return dynamic_cast<const OptionsOf<T>&>(o).value;
}
// The options of an engine that has none.
struct NoOptions {};

class Engine {
 public:
  virtual ~Engine() = default;
  // The typed options of validated JSON options (every option of the engine's table present: the config
  // layer, or with_defaults, filled them in); throws std::logic_error when one is missing. Once per case.
  virtual std::unique_ptr<const TypedOptions> parse(const Options& options) const = 0;
  // Why this engine cannot run the plan with these options on this machine, or nullopt, for
  // samples of `ops_per_sample` operations (1: oneshot; pipeline_depth: pipelined).
  // Cheap and side-effect free: it allocates nothing.
  virtual WhyNot unsupported(const Plan& plan, const TypedOptions& options, int ops_per_sample) const = 0;
  // Allocates buffers and whatever the mechanism needs; throws on runtime errors.
  virtual std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) = 0;
  // Why this engine cannot run the plan with one process per rank (a multi-process run: mpirun, srun;
  // team/team.hpp), or nullopt. Engines that can open the other ranks' buffers (or bring their own
  // transport) say so; the rest run in one process only.
  virtual WhyNot across_processes(const Plan& plan, const TypedOptions& options) const {
    (void)plan, (void)options;
    return std::string("this engine runs in one process only (it drives every rank's device itself)");
  }
  // Whether its ranks may sit on different hosts (a library with a network transport); engines that
  // move bytes with a node's copy engines or cores do not.
  virtual bool across_nodes() const { return false; }
  // Whether, with these options, the engine exchanges blocks in place (Plan::exchange: the in-place
  // alltoall); the harness skips exchange plans for every engine that does not.
  virtual bool exchanges(const TypedOptions& options) const {
    (void)options;
    return false;
  }
};

}  // namespace dmabench
