// Probe: where a batched copy's CPU time goes (issue 54): the CPU time inside one cudaMemcpyBatchAsync that carries n
// descriptors against a loop of n cudaMemcpyAsync calls, for blocks scattered in a large pinned host pool, fitted
// per descriptor. It shares no code with dmabench (vendor-header exception: a standalone probe built by hand with nvcc,
// outside the CMake build and the GPU layer, tests/check_vendor_includes.cmake).
//
// For each direction of `--dirs` (h2d, d2h), block size of `--block` (default 4KiB,16KiB) and count n of `--n`
// (default 1,4,16,64,256,1024,4096,16384) the n blocks lie at seeded random slots of a host pool of `--pool-bytes`
// (default 4 GiB; cudaHostAlloc, `--host pinned` or `mapped`) and of a device pool of the same size (as dmabench's
// random layout with pool_bytes lays out both sides); `--run k` puts them in runs of k adjacent slots (a slot holds a
// run; the last run may be shorter; n < k is skipped with a line saying so), `--coalesce` merges blocks whose source and
// destination both continue the previous block's into one descriptor before submitting (what dmabench's option
// coalesce does). Each mechanism of `--mech`:
//   batch  one cudaMemcpyBatchAsync carrying every descriptor (source access in stream order, host/device location
//          hints, cudaMemcpyFlagPreferOverlapWithCompute unless --no-overlap-hint: dmabench ce-batch's defaults)
//   loop   one cudaMemcpyAsync (cudaMemcpyDefault) per descriptor (dmabench ce's one copy per block)
// takes `--warmup` (3) untimed and `--samples` (30) timed samples, each: a core-share reading, an event, the issue
// between two steady_clock reads, an event, cudaStreamSynchronize. Per sample:
//   call_us   the CPU time inside the issuing call(s) (the submit cost)
//   gpu_us    the time between the two events (the GPU's span from before the issue to after it: the copies, and any
//             part of the submission the GPU waited for)
//   total_us  event before the issue to the synchronize's return, host clock (dmabench oneshot's p50 is of this kind)
// One JSON line per (direction, block, n, mechanism) gives p50 and a 95% interval of the p50 (distribution-free: the
// order statistics at n/2 -+ 1.96 sqrt(n)/2) of each, call_us per descriptor, GB/s from total_us, the CPU and its
// core-share readings, and whether every block arrived ("valid": each block carries its own byte value; the
// destination slots are cleared before the case and each is checked after its last sample). After each (direction,
// block, mechanism) a "fit" line: the least-squares line of p50 call_us (and gpu_us) over the descriptor counts
// (slope = µs per descriptor, intercept = µs per call, R^2), with the slope's 95% interval from an OLS over every
// sample (slope -+ 1.96 standard errors).
// CPU: `--cpus quiet` (default) surveys every allowed CPU pinned in turn, one reading discarded and 3 read, a reading =
// ns per step of 8 independent multiply-add chains over ns per step of one dependent chain (8 x 1024 steps each; a core
// to itself reads ~0.5-0.7, a shared core more; dmabench's --cpu-choice quiet counts above 0.75 as shared); the lowest
// median wins and the process stays pinned there. `--cpus N` pins to CPU N, `--cpus any` leaves the scheduler free.
// A {"test":"choice"} line names the CPU and the survey; each line repeats "cpu", "cpu_now" (sched_getcpu after the
// case), core_share_p50, core_share_shared (fraction of the case's readings above 0.75) and core_mode (shared when the
// p50 is above 0.75, else unshared).
// Exit: 0 all valid, 1 a CUDA error or a block that did not arrive, 2 bad usage.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o batch_submit_probe tools/batch_submit_probe.cu
// Run:   ./batch_submit_probe [--device 0] [--cpus quiet|N|any] [--dirs h2d,d2h] [--block 4KiB,16KiB]
//        [--n 1,4,...,16384] [--mech batch,loop] [--pool-bytes 4GiB] [--host pinned|mapped] [--run 1] [--coalesce]
//        [--samples 30] [--warmup 3] [--seed 1] [--no-overlap-hint] [--bind-node N: the host pool under MPOL_BIND]
//        [--inspect: after allocating, what dmabench's placement check does to the host pool: read every page's
//        /proc/self/pagemap entry and query every page's node with move_pages (no target nodes: nothing moves)]
//        [--streams-before K: K non-blocking streams created (and kept) before the measured one, as a program with
//        several streams has; the runtime spreads streams over copy engines in creation order]
//        [--mark-before yes|no: whether an event is recorded on the stream just before the issue (yes: the
//        start of gpu_us; no: gpu_us is -1); an h2d batch costs 2.5-5x the CPU time without one, on an H100 with
//        driver 580 (results/LAB-NOTES.md, 2026-12-06)] [--wait stream|event: cudaStreamSynchronize (default) or
//        cudaEventSynchronize on the event after the issue, as dmabench's event completion]
//        [--mark-timing yes|no: the event before the issue with timing (default) or cudaEventDisableTiming]
//        [--end-timing yes|no: the same for the event after the issue (either without timing: gpu_us is -1)]
//        [--src-order stream|any|during: the batch's srcAccessOrder (default stream, as dmabench's ce-batch; vLLM and
//        llm-d pass any)]
//        [--random-data: h2d sources filled with pseudo-random bytes (as dmabench's data stream), not one value a block]
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime.h>

