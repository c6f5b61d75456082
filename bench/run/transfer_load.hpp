// The "transfer" workload beside a case (overlap.compute "transfer"): a case's own operation on an engine, run
// back to back on its thread (bench/run/transfer_load.cpp). It lives in run/ because it is built from a
// CaseExecution; bench/beside/ gets it through make_load's TransferMaker, never by calling up.
#pragma once

#include <memory>
#include <vector>

#include "bench/beside/load.hpp"
#include "engines/registry.hpp"

namespace dmabench::beside {

// Its engine's operation prepared and validated on `devices`; throws with the reason it cannot run. `engine`: one
// to use instead of a new engine of spec.variant (tests).
std::unique_ptr<Load> make_transfer_load(Backend& backend, const Spec& spec, const std::vector<int>& devices,
                                         std::unique_ptr<Engine> engine = nullptr);
// make_transfer_load as make_load takes it.
TransferMaker transfer_maker();

}  // namespace dmabench::beside
