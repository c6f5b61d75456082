// Probe: what the CPU a thread runs on does to submission-bound copies (issue 39's slow mode). It shares no code with
// dmabench (vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the GPU
// layer, tests/check_vendor_includes.cmake). For each CPU of `--cpus`, `--passes` times
// over the list, the thread pins itself there (sched_setaffinity) and measures, on that CPU:
//   spin_ns        ns per step of a dependent integer loop (the CPU's speed for plain work)
//   chase_ns       ns per load of a random pointer chase over the first half of the pinned pool (host memory latency
//                  from this CPU: in a VM, whether the vCPU's host thread sits near the guest's memory)
//   memcpy_gbs     GB/s of a 64 MiB memcpy between two halves of a plain buffer
//   launch_sync_us p50 of an empty kernel + cudaStreamSynchronize
//   batch_*        1024 (`--pages`) 4 KiB (`--page-bytes`) pages at seeded random slots of the pool's second half and
//                  of a device pool, moved by one cudaMemcpyBatchAsync; loop_*: one cudaMemcpyAsync per page. Each:
//                  "_us" the p50 of issue + synchronize (steady_clock, as dmabench's oneshot), "_call_us" the p50 of
//                  the CPU time inside the issuing call(s), "_gpu_us" the p50 between two events around the issue
//                  (the GPU's time from the first event to the last, which includes waiting for the issue)
//   steal_ticks    this CPU's steal time (/proc/stat, USER_HZ ticks) over the measurement; "cpu_after" sched_getcpu
// d2h runs into cleared host pages from a device pool of one byte value, h2d from host pages of another value; every
// page's destination is checked after the last sample of its direction ("valid"); a failed check makes the exit 1.
// `--paired N` then takes N samples per CPU of `--cpus`, each a short throughput loop (8 independent multiply-add
// chains), a latency loop (one chain), 256 chase loads and one d2h batch right after (its "call_us" and "total_us"),
// one line each, so the CPU's state and the batch's cost can be compared sample by sample; `--stress K,...` instead
// takes them on the first CPU of `--cpus` with K threads running throughput loops on other CPUs, for each K.
// `--cpus any`: the paired step on whatever CPU the scheduler gives (no pinning; `--passes` is then ignored).
// `--cpus quiet`: the CPU a survey picks, as dmabench's --cpu-choice quiet does (its own code, the same rule): every
// allowed CPU in turn, pinned, one reading discarded and 3 read (a reading: 1024 steps of 8 independent chains over
// 8 x 1024 of one chain, ns per step), the lowest median wins; a {"test":"choice"} line names it and its readings,
// then `--passes` passes on it. `--pool-bytes N`: the host pool's half and the device pool (default 512 MiB and 16 x
// the pages) are N bytes each, e.g. 4294967296 as configs/kv-pool.json's 4 GiB pool.
// Output: JSON Lines on stdout: {"test":"info",...} (the CPU topology from sysfs, nvidia's rows of /proc/interrupts
// before and after), then {"test":"vcpu",...} per CPU and pass. Times in µs unless named _ns.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o vcpu_probe tools/vcpu_probe.cu
// Run:   ./vcpu_probe [--device 0] [--cpus 0-15] [--passes 2] [--pages 1024] [--page-bytes 4096] [--samples 30]
//        [--seed 1]
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include <cuda_runtime.h>

#if CUDART_VERSION < 12080
#error "vcpu_probe needs CUDA >= 12.8 (cudaMemcpyBatchAsync)"
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

struct Opts {
  int device = 0;
  std::vector<int> cpus;
  int passes = 2, samples = 30, paired = 0;
  std::vector<int> stress;
  size_t pages = 1024, page_bytes = 4096;
  unsigned seed = 1;
  size_t pool_bytes = 0;  // 0: the defaults (512 MiB of host, 16 x pages of device)
  bool quiet = false;     // --cpus quiet
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "vcpu_probe: %s\nusage: vcpu_probe [--device N] [--cpus A-B,C|any|quiet] [--passes N] [--pages N] "
               "[--page-bytes N] [--samples N] [--paired N] [--stress K,...] [--seed N] [--pool-bytes N]\n",
               why.c_str());
  std::exit(2);
}