#if CUDART_VERSION < 12080
#error "batch_submit_probe needs CUDA >= 12.8 (cudaMemcpyBatchAsync)"
#endif

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

using Clock = std::chrono::steady_clock;

namespace {

constexpr double kSharedRatio = 0.75;

bool g_random_data = false;  // --random-data: h2d sources hold pseudo-random bytes (a word per 8 bytes), not one value

struct Opts {
  int device = 0;
  int cpu = -2;  // -2 quiet, -1 any, else the CPU
  std::vector<std::string> dirs = {"h2d", "d2h"};
  std::vector<size_t> blocks = {4096, 16384};
  std::vector<size_t> ns = {1, 4, 16, 64, 256, 1024, 4096, 16384};
  std::vector<std::string> mechs = {"batch", "loop"};
  size_t pool_bytes = size_t(4) << 30;
  bool mapped = false, coalesce = false, overlap_hint = true;
  bool inspect = false;
  int streams_before = 0;
  bool mark_before = true;  // --mark-before no: no event recorded on the stream just before the issue (gpu_us is then -1)
  bool wait_event = false;
  bool mark_timing = true;  // --mark-timing no: the event before the issue without timing (gpu_us is then -1)
  bool end_timing = true;
  cudaMemcpySrcAccessOrder src_order = cudaMemcpySrcAccessOrderStream;  // --src-order stream|any|during   // --end-timing no: the event after the issue without timing (gpu_us is then -1)  // --wait event: the host waits with cudaEventSynchronize on the event after the issue  // non-blocking streams created before the measured one (which copy engine a stream lands on)  // after allocating: read the pool's pagemap entries and query each page's node (move_pages)
  int bind_node = -1;  // >= 0: the host pool allocated under set_mempolicy(MPOL_BIND, node), as dmabench's numa=local
  size_t run = 1;
  int samples = 30, warmup = 3;
  unsigned seed = 1;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "batch_submit_probe: %s\nusage: batch_submit_probe [--device N] [--cpus quiet|N|any] [--dirs h2d,d2h] "
               "[--block 4KiB,16KiB] [--n 1,4,...] [--mech batch,loop] [--pool-bytes 4GiB] [--host pinned|mapped] "
               "[--run K] [--coalesce] [--samples N] [--warmup N] [--seed N] [--no-overlap-hint] [--bind-node N] [--inspect] [--streams-before K] [--random-data] [--mark-before yes|no] [--wait stream|event] [--mark-timing yes|no] [--end-timing yes|no] [--src-order stream|any|during]\n",
               why.c_str());
  std::exit(2);
}

long number(const std::string& flag, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < lo || n > hi)
    usage(flag + " '" + v + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return n;
}

// 4096, 4K, 4KiB, 4GiB, ... (powers of 1024)
size_t size_arg(const std::string& flag, const std::string& v, size_t lo, size_t hi) {
  size_t i = 0;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == 0 || i > 15) usage(flag + " '" + v + "' is not a size (e.g. 4096, 16KiB, 4GiB)");
  size_t n = std::stoull(v.substr(0, i));
  const std::string u = v.substr(i);
  if (u == "" || u == "B") {
  } else if (u == "K" || u == "KiB") n <<= 10;
  else if (u == "M" || u == "MiB") n <<= 20;
  else if (u == "G" || u == "GiB") n <<= 30;
  else usage(flag + " '" + v + "': unknown unit '" + u + "' (B, KiB, MiB, GiB)");
  if (n < lo || n > hi) usage(flag + " '" + v + "' is out of range");
  return n;
}

