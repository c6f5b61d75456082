// Probe: an independent reference loop for dmabench's "crossover" numbers (copy engine vs SM copies of n
// blocks of B bytes) on one GPU. It shares no code with dmabench (vendor-header exception: a standalone probe
// built by hand with nvcc, outside the CMake build and the GPU layer, tests/check_vendor_includes.cmake).
//
// One "call" moves n blocks of B bytes from n random slots of a source pool to n random slots of a destination
// pool; it is timed with std::chrono::steady_clock on the host around (issue every copy of the call;
// cudaStreamSynchronize). Per cell: a validation call, 3 untimed warm-up calls, then --iters timed calls;
// p50, min and p95 (nearest rank) in µs.
//   dirs   h2d: host pool -> device pool; d2h: device pool -> host pool; d2d: device pool -> a second device pool.
//          The host pool is cudaHostAlloc(Mapped | Portable); device pools are cudaMalloc; each is --pool-bytes.
//   slots  every cell seeds a fresh std::mt19937_64 with --seed and draws n distinct B-aligned slots of the
//          source pool (uniform, without replacement, of pool/B), then n of the destination pool the same way.
//   modes  ce        one cudaMemcpyAsync (cudaMemcpyDefault) per block, on one non-blocking stream;
//          ce-batch  one cudaMemcpyBatchAsync for all n blocks (one attribute: srcAccessOrder Stream; built
//                    only with CUDA >= 12.8 headers, and run only on a >= 12.8 driver), with a timing event
//                    recorded on the stream just before it (--event-before yes, the default, as dmabench's
//                    ce-batch event_before: without it an h2d batch to an idle stream takes the driver's slower,
//                    synchronous path; results/h100x1/submission/README.md);
//          smN       one kernel of exactly N blocks x 512 threads (so at most N SMs are busy): block b copies
//                    items b, b+N, b+2N, ... of n*P, P = max(1, ceil(N/n)) parts per block copy (item i is
//                    part i%P of copy i/P; parts are 16-byte multiples but the last); a part moves as uint4
//                    when both addresses and its size are 16-aligned, else byte by byte; host memory through
//                    cudaHostGetDevicePointer. Each block records %smid; "sms_used" = distinct SM ids.
//          Copy arguments (pointer/size arrays) are built before timing; the timed region only issues and waits.
//   check  before timing: sources hold a pattern of (slot, byte) with every byte odd, destination slots are
//          poisoned with 0xfe, one call runs, every destination byte is compared; a mismatch gives the cell
//          "validated": false and an "error", and it is not timed.
// Output: JSON Lines on stdout: first {"tool":"crossover_probe","context":{...}}, then one line per cell with
// "dir","mode","block_bytes","n","p50_us","min_us","p95_us","iters","validated","sms_used","grid_blocks" (null
// for ce modes),"pid","cpu" (sched_getcpu after the cell),"device_name". Bad input: one line
// "crossover_probe: error: ..." on stderr, exit 2; a failing CUDA call: file:line, the call and its error, exit 1.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o crossover_probe tools/crossover_probe.cu
// Run:   ./crossover_probe [--cells h2d:sm12:28KiB:64,d2h:ce:1MiB:8] [--dirs h2d,d2h,d2d]
//        [--modes ce,ce-batch,sm12] [--block-bytes 4KiB,8KiB] [--blocks 64,1024] [--iters 30]
//        [--pool-bytes 1GiB] [--seed 1] [--order given|random] [--event-before yes|no] [--device 0]
//        --cells are run first, then the cross product of the grid flags (a grid flag left out takes its
//        default: dirs h2d,d2h; modes ce,ce-batch,sm32; block-bytes 4KiB,64KiB; blocks 64,1024); with neither
//        --cells nor a grid flag the default grid runs. B: 4096, 4KiB, 28KiB, 1MiB, 1GiB.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

using Clock = std::chrono::steady_clock;
using u8 = unsigned char;

