// Probe: which element of nccl-tests' timing loop moves NCCL's small-size time per operation.
// One process, one thread, every visible GPU (as `all_gather_perf -g N`). Per size and collective,
// each variant times samples of `iters` collectives issued back to back and one completion, per
// operation (nccl-tests' definition); variants are interleaved sample by sample so that drift
// hits all of them alike. Variants add nccl-tests' loop elements one at a time:
//   same-buffer    dmabench's loop: int8, one buffer, cudaStreamSynchronize
//   +shift         the buffer moves by the operation's size every iteration, through `max_bytes`
//                  (nccl-tests: shift = size * (iter % (max_bytes / size)))
//   +events        a cudaEventRecord on every stream before every collective (nccl-tests' per-iteration timing)
//   +float         ncclFloat (count = bytes / 4) instead of ncclInt8
//   +query         completion by polling cudaStreamQuery (nccl-tests' testStreamSynchronize)
//   nccl-tests     all of the above
// Every variant's first sample after a size change is a warm-up (dropped). Prints p50 / min / p90
// of the per-operation time in µs over the samples.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o nccl_loop_probe tools/nccl_loop_probe.cu -lnccl
// Run:   NCCL_NVLS_ENABLE=0 ./nccl_loop_probe [samples=100] [iters=20] [max_bytes_per_rank=268435456]
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
#define NK(x)                                                                              \
  do {                                                                                     \
    ncclResult_t r_ = (x);                                                                 \
    if (r_ != ncclSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct Variant {
  const char* name;
  bool shift, events, as_float, query;
};

// One sample of a variant: `iters` collectives of `bytes` per rank back to back, then completion; the time per
// operation in us. `s` (the sample's number) and `steps` place the shifted buffers.
static double sample_us(const Variant& var, bool a2a, size_t bytes, size_t steps, int s, int iters,
                        std::vector<ncclComm_t>& comms, std::vector<cudaStream_t>& streams, std::vector<void*>& send,
                        std::vector<void*>& recv, std::vector<std::vector<cudaEvent_t>>& events) {
  const int n = static_cast<int>(comms.size());
  const size_t count = var.as_float ? bytes / 4 : bytes;
  const ncclDataType_t type = var.as_float ? ncclFloat : ncclInt8;
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iters; ++it) {
    const size_t shift = var.shift ? (a2a ? n : 1) * bytes * ((static_cast<size_t>(s) * iters + it) % steps) : 0;
    NK(ncclGroupStart());
    for (int i = 0; i < n; ++i) {
      if (var.events) {
        CK(cudaSetDevice(i));
        CK(cudaEventRecord(events[i][it], streams[i]));
      }
      char* sb = static_cast<char*>(send[i]) + shift;
      char* rb = static_cast<char*>(recv[i]) + shift * n / (a2a ? n : 1);
      if (a2a)
        NK(ncclAlltoAll(sb, rb, count, type, comms[i], streams[i]));
      else
        NK(ncclAllGather(sb, rb, count, type, comms[i], streams[i]));
    }
    NK(ncclGroupEnd());
  }
  for (int i = 0; i < n; ++i) {
    if (var.query) {
      cudaError_t e;
      while ((e = cudaStreamQuery(streams[i])) == cudaErrorNotReady) {
      }
      CK(e);
    } else {
      CK(cudaStreamSynchronize(streams[i]));
    }
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
}

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 100;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  const size_t max_bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : (size_t{256} << 20);
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("needs 2 GPUs\n");
    return 0;
  }
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  std::vector<ncclComm_t> comms(n);
  NK(ncclCommInitAll(comms.data(), n, devs.data()));
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> send(n), recv(n);
  std::vector<std::vector<cudaEvent_t>> events(n, std::vector<cudaEvent_t>(iters));
  for (int i = 0; i < n; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CK(cudaMalloc(&send[i], max_bytes));
    CK(cudaMalloc(&recv[i], max_bytes * n));
    CK(cudaMemset(send[i], i + 1, max_bytes));
    for (auto& e : events[i]) CK(cudaEventCreate(&e));
  }
  const std::vector<Variant> variants = {{"same-buffer", false, false, false, false}, {"+shift", true, false, false, false},
                                         {"+events", false, true, false, false},      {"+float", false, false, true, false},
                                         {"+query", false, false, false, true},       {"nccl-tests", true, true, true, true}};
  using clock = std::chrono::steady_clock;
  std::printf("%d GPUs, %d samples of %d operations per variant, buffers %zu bytes per rank\n", n, samples, iters, max_bytes);
  std::printf("%-9s %-9s %-12s %9s %9s %9s\n", "coll", "bytes/rk", "variant", "p50_us", "min_us", "p90_us");
  for (const char* coll : {"allgather", "alltoall"}) {
    const bool a2a = std::string(coll) == "alltoall";
    for (size_t bytes : {size_t{1} << 10, size_t{64} << 10, size_t{1} << 20, size_t{4} << 20}) {
      // all-gather: `bytes` per rank in, n * bytes out; all-to-all: n blocks of `bytes` in and out
      const size_t steps = std::max<size_t>(1, (max_bytes / (a2a ? n : 1)) / bytes);
      std::vector<std::vector<double>> per_op(variants.size());
      for (int s = 0; s <= samples; ++s) {
        for (size_t v = 0; v < variants.size(); ++v) {
          const Variant& var = variants[v];
          const double us = sample_us(var, a2a, bytes, steps, s, iters, comms, streams, send, recv, events);
          if (s > 0) per_op[v].push_back(us);  // sample 0 of each size: warm-up
        }
      }
      for (size_t v = 0; v < variants.size(); ++v) {
        auto& x = per_op[v];
        std::sort(x.begin(), x.end());
        std::printf("%-9s %-9zu %-12s %9.2f %9.2f %9.2f\n", coll, bytes, variants[v].name, x[x.size() / 2], x.front(),
                    x[x.size() * 9 / 10]);
      }
    }
  }
  for (auto c : comms) ncclCommDestroy(c);
  return 0;
}
