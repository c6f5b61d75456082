#pragma once
// The sdma engine's platform on AMD GPUs: KFD user-mode SDMA queues through libhsakmt (the thunk),
// driven with raw packets (amd/sdma/). Built where configure found libhsakmt's headers
// (DMABENCH_HAVE_KFD, hip builds); gpu/kfd.cpp says how it shares the process with HIP. No vendor header.
#include <memory>

#include "amd/sdma/platform.hpp"
#include "core/why_not.hpp"

namespace dmabench::gpu {

// KFD SDMA queues on the hip backend's devices (HIP ordinals), or why not: no /dev/kfd or no access
// to it, hsaKmtOpenKFD / hsaKmtAcquireSystemProperties failing (with its status), no GPU, a HIP
// device without a KFD node at its PCI location. Call it after the hip backend exists: HIP (and
// the HSA runtime under it) must have opened KFD first.
Maybe<std::unique_ptr<amd::sdma::Platform>> make_kfd_platform();

}  // namespace dmabench::gpu