static const char* kUsage =
    "usage: crossover_probe [--cells DIR:MODE:B:N,...] [--dirs LIST] [--modes LIST] [--block-bytes LIST]\n"
    "  [--blocks LIST] [--iters N] [--pool-bytes SIZE] [--seed N] [--order given|random] [--event-before yes|no]\n"
    "  [--device N]\n"
    "  DIR: h2d, d2h, d2d; MODE: ce, ce-batch, smN (N thread blocks of 512 threads, 1..65536);\n"
    "  B, SIZE: 4096, 4KiB, 28KiB, 1MiB, 1GiB; N (blocks per call) >= 1; n x B must fit --pool-bytes (default 1GiB).\n"
    "  --cells run first, then the cross product of the grid flags (defaults: --dirs h2d,d2h\n"
    "  --modes ce,ce-batch,sm32 --block-bytes 4KiB,64KiB --blocks 64,1024); --iters 30, --seed 1, --order given,\n"
    "  --event-before yes (ce-batch: a timing event recorded just before each batch, as dmabench's event_before).\n"
    "  Output: JSON Lines on stdout (see the header of tools/crossover_probe.cu).\n";

// ---------------------------------------------------------------- options
struct Cell {
  std::string dir, mode;
  size_t bytes = 0, n = 0;
  int grid = 0;  // smN: N; ce, ce-batch: 0
};

struct Opts {
  std::vector<Cell> cells;
  std::vector<std::string> dirs{"h2d", "d2h"}, modes{"ce", "ce-batch", "sm32"};
  std::vector<size_t> block_bytes{4u << 10, 64u << 10}, blocks{64, 1024};
  bool grid = false, explicit_cells = false, random_order = false, event_before = true;
  long iters = 30;
  size_t pool_bytes = size_t(1) << 30;
  uint64_t seed = 1;
  int device = 0;
};

[[noreturn]] static void bad(const std::string& msg) {
  std::fprintf(stderr, "crossover_probe: error: %s\n", msg.c_str());
  std::exit(2);
}

static bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtoull(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

static uint64_t parse_int(const std::string& flag, const std::string& s, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  if (!parse_u64(s, &v) || v < lo || v > hi)
    bad(flag + ": '" + s + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

static std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t c; (c = s.find(sep, at)) != std::string::npos; at = c + 1) out.push_back(s.substr(at, c - at));
  out.push_back(s.substr(at));
  return out;
}

// "4096", "4KiB", "28KiB", "1MiB", "1GiB": > 0, at most 1 TiB.
static size_t parse_size(const std::string& flag, const std::string& item) {
  size_t digits = 0;
  while (digits < item.size() && item[digits] >= '0' && item[digits] <= '9') ++digits;
  const std::string suffix = item.substr(digits);
  uint64_t v = 0, mul = 0;
  if (suffix.empty()) mul = 1;
  if (suffix == "KiB") mul = uint64_t(1) << 10;
  if (suffix == "MiB") mul = uint64_t(1) << 20;
  if (suffix == "GiB") mul = uint64_t(1) << 30;
  if (!mul || !parse_u64(item.substr(0, digits), &v) || v == 0 || v > (uint64_t(1) << 40) / mul)
    bad(flag + ": '" + item + "' is not a size in bytes (accepted: 4096, 4KiB, 28KiB, 1MiB, 1GiB; > 0, <= 1TiB)");
  return static_cast<size_t>(v * mul);
}

static void check_dir(const std::string& flag, const std::string& d) {
  if (d != "h2d" && d != "d2h" && d != "d2d") bad(flag + ": unknown direction '" + d + "' (accepted: h2d, d2h, d2d)");
}

// The grid size of a mode: smN -> N; ce, ce-batch -> 0.
static int mode_grid(const std::string& flag, const std::string& m) {
  if (m == "ce" || m == "ce-batch") return 0;
  uint64_t n = 0;
  if (m.rfind("sm", 0) == 0 && parse_u64(m.substr(2), &n) && n >= 1 && n <= 65536) return static_cast<int>(n);
  bad(flag + ": unknown mode '" + m + "' (accepted: ce, ce-batch, smN with N in [1, 65536], e.g. sm1, sm12, sm132)");
}

// "dir:mode:B:n"
static Cell parse_cell(const std::string& text) {
  const std::vector<std::string> f = split(text, ':');
  if (f.size() != 4) bad("--cells: '" + text + "' is not DIR:MODE:B:N (e.g. h2d:sm12:28KiB:64)");
  Cell c;
  check_dir("--cells", f[0]);
  c.dir = f[0];
  c.grid = mode_grid("--cells", f[1]);
  c.mode = f[1];
  c.bytes = parse_size("--cells", f[2]);
  c.n = parse_int("--cells", f[3], 1, uint64_t(1) << 32);
  return c;
}

// One flag and its value into `o`.
static void apply_flag(Opts& o, const std::string& flag, const std::string& val) {
  if (flag == "--cells") {
    for (const std::string& t : split(val, ',')) o.cells.push_back(parse_cell(t));
    o.explicit_cells = true;
  } else if (flag == "--dirs") {
    o.dirs = split(val, ',');
    for (const std::string& d : o.dirs) check_dir(flag, d);
  } else if (flag == "--modes") {
    o.modes = split(val, ',');
    for (const std::string& m : o.modes) mode_grid(flag, m);
  } else if (flag == "--block-bytes") {
    o.block_bytes.clear();
    for (const std::string& s : split(val, ',')) o.block_bytes.push_back(parse_size(flag, s));
  } else if (flag == "--blocks") {
    o.blocks.clear();
    for (const std::string& s : split(val, ',')) o.blocks.push_back(parse_int(flag, s, 1, uint64_t(1) << 32));
  } else if (flag == "--iters") {
    o.iters = static_cast<long>(parse_int(flag, val, 1, 1000000));
  } else if (flag == "--pool-bytes") {
    o.pool_bytes = parse_size(flag, val);
  } else if (flag == "--seed") {
    if (!parse_u64(val, &o.seed)) bad(flag + ": '" + val + "' is not an unsigned integer");
  } else if (flag == "--order") {
    if (val != "given" && val != "random") bad(flag + ": unknown order '" + val + "' (accepted: given, random)");
    o.random_order = val == "random";
  } else if (flag == "--event-before") {
    if (val != "yes" && val != "no") bad(flag + ": '" + val + "' is not yes or no");
    o.event_before = val == "yes";
  } else if (flag == "--device") {
    o.device = static_cast<int>(parse_int(flag, val, 0, 1023));
  } else {
    bad("unknown flag '" + flag + "' (accepted: --cells, --dirs, --modes, --block-bytes, --blocks, --iters, "
        "--pool-bytes, --seed, --order, --event-before, --device, --help)");
  }
  if (flag == "--dirs" || flag == "--modes" || flag == "--block-bytes" || flag == "--blocks") o.grid = true;
}

// The cells to run: --cells, then the grid; every one checked against the pool.
static void finish_cells(Opts& o) {
  if (o.grid || !o.explicit_cells)
    for (const std::string& d : o.dirs)
      for (const std::string& m : o.modes)
        for (size_t b : o.block_bytes)
          for (size_t n : o.blocks) o.cells.push_back(Cell{d, m, b, n, mode_grid("--modes", m)});
  for (const Cell& c : o.cells)
    if (c.n > o.pool_bytes / c.bytes)
      bad("cell " + c.dir + ":" + c.mode + ":" + std::to_string(c.bytes) + ":" + std::to_string(c.n) + ": " +
          std::to_string(c.n) + " slots of " + std::to_string(c.bytes) + " bytes do not fit --pool-bytes " +
          std::to_string(o.pool_bytes) + " (" + std::to_string(o.pool_bytes / c.bytes) + " slots)");
  if (o.random_order) {
    std::mt19937_64 rng(o.seed);
    std::shuffle(o.cells.begin(), o.cells.end(), rng);
  }
}

static Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], val;
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (flag.rfind("--", 0) != 0) bad("unexpected argument '" + flag + "' (flags start with --; see --help)");
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      val = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < argc) {
      val = argv[++i];
    } else {
      bad(flag + " needs a value (see --help)");
    }
    apply_flag(o, flag, val);
  }
  finish_cells(o);
  return o;
}

// ---------------------------------------------------------------- the SM copy kernel
__device__ __forceinline__ unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void copy_part(const u8* s, u8* d, size_t len) {
  if (((reinterpret_cast<uintptr_t>(s) | reinterpret_cast<uintptr_t>(d) | len) & 15) == 0) {
    const uint4* s4 = reinterpret_cast<const uint4*>(s);
    uint4* d4 = reinterpret_cast<uint4*>(d);
    for (size_t k = threadIdx.x; k < len / 16; k += blockDim.x) d4[k] = s4[k];
  } else {
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) d[k] = s[k];
  }
}

