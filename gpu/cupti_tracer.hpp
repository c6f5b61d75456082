#pragma once
// Internal to gpu/: gpu::make_copy_tracer (gpu/copy_tracer.hpp) is what the rest of the program calls.
#include <memory>
#include <string>

#include "gpu/copy_tracer.hpp"

namespace dmabench::gpu {
// CUPTI-based copy tracer, or nullptr with the reason (CUPTI missing or refused).
std::unique_ptr<CopyTracer> make_cupti_tracer(std::string* why_not);
}  // namespace dmabench::gpu
