// The GPU layer's copy tracer: CUPTI on NVIDIA, HSA's copy timestamps on AMD, as this build has them.
#include "gpu/copy_tracer.hpp"

#if defined(DMABENCH_HAVE_CUPTI)
#include "gpu/cupti_tracer.hpp"
#elif defined(DMABENCH_HAVE_HSA)
#include "gpu/hsa.hpp"
#endif
#include "gpu/gpu.hpp"

namespace dmabench::gpu {

Maybe<std::unique_ptr<CopyTracer>> make_copy_tracer() {
#if defined(DMABENCH_HAVE_CUPTI)
  return make_cupti_tracer();
#elif defined(DMABENCH_HAVE_HSA)
  return hsa::make_tracer();
#else
  return Maybe<std::unique_ptr<CopyTracer>>::no(
      backend_name() == "hip" ? "this build has no HSA runtime (the AMD copy tracer reads HSA's copy timestamps)"
                              : "this build has no CUPTI (not found at configure time)");
#endif
}

}  // namespace dmabench::gpu