// Block b copies items b, b + gridDim.x, ...; item i is part i % parts of copy i / parts.
__global__ void __launch_bounds__(512) sm_copy(const u8* const* src, u8* const* dst, size_t n, size_t bytes,
                                               size_t parts, int* smid) {
  if (threadIdx.x == 0) smid[blockIdx.x] = static_cast<int>(sm_id());
  const size_t chunk = ((bytes + parts - 1) / parts + 15) / 16 * 16;
  for (size_t i = blockIdx.x; i < n * parts; i += gridDim.x) {
    const size_t c = i / parts, begin = (i % parts) * chunk;
    if (begin >= bytes) continue;
    copy_part(src[c] + begin, dst[c] + begin, bytes - begin < chunk ? bytes - begin : chunk);
  }
}

// ---------------------------------------------------------------- pools, slots, plans
struct Pools {
  size_t bytes = 0;
  u8* host = nullptr;      // host pointer (ce, ce-batch, the check)
  u8* host_dev = nullptr;  // its device pointer (kernel)
  u8* dev[2] = {nullptr, nullptr};
};

struct Side {
  u8* ce = nullptr;      // base for cudaMemcpy*
  u8* kernel = nullptr;  // base for the kernel
  bool host = false;
};

struct Plan {
  Cell cell;
  Side src, dst;
  std::vector<size_t> src_slot, dst_slot, sizes;
  std::vector<void*> srcs, dsts;
  u8** d_src = nullptr;
  u8** d_dst = nullptr;
  int* d_smid = nullptr;
  cudaEvent_t mark = nullptr;  // ce-batch with --event-before yes: recorded just before each batch
  size_t parts = 1;
  bool batch_ok = false;
  std::string batch_why;
};

static Pools make_pools(const Opts& o) {
  Pools p;
  p.bytes = o.pool_bytes;
  bool d2d = false;
  for (const Cell& c : o.cells) d2d = d2d || c.dir == "d2d";
  CK(cudaHostAlloc(reinterpret_cast<void**>(&p.host), p.bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&p.host_dev), p.host, 0));
  CK(cudaMalloc(reinterpret_cast<void**>(&p.dev[0]), p.bytes));
  if (d2d) CK(cudaMalloc(reinterpret_cast<void**>(&p.dev[1]), p.bytes));
  return p;
}

// n distinct slots of [0, total), uniform without replacement (a partial Fisher-Yates over a sparse array).
static std::vector<size_t> draw_slots(std::mt19937_64& rng, size_t total, size_t n) {
  std::unordered_map<size_t, size_t> moved;
  std::vector<size_t> out(n);
  auto at = [&](size_t k) {
    auto it = moved.find(k);
    return it == moved.end() ? k : it->second;
  };
  for (size_t i = 0; i < n; ++i) {
    const size_t j = std::uniform_int_distribution<size_t>(i, total - 1)(rng);
    out[i] = at(j);
    moved[j] = at(i);  // position i is never drawn again
  }
  return out;
}

static void set_sides(Plan& p, const Pools& pools) {
  const Side host{pools.host, pools.host_dev, true}, dev0{pools.dev[0], pools.dev[0], false},
      dev1{pools.dev[1], pools.dev[1], false};
  const std::string& d = p.cell.dir;
  p.src = d == "h2d" ? host : dev0;
  p.dst = d == "d2h" ? host : d == "d2d" ? dev1 : dev0;
}

