// shim_probe MIN_NS MAX_NS [BYTES]: calls the stand-in runtime (shim_fake_runtime.cpp) 20 times each, checks that
// every call arrived with its arguments (7), and that the median call took MIN_NS to MAX_NS: under LD_PRELOAD of
// tools/slowdown_shim.cpp with DMABENCH_SHIM_SPIN_NS, at least that spin; without it, next to nothing. Without BYTES
// the calls are a 30-byte cudaMemcpyAsync and a kernel launch; with BYTES, a cudaMemcpyAsync of BYTES and a
// cudaMemcpyBatchAsync of two copies adding up to BYTES (DMABENCH_SHIM_SPIN_NS_PER_MIB: a spin that grows with them).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Dim3 {
  unsigned x, y, z;
};
extern "C" int cudaMemcpyAsync(void* dst, const void* src, std::size_t n, int kind, void* stream);
extern "C" int cudaMemcpyBatchAsync(void** dsts, void** srcs, const std::size_t* sizes, std::size_t count, void* attrs,
                                    std::size_t* attr_idxs, std::size_t num_attrs, void* stream);
extern "C" int cudaLaunchKernel(const void* f, Dim3 grid, Dim3 block, void** args, std::size_t shared, void* stream);

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: shim_probe MIN_NS MAX_NS [BYTES]\n");
    return 2;
  }
  const double lo = std::atof(argv[1]), hi = std::atof(argv[2]);
  const std::size_t bytes = argc == 4 ? std::strtoull(argv[3], nullptr, 10) : 0;
  void* ptrs[2] = {reinterpret_cast<void*>(0x10), reinterpret_cast<void*>(0x11)};
  const std::size_t sizes[2] = {bytes / 2, bytes - bytes / 2};
  std::vector<double> ns;
  for (int k = 0; k < 20; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const int a = cudaMemcpyAsync(reinterpret_cast<void*>(0x10), reinterpret_cast<const void*>(0x20), bytes ? bytes : 30, 4,
                                  reinterpret_cast<void*>(0x50));
    const int b = bytes ? cudaMemcpyBatchAsync(ptrs, ptrs, sizes, 2, reinterpret_cast<void*>(0x60),
                                               reinterpret_cast<std::size_t*>(0x70), 1, reinterpret_cast<void*>(0x50))
                        : cudaLaunchKernel(reinterpret_cast<const void*>(0x1), Dim3{2, 3, 4}, Dim3{5, 6, 7},
                                           reinterpret_cast<void**>(0x8), 9, reinterpret_cast<void*>(0xa));
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / 2);
    if (a != 7 || b != 7) {
      std::fprintf(stderr, "FAIL: the arguments did not arrive untouched (cudaMemcpyAsync %d, %s %d)\n", a,
                   bytes ? "cudaMemcpyBatchAsync" : "cudaLaunchKernel", b);
      return 1;
    }
  }
  std::sort(ns.begin(), ns.end());
  const double median = ns[ns.size() / 2];
  std::printf("median %.0f ns per call\n", median);
  if (median < lo || median > hi) {
    std::fprintf(stderr, "FAIL: median %.0f ns per call, expected %.0f to %.0f\n", median, lo, hi);
    return 1;
  }
  return 0;
}
