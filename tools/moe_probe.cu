// Probe: an independent loop for dmabench's alltoallv on one GPU (issue 34). R ranks' buffers on GPU 0, one stream per
// rank; each operation issues, on the sender's stream, one cudaMemcpyAsync per non-empty pair (packed: the pair's
// tokens as one run) or per token (scattered), then waits for every stream; the host clock times launch to the last
// completion, as dmabench's oneshot ce cases do. The token counts come from a file (R, then R x R counts: what a
// dmabench record's alltoallv.pair_tokens holds), so the probe moves the same pairs as the case it checks. It also
// checks, once, that every pair's last token arrived (one byte pattern per sender).
// Build: nvcc -O2 -arch=sm_90 -o moe_probe tools/moe_probe.cu
// Usage: moe_probe COUNTS_FILE TOKEN_BYTES packed|scattered [ITERATIONS=50]
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    std::printf("usage: %s COUNTS_FILE TOKEN_BYTES packed|scattered [ITERATIONS]\n", argv[0]);
    return 2;
  }
  FILE* f = std::fopen(argv[1], "r");
  if (!f) { std::printf("cannot read %s\n", argv[1]); return 2; }
  int R = 0;
  if (std::fscanf(f, "%d", &R) != 1 || R < 1 || R > 64) { std::printf("bad rank count\n"); return 2; }
  std::vector<std::vector<size_t>> c(R, std::vector<size_t>(R));
  for (auto& row : c)
    for (auto& x : row)
      if (std::fscanf(f, "%zu", &x) != 1) { std::printf("bad matrix\n"); return 2; }
  std::fclose(f);
  const size_t B = std::strtoull(argv[2], nullptr, 10);
  const bool scattered = std::strcmp(argv[3], "scattered") == 0;
  const int iterations = argc > 4 ? std::atoi(argv[4]) : 50;
  CK(cudaSetDevice(0));
  // send buffer of s: its tokens packed by destination; receive buffer of d: packed by source
  std::vector<size_t> send(R, 0), recv(R, 0);
  for (int s = 0; s < R; ++s)
    for (int d = 0; d < R; ++d) { send[s] += c[s][d] * B; recv[d] += c[s][d] * B; }
  std::vector<char*> src(R), dst(R);
  std::vector<cudaStream_t> stream(R);
  for (int r = 0; r < R; ++r) {
    CK(cudaMalloc(&src[r], std::max<size_t>(send[r], B)));
    CK(cudaMalloc(&dst[r], std::max<size_t>(recv[r], B)));
    CK(cudaMemset(src[r], 0x10 + r, std::max<size_t>(send[r], B)));
    CK(cudaMemset(dst[r], 0, std::max<size_t>(recv[r], B)));
    CK(cudaStreamCreateWithFlags(&stream[r], cudaStreamNonBlocking));
  }
  size_t copies = 0, bytes = 0;
  auto op = [&]() -> int {
    for (int s = 0; s < R; ++s) {
      size_t at_send = 0;
      for (int k = 1; k <= R; ++k) {
        const int d = (s + k) % R;  // peers first, self last (dmabench's order)
        size_t at_recv = 0;
        for (int s2 = 0; s2 < s; ++s2) at_recv += c[s2][d] * B;
        at_send = 0;
        for (int d2 = 0; d2 < d; ++d2) at_send += c[s][d2] * B;
        if (c[s][d] == 0) continue;
        if (!scattered) {
          CK(cudaMemcpyAsync(dst[d] + at_recv, src[s] + at_send, c[s][d] * B, cudaMemcpyDeviceToDevice, stream[s]));
        } else {
          for (size_t j = 0; j < c[s][d]; ++j)
            CK(cudaMemcpyAsync(dst[d] + at_recv + j * B, src[s] + at_send + j * B, B, cudaMemcpyDeviceToDevice, stream[s]));
        }
      }
    }
    for (int r = 0; r < R; ++r) CK(cudaStreamSynchronize(stream[r]));
    return 0;
  };
  for (int s = 0; s < R; ++s)
    for (int d = 0; d < R; ++d) { copies += c[s][d] ? (scattered ? c[s][d] : 1) : 0; bytes += c[s][d] * B; }
  for (int i = 0; i < 3; ++i)
    if (op()) return 1;
  // every pair's last byte came from its sender
  int bad = 0;
  for (int d = 0; d < R; ++d) {
    size_t at = 0;
    for (int s = 0; s < R; ++s) {
      at += c[s][d] * B;
      if (c[s][d] == 0) continue;
      unsigned char got = 0;
      CK(cudaMemcpy(&got, dst[d] + at - 1, 1, cudaMemcpyDeviceToHost));
      if (got != 0x10 + s) ++bad;
    }
  }
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (op()) return 1;
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  const double p50 = us[us.size() / 2];
  std::printf("ranks %d token_bytes %zu %s: %zu copies, %zu bytes per op; p50 %.2f us (min %.2f, max %.2f) over %d; "
              "%.2f GB/s; check %s\n",
              R, B, scattered ? "scattered" : "packed", copies, bytes, p50, us.front(), us.back(), iterations,
              bytes / p50 / 1e3, bad ? "FAILED" : "ok");
  for (int r = 0; r < R; ++r) {
    cudaFree(src[r]);
    cudaFree(dst[r]);
    cudaStreamDestroy(stream[r]);
  }
  return bad ? 1 : 0;
}
