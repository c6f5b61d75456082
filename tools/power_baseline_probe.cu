// Probe: what a GPU draws with no process on it, with a process's context held, and the energy per GB
// of a 1 GiB device-to-device copy loop measured the standard way (NVML's total-energy counter read at
// the loop's two ends, each end on an observed counter update, minus the idle with the context held),
// once on random bytes and once on zeros. The independent reference for dmabench's power meter
// (power/meter.hpp, results/h200x1/power-baseline.log).
// Build: nvcc -O2 -arch=sm_90 -o power_baseline_probe tools/power_baseline_probe.cu -lnvidia-ml
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <nvml.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
#define NV(x) do { nvmlReturn_t r = (x); if (r != NVML_SUCCESS) { std::printf("%s: %s\n", #x, nvmlErrorString(r)); std::exit(1); } } while (0)

static nvmlDevice_t g;

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double joules() {
  unsigned long long mj = 0;
  NV(nvmlDeviceGetTotalEnergyConsumption(g, &mj));
  return mj / 1000.0;
}
// The counter updates every ~100 ms: wait for the next update, so a window starts and ends on one.
static double edge(double* t) {
  const double e0 = joules();
  double e;
  while ((e = joules()) == e0) {}
  *t = now();
  return e;
}
static void state(const char* what) {
  unsigned sm = 0, mw = 0;
  NV(nvmlDeviceGetClockInfo(g, NVML_CLOCK_SM, &sm));
  NV(nvmlDeviceGetPowerUsage(g, &mw));
  std::printf("%-40s SM %4u MHz, %6.1f W (nvmlDeviceGetPowerUsage)\n", what, sm, mw / 1000.0);
  std::fflush(stdout);
}
// Average watts over `seconds`, counter edge to counter edge.
static double idle_W(double seconds) {
  double t0, t1;
  const double e0 = edge(&t0);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double e1 = edge(&t1);
  return (e1 - e0) / (t1 - t0);
}

int main() {
  NV(nvmlInit());
  int dev = 0;
  char bus[32] = {};
  CK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));  // no context yet
  NV(nvmlDeviceGetHandleByPciBusId(bus, &g));
  state("no context of this process");
  std::printf("  average over 3 s: %.1f W\n", idle_W(3.0));
  CK(cudaSetDevice(dev));
  CK(cudaFree(nullptr));  // creates the context
  for (int s = 1; s <= 3; ++s) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    char what[64];
    std::snprintf(what, sizeof what, "context held, no work, %d s", s);
    state(what);
  }
  const size_t n = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, n));
  CK(cudaMalloc(&b, n));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  std::vector<unsigned long long> random(n / 8);
  unsigned long long x = 0x9E3779B97F4A7C15ull;
  for (auto& v : random) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = x;
  }
  for (const bool zeros : {false, true}) {
    if (zeros) {
      CK(cudaMemset(a, 0, n));
      CK(cudaMemset(b, 0, n));
    } else {
      CK(cudaMemcpy(a, random.data(), n, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(b, random.data(), n, cudaMemcpyHostToDevice));
    }
    CK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double idle = idle_W(3.0);
    int ops = 0;
    double l0, l1;
    const double f0 = edge(&l0);
    while (now() - l0 < 3.0) {
      for (int i = 0; i < 8; ++i) CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));
      ops += 8;
      CK(cudaStreamSynchronize(s));
    }
    const double f1 = edge(&l1);  // idle after the last copy counts at the idle level: nothing above it
    const double avg = (f1 - f0) / (l1 - l0);
    std::printf("%s: idle with the context held %.1f W; %d copies of 1 GiB in %.3f s at %.1f W: %.4f J/GB above that idle\n",
                zeros ? "zeros" : "random bytes", idle, ops, l1 - l0, avg, (avg - idle) * (l1 - l0) / (ops * (n / 1e9)));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    state(zeros ? "2 s after the zeros loop" : "2 s after the random-bytes loop");
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
  NV(nvmlShutdown());
  return 0;
}