// A two-way option: true for `yes`, false for `no`; anything else is bad usage.
bool one_of(const std::string& flag, const std::string& v, const char* yes, const char* no) {
  if (v != yes && v != no) usage(flag + ": '" + v + "' is not " + yes + " or " + no);
  return v == yes;
}

std::vector<std::string> split(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string p; std::getline(ss, p, ',');)
    if (!p.empty()) out.push_back(p);
  return out;
}

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--coalesce") { o.coalesce = true; continue; }
    if (f == "--no-overlap-hint") { o.overlap_hint = false; continue; }
    if (f == "--inspect") { o.inspect = true; continue; }
    if (f == "--random-data") { g_random_data = true; continue; }
    if (i + 1 >= argc) usage(f + " needs a value (or is not an option)");
    const std::string v = argv[++i];
    if (f == "--device") o.device = static_cast<int>(number(f, v, 0, 63));
    else if (f == "--cpus") o.cpu = v == "quiet" ? -2 : v == "any" ? -1 : static_cast<int>(number(f, v, 0, CPU_SETSIZE - 1));
    else if (f == "--dirs") {
      o.dirs = split(v);
      for (const auto& d : o.dirs)
        if (d != "h2d" && d != "d2h") usage("--dirs: '" + d + "' is not h2d or d2h");
    } else if (f == "--block") {
      o.blocks.clear();
      for (const auto& b : split(v)) o.blocks.push_back(size_arg(f, b, 1, size_t(1) << 30));
    } else if (f == "--n") {
      o.ns.clear();
      for (const auto& n : split(v)) o.ns.push_back(static_cast<size_t>(number(f, n, 1, 1 << 20)));
    } else if (f == "--mech") {
      o.mechs = split(v);
      for (const auto& m : o.mechs)
        if (m != "batch" && m != "loop") usage("--mech: '" + m + "' is not batch or loop");
    } else if (f == "--pool-bytes") o.pool_bytes = size_arg(f, v, size_t(1) << 20, size_t(1) << 40);
    else if (f == "--host") {
      if (v != "pinned" && v != "mapped") usage("--host: '" + v + "' is not pinned or mapped");
      o.mapped = v == "mapped";
    } else if (f == "--run") o.run = static_cast<size_t>(number(f, v, 1, 1 << 20));
    else if (f == "--samples") o.samples = static_cast<int>(number(f, v, 3, 100000));
    else if (f == "--warmup") o.warmup = static_cast<int>(number(f, v, 0, 1000));
    else if (f == "--seed") o.seed = static_cast<unsigned>(number(f, v, 0, 1L << 31));
    else if (f == "--mark-before") o.mark_before = one_of(f, v, "yes", "no");
    else if (f == "--wait") o.wait_event = one_of(f, v, "event", "stream");
    else if (f == "--mark-timing") o.mark_timing = one_of(f, v, "yes", "no");
    else if (f == "--end-timing") o.end_timing = one_of(f, v, "yes", "no");
    else if (f == "--src-order") {
      if (v == "stream") o.src_order = cudaMemcpySrcAccessOrderStream;
      else if (v == "any") o.src_order = cudaMemcpySrcAccessOrderAny;
      else if (v == "during") o.src_order = cudaMemcpySrcAccessOrderDuringApiCall;
      else usage("--src-order: '" + v + "' is not stream, any or during");
    } else if (f == "--streams-before") o.streams_before = static_cast<int>(number(f, v, 0, 256));
    else if (f == "--bind-node") o.bind_node = static_cast<int>(number(f, v, 0, 63));
    else usage("unknown option '" + f + "'");
  }
  if (o.dirs.empty() || o.blocks.empty() || o.ns.empty() || o.mechs.empty()) usage("an empty list");
  for (size_t b : o.blocks) {
    const size_t nmax = *std::max_element(o.ns.begin(), o.ns.end());
    if (o.pool_bytes / (b * o.run) < (nmax + o.run - 1) / o.run)
      usage("--pool-bytes " + std::to_string(o.pool_bytes) + " holds fewer runs of " + std::to_string(o.run) + " x " +
            std::to_string(b) + " B than " + std::to_string(nmax) + " blocks need");
  }
  return o;
}

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "batch_submit_probe: sched_setaffinity(%d): %s\n", cpu, std::strerror(errno));
    std::exit(1);
  }
}

// 8 independent multiply-add chains (`independent`) or one chain, 8 x `steps` steps either way
uint64_t chains(long steps, bool independent) {
  uint64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < steps; ++i)
    for (int k = 0; k < 8; ++k) {
      uint64_t& v = independent ? x[k] : x[0];
      v = v * 6364136223846793005ull + 1442695040888963407ull;
      asm volatile("" : "+r"(v));
    }
  return x[0] ^ x[7];
}

