#pragma once
// Factories of the backends and engines this build compiles; engines/registry.cpp is their only caller.
#include <memory>

#include <string>

#include "engines/backend.hpp"
#include "engines/engine.hpp"

namespace dmabench {

std::unique_ptr<Engine> make_host_engine();
std::unique_ptr<Backend> make_host_backend();
#ifdef DMABENCH_HAVE_GPU
Maybe<std::unique_ptr<Backend>> make_gpu_backend();  // cuda or hip, as built
std::unique_ptr<Engine> make_ce_engine();
std::unique_ptr<Engine> make_ce_batch_engine();
std::unique_ptr<Engine> make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_HSA
std::unique_ptr<Engine> make_hsa_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
std::unique_ptr<Engine> make_nccl_engine();
#endif

}  // namespace dmabench
