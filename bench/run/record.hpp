#pragma once
// The typed record of one case, what run_case() returns, and its one serializer: to_json() is the
// only writer of a results record and mirrors results/SCHEMA.md. Google Benchmark's counters, the
// exit code and the summary read the record, never its JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/measure/breakdown.hpp"
#include "bench/measure/core_share.hpp"
#include "bench/measure/cpu_choice.hpp"
#include "bench/measure/overlap.hpp"
#include "bench/measure/pairs.hpp"
#include "bench/measure/power.hpp"
#include "bench/measure/timing.hpp"
#include "bench/cases/cases.hpp"

namespace dmabench {

enum class Status { pending, ok, skipped, failed };
std::string_view to_string(Status s);

// What setting a case up cost (results/SCHEMA.md, `setup_s` and `setup`): never part of a timed sample.
struct SetupCost {
  double seconds = 0;     // the whole setup: support checks, the engine's prepare(), filling, poisoning, validation
  double prepare_s = 0;   // of it, the engine's prepare(): buffers (allocated or taken from the sweep's pool), queues
  double validate_s = 0;  // of it, filling the sources, poisoning, the validated operations and the check
  // Buffers the case took (engines/buffer_pool.hpp): allocated for it, or reused from an earlier case of the sweep.
  std::uint64_t buffers_allocated = 0, buffers_reused = 0, bytes_allocated = 0;
};

struct CaseRecord {
  Case spec;  // what was asked (its plan, when it has one, gives `bytes`)
  Status status = Status::pending;
  std::string reason;  // why skipped or failed
  bool validated = false;
  bool gpu_clock = false;                   // the samples' clock (measure::Sample::gpu_clock)
  int cpu = -1;                             // the CPU the timing thread was on when the samples ended (-1: unknown)
  std::optional<measure::Timed> timed;      // the reported samples' statistics (ok cases)
  std::vector<double> samples_us;           // every timed sample, µs per operation, in order (Case::run.keep_samples)
  std::optional<measure::CpuChoiceCase> cpu_choice;  // where the samples were taken (--cpu-choice quiet)
  std::optional<measure::CoreShare> core_share;  // whether the sampling thread's core was shared, per sample
  std::optional<measure::Submit> submit;         // the CPU time inside the issuing calls (the record's breakdown)
  nlohmann::json engine_details = nlohmann::json::object();  // Operation::details(), engine-defined
  std::vector<hostmem::BufferInfo> host_memory;  // Operation::host_buffers()
  std::optional<SetupCost> setup;                // cases that were set up
  // The measurements that follow the timed samples, when the case or the run asks for them.
  std::optional<measure::Breakdown> breakdown;
  std::optional<measure::Power> power;
  std::optional<measure::Overlap> overlap;
  std::optional<measure::HeaviestPair> heaviest_pair;  // routed patterns (alltoallv)
};

// The results record of results/SCHEMA.md.
nlohmann::json to_json(const CaseRecord& r);
// A power window, as the record's `power` writes it (without the case's ops_per_batch).
nlohmann::json to_json(const power::Measurement& m);

// The full identity of a record's case across runs and builds (results/SCHEMA.md, "A case's identity"), as
// python/dmabench/case_key.json defines it, the one definition python/dmabench/keys.py case_key reads too, so that
// --check, --merge, compare and history match the same records (bench/run/case_key.cpp embeds the file at build
// time). Not the name: a name leaves options at their default out, so two files whose defaults differ can give
// different cases one name. An object of the file's parts by name (`pattern`, `in_place`, ..., `routing` for
// alltoallv records only). Records are keyed by its dump() (sorted keys: one spelling of each key).
nlohmann::json case_key(const nlohmann::json& record);

}  // namespace dmabench
