#pragma once
#include <memory>
#include <string>

#include "engines/backend.hpp"

namespace dmabench::gpu {
// CUPTI-based copy tracer, or nullptr with the reason (CUPTI missing or refused).
std::unique_ptr<CopyTracer> make_cupti_tracer(std::string* why_not);
}  // namespace dmabench::gpu
