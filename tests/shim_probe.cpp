// shim_probe MIN_NS MAX_NS: calls the stand-in runtime (shim_fake_runtime.cpp) 20 times each, checks that every call
// arrived with its arguments (7), and that the median call took MIN_NS to MAX_NS: under LD_PRELOAD of
// tools/slowdown_shim.cpp with DMABENCH_SHIM_SPIN_NS, at least that spin; without it, next to nothing.
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
extern "C" int cudaLaunchKernel(const void* f, Dim3 grid, Dim3 block, void** args, std::size_t shared, void* stream);

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: shim_probe MIN_NS MAX_NS\n");
    return 2;
  }
  const double lo = std::atof(argv[1]), hi = std::atof(argv[2]);
  std::vector<double> ns;
  for (int k = 0; k < 20; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const int a = cudaMemcpyAsync(reinterpret_cast<void*>(0x10), reinterpret_cast<const void*>(0x20), 30, 4,
                                  reinterpret_cast<void*>(0x50));
    const int b = cudaLaunchKernel(reinterpret_cast<const void*>(0x1), Dim3{2, 3, 4}, Dim3{5, 6, 7},
                                   reinterpret_cast<void**>(0x8), 9, reinterpret_cast<void*>(0xa));
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / 2);
    if (a != 7 || b != 7) {
      std::fprintf(stderr, "FAIL: the arguments did not arrive untouched (cudaMemcpyAsync %d, cudaLaunchKernel %d)\n", a, b);
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