static Plan make_plan(const Cell& c, const Pools& pools, uint64_t seed, bool event_before) {
  Plan p;
  p.cell = c;
  if (c.mode == "ce-batch" && event_before) CK(cudaEventCreate(&p.mark));
  set_sides(p, pools);
  std::mt19937_64 rng(seed);
  p.src_slot = draw_slots(rng, pools.bytes / c.bytes, c.n);
  p.dst_slot = draw_slots(rng, pools.bytes / c.bytes, c.n);
  std::vector<u8*> ks(c.n), kd(c.n);
  for (size_t i = 0; i < c.n; ++i) {
    p.srcs.push_back(p.src.ce + p.src_slot[i] * c.bytes);
    p.dsts.push_back(p.dst.ce + p.dst_slot[i] * c.bytes);
    ks[i] = p.src.kernel + p.src_slot[i] * c.bytes;
    kd[i] = p.dst.kernel + p.dst_slot[i] * c.bytes;
  }
  p.sizes.assign(c.n, c.bytes);
  if (c.grid > 0) {
    p.parts = std::max<size_t>(1, (static_cast<size_t>(c.grid) + c.n - 1) / c.n);
    CK(cudaMalloc(reinterpret_cast<void**>(&p.d_src), c.n * sizeof(u8*)));
    CK(cudaMalloc(reinterpret_cast<void**>(&p.d_dst), c.n * sizeof(u8*)));
    CK(cudaMalloc(reinterpret_cast<void**>(&p.d_smid), c.grid * sizeof(int)));
    CK(cudaMemcpy(p.d_src, ks.data(), c.n * sizeof(u8*), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p.d_dst, kd.data(), c.n * sizeof(u8*), cudaMemcpyHostToDevice));
  }
  return p;
}

static void free_plan(Plan& p) {
  if (p.d_src) CK(cudaFree(p.d_src));
  if (p.d_dst) CK(cudaFree(p.d_dst));
  if (p.d_smid) CK(cudaFree(p.d_smid));
  if (p.mark) CK(cudaEventDestroy(p.mark));
}

// ---------------------------------------------------------------- issuing one call
static void issue_batch(Plan& p, cudaStream_t s, int device) {
#if CUDART_VERSION >= 12080
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.srcLocHint.type = p.src.host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  attr.srcLocHint.id = p.src.host ? 0 : device;
  attr.dstLocHint.type = p.dst.host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  attr.dstLocHint.id = p.dst.host ? 0 : device;
  size_t attr_index = 0;
#if CUDART_VERSION >= 13000  // CUDA 13 dropped the failIdx argument
  CK(cudaMemcpyBatchAsync(p.dsts.data(), p.srcs.data(), p.sizes.data(), p.cell.n, &attr, &attr_index, 1, s));
#else
  size_t fail = SIZE_MAX;
  const cudaError_t e = cudaMemcpyBatchAsync(p.dsts.data(), p.srcs.data(), p.sizes.data(), p.cell.n, &attr,
                                             &attr_index, 1, &fail, s);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s:%d cudaMemcpyBatchAsync(%zu copies; failIdx %zu): %s\n", __FILE__, __LINE__, p.cell.n,
                 fail, cudaGetErrorString(e));
    std::exit(1);
  }
#endif
#else
  (void)p;
  (void)s;
  (void)device;
  std::fprintf(stderr, "crossover_probe: ce-batch is not built in (CUDA headers older than 12.8)\n");
  std::exit(1);
#endif
}

// Issues every copy of one call on `s` (no wait).
static void issue(Plan& p, cudaStream_t s, int device) {
  const Cell& c = p.cell;
  if (c.mode == "ce") {
    for (size_t i = 0; i < c.n; ++i) CK(cudaMemcpyAsync(p.dsts[i], p.srcs[i], c.bytes, cudaMemcpyDefault, s));
  } else if (c.mode == "ce-batch") {
    if (p.mark) CK(cudaEventRecord(p.mark, s));
    issue_batch(p, s, device);
  } else {
    sm_copy<<<c.grid, 512, 0, s>>>(p.d_src, p.d_dst, c.n, c.bytes, p.parts, p.d_smid);
    CK(cudaGetLastError());
  }
}