// One core-share reading on this thread's CPU: throughput-bound ns per step over latency-bound ns per step
double core_share() {
  const auto t0 = Clock::now();
  uint64_t sink = chains(1024, true);
  const auto t1 = Clock::now();
  sink += chains(1024, false);
  const auto t2 = Clock::now();
  asm volatile("" : : "r"(sink));
  const double lat = us(t1, t2);
  return lat > 0 ? us(t0, t1) / lat : 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The p50's 95% interval from order statistics (normal approximation to the binomial), 1-based ranks clamped
std::pair<double, double> median_ci(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  const double h = 1.96 * std::sqrt(n) / 2;
  const long lo = std::max(1L, static_cast<long>(std::floor(n / 2 - h)));
  const long hi = std::min(static_cast<long>(n), static_cast<long>(std::ceil(n / 2 + h + 1)));
  return {v[lo - 1], v[hi - 1]};
}

// --cpus quiet: every allowed CPU pinned in turn, one reading discarded and 3 read; the lowest median wins
int quiet_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "batch_submit_probe: sched_getaffinity: %s\n", std::strerror(errno));
    std::exit(1);
  }
  int best = -1;
  double best_m = 1e9;
  std::string survey;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    pin(c);
    core_share();
    const double m = median({core_share(), core_share(), core_share()});
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s\"%d\":%.3f", survey.empty() ? "" : ",", c, m);
    survey += buf;
    if (m < best_m) best = c, best_m = m;
  }
  if (best < 0) {
    std::fprintf(stderr, "batch_submit_probe: no allowed CPU\n");
    std::exit(1);
  }
  pin(best);
  std::printf("{\"test\":\"choice\",\"mode\":\"quiet\",\"cpu\":%d,\"core_share\":%.3f,\"core_mode\":\"%s\",\"survey\":{%s}}\n",
              best, best_m, best_m > kSharedRatio ? "shared" : "unshared", survey.c_str());
  std::fflush(stdout);
  return best;
}

// n distinct run slots out of `slots`, seeded (a partial Fisher-Yates over the slot numbers)
std::vector<size_t> pick_slots(size_t slots, size_t n, std::mt19937_64& rng) {
  std::vector<size_t> all(slots);
  std::iota(all.begin(), all.end(), size_t(0));
  for (size_t i = 0; i < n; ++i) std::swap(all[i], all[i + rng() % (slots - i)]);
  all.resize(n);
  return all;
}

// The offsets of n blocks of b bytes in runs of k adjacent slots, at random run slots of a pool
std::vector<size_t> offsets(size_t pool, size_t b, size_t n, size_t k, std::mt19937_64& rng) {
  const size_t runs = (n + k - 1) / k;
  const std::vector<size_t> slot = pick_slots(pool / (k * b), runs, rng);
  std::vector<size_t> off(n);
  for (size_t i = 0; i < n; ++i) off[i] = slot[i / k] * k * b + (i % k) * b;
  return off;
}

struct Descs {
  std::vector<void*> dst, src;
  std::vector<size_t> bytes;
};

// One descriptor per block, or (coalesce) one per stretch whose source and destination both continue the last one's
Descs descriptors(const std::vector<char*>& dst, const std::vector<char*>& src, size_t b, bool coalesce) {
  Descs d;
  for (size_t i = 0; i < dst.size(); ++i) {
    if (coalesce && !d.dst.empty() && static_cast<char*>(d.dst.back()) + d.bytes.back() == dst[i] &&
        static_cast<char*>(d.src.back()) + d.bytes.back() == src[i]) {
      d.bytes.back() += b;
      continue;
    }
    d.dst.push_back(dst[i]);
    d.src.push_back(src[i]);
    d.bytes.push_back(b);
  }
  return d;
}

void issue_batch(const Descs& d, bool h2d, int device, bool hint, cudaMemcpySrcAccessOrder order, cudaStream_t s) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = order;
  attr.srcLocHint.type = h2d ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  attr.srcLocHint.id = h2d ? 0 : device;
  attr.dstLocHint.type = h2d ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  attr.dstLocHint.id = h2d ? device : 0;
  attr.flags = hint ? cudaMemcpyFlagPreferOverlapWithCompute : cudaMemcpyFlagDefault;
  size_t attr_index = 0;
  // Plain void** and size_t*: CUDA 12.8 declares the arrays without const, 12.9 and 13 with it (as gpu/sync.cpp)
  void** dsts = const_cast<void**>(d.dst.data());
  void** srcs = const_cast<void**>(d.src.data());
  size_t* sizes = const_cast<size_t*>(d.bytes.data());
