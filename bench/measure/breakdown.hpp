#pragma once
// The four-phase latency breakdown of one operation (results/SCHEMA.md, "breakdown_us"): control,
// schedule, copy and sync, from an untraced pass and a copy-traced pass of the operation.
#include <cstddef>
#include <string>

#include "bench/measure/subject.hpp"

namespace dmabench::measure {

struct Breakdown {
  std::string error;  // non-empty: not measured, and why (the fields below are then unset)
  double control_us = 0, schedule_us = 0, copy_us = 0, sync_us = 0, total_us = 0, not_copy_not_control_us = 0;
  int operations = 0;
  std::size_t copies_per_operation = 0;
  double aligned_fraction = 0;
  std::string tracer;  // CopyTracer::source()
};

// `passes` oneshot operations untraced, then `passes` traced by the backend's copy tracer. Never
// throws: a failure is the result's error.
Breakdown measure_breakdown(const Subject& s, int passes);

}  // namespace dmabench::measure
