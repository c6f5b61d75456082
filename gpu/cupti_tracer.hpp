#pragma once
// Internal to gpu/: gpu::make_copy_tracer (gpu/copy_tracer.hpp) is what the rest of the program calls.
#include <memory>
#include <string>

#include "gpu/copy_tracer.hpp"

namespace dmabench::gpu {
// CUPTI-based copy tracer, or the reason there is none (CUPTI missing or refused).
Maybe<std::unique_ptr<CopyTracer>> make_cupti_tracer();
}  // namespace dmabench::gpu