static double timed_call(Plan& p, cudaStream_t s, int device) {
  const auto t0 = Clock::now();
  issue(p, s, device);
  CK(cudaStreamSynchronize(s));
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------- the check
static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The bytes a source slot holds: a function of (slot, byte offset), every byte odd (never the 0xfe poison).
static void pattern(u8* out, size_t slot, size_t bytes) {
  const uint64_t key = mix(slot ^ 0x5851F42D4C957F2Dull);
  for (size_t off = 0; off < bytes; off += 8) {
    const uint64_t w = mix(key ^ (off >> 3)) | 0x0101010101010101ull;
    std::memcpy(out + off, &w, std::min<size_t>(8, bytes - off));
  }
}

// Sources filled, destination slots poisoned, all of it finished before the call's stream starts.
static void prepare_data(const Plan& p) {
  const size_t B = p.cell.bytes;
  std::vector<u8> buf(p.src.host ? 0 : B);
  for (size_t i = 0; i < p.cell.n; ++i) {
    u8* at = p.src.ce + p.src_slot[i] * B;
    if (p.src.host) {
      pattern(at, p.src_slot[i], B);
    } else {
      pattern(buf.data(), p.src_slot[i], B);
      CK(cudaMemcpy(at, buf.data(), B, cudaMemcpyHostToDevice));
    }
    u8* to = p.dst.ce + p.dst_slot[i] * B;
    if (p.dst.host) std::memset(to, 0xfe, B);
    else CK(cudaMemset(to, 0xfe, B));
  }
  if (p.cell.grid > 0) CK(cudaMemset(p.d_smid, 0xff, p.cell.grid * sizeof(int)));
  CK(cudaDeviceSynchronize());
}

// "" when every destination byte holds its source's pattern, else what is wrong.
static std::string check_data(const Plan& p) {
  const size_t B = p.cell.bytes;
  std::vector<u8> want(B), got(p.dst.host ? 0 : B);
  size_t bad_copies = 0;
  std::string first;
  for (size_t i = 0; i < p.cell.n; ++i) {
    pattern(want.data(), p.src_slot[i], B);
    const u8* have = p.dst.ce + p.dst_slot[i] * B;
    if (!p.dst.host) {
      CK(cudaMemcpy(got.data(), have, B, cudaMemcpyDeviceToHost));
      have = got.data();
    }
    if (std::memcmp(have, want.data(), B) == 0) continue;
    if (bad_copies++ == 0) {
      size_t k = 0;
      while (have[k] == want[k]) ++k;
      char b[200];
      std::snprintf(b, sizeof b, "copy %zu (src slot %zu -> dst slot %zu): byte %zu is 0x%02x, expected 0x%02x", i,
                    p.src_slot[i], p.dst_slot[i], k, have[k], want[k]);
      first = b;
    }
  }
  if (bad_copies == 0) return "";
  return std::to_string(bad_copies) + " of " + std::to_string(p.cell.n) + " copies wrong; first: " + first;
}

// Distinct SM ids the validation call's blocks ran on.
static int sms_used(const Plan& p) {
  std::vector<int> ids(p.cell.grid);
  CK(cudaMemcpy(ids.data(), p.d_smid, ids.size() * sizeof(int), cudaMemcpyDeviceToHost));
  std::set<int> distinct;
  for (int id : ids)
    if (id >= 0) distinct.insert(id);
  return static_cast<int>(distinct.size());
}

// ---------------------------------------------------------------- output
static std::string json_str(const std::string& v) {
  std::string s = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (static_cast<u8>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      s += b;
    } else {
      s += c;
    }
  }
  return s + "\"";
}

static std::string json_num(double v, bool have) {
  if (!have) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

struct Context {
  int device = 0, driver = 0, runtime = 0;
  cudaDeviceProp prop{};
};

static void print_context(const Context& ctx, const Opts& o) {
  std::printf("{\"tool\":\"crossover_probe\",\"context\":{\"driver_version\":%d,\"runtime_version\":%d,"
              "\"runtime_headers\":%d,\"device\":%d,\"device_name\":%s,\"multiprocessors\":%d,\"pool_bytes\":%zu,"
              "\"seed\":%llu,\"iters\":%ld,\"warmup\":3,\"threads_per_block\":512,\"order\":\"%s\",\"event_before\":%s,\"cells\":%zu}}\n",
              ctx.driver, ctx.runtime, CUDART_VERSION, ctx.device, json_str(ctx.prop.name).c_str(),
              ctx.prop.multiProcessorCount, o.pool_bytes, static_cast<unsigned long long>(o.seed), o.iters,
              o.random_order ? "random" : "given", o.event_before ? "true" : "false", o.cells.size());
  std::fflush(stdout);
}

struct Result {
  std::vector<double> us;  // sorted; empty when not timed
  std::string error;
  int sms = -1;
};

static double nearest_rank(const std::vector<double>& sorted, double q) {
  const size_t k = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::min(sorted.size(), std::max<size_t>(k, 1)) - 1];
}