long number(const std::string& flag, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi)
    usage(flag + " '" + v + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return n;
}

std::vector<int> cpu_list(const std::string& v) {
  std::vector<int> out;
  std::stringstream ss(v);
  for (std::string part; std::getline(ss, part, ',');) {
    const auto dash = part.find('-');
    const long a = number("--cpus", part.substr(0, dash), 0, CPU_SETSIZE - 1);
    const long b = dash == std::string::npos ? a : number("--cpus", part.substr(dash + 1), a, CPU_SETSIZE - 1);
    for (long c = a; c <= b; ++c) out.push_back(static_cast<int>(c));
  }
  if (out.empty()) usage("--cpus names no CPU");
  return out;
}

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (i + 1 >= argc) usage(f + " needs a value (or is not an option)");
    const std::string v = argv[++i];
    if (f == "--device") o.device = static_cast<int>(number(f, v, 0, 63));
    else if (f == "--cpus" && v == "quiet") o.quiet = true;
    else if (f == "--cpus") o.cpus = v == "any" ? std::vector<int>{-1} : cpu_list(v);
    else if (f == "--pool-bytes") o.pool_bytes = static_cast<size_t>(number(f, v, 1 << 20, 1L << 40));
    else if (f == "--passes") o.passes = static_cast<int>(number(f, v, 0, 100));
    else if (f == "--pages") o.pages = static_cast<size_t>(number(f, v, 1, 1 << 16));
    else if (f == "--page-bytes") o.page_bytes = static_cast<size_t>(number(f, v, 64, 1 << 24));
    else if (f == "--samples") o.samples = static_cast<int>(number(f, v, 3, 100000));
    else if (f == "--paired") o.paired = static_cast<int>(number(f, v, 0, 100000));
    else if (f == "--stress") {
      std::stringstream ss(v);
      for (std::string k; std::getline(ss, k, ',');) o.stress.push_back(static_cast<int>(number(f, k, 0, CPU_SETSIZE - 1)));
    } else if (f == "--seed") o.seed = static_cast<unsigned>(number(f, v, 0, 1L << 31));
    else usage("unknown option '" + f + "'");
  }
  if (o.cpus.empty()) o.cpus = cpu_list("0-" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN) - 1));
  return o;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (ch == '\n') o += "\\n";
    else if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
  }
  return o;
}

// nvidia's rows of /proc/interrupts, as they read now
std::string nvidia_interrupts() {
  std::ifstream f("/proc/interrupts");
  std::string line, rows;
  while (std::getline(f, line))
    if (line.find("nvidia") != std::string::npos) rows += line + "\n";
  return rows;
}

long steal_ticks(int cpu) {
  std::ifstream f("/proc/stat");
  const std::string want = "cpu" + std::to_string(cpu) + " ";
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(want, 0) != 0) continue;
    std::stringstream ss(line.substr(want.size()));
    long v[8] = {};
    for (long& x : v) ss >> x;
    return v[7];
  }
  return -1;
}

double p50(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];  // nearest rank, lower median
}

__global__ void empty_kernel() {}

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

struct Pages {
  std::vector<void*> d2h_dst, d2h_src, h2d_dst, h2d_src;
  std::vector<size_t> sizes;
};

struct Timed {
  double total, call, gpu;
};

// issue + synchronize `samples` times; p50 of the whole, of the CPU time in the issuing call(s), of the events' time
template <class Issue>
Timed time_op(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int samples, Issue issue) {
  for (int i = 0; i < 3; ++i) {
    issue();
    CK(cudaStreamSynchronize(s));
  }
  std::vector<double> total, call, gpu;
  for (int i = 0; i < samples; ++i) {
    const auto t0 = Clock::now();
    CK(cudaEventRecord(e0, s));
    const auto c0 = Clock::now();
    issue();
    const auto c1 = Clock::now();
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    const auto t1 = Clock::now();
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    total.push_back(us(t0, t1));
    call.push_back(us(c0, c1));
    gpu.push_back(ms * 1000.0);
  }
  return {p50(total), p50(call), p50(gpu)};
}

