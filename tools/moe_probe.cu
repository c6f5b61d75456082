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

using Counts = std::vector<std::vector<size_t>>;

// R, then R x R token counts; false when the file does not read as that.
static bool read_counts(const char* path, Counts& c) {
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  int R = 0;
  bool ok = std::fscanf(f, "%d", &R) == 1 && R >= 1 && R <= 64;
  if (ok) c.assign(R, std::vector<size_t>(R));
  for (auto& row : c)
    for (auto& x : row) ok = ok && std::fscanf(f, "%zu", &x) == 1;
  std::fclose(f);
  return ok;
}

// Where pair (s, d)'s run starts: in s's send buffer (packed by destination) and d's receive buffer (packed by source).
static size_t send_offset(const Counts& c, int s, int d, size_t B) {
  size_t at = 0;
  for (int d2 = 0; d2 < d; ++d2) at += c[s][d2] * B;
  return at;
}
static size_t recv_offset(const Counts& c, int s, int d, size_t B) {
  size_t at = 0;
  for (int s2 = 0; s2 < s; ++s2) at += c[s2][d] * B;
  return at;
}

// One operation: every sender's copies on its own stream (peers first, self last, dmabench's order), then a wait on
// every stream. 0, or 1 after printing the failing call.
static int operation(const Counts& c, size_t B, bool scattered, const std::vector<char*>& src, const std::vector<char*>& dst,
                     const std::vector<cudaStream_t>& stream) {
  const int R = static_cast<int>(c.size());
  for (int s = 0; s < R; ++s)
    for (int k = 1; k <= R; ++k) {
      const int d = (s + k) % R;
      if (c[s][d] == 0) continue;
      char* to = dst[d] + recv_offset(c, s, d, B);
      const char* from = src[s] + send_offset(c, s, d, B);
      if (!scattered) {
        CK(cudaMemcpyAsync(to, from, c[s][d] * B, cudaMemcpyDeviceToDevice, stream[s]));
      } else {
        for (size_t j = 0; j < c[s][d]; ++j) CK(cudaMemcpyAsync(to + j * B, from + j * B, B, cudaMemcpyDeviceToDevice, stream[s]));
      }
    }
  for (int r = 0; r < R; ++r) CK(cudaStreamSynchronize(stream[r]));
  return 0;
}

// Pairs whose last byte in the receive buffer is not its sender's pattern (0x10 + sender), or -1 on an error.
static int wrong_pairs(const Counts& c, size_t B, const std::vector<char*>& dst) {
  const int R = static_cast<int>(c.size());
  int bad = 0;
  for (int d = 0; d < R; ++d)
    for (int s = 0; s < R; ++s) {
      if (c[s][d] == 0) continue;
      unsigned char got = 0;
      if (cudaMemcpy(&got, dst[d] + recv_offset(c, s, d, B) + c[s][d] * B - 1, 1, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
      if (got != 0x10 + s) ++bad;
    }
  return bad;
}

int main(int argc, char** argv) {
  Counts c;
  if (argc < 4 || !read_counts(argv[1], c)) {
    std::printf("usage: %s COUNTS_FILE TOKEN_BYTES packed|scattered [ITERATIONS]\n(COUNTS_FILE: R, then R x R counts)\n", argv[0]);
    return 2;
  }
  const int R = static_cast<int>(c.size());
  const size_t B = std::strtoull(argv[2], nullptr, 10);
  const bool scattered = std::strcmp(argv[3], "scattered") == 0;
  const int iterations = argc > 4 ? std::max(1, std::atoi(argv[4])) : 50;
  CK(cudaSetDevice(0));
  std::vector<char*> src(R), dst(R);
  std::vector<cudaStream_t> stream(R);
  size_t copies = 0, bytes = 0;
  for (int r = 0; r < R; ++r) {
    size_t send = 0, recv = 0;
    for (int x = 0; x < R; ++x) {
      send += c[r][x] * B;
      recv += c[x][r] * B;
      copies += c[r][x] ? (scattered ? c[r][x] : 1) : 0;
      bytes += c[r][x] * B;
    }
    CK(cudaMalloc(&src[r], std::max(send, B)));
    CK(cudaMalloc(&dst[r], std::max(recv, B)));
    CK(cudaMemset(src[r], 0x10 + r, std::max(send, B)));
    CK(cudaMemset(dst[r], 0, std::max(recv, B)));
    CK(cudaStreamCreateWithFlags(&stream[r], cudaStreamNonBlocking));
  }
  for (int i = 0; i < 3; ++i)
    if (operation(c, B, scattered, src, dst, stream)) return 1;
  const int bad = wrong_pairs(c, B, dst);
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (operation(c, B, scattered, src, dst, stream)) return 1;
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
