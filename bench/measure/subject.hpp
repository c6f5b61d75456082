#pragma once
// What every measurement unit takes: the case, its plan, its engine with the case's typed options, and
// the prepared operation (validated) on its backend.
#include "bench/cases/cases.hpp"
#include "engines/backend.hpp"
#include "engines/engine.hpp"

namespace dmabench::measure {

struct Subject {
  const Case& spec;
  const Plan& plan;
  Engine& engine;
  const TypedOptions& options;  // the case's engine options, parsed once (Engine::parse)
  Operation& op;
  Backend& backend;
  // Operations per timed sample: 1 (oneshot) or the pipeline depth (pipelined).
  int depth() const { return spec.ops_per_sample(); }
};

}  // namespace dmabench::measure