void batch(const std::vector<void*>& dst, const std::vector<void*>& src, const std::vector<size_t>& sizes,
           cudaStream_t s) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t idx = 0;
  const void** srcs = const_cast<const void**>(src.data());
#if CUDART_VERSION >= 13000
  CK(cudaMemcpyBatchAsync(const_cast<void**>(dst.data()), srcs, const_cast<size_t*>(sizes.data()), dst.size(), &attr,
                          &idx, 1, s));
#else
  size_t fail = 0;
  CK(cudaMemcpyBatchAsync(const_cast<void**>(dst.data()), srcs, const_cast<size_t*>(sizes.data()), dst.size(), &attr,
                          &idx, 1, &fail, s));
#endif
}

void loop(const std::vector<void*>& dst, const std::vector<void*>& src, size_t bytes, cudaStream_t s) {
  for (size_t i = 0; i < dst.size(); ++i) CK(cudaMemcpyAsync(dst[i], src[i], bytes, cudaMemcpyDefault, s));
}


void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "vcpu_probe: sched_setaffinity(%d): %s\n", cpu, std::strerror(errno));
    std::exit(1);
  }
}

// `steps` steps of 8 independent multiply-add chains (throughput-bound: the core's issue ports) or 8 x `steps` steps
// of one chain (latency-bound); the empty asm keeps each chain scalar and in a register
uint64_t chains(long steps, bool independent) {
  uint64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < steps; ++i) {
    for (int k = 0; k < 8; ++k) {
      uint64_t& v = independent ? x[k] : x[0];
      v = v * 6364136223846793005ull + 1442695040888963407ull;
      asm volatile("" : "+r"(v));
    }
  }
  return x[0] ^ x[7];
}

// The paired step: per sample a throughput loop, a latency loop, 256 loads of the pointer chase and one batch
// (issue + synchronize) right after, so each sample's CPU state and its batch's call time can be compared. With
// `stress` > 0, that many threads run throughput loops on the other CPUs (from the last one down) meanwhile.
void paired(int cpu, int stress, int n, const unsigned char* host, cudaStream_t s, const std::function<void()>& issue) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  const int ncpu = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  for (int k = 0, c = ncpu - 1; k < stress && c >= 0; --c) {
    if (c == cpu) continue;
    load.emplace_back([c, &stop] {
      pin(c);
      uint64_t sink = 0;
      while (!stop.load(std::memory_order_relaxed)) sink += chains(4096, true);
      asm volatile("" : : "r"(sink));
    });
    ++k;
  }
  if (cpu >= 0) pin(cpu);
  uint64_t at = 0, sink = 0;
  for (int i = 0; i < n; ++i) {
    const auto a = Clock::now();
    sink += chains(2048, true);
    const auto b = Clock::now();
    sink += chains(2048, false);
    const auto c = Clock::now();
    for (int k = 0; k < 256; ++k) at = *reinterpret_cast<const volatile uint64_t*>(host + at);
    const auto d = Clock::now();
    issue();
    const auto e = Clock::now();
    CK(cudaStreamSynchronize(s));
    const auto f = Clock::now();
    std::printf("{\"test\":\"paired\",\"cpu\":%d,\"cpu_now\":%d,\"stress\":%d,\"i\":%d,\"tput_ns\":%.4f,\"lat_ns\":%.4f,"
                "\"chase_ns\":%.1f,\"call_us\":%.1f,\"total_us\":%.1f}\n",
                cpu, sched_getcpu(), stress, i, us(a, b) * 1000.0 / (2048 * 8), us(b, c) * 1000.0 / (2048 * 8),
                us(c, d) * 1000.0 / 256, us(d, e), us(d, f));
  }
  stop = true;
  for (std::thread& t : load) t.join();
  std::fflush(stdout);
  asm volatile("" : : "r"(sink ^ at));
}