#if CUDART_VERSION >= 13000
  CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, d.dst.size(), &attr, &attr_index, 1, s));
#else  // CUDA 12.8 and 12.9 also return the index of the copy that failed
  size_t failed = SIZE_MAX;
  const cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, d.dst.size(), &attr, &attr_index, 1, &failed, s);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "cudaMemcpyBatchAsync of %zu copies: %s (copy %zu failing)\n", d.dst.size(),
                 cudaGetErrorString(err), failed);
    std::exit(1);
  }
#endif
}

// cudaMemcpyDefault, as dmabench's ce issues its copies (the runtime infers the direction from the pointers)
void issue_loop(const Descs& d, cudaStream_t s) {
  for (size_t i = 0; i < d.dst.size(); ++i) CK(cudaMemcpyAsync(d.dst[i], d.src[i], d.bytes[i], cudaMemcpyDefault, s));
}

struct Stat {
  double p50, lo, hi;
};
Stat stat(const std::vector<double>& v) {
  const auto ci = median_ci(v);
  return {median(v), ci.first, ci.second};
}

struct Point {  // one (direction, block, n, mechanism) for the fit
  double x, call_p50, gpu_p50;
  std::vector<double> call;
};

struct Line {
  double slope = 0, intercept = 0, r2 = 0, se = 0;
};

// Ordinary least squares of y over x; se: the slope's standard error
Line ols(const std::vector<double>& x, const std::vector<double>& y) {
  Line l;
  const size_t n = x.size();
  if (n < 2) return l;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0) return l;
  l.slope = sxy / sxx;
  l.intercept = my - l.slope * mx;
  double sse = 0;
  for (size_t i = 0; i < n; ++i) sse += std::pow(y[i] - (l.intercept + l.slope * x[i]), 2);
  l.r2 = syy > 0 ? 1 - sse / syy : 1;
  l.se = n > 2 ? std::sqrt(sse / (n - 2) / sxx) : 0;
  return l;
}

unsigned char value_of(size_t i, unsigned salt) { return static_cast<unsigned char>(1 + (i * 131 + salt) % 251); }

}  // namespace

// The sampling CPU as --cpu asks: the quietest (-2), a fixed one, or any; its "choice" line printed.
int choose_cpu(const Opts& o) {
  if (o.cpu == -2) return quiet_cpu();
  if (o.cpu >= 0) {
    pin(o.cpu);
    std::printf("{\"test\":\"choice\",\"mode\":\"fixed\",\"cpu\":%d,\"core_share\":%.3f}\n", o.cpu, core_share());
    return o.cpu;
  }
  std::printf("{\"test\":\"choice\",\"mode\":\"any\",\"cpu\":-1,\"core_share\":%.3f}\n", core_share());
  return -1;
}

// What every measurement uses: the stream, two events, the host and device pools and the h2d check's staging buffer.
struct Gpu {
  cudaStream_t s{};
  std::vector<cudaStream_t> before;  // --streams-before: created ahead of s, kept, never used
  cudaEvent_t e0{}, e1{};
  char* host = nullptr;
  char* dev = nullptr;
  char* staging = nullptr;
};

// --inspect: dmabench's placement check on the host pool (core/host_memory.cpp: verify and read_frames), written
// again here: the pagemap entry of every page, then move_pages with no target nodes in chunks (each page's node).
void inspect_pages(const void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), n = bytes / page;
  std::FILE* f = std::fopen("/proc/self/pagemap", "rb");  // stdio: <fcntl.h> would bring a stat() beside ours
  size_t present = 0;
  if (f) {
    std::vector<uint64_t> e(1 << 16);
    for (size_t at = 0; at < n; at += e.size()) {
      const size_t k = std::min(e.size(), n - at);
      const long off = static_cast<long>((reinterpret_cast<uintptr_t>(p) / page + at) * 8);
      if (std::fseek(f, off, SEEK_SET) != 0 || std::fread(e.data(), 8, k, f) != k) break;
      for (size_t i = 0; i < k; ++i) present += (e[i] >> 63) & 1;
    }
    std::fclose(f);
  }
  std::vector<void*> pages(1 << 16);
  std::vector<int> status(pages.size());
  size_t queried = 0;
  for (size_t at = 0; at < n; at += pages.size()) {
    const size_t k = std::min(pages.size(), n - at);
    for (size_t i = 0; i < k; ++i) pages[i] = static_cast<char*>(const_cast<void*>(p)) + (at + i) * page;
    if (syscall(SYS_move_pages, 0, static_cast<unsigned long>(k), pages.data(), nullptr, status.data(), 0) != 0) break;
    queried += k;
  }
  std::printf("{\"test\":\"inspect\",\"pages\":%zu,\"pagemap_present\":%zu,\"move_pages_queried\":%zu}\n", n, present,
              queried);
}

