// Probe: which local (same-GPU) copy paths complete while every SM is busy (a copy engine) and
// which wait for the SMs (a kernel). A spin kernel fills every SM for ~40 ms; each method copies
// 4 KiB and 64 MiB device-local on another stream; the host times each from issue to completion.
// Build: nvcc -O2 -arch=sm_90 -o local_copy_probe tools/local_copy_probe.cu
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

// Issues copy method m (names[] in main) of `bytes` from a to b (peer: a buffer on GPU 1) on stream s: 0, or 1
// after printing the failing call.
static int issue(int m, void* a, void* b, void* peer, size_t bytes, cudaStream_t s) {
  if (m == 0) CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
  if (m == 1) CK(cudaMemcpyPeerAsync(b, 0, a, 0, bytes, s));
  if (m == 2) CK(cudaMemcpy2DAsync(b, 4096, a, 4096, 4096, bytes / 4096, cudaMemcpyDeviceToDevice, s));
  if (m == 3) CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDefault, s));
  if (m == 4) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attr.srcLocHint.type = cudaMemLocationTypeDevice;
    attr.dstLocHint.type = cudaMemLocationTypeDevice;
    attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t idx = 0;
    void* d[1] = {b};
    const void* sv[1] = {a};
    size_t sz[1] = {bytes};
    CK(cudaMemcpyBatchAsync(d, sv, sz, 1, &attr, &idx, 1, s));
  }
  if (m == 5) {
    cudaMemcpy3DParms q{};
    q.srcPtr = make_cudaPitchedPtr(a, 4096, 4096, bytes / 4096);
    q.dstPtr = make_cudaPitchedPtr(b, 4096, 4096, bytes / 4096);
    q.extent = make_cudaExtent(4096, bytes / 4096, 1);
    q.kind = cudaMemcpyDeviceToDevice;
    CK(cudaMemcpy3DAsync(&q, s));
  }
  if (m == 6) CK(cudaMemcpyAsync(peer, a, bytes, cudaMemcpyDefault, s));
  if (m == 7) {
    CK(cudaMemcpyAsync(peer, a, bytes, cudaMemcpyDefault, s));
    CK(cudaMemcpyAsync(b, peer, bytes, cudaMemcpyDefault, s));
  }
  return 0;
}

int main() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const long long cycles = static_cast<long long>(khz) * 40;  // ~40 ms at the attribute's clock (kHz * ms)
  CK(cudaSetDevice(0));
  if (n > 1) CK(cudaDeviceEnablePeerAccess(1, 0));
  cudaStream_t busy, s0, s1 = nullptr;
  CK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  if (n > 1) {
    CK(cudaSetDevice(1));
    CK(cudaDeviceEnablePeerAccess(0, 0));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaSetDevice(0));
  }
  for (size_t bytes : {size_t{4096}, size_t{64} << 20}) {
    void *a, *b, *peer = nullptr;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    if (n > 1) {
      CK(cudaSetDevice(1));
      CK(cudaMalloc(&peer, bytes));
      CK(cudaSetDevice(0));
    }
    const char* names[] = {"cudaMemcpyAsync D2D", "cudaMemcpyPeerAsync 0->0", "cudaMemcpy2DAsync D2D",
                           "cudaMemcpyAsync 0->0 on GPU1 stream", "cudaMemcpyBatchAsync prefer-overlap",
                           "cudaMemcpy3DAsync D2D", "control: cudaMemcpyAsync GPU0->GPU1",
                           "bounce GPU0->GPU1->GPU0 (2 peer copies)"};
    for (int m = 0; m < 8; ++m) {
      if (m >= 6 && n < 2) continue;
      if (m == 3 && n < 2) continue;
      for (int busy_on : {0, 1}) {
        CK(cudaDeviceSynchronize());
        if (busy_on) spin<<<p.multiProcessorCount * 16, 1024, 0, busy>>>(cycles);
        CK(cudaGetLastError());
        auto t0 = std::chrono::steady_clock::now();
        cudaStream_t s = m == 3 ? s1 : s0;
        if (issue(m, a, b, peer, bytes, s)) return 1;
        CK(cudaStreamSynchronize(s));
        auto t1 = std::chrono::steady_clock::now();
        CK(cudaStreamSynchronize(busy));
        auto t2 = std::chrono::steady_clock::now();
        std::printf("%-40s %9zu B  busy=%d  copy done after %9.1f us (busy kernel done after %9.1f us)\n", names[m], bytes,
                    busy_on, std::chrono::duration<double, std::micro>(t1 - t0).count(),
                    std::chrono::duration<double, std::micro>(t2 - t0).count());
      }
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    if (peer) CK(cudaFree(peer));
  }
  return 0;
}