// What every measurement uses: the stream, two events, the pinned pool (first half the pointer chase, second half the
// pages' slots), the device pool (16 x the pages), the pages, and a plain buffer for memcpy.
struct Rig {
  cudaStream_t s;
  cudaEvent_t e0, e1;
  unsigned char* host = nullptr;
  unsigned char* dev = nullptr;
  size_t dslots = 0;
  Pages p;
  std::vector<unsigned char> plain = std::vector<unsigned char>(128u << 20, 1);
};

Rig make_rig(const Opts& o) {
  Rig r;
  CK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&r.e0));
  CK(cudaEventCreate(&r.e1));
  const size_t half = o.pool_bytes ? std::max(o.pool_bytes, o.pages * o.page_bytes)
                                   : std::max<size_t>(512u << 20, o.pages * o.page_bytes * 4);
  CK(cudaHostAlloc(reinterpret_cast<void**>(&r.host), 2 * half, cudaHostAllocPortable));
  r.dslots = o.pool_bytes ? half / o.page_bytes : o.pages * 16;
  CK(cudaMalloc(reinterpret_cast<void**>(&r.dev), r.dslots * o.page_bytes));
  unsigned char* host = r.host;
  unsigned char* dev = r.dev;
  const size_t dslots = r.dslots;
  Pages& p = r.p;
  std::mt19937_64 rng(o.seed);
  const size_t lines = half / 64;  // one pointer per 64-byte line, a random single cycle (Sattolo)
  std::vector<uint32_t> perm(lines);
  std::iota(perm.begin(), perm.end(), 0u);
  for (size_t i = lines - 1; i > 0; --i) std::swap(perm[i], perm[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  for (size_t i = 0; i < lines; ++i) *reinterpret_cast<uint64_t*>(host + 64 * size_t(i)) = 64 * size_t(perm[i]);

  auto pick = [&](size_t slots) {
    std::vector<size_t> all(slots);
    std::iota(all.begin(), all.end(), size_t(0));
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(o.pages);
    return all;
  };
  const std::vector<size_t> hs = pick(half / o.page_bytes), ds = pick(dslots);
  for (size_t i = 0; i < o.pages; ++i) {
    void* h = host + half + hs[i] * o.page_bytes;
    void* d = dev + ds[i] * o.page_bytes;
    p.d2h_dst.push_back(h), p.d2h_src.push_back(d), p.h2d_dst.push_back(d), p.h2d_src.push_back(h);
    p.sizes.push_back(o.page_bytes);
  }
  return r;
}

void print_info(const Opts& o) {
  std::printf("{\"test\":\"info\",\"pages\":%zu,\"page_bytes\":%zu,\"samples\":%d,\"seed\":%u,\"nproc\":%ld,"
              "\"interrupts_before\":\"%s\",\"cpus\":[",
              o.pages, o.page_bytes, o.samples, o.seed, sysconf(_SC_NPROCESSORS_ONLN), esc(nvidia_interrupts()).c_str());
  for (size_t i = 0; i < o.cpus.size(); ++i) {
    const std::string t = "/sys/devices/system/cpu/cpu" + std::to_string(o.cpus[i]) + "/topology/";
    std::printf("%s{\"cpu\":%d,\"core_id\":\"%s\",\"package\":\"%s\",\"siblings\":\"%s\"}", i ? "," : "", o.cpus[i],
                esc(slurp(t + "core_id")).c_str(), esc(slurp(t + "physical_package_id")).c_str(),
                esc(slurp(t + "thread_siblings_list")).c_str());
  }
  std::printf("]}\n");
  std::fflush(stdout);

}

// The CPU's state now: {spin_ns, chase_ns, memcpy_gbs, launch_sync_us}, and a sink the loops fold into
struct CpuState {
  double spin_ns, chase_ns, memcpy_gbs, launch_sync_us;
  uint64_t sink;
};

CpuState cpu_state(Rig& r, int pass) {
  unsigned char* host = r.host;
  std::vector<unsigned char>& plain = r.plain;
  cudaStream_t s = r.s;
  // spin: a dependent multiply-add chain the compiler cannot fold
  uint64_t x = 88172645463325252ull + static_cast<uint64_t>(pass);
  const long spin_steps = 20000000;
  const auto a0 = Clock::now();
  for (long i = 0; i < spin_steps; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  const double spin_ns = us(a0, Clock::now()) * 1000.0 / spin_steps;
  // chase: 2M dependent loads
  uint64_t at = 0;
  const long loads = 2000000;
  const auto b0 = Clock::now();
  for (long i = 0; i < loads; ++i) at = *reinterpret_cast<volatile uint64_t*>(host + at);
  const double chase_ns = us(b0, Clock::now()) * 1000.0 / loads;
  const auto m0 = Clock::now();
  std::memcpy(plain.data(), plain.data() + (64u << 20), 64u << 20);
  const double memcpy_gbs = (64u << 20) / (us(m0, Clock::now()) * 1000.0);
  std::vector<double> ls;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = Clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    ls.push_back(us(t0, Clock::now()));
  }
  return {spin_ns, chase_ns, memcpy_gbs, p50(ls), x ^ at};
}

// One CPU of a pass: pinned there, its state, then the four paged operations timed and checked; one line. Returns
// whether every page arrived.
bool one_cpu(const Opts& o, Rig& r, int pass, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::printf("{\"test\":\"vcpu\",\"pass\":%d,\"cpu\":%d,\"error\":\"sched_setaffinity: %s\"}\n", pass, cpu,
                std::strerror(errno));
    return true;
  }
  const long steal0 = steal_ticks(cpu);
  const auto w0 = Clock::now();
  const CpuState st = cpu_state(r, pass);
  const Pages& p = r.p;
  cudaStream_t s = r.s;
  cudaEvent_t e0 = r.e0, e1 = r.e1;
  unsigned char* dev = r.dev;
  const size_t dslots = r.dslots;
  // d2h: the device pool holds one byte value, the host pages are cleared; h2d: the host pages another value
  const int pat = 1 + 2 * ((pass * 31 + cpu) % 120);
  CK(cudaMemset(dev, pat, dslots * o.page_bytes));
  for (void* h : p.d2h_dst) std::memset(h, 0, o.page_bytes);
  CK(cudaDeviceSynchronize());
  const Timed bd = time_op(s, e0, e1, o.samples, [&] { batch(p.d2h_dst, p.d2h_src, p.sizes, s); });
  const Timed ld = time_op(s, e0, e1, o.samples, [&] { loop(p.d2h_dst, p.d2h_src, o.page_bytes, s); });
  bool valid = true;
  for (void* h : p.d2h_dst)
    for (size_t b = 0; b < o.page_bytes && valid; ++b) valid = static_cast<unsigned char*>(h)[b] == pat;
  for (void* h : p.h2d_src) std::memset(h, pat + 1, o.page_bytes);
  const Timed bh = time_op(s, e0, e1, o.samples, [&] { batch(p.h2d_dst, p.h2d_src, p.sizes, s); });
  const Timed lh = time_op(s, e0, e1, o.samples, [&] { loop(p.h2d_dst, p.h2d_src, o.page_bytes, s); });
  std::vector<unsigned char> got(o.page_bytes);
  for (size_t i = 0; i < o.pages && valid; ++i) {
    CK(cudaMemcpy(got.data(), p.h2d_dst[i], o.page_bytes, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < o.page_bytes && valid; ++b) valid = got[b] == pat + 1;
  }
  const double seconds = us(w0, Clock::now()) / 1e6;
  const long steal1 = steal_ticks(cpu);
  const int after = sched_getcpu();
  std::printf("{\"test\":\"vcpu\",\"pass\":%d,\"cpu\":%d,\"cpu_after\":%d,\"seconds\":%.3f,\"steal_ticks\":%ld,"
              "\"spin_ns\":%.4f,\"chase_ns\":%.2f,\"memcpy_gbs\":%.2f,\"launch_sync_us\":%.2f,"
              "\"batch_d2h_us\":%.1f,\"batch_d2h_call_us\":%.1f,\"batch_d2h_gpu_us\":%.1f,"
              "\"batch_h2d_us\":%.1f,\"batch_h2d_call_us\":%.1f,\"batch_h2d_gpu_us\":%.1f,"
              "\"loop_d2h_us\":%.1f,\"loop_d2h_call_us\":%.1f,\"loop_d2h_gpu_us\":%.1f,"
              "\"loop_h2d_us\":%.1f,\"loop_h2d_call_us\":%.1f,\"loop_h2d_gpu_us\":%.1f,\"valid\":%s,"
              "\"sink\":%llu}\n",
              pass, cpu, after, seconds, steal0 >= 0 && steal1 >= 0 ? steal1 - steal0 : -1L, st.spin_ns, st.chase_ns,
              st.memcpy_gbs, st.launch_sync_us, bd.total, bd.call, bd.gpu, bh.total, bh.call, bh.gpu, ld.total, ld.call,
              ld.gpu, lh.total, lh.call, lh.gpu, valid ? "true" : "false",
              static_cast<unsigned long long>(st.sink & 1));
  std::fflush(stdout);
  return valid;
}

}  // namespace