// Allocates the pools (timed) and prints the "info" line.
Gpu setup(const Opts& o) {
  Gpu g;
  CK(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, o.device));
  int runtime = 0, driver = 0;
  CK(cudaRuntimeGetVersion(&runtime));
  CK(cudaDriverGetVersion(&driver));
  g.before.resize(o.streams_before);
  for (auto& b : g.before) CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&g.e0, o.mark_timing ? cudaEventDefault : cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&g.e1, o.end_timing ? cudaEventDefault : cudaEventDisableTiming));
  const auto a0 = Clock::now();
  const unsigned long node_mask = o.bind_node >= 0 ? 1ul << o.bind_node : 0;
  if (o.bind_node >= 0 && syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */, &node_mask, 64ul) != 0)
    usage("--bind-node: set_mempolicy(MPOL_BIND) failed: " + std::string(std::strerror(errno)));
  CK(cudaHostAlloc(reinterpret_cast<void**>(&g.host), o.pool_bytes,
                   cudaHostAllocPortable | (o.mapped ? cudaHostAllocMapped : 0)));
  if (o.bind_node >= 0) syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, nullptr, 0ul);
  if (o.inspect) inspect_pages(g.host, o.pool_bytes);
  CK(cudaMalloc(reinterpret_cast<void**>(&g.dev), o.pool_bytes));
  const double alloc_s = us(a0, Clock::now()) / 1e6;
  size_t most = 0;
  for (size_t b : o.blocks) most = std::max(most, b * *std::max_element(o.ns.begin(), o.ns.end()));
  CK(cudaMallocHost(reinterpret_cast<void**>(&g.staging), most));  // h2d's check: the device's blocks gathered back
  std::printf("{\"test\":\"info\",\"gpu\":\"%s\",\"runtime\":%d,\"driver\":%d,\"host\":\"%s\",\"pool_bytes\":%zu,"
              "\"bind_node\":%d,\"streams_before\":%d,\"mark_before\":%s,\"wait\":\"%s\",\"alloc_s\":%.3f,\"samples\":%d,\"warmup\":%d,\"seed\":%u,\"run\":%zu,\"coalesce\":%s,\"overlap_hint\":%s,"
              "\"nproc\":%ld}\n",
              prop.name, runtime, driver, o.mapped ? "mapped" : "pinned", o.pool_bytes, o.bind_node, o.streams_before, o.mark_before ? "true" : "false", o.wait_event ? "event" : "stream", alloc_s, o.samples, o.warmup,
              o.seed, o.run, o.coalesce ? "true" : "false", o.overlap_hint ? "true" : "false",
              sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);
  return g;
}

void teardown(Gpu& g) {
  CK(cudaFreeHost(g.staging));
  CK(cudaFree(g.dev));
  CK(cudaFreeHost(g.host));
  CK(cudaEventDestroy(g.e0));
  CK(cudaEventDestroy(g.e1));
  CK(cudaStreamDestroy(g.s));
  for (auto b : g.before) CK(cudaStreamDestroy(b));
}

// One (direction, block, n): the blocks' slots, the same for every mechanism; host and device drawn separately.
struct Blocks {
  bool h2d;
  size_t b, n;
  std::vector<char*> hp, dp;
  Descs d;
};