static void print_record(const Context& ctx, const Cell& c, const Result& r, long iters) {
  const bool timed = !r.us.empty(), sm = c.grid > 0;
  std::string s = "{\"tool\":\"crossover_probe\",\"dir\":\"" + c.dir + "\",\"mode\":\"" + c.mode + "\"";
  s += ",\"block_bytes\":" + std::to_string(c.bytes) + ",\"n\":" + std::to_string(c.n);
  s += ",\"p50_us\":" + json_num(timed ? nearest_rank(r.us, 0.5) : 0, timed);
  s += ",\"min_us\":" + json_num(timed ? r.us.front() : 0, timed);
  s += ",\"p95_us\":" + json_num(timed ? nearest_rank(r.us, 0.95) : 0, timed);
  s += ",\"iters\":" + std::to_string(iters) + ",\"validated\":" + (r.error.empty() ? "true" : "false");
  if (!r.error.empty()) s += ",\"error\":" + json_str(r.error);
  s += ",\"sms_used\":" + (sm && r.sms >= 0 ? std::to_string(r.sms) : std::string("null"));
  s += ",\"grid_blocks\":" + (sm ? std::to_string(c.grid) : std::string("null"));
  s += ",\"pid\":" + std::to_string(getpid()) + ",\"cpu\":" + std::to_string(sched_getcpu());
  s += ",\"device_name\":" + json_str(ctx.prop.name) + "}";
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------- running
static std::string batch_unavailable(const Context& ctx) {
#if CUDART_VERSION >= 12080
  if (ctx.driver < 12080)
    return "ce-batch (cudaMemcpyBatchAsync) needs a CUDA 12.8 driver; this one is " + std::to_string(ctx.driver);
  return "";
#else
  (void)ctx;
  return "ce-batch (cudaMemcpyBatchAsync) is not built in: CUDA headers " + std::to_string(CUDART_VERSION) + " < 12080";
#endif
}

static Result run_cell(const Context& ctx, const Cell& c, const Pools& pools, const Opts& o, cudaStream_t s) {
  Result r;
  if (c.mode == "ce-batch") r.error = batch_unavailable(ctx);
  if (!r.error.empty()) return r;
  Plan p = make_plan(c, pools, o.seed, o.event_before);
  prepare_data(p);
  issue(p, s, ctx.device);
  CK(cudaStreamSynchronize(s));
  r.error = check_data(p);
  if (c.grid > 0) r.sms = sms_used(p);
  if (r.error.empty()) {
    for (int w = 0; w < 3; ++w) timed_call(p, s, ctx.device);
    for (long i = 0; i < o.iters; ++i) r.us.push_back(timed_call(p, s, ctx.device));
    std::sort(r.us.begin(), r.us.end());
  }
  free_plan(p);
  return r;
}

static Context open_device(int device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "crossover_probe: error: no CUDA device (cudaGetDeviceCount: %s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    std::exit(1);
  }
  if (device >= count) bad("--device " + std::to_string(device) + ": there are " + std::to_string(count) + " devices");
  Context ctx;
  ctx.device = device;
  CK(cudaSetDevice(device));
  CK(cudaDriverGetVersion(&ctx.driver));
  CK(cudaRuntimeGetVersion(&ctx.runtime));
  CK(cudaGetDeviceProperties(&ctx.prop, device));
  return ctx;
}

int main(int argc, char** argv) {
  const Opts o = parse(argc, argv);
  const Context ctx = open_device(o.device);
  print_context(ctx, o);
  Pools pools = make_pools(o);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const Cell& c : o.cells) print_record(ctx, c, run_cell(ctx, c, pools, o, s), o.iters);
  CK(cudaStreamDestroy(s));
  CK(cudaFreeHost(pools.host));
  CK(cudaFree(pools.dev[0]));
  if (pools.dev[1]) CK(cudaFree(pools.dev[1]));
  return 0;
}