// --cpus quiet: the survey (see the top). Prints the choice line and returns the CPU.
int quiet_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "vcpu_probe: sched_getaffinity: %s\n", std::strerror(errno));
    std::exit(1);
  }
  const auto reading = [] {
    const auto t0 = Clock::now();
    uint64_t sink = chains(1024, true);
    const auto t1 = Clock::now();
    sink += chains(1024, false);
    const auto t2 = Clock::now();
    asm volatile("" : : "r"(sink));
    return us(t0, t1) / us(t1, t2);  // both loops do 8 x 1024 steps
  };
  int best = -1;
  double best_ratio = 1e9;
  std::string readings;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    pin(c);
    reading();
    std::vector<double> r{reading(), reading(), reading()};
    const double m = p50(r);
    readings += (readings.empty() ? "" : ",") + std::string("\"") + std::to_string(c) + "\":" + std::to_string(m);
    if (m < best_ratio) best = c, best_ratio = m;
  }
  std::printf("{\"test\":\"choice\",\"cpu\":%d,\"ratio\":%.3f,\"survey\":{%s}}\n", best, best_ratio, readings.c_str());
  return best;
}

int main(int argc, char** argv) {
  Opts o = parse(argc, argv);
  if (o.quiet) o.cpus = {quiet_cpu()};
  CK(cudaSetDevice(o.device));
  Rig r = make_rig(o);
  print_info(o);
  bool all_valid = true;
  for (int pass = 0; pass < o.passes; ++pass)
    for (int cpu : o.cpus)
      if (cpu >= 0) all_valid = one_cpu(o, r, pass, cpu) && all_valid;  // --cpus any: the paired step only
  if (o.paired > 0) {
    const auto issue = [&] { batch(r.p.d2h_dst, r.p.d2h_src, r.p.sizes, r.s); };
    if (o.stress.empty())
      for (int cpu : o.cpus) paired(cpu, 0, o.paired, r.host, r.s, issue);
    for (int k : o.stress) paired(o.cpus.front(), k, o.paired, r.host, r.s, issue);
  }
  std::printf("{\"test\":\"end\",\"interrupts_after\":\"%s\",\"valid\":%s}\n", esc(nvidia_interrupts()).c_str(),
              all_valid ? "true" : "false");
  CK(cudaFree(r.dev));
  CK(cudaFreeHost(r.host));
  return all_valid ? 0 : 1;
}
