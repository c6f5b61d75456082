// A regression of a set size, injected outside dmabench's code: an LD_PRELOAD library that spins
// DMABENCH_SHIM_SPIN_NS nanoseconds before each runtime call that submits a copy or a kernel, and
// DMABENCH_SHIM_SPIN_NS_PER_MIB more for each MiB the call copies, then makes the call.
// It is how `dmabench-results gate-rates --inject` measures what the verdict catches on a GPU (issue 50): NEW's
// processes run with it, BASE's without, the binary the same. Built as libdmabench_slowdown_shim.so (CMakeLists.txt);
//   LD_PRELOAD=build/libdmabench_slowdown_shim.so DMABENCH_SHIM_SPIN_NS=2000 build/dmabench ...
// No vendor header: each wrapper takes twelve machine words and hands them on untouched. On x86-64 (System V) every
// argument of these calls is of the INTEGER class (pointers, sizes, enums, and dim3 passed by value in two
// registers), the first six words travel in registers and the rest on the stack, so the runtime's own function sees
// exactly what the caller passed; the words past the caller's own are read from its frame and ignored.
// tests/shim_probe.cpp checks the forwarding (a dim3 by value included) and both spins against a stand-in runtime
// (tests/CMakeLists.txt: shim_off, shim_forwarding, shim_per_mib, shim_per_mib_small).
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using Word = std::uintptr_t;
using Call = int (*)(Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word);

// Nanoseconds from the environment variable `name` (unset: 0); anything but 0 to 1e9 aborts with one line.
long env_ns(const char* name) {
  const char* v = std::getenv(name);
  char* end = nullptr;
  const long n = v ? std::strtol(v, &end, 10) : 0;
  if (v && (end == v || *end != '\0' || n < 0 || n > 1000000000L)) {
    std::fprintf(stderr, "dmabench slowdown shim: %s='%s': expected nanoseconds, 0 to 1e9\n", name, v);
    std::abort();
  }
  return n;
}

// DMABENCH_SHIM_SPIN_NS before every call, and DMABENCH_SHIM_SPIN_NS_PER_MIB for each MiB the call copies: a spin
// that grows with the bytes slows a bandwidth-bound case too (a oneshot copy by the whole spin; a pipelined one of
// depth d by about spin / (d x the copy's time), its first launch held back), where a fixed spin only reaches the
// cases of many calls per operation.
void spin(std::size_t bytes) {
  static const long fixed = env_ns("DMABENCH_SHIM_SPIN_NS"), per_mib = env_ns("DMABENCH_SHIM_SPIN_NS_PER_MIB");
  const long ns = fixed + static_cast<long>(static_cast<double>(per_mib) * static_cast<double>(bytes) / (1 << 20));
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

// The bytes a batch call copies: its `count` sizes (the runtime reads the same array).
std::size_t batch_bytes(Word sizes, Word count) {
  std::size_t n = 0;
  if (!sizes) return 0;  // the runtime refuses it; the shim only must not read through it
  for (Word i = 0; i < count; ++i) n += reinterpret_cast<const std::size_t*>(sizes)[i];
  return n;
}

}  // namespace

// `bytes`: what the call copies, from its own arguments (a..l, as the caller passed them).
#define DMABENCH_SHIM_WRAP(name, bytes)                                                                       \
  extern "C" __attribute__((visibility("default"))) int name(Word a, Word b, Word c, Word d, Word e, Word f, \
                                                             Word g, Word h, Word i, Word j, Word k, Word l) { \
    static const Call real = next(#name);                                                                     \
    spin(bytes);                                                                                              \
    return real(a, b, c, d, e, f, g, h, i, j, k, l);                                                          \
  }

// CUDA runtime: a copy (dst, src, count, ...), a batch of copies (dsts, srcs, sizes, count, ...), a copy between
// GPUs (dst, dstDevice, src, srcDevice, count, ...), a 2-D copy (dst, dpitch, src, spitch, width, height, ...), a
// kernel (the <<<>>> launches of the sm engine and the compute loads: no bytes)
DMABENCH_SHIM_WRAP(cudaMemcpyAsync, c)
DMABENCH_SHIM_WRAP(cudaMemcpyBatchAsync, batch_bytes(c, d))
DMABENCH_SHIM_WRAP(cudaMemcpyPeerAsync, e)
DMABENCH_SHIM_WRAP(cudaMemcpy2DAsync, e * f)
DMABENCH_SHIM_WRAP(cudaLaunchKernel, 0)
// HIP runtime: the same calls
DMABENCH_SHIM_WRAP(hipMemcpyAsync, c)
DMABENCH_SHIM_WRAP(hipMemcpyPeerAsync, e)
DMABENCH_SHIM_WRAP(hipMemcpy2DAsync, e * f)
DMABENCH_SHIM_WRAP(hipLaunchKernel, 0)