Blocks place(const Opts& o, const Gpu& g, bool h2d, size_t b, size_t n) {
  std::mt19937_64 rng(o.seed * 0x9e3779b97f4a7c15ull + b * 1000003ull + n);
  const std::vector<size_t> hoff = offsets(o.pool_bytes, b, n, o.run, rng);
  const std::vector<size_t> doff = offsets(o.pool_bytes, b, n, o.run, rng);
  Blocks k{h2d, b, n, std::vector<char*>(n), std::vector<char*>(n), {}};
  for (size_t i = 0; i < n; ++i) k.hp[i] = g.host + hoff[i], k.dp[i] = g.dev + doff[i];
  k.d = h2d ? descriptors(k.dp, k.hp, b, o.coalesce) : descriptors(k.hp, k.dp, b, o.coalesce);
  return k;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
unsigned char random_byte(size_t i, size_t j, unsigned salt) {
  return static_cast<unsigned char>(mix((uint64_t(salt) << 40) ^ (uint64_t(i) << 24) ^ (j / 8)) >> (8 * (j % 8)));
}

// Sources carry each block's own byte value, destinations are cleared.
void fill(const Gpu& g, const Blocks& k, unsigned salt) {
  for (size_t i = 0; i < k.n; ++i) {
    if (k.h2d && g_random_data) {
      for (size_t j = 0; j < k.b; ++j) k.hp[i][j] = static_cast<char>(random_byte(i, j, salt));
      CK(cudaMemsetAsync(k.dp[i], 0, k.b, g.s));
    } else if (k.h2d) {
      std::memset(k.hp[i], value_of(i, salt), k.b);
      CK(cudaMemsetAsync(k.dp[i], 0, k.b, g.s));
    } else {
      std::memset(k.hp[i], 0, k.b);
      CK(cudaMemsetAsync(k.dp[i], value_of(i, salt), k.b, g.s));
    }
  }
  CK(cudaStreamSynchronize(g.s));
}

// Every block in its slot after the samples.
bool blocks_valid(const Gpu& g, const Blocks& k, unsigned salt) {
  bool valid = true;
  if (k.h2d) {
    for (size_t i = 0; i < k.n; ++i) CK(cudaMemcpyAsync(g.staging + i * k.b, k.dp[i], k.b, cudaMemcpyDeviceToHost, g.s));
    CK(cudaStreamSynchronize(g.s));
    for (size_t i = 0; i < k.n && valid; ++i)
      for (size_t j = 0; j < k.b && valid; ++j)
        valid = static_cast<unsigned char>(g.staging[i * k.b + j]) == (g_random_data ? random_byte(i, j, salt) : value_of(i, salt));
  } else {
    for (size_t i = 0; i < k.n && valid; ++i)
      for (size_t j = 0; j < k.b && valid; ++j) valid = static_cast<unsigned char>(k.hp[i][j]) == value_of(i, salt);
  }
  return valid;
}

// Per sample: the CPU time inside the issuing call(s), the GPU span between two events, the whole (issue to sync),
// and the core-share reading taken just before.
struct Samples {
  std::vector<double> call, gpu, total, share;
};

Samples sample(const Opts& o, const Gpu& g, const Blocks& k, bool batch) {
  const auto issue = [&] {
    if (batch) issue_batch(k.d, k.h2d, o.device, o.overlap_hint, o.src_order, g.s);
    else issue_loop(k.d, g.s);
  };
  const auto settle = [&] {
    CK(cudaEventRecord(g.e1, g.s));
    if (o.wait_event) CK(cudaEventSynchronize(g.e1));
    else CK(cudaStreamSynchronize(g.s));
  };
  for (int i = 0; i < o.warmup; ++i) {
    issue();
    settle();
  }
  Samples r;
  for (int i = 0; i < o.samples; ++i) {
    r.share.push_back(core_share());
    const auto t0 = Clock::now();
    if (o.mark_before) CK(cudaEventRecord(g.e0, g.s));
    const auto c0 = Clock::now();
    issue();
    const auto c1 = Clock::now();
    settle();
    const auto t1 = Clock::now();
    float ms = -0.001f;
    if (o.mark_before && o.mark_timing && o.end_timing) CK(cudaEventElapsedTime(&ms, g.e0, g.e1));
    r.call.push_back(us(c0, c1));
    r.gpu.push_back(ms * 1000.0);
    r.total.push_back(us(t0, t1));
  }
  return r;
}

// One mechanism on one (direction, block, n): filled, sampled, checked, its "submit" line printed; its point for the fit.
Point measure(const Opts& o, const Gpu& g, const Blocks& k, size_t m, int cpu, bool& all_valid) {
  const unsigned salt = static_cast<unsigned>(k.n * 7 + m * 3 + k.b + (k.h2d ? 1 : 0));
  fill(g, k, salt);
  const Samples r = sample(o, g, k, o.mechs[m] == "batch");
  const int cpu_now = sched_getcpu();
  const bool valid = blocks_valid(g, k, salt);
  all_valid = all_valid && valid;
  const Stat sc = stat(r.call), sg = stat(r.gpu), st = stat(r.total), ss = stat(r.share);
  const double shared = static_cast<double>(std::count_if(r.share.begin(), r.share.end(),
                                                           [](double x) { return x > kSharedRatio; })) /
                        r.share.size();
  const size_t nd = k.d.dst.size();
  std::printf("{\"test\":\"submit\",\"dir\":\"%s\",\"block\":%zu,\"n\":%zu,\"mech\":\"%s\",\"run\":%zu,"
              "\"coalesce\":%s,\"descriptors\":%zu,\"host\":\"%s\",\"pool_bytes\":%zu,\"samples\":%d,"
              "\"call_us\":%.3f,\"call_us_ci95\":[%.3f,%.3f],\"call_us_per_desc\":%.4f,"
              "\"gpu_us\":%.3f,\"gpu_us_ci95\":[%.3f,%.3f],\"total_us\":%.3f,\"total_us_ci95\":[%.3f,%.3f],"
              "\"gbps\":%.3f,\"cpu\":%d,\"cpu_now\":%d,\"core_share_p50\":%.3f,\"core_share_shared\":%.3f,"
              "\"core_mode\":\"%s\",\"valid\":%s}\n",
              k.h2d ? "h2d" : "d2h", k.b, k.n, o.mechs[m].c_str(), o.run, o.coalesce ? "true" : "false", nd,
              o.mapped ? "mapped" : "pinned", o.pool_bytes, o.samples, sc.p50, sc.lo, sc.hi, sc.p50 / nd,
              sg.p50, sg.lo, sg.hi, st.p50, st.lo, st.hi, st.p50 > 0 ? double(k.n * k.b) / (st.p50 * 1e3) : 0.0,
              cpu, cpu_now, ss.p50, shared, ss.p50 > kSharedRatio ? "shared" : "unshared", valid ? "true" : "false");
  std::fflush(stdout);
  return {static_cast<double>(nd), sc.p50, sg.p50, r.call};
}

// The "fit" line of one mechanism over its points (one per n): µs per descriptor and per call, CPU and GPU.
void print_fit(const Opts& o, const std::string& dir, size_t b, size_t m, const std::vector<Point>& p) {
  std::vector<double> x, yc, yg, xs, ys;
  for (const Point& q : p) {
    x.push_back(q.x), yc.push_back(q.call_p50), yg.push_back(q.gpu_p50);
    for (double c : q.call) xs.push_back(q.x), ys.push_back(c);
  }
  const Line lc = ols(x, yc), lg = ols(x, yg), la = ols(xs, ys);
  std::printf("{\"test\":\"fit\",\"dir\":\"%s\",\"block\":%zu,\"mech\":\"%s\",\"run\":%zu,\"coalesce\":%s,"
              "\"host\":\"%s\",\"points\":%zu,\"x\":\"descriptors\",\"call_us_per_desc\":%.4f,"
              "\"call_us_per_call\":%.3f,\"call_r2\":%.4f,\"call_us_per_desc_ci95\":[%.4f,%.4f],"
              "\"gpu_us_per_desc\":%.4f,\"gpu_us_per_call\":%.3f,\"gpu_r2\":%.4f}\n",
              dir.c_str(), b, o.mechs[m].c_str(), o.run, o.coalesce ? "true" : "false", o.mapped ? "mapped" : "pinned",
              p.size(), lc.slope, lc.intercept, lc.r2, la.slope - 1.96 * la.se, la.slope + 1.96 * la.se, lg.slope,
              lg.intercept, lg.r2);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const Opts o = parse(argc, argv);
  const int cpu = choose_cpu(o);
  Gpu g = setup(o);
  bool all_valid = true;
  for (const std::string& dir : o.dirs)
    for (size_t b : o.blocks) {
      std::vector<std::vector<Point>> points(o.mechs.size());
      for (size_t n : o.ns) {
        if (n < o.run) {
          std::printf("{\"test\":\"submit\",\"dir\":\"%s\",\"block\":%zu,\"n\":%zu,\"run\":%zu,\"skipped\":\"n is below "
                      "the run length\"}\n",
                      dir.c_str(), b, n, o.run);
          continue;
        }
        const Blocks k = place(o, g, dir == "h2d", b, n);
        for (size_t m = 0; m < o.mechs.size(); ++m) points[m].push_back(measure(o, g, k, m, cpu, all_valid));
      }
      for (size_t m = 0; m < o.mechs.size(); ++m) print_fit(o, dir, b, m, points[m]);
    }
  std::printf("{\"test\":\"end\",\"valid\":%s}\n", all_valid ? "true" : "false");
  teardown(g);
  return all_valid ? 0 : 1;
}
