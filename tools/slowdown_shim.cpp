// A regression of a set size, injected outside dmabench's code: an LD_PRELOAD library that spins
// DMABENCH_SHIM_SPIN_NS nanoseconds before each runtime call that submits a copy or a kernel, then makes the call.
// It is how `dmabench-results gate-rates --inject` measures what the verdict catches on a GPU (issue 50): NEW's
// processes run with it, BASE's without, the binary the same. Built as libdmabench_slowdown_shim.so (CMakeLists.txt);
//   LD_PRELOAD=build/libdmabench_slowdown_shim.so DMABENCH_SHIM_SPIN_NS=2000 build/dmabench ...
// No vendor header: each wrapper takes twelve machine words and hands them on untouched. On x86-64 (System V) every
// argument of these calls is of the INTEGER class (pointers, sizes, enums, and dim3 passed by value in two
// registers), the first six words travel in registers and the rest on the stack, so the runtime's own function sees
// exactly what the caller passed; the words past the caller's own are read from its frame and ignored.
// tests/shim_test.py checks the forwarding (a dim3 by value included) and the spin against a stand-in runtime.
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using Word = std::uintptr_t;
using Call = int (*)(Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word);

long spin_ns() {
  static const long ns = [] {
    const char* v = std::getenv("DMABENCH_SHIM_SPIN_NS");
    char* end = nullptr;
    const long n = v ? std::strtol(v, &end, 10) : 0;
    if (v && (end == v || *end != '\0' || n < 0 || n > 1000000000L)) {
      std::fprintf(stderr, "dmabench slowdown shim: DMABENCH_SHIM_SPIN_NS='%s': expected nanoseconds, 0 to 1e9\n", v);
      std::abort();
    }
    return n;
  }();
  return ns;
}

void spin() {
  const long ns = spin_ns();
  if (ns <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

Call next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "dmabench slowdown shim: %s: not found after the shim (%s)\n", name, dlerror());
    std::abort();
  }
  Call call;
  static_assert(sizeof call == sizeof f, "a function pointer is one machine word here");
  std::memcpy(&call, &f, sizeof call);
  return call;
}

}  // namespace

#define DMABENCH_SHIM_WRAP(name)                                                                              \
  extern "C" __attribute__((visibility("default"))) int name(Word a, Word b, Word c, Word d, Word e, Word f, \
                                                             Word g, Word h, Word i, Word j, Word k, Word l) { \
    static const Call real = next(#name);                                                                     \
    spin();                                                                                                   \
    return real(a, b, c, d, e, f, g, h, i, j, k, l);                                                          \
  }

// CUDA runtime: a copy, a batch of copies, a kernel (the <<<>>> launches of the sm engine and the compute loads)
DMABENCH_SHIM_WRAP(cudaMemcpyAsync)
DMABENCH_SHIM_WRAP(cudaMemcpyBatchAsync)
DMABENCH_SHIM_WRAP(cudaMemcpyPeerAsync)
DMABENCH_SHIM_WRAP(cudaMemcpy2DAsync)
DMABENCH_SHIM_WRAP(cudaLaunchKernel)
// HIP runtime: the same calls
DMABENCH_SHIM_WRAP(hipMemcpyAsync)
DMABENCH_SHIM_WRAP(hipMemcpyPeerAsync)
DMABENCH_SHIM_WRAP(hipMemcpy2DAsync)
DMABENCH_SHIM_WRAP(hipLaunchKernel)
