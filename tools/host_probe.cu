// Probe: an independent reference loop for dmabench's host<->GPU numbers on one GPU. It shares no code
// with dmabench (vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build
// and the GPU layer, tests/check_vendor_includes.cmake); every test is the plainest CUDA-runtime form of a
// dmabench case:
//   h2d, d2h        contiguous `ce` copies: oneshot (issue, cudaStreamSynchronize, steady_clock around
//                   both) and pipelined (N copies back to back on one stream between two events).
//                   The 4 KiB and 64 KiB lines carry "lone_small": true (a lone small copy + sync).
//   h2d-bidir       one host->device and one device->host copy of the same size on two streams at once.
//   paged-h2d/-d2h  pages at seeded random slots of a host pool and of a device pool (`--pool-bytes`, default the
//                   pages alone), one operation moves all of them: mechanism "loop" = `ce` back to back, one
//                   cudaMemcpyAsync per block; "batch" = `ce-batch`, one cudaMemcpyBatchAsync; "kernel" = `sm`, one
//                   gather/scatter kernel over mapped host memory. loop and batch run on every `--kinds` pool (pinned:
//                   cudaHostAlloc Portable; mapped: also Mapped), kernel on mapped only. `--allocs` allocates the host
//                   pools in turn by each way listed (hostalloc: cudaHostAlloc; hostalloc-bind: the same under
//                   set_mempolicy(MPOL_BIND) to node 0, as dmabench places pinned pools; register, register-thp,
//                   register-nothp: mmap, madvise(MADV_HUGEPAGE / NOHUGEPAGE), touch, cudaHostRegister) and `--pools`
//                   repeats the whole list; each line names its "alloc", "round" and "kind", and how the pool lies in
//                   physical memory (/proc/self/pagemap, root only): "frame_runs" (runs of consecutive frames),
//                   "largest_run_pages", "huge_fraction" (pages in 2 MiB-aligned chunks on one aligned 2 MiB frame),
//                   "chosen_huge_fraction" (of the chosen slots), "mapping" and "anon_huge_kb" from /proc/self/smaps.
// Output: JSON Lines on stdout (a first {"test":"info"} line, with the process's calibration: "launch_sync_us" (an
// empty kernel + stream synchronize), "copy_4B_d2d_us", "copy_4B_h2d_us" (4-byte copies + synchronize), p50 of 200,
// and the "cpu" it ran on; then one line per case); progress and
// errors on stderr. Times in µs, bandwidth in GB/s (1e9 B/s). Percentiles are nearest-rank. Every
// destination is cleared before a case and checked against its source after it ("valid"; paged: every page); a failed
// check makes the exit status 1. Sources hold splitmix64 words with every byte's low bit set (non-zero).
// "iterations" is the number of operations between the two events of one back-to-back sample (`--paged-reps 0`: the
// paged tests take no back-to-back samples).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o host_probe tools/host_probe.cu
// Run:   ./host_probe [--device 0] [--tests h2d,d2h,h2d-bidir,paged-h2d,paged-d2h] [--sizes 4KiB,1GiB]
//        [--iters 20] [--reps 5] [--oneshot-iters 50] [--page-sizes 4KiB,512KiB] [--pages 4096,64]
//        [--paged-iters 30] [--paged-reps 5] [--pool-bytes 4GiB] [--pools 1] [--allocs hostalloc,...]
//        [--kinds pinned,mapped] [--mechanisms loop,batch,kernel] [--seed 1]
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime.h>

#if CUDART_VERSION < 12080
#error "host_probe needs CUDA >= 12.8 (cudaMemcpyBatchAsync)"
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
using u8 = unsigned char;

// ---------------------------------------------------------------- options
struct Opts {
  int device = 0;
  std::vector<size_t> sizes{4u << 10, 64u << 10, 1u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30};
  long iters = 20, reps = 5, oneshot_iters = 50, paged_iters = 30, paged_reps = 5, pools = 1;
  std::vector<long> pages{4096};
  size_t pool_bytes = 0;  // 0: a pool of exactly the pages
  std::vector<std::string> allocs{"hostalloc"}, kinds{"pinned", "mapped"}, mechs{"loop", "batch", "kernel"};
  std::vector<size_t> page_sizes{4u << 10, 16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10};
  uint64_t seed = 1;
  std::vector<std::string> tests{"h2d", "d2h", "h2d-bidir", "paged-h2d", "paged-d2h"};
  bool has(const char* t) const { return std::find(tests.begin(), tests.end(), t) != tests.end(); }
  bool mech(const char* m) const { return std::find(mechs.begin(), mechs.end(), m) != mechs.end(); }
};

[[noreturn]] static void usage_error(const std::string& msg) {
  std::fprintf(stderr, "host_probe: %s (see the header of tools/host_probe.cu)\n", msg.c_str());
  std::exit(2);
}
static bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtoull(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}
static long parse_long(const std::string& flag, const std::string& s, long lo, long hi) {
  uint64_t v = 0;
  if (!parse_u64(s, &v) || v < static_cast<uint64_t>(lo) || v > static_cast<uint64_t>(hi))
    usage_error(flag + ": '" + s + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<long>(v);
}
static std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t c; (c = s.find(',', at)) != std::string::npos; at = c + 1) out.push_back(s.substr(at, c - at));
  out.push_back(s.substr(at));
  return out;
}
// "4096", "4KiB", "16MiB", "1GiB" (and a "B" suffix), > 0 and a multiple of `align`.
static std::vector<size_t> parse_sizes(const std::string& flag, const std::string& s, size_t align) {
  std::vector<size_t> out;
  for (const std::string& item : split(s)) {
    size_t digits = 0;
    while (digits < item.size() && item[digits] >= '0' && item[digits] <= '9') ++digits;
    const std::string suffix = item.substr(digits);
    uint64_t v = 0, mul = 0;
    if (suffix.empty() || suffix == "B") mul = 1;
    if (suffix == "KiB") mul = 1ull << 10;
    if (suffix == "MiB") mul = 1ull << 20;
    if (suffix == "GiB") mul = 1ull << 30;
    if (!mul || !parse_u64(item.substr(0, digits), &v) || v == 0 || v > (1ull << 40) / mul || (v * mul) % align)
      usage_error(flag + ": '" + item + "' is not a size (e.g. 4096, 64KiB, 16MiB, 1GiB)" +
                  (align > 1 ? ", a multiple of " + std::to_string(align) + " bytes" : ""));
    out.push_back(static_cast<size_t>(v * mul));
  }
  return out;
}
static Opts parse(int argc, char** argv) {
  Opts o;
  static const char* known[] = {"h2d", "d2h", "h2d-bidir", "paged-h2d", "paged-d2h"};
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], val;
    if (flag == "-h" || flag == "--help") {
      std::fprintf(stderr, "usage: host_probe [--device N] [--tests LIST] [--sizes LIST] [--iters N] [--reps N]\n"
                           "  [--oneshot-iters N] [--page-sizes LIST] [--pages LIST] [--paged-iters N] [--seed N]\n"
                           "  [--pool-bytes SIZE] [--pools N] [--allocs LIST] [--kinds LIST] [--mechanisms LIST] [--paged-reps N]\n"
                           "  (see the header of tools/host_probe.cu)\n");
      std::exit(0);
    }
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      val = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
      val = argv[++i];
    } else if (flag.rfind("--", 0) == 0) {
      usage_error(flag + " needs a value");
    }
    if (flag == "--device") o.device = static_cast<int>(parse_long(flag, val, 0, 1023));
    else if (flag == "--sizes") o.sizes = parse_sizes(flag, val, 1);
    else if (flag == "--iters") o.iters = parse_long(flag, val, 1, 1000000);
    else if (flag == "--reps") o.reps = parse_long(flag, val, 1, 1000000);
    else if (flag == "--oneshot-iters") o.oneshot_iters = parse_long(flag, val, 1, 10000000);
    else if (flag == "--page-sizes") o.page_sizes = parse_sizes(flag, val, 16);
    else if (flag == "--pages") {
      o.pages.clear();
      for (const std::string& item : split(val)) o.pages.push_back(parse_long(flag, item, 1, 1 << 24));
    }
    else if (flag == "--pool-bytes") o.pool_bytes = parse_sizes(flag, val, 4096).front();
    else if (flag == "--pools") o.pools = parse_long(flag, val, 1, 1000);
    else if (flag == "--paged-reps") o.paged_reps = parse_long(flag, val, 0, 1000000);
    else if (flag == "--allocs" || flag == "--kinds" || flag == "--mechanisms") {
      static const std::vector<std::string> allocs{"hostalloc", "hostalloc-bind", "register", "register-thp", "register-nothp"},
          kinds{"pinned", "mapped"}, mechs{"loop", "batch", "kernel"};
      const auto& known_values = flag == "--allocs" ? allocs : flag == "--kinds" ? kinds : mechs;
      std::vector<std::string>& into = flag == "--allocs" ? o.allocs : flag == "--kinds" ? o.kinds : o.mechs;
      into = split(val);
      for (const std::string& v : into)
        if (std::find(known_values.begin(), known_values.end(), v) == known_values.end()) usage_error(flag + ": unknown value '" + v + "'");
    }
    else if (flag == "--paged-iters") o.paged_iters = parse_long(flag, val, 1, 1000000);
    else if (flag == "--seed") { if (!parse_u64(val, &o.seed)) usage_error(flag + ": '" + val + "' is not an unsigned integer"); }
    else if (flag == "--tests") {
      o.tests = split(val);
      for (const std::string& t : o.tests)
        if (std::find(std::begin(known), std::end(known), t) == std::end(known))
          usage_error(flag + ": unknown test '" + t + "' (h2d, d2h, h2d-bidir, paged-h2d, paged-d2h)");
    } else usage_error("unknown flag '" + flag + "'");
  }
  return o;
}

// ---------------------------------------------------------------- JSON, data, statistics
struct Line {
  std::string s = "{";
  Line& key(const char* k) { s += (s.size() > 1 ? ",\"" : "\""); s += k; s += "\":"; return *this; }
  Line& str(const char* k, const std::string& v) {
    key(k).s += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') { s += '\\'; s += c; }
      else if (static_cast<u8>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); s += b; }
      else s += c;
    }
    s += '"';
    return *this;
  }
  Line& num(const char* k, double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.6g", v);
    key(k).s += std::isfinite(v) ? b : "null";
    return *this;
  }
  Line& integer(const char* k, long long v) { key(k).s += std::to_string(v); return *this; }
  Line& boolean(const char* k, bool v) { key(k).s += v ? "true" : "false"; return *this; }
  Line& null(const char* k) { key(k).s += "null"; return *this; }
  void emit() { std::printf("%s}\n", s.c_str()); std::fflush(stdout); }
};

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static void fill(void* p, size_t n, uint64_t seed) {  // every byte non-zero: the low bit of each is set
  uint64_t x = seed;
  uint64_t* w = static_cast<uint64_t*>(p);
  for (size_t i = 0; i < n / 8; ++i) w[i] = splitmix64(x) | 0x0101010101010101ull;
  for (size_t i = n / 8 * 8; i < n; ++i) static_cast<u8*>(p)[i] = static_cast<u8>(splitmix64(x) | 1);
}
static std::vector<size_t> permutation(size_t n, uint64_t seed) {  // Fisher-Yates on splitmix64
  std::vector<size_t> p(n);
  std::iota(p.begin(), p.end(), size_t{0});
  uint64_t x = seed;
  for (size_t i = n - 1; i > 0; --i) std::swap(p[i], p[splitmix64(x) % (i + 1)]);
  return p;
}

struct Stats { double p50, min, p99; };
static Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) { return v[std::max<size_t>(1, static_cast<size_t>(std::ceil(q * v.size()))) - 1]; };
  return {rank(0.5), v.front(), rank(0.99)};
}

// Streams and events shared by every case: `a` is the timed stream, `b` the second one of h2d-bidir.
struct Ctx { cudaStream_t a, b; cudaEvent_t e0, e1, join; };

// `reps` samples of `n` operations between two events on c.a, per operation in µs. With `two`, stream b
// forks from a after the first event and joins a before the second.
template <class Issue> static std::vector<double> b2b(const Ctx& c, long n, long reps, bool two, Issue issue) {
  std::vector<double> per_op;
  for (long r = 0; r < reps; ++r) {
    CK(cudaEventRecord(c.e0, c.a));
    if (two) CK(cudaStreamWaitEvent(c.b, c.e0, 0));
    for (long i = 0; i < n; ++i) issue();
    if (two) {
      CK(cudaEventRecord(c.join, c.b));
      CK(cudaStreamWaitEvent(c.a, c.join, 0));
    }
    CK(cudaEventRecord(c.e1, c.a));
    CK(cudaEventSynchronize(c.e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, c.e0, c.e1));
    per_op.push_back(ms * 1e3 / n);
  }
  return per_op;
}
// `warm` untimed then `n` timed calls of issue_and_wait, host steady_clock around each, in µs.
template <class F> static std::vector<double> oneshot(long warm, long n, F issue_and_wait) {
  std::vector<double> us;
  for (long i = 0; i < warm + n; ++i) {
    const auto t0 = Clock::now();
    issue_and_wait();
    const auto t1 = Clock::now();
    if (i >= warm) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return us;
}

// ---------------------------------------------------------------- contiguous: h2d, d2h, h2d-bidir
struct Contig { u8 *ha, *hb, *d1, *d2; };  // ha: random source; hb: host destination / check; d1, d2: device

static bool contiguous(const Opts& o, const Ctx& c, const Contig& m, const std::string& test, size_t bytes) {
  const bool bidir = test == "h2d-bidir", up = test == "h2d";
  const long n = std::max<long>(2, std::min<long>(o.iters, static_cast<long>((8ull << 30) / bytes)));
  std::fprintf(stderr, "host_probe: %s %zu B\n", test.c_str(), bytes);
  if (up || bidir) CK(cudaMemset(m.d1, 0, bytes));
  if (!up) std::memset(m.hb, 0, bytes);
  if (test == "d2h") CK(cudaMemcpy(m.d1, m.ha, bytes, cudaMemcpyHostToDevice));
  if (bidir) CK(cudaMemcpy(m.d2, m.ha, bytes, cudaMemcpyHostToDevice));
  auto issue = [&] {
    if (up || bidir) CK(cudaMemcpyAsync(m.d1, m.ha, bytes, cudaMemcpyHostToDevice, c.a));
    if (test == "d2h") CK(cudaMemcpyAsync(m.hb, m.d1, bytes, cudaMemcpyDeviceToHost, c.a));
    if (bidir) CK(cudaMemcpyAsync(m.hb, m.d2, bytes, cudaMemcpyDeviceToHost, c.b));
  };
  auto issue_and_wait = [&] {
    issue();
    CK(cudaStreamSynchronize(c.a));
    if (bidir) CK(cudaStreamSynchronize(c.b));
  };
  issue_and_wait();  // warm-up of the back-to-back samples
  const Stats b = stats(b2b(c, n, o.reps, bidir, issue));
  const Stats s = stats(oneshot(5, o.oneshot_iters, issue_and_wait));
  bool ok = true;
  if (!up) ok = std::memcmp(m.hb, m.ha, bytes) == 0;  // d2h destination
  if (up || bidir) {
    CK(cudaMemcpy(m.hb, m.d1, bytes, cudaMemcpyDeviceToHost));
    ok = ok && std::memcmp(m.hb, m.ha, bytes) == 0;  // h2d destination
  }
  const double moved = bidir ? 2.0 * bytes : 1.0 * bytes;
  Line l;
  l.str("test", test).integer("bytes", bytes);
  if (bidir) l.integer("total_bytes", 2 * bytes);
  l.integer("iterations", n).integer("reps", o.reps);
  if (!bidir) l.boolean("lone_small", bytes == 4096 || bytes == 65536);
  l.num("b2b_per_op_us_median", b.p50).num("b2b_per_op_us_min", b.min).num("b2b_GBps", moved / (b.p50 * 1e3));
  l.integer("oneshot_iterations", o.oneshot_iters).num("oneshot_us_p50", s.p50).num("oneshot_us_min", s.min);
  l.num("oneshot_us_p99", s.p99).num("oneshot_GBps", moved / (s.p50 * 1e3)).boolean("valid", ok).emit();
  return ok;
}

// ---------------------------------------------------------------- paged: loop, batch, kernel
struct Page { void* dst; const void* src; size_t bytes; };

// Block p copies page p (grid-stride over pages) in 16-byte vectors, four loads in flight per thread.
__global__ void gather(const Page* __restrict__ table, int pages) {
  for (int p = blockIdx.x; p < pages; p += gridDim.x) {
    const uint4* __restrict__ src = static_cast<const uint4*>(table[p].src);
    uint4* __restrict__ dst = static_cast<uint4*>(table[p].dst);
    const size_t n = table[p].bytes / 16, step = blockDim.x;
    size_t j = threadIdx.x;
    for (; j + 3 * step < n; j += 4 * step) {
      const uint4 a = src[j], b = src[j + step], c = src[j + 2 * step], d = src[j + 3 * step];
      dst[j] = a;
      dst[j + step] = b;
      dst[j + 2 * step] = c;
      dst[j + 3 * step] = d;
    }
    for (; j < n; j += step) dst[j] = src[j];
  }
}

// The batch copy's attributes for host -> device (up) or device -> host copies of GPU `device`.
static cudaMemcpyAttributes batch_attributes(bool up, int device) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  attr.srcLocHint.type = up ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  attr.srcLocHint.id = up ? 0 : device;
  attr.dstLocHint.type = up ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  attr.dstLocHint.id = up ? device : 0;
  return attr;
}

// ---------------------------------------------------------------- host pools and their physical frames
// A host pool as the paged tests take it: `kind` pinned or mapped, allocated by `alloc`:
//   hostalloc       cudaHostAlloc (Portable; Mapped for mapped), as a program calls it
//   hostalloc-bind  the same under set_mempolicy(MPOL_BIND) to node 0, as dmabench places its pinned pools
//   register        mmap + memset + cudaHostRegister (Portable; Mapped for mapped), the kernel's default THP policy
//   register-thp    the same after madvise(MADV_HUGEPAGE); register-nothp after madvise(MADV_NOHUGEPAGE)
struct HostPool {
  u8* host = nullptr;  // the pool (2 MiB-aligned for the register variants)
  u8* dev = nullptr;   // its device address (mapped) or the host address
  size_t bytes = 0;
  void* map = nullptr;
  size_t map_len = 0;
  bool registered = false;
};
static HostPool alloc_host_pool(const std::string& alloc, const std::string& kind, size_t bytes) {
  HostPool h;
  h.bytes = bytes;
  const bool mapped = kind == "mapped";
  if (alloc == "hostalloc" || alloc == "hostalloc-bind") {
    unsigned long node0 = 1;
    if (alloc == "hostalloc-bind" && syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */, &node0, 64ul) != 0) {
      std::fprintf(stderr, "host_probe: set_mempolicy: %s\n", std::strerror(errno));
      std::exit(1);
    }
    CK(cudaHostAlloc(reinterpret_cast<void**>(&h.host), bytes, cudaHostAllocPortable | (mapped ? cudaHostAllocMapped : 0)));
    if (alloc == "hostalloc-bind") syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, nullptr, 0ul);
  } else {
    const size_t huge = 2u << 20;
    h.map_len = (bytes + huge - 1) / huge * huge + huge;
    h.map = mmap(nullptr, h.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h.map == MAP_FAILED) { std::fprintf(stderr, "host_probe: mmap: %s\n", std::strerror(errno)); std::exit(1); }
    h.host = reinterpret_cast<u8*>((reinterpret_cast<uintptr_t>(h.map) + huge - 1) / huge * huge);
    if (alloc == "register-thp") madvise(h.host, bytes, MADV_HUGEPAGE);
    if (alloc == "register-nothp") madvise(h.host, bytes, MADV_NOHUGEPAGE);
    std::memset(h.host, 0, bytes);
    CK(cudaHostRegister(h.host, bytes, cudaHostRegisterPortable | (mapped ? cudaHostRegisterMapped : 0)));
    h.registered = true;
  }
  h.dev = h.host;
  if (mapped) CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&h.dev), h.host, 0));
  return h;
}
static void free_host_pool(HostPool& h) {
  if (h.registered) {
    CK(cudaHostUnregister(h.host));
    munmap(h.map, h.map_len);
  } else if (h.host) {
    CK(cudaFreeHost(h.host));
  }
  h = HostPool{};
}

// How the pool lies in physical memory (/proc/self/pagemap, frame numbers need root) and, of the pages the
// chosen slots touch, the share that sit in 2 MiB-aligned physically contiguous chunks ("huge"), plus the
// mapping's name and AnonHugePages from /proc/self/smaps.
static void frames(Line& l, const u8* p, size_t bytes, const std::vector<size_t>& slots, size_t block) {
  const size_t ps = 4096, per_huge = 512, first = reinterpret_cast<uintptr_t>(p) / ps, n = (bytes + ps - 1) / ps;
  std::vector<uint64_t> pfn(n, 0);
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  bool readable = fd >= 0;
  for (size_t at = 0; readable && at < n; at += 65536) {
    const size_t k = std::min<size_t>(65536, n - at);
    readable = pread(fd, pfn.data() + at, k * 8, static_cast<off_t>((first + at) * 8)) == static_cast<ssize_t>(k * 8);
  }
  if (fd >= 0) close(fd);
  size_t runs = 0, run = 0, largest = 0, present = 0, nonzero = 0;
  for (size_t i = 0; readable && i < n; ++i) {
    const bool pr = pfn[i] >> 63;
    pfn[i] = pr ? (pfn[i] & ((1ull << 55) - 1)) : 0;
    present += pr;
    nonzero += pfn[i] != 0;
    run = (i && pr && pfn[i - 1] && pfn[i] == pfn[i - 1] + 1) ? run + 1 : (pr ? 1 : 0);
    runs += run == 1;
    largest = std::max(largest, run);
  }
  readable = readable && nonzero > 0;
  // 2 MiB chunk c (of the virtual range, aligned) is "huge" when its 512 pages lie on one aligned 2 MiB frame
  auto huge_chunk = [&](size_t page) {
    const size_t v = first + page, base = page - v % per_huge;
    if (base + per_huge > n || page < v % per_huge) return false;
    if (pfn[base] == 0 || pfn[base] % per_huge) return false;
    for (size_t j = 1; j < per_huge; ++j)
      if (pfn[base + j] != pfn[base] + j) return false;
    return true;
  };
  size_t huge_pages = 0;
  for (size_t c = 0; readable && c + per_huge <= n; c += per_huge)
    if ((first + c) % per_huge == 0 && huge_chunk(c)) huge_pages += per_huge;
  size_t chosen_huge = 0;
  for (size_t s : slots) chosen_huge += readable && huge_chunk(s * block / ps);
  std::string mapping, line;
  long anon_huge_kb = -1;
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char name[512] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %*s %*s %*s %*s %511[^\n]", &lo, &hi, name) >= 2 && line.find(':') > line.find(' ')) {
      if (inside) break;
      inside = reinterpret_cast<uintptr_t>(p) >= lo && reinterpret_cast<uintptr_t>(p) < hi;
      if (inside) mapping = name[0] ? name : "[anon]";
    } else if (inside) {
      long kb = 0;
      if (std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) anon_huge_kb = kb;
    }
  }
  l.str("mapping", mapping).integer("anon_huge_kb", anon_huge_kb).boolean("frames_readable", readable);
  if (!readable) return;
  l.integer("frame_runs", static_cast<long long>(runs)).integer("largest_run_pages", static_cast<long long>(largest));
  l.num("huge_fraction", static_cast<double>(huge_pages) / n).num("chosen_huge_fraction", slots.empty() ? 0.0 : static_cast<double>(chosen_huge) / slots.size());
  l.integer("present_pages", static_cast<long long>(present));
}

// ---------------------------------------------------------------- paged: loop, batch, kernel
// One pool round: for every allocation variant, the host pools (one per kind) and, for every page size and count,
// both directions, every kind and mechanism (loop and batch on either kind; kernel on mapped only), pages at
// seeded random slots of the pool (`--pool-bytes`, default the pages alone) on both sides, as dmabench's
// `blocks` layout with order random and a pool.
struct PagedCase {
  size_t block, n, pool;
  bool up;
  std::string kind, mech;
};
static bool paged_case(const Opts& o, const Ctx& c, const PagedCase& pc, const HostPool& h, u8* dpool, Page* table,
                       const std::string& alloc, long round, const std::vector<size_t>& slots_h) {
  const size_t n = pc.n, block = pc.block, slots_total = pc.pool / block;
  std::vector<size_t> slots_d = permutation(slots_total, o.seed ^ 0xd5a61266f0c9392cull ^ block);
  slots_d.resize(n);
  const bool kernel = pc.mech == "kernel", up = pc.up;
  std::vector<void*> dsts(n), srcs(n);
  std::vector<size_t> sizes(n, block);
  std::vector<Page> t(n);
  std::vector<u8> staging(block);
  for (size_t i = 0; i < n; ++i) {
    u8* d = dpool + slots_d[i] * block;
    u8* hp = (kernel ? h.dev : h.host) + slots_h[i] * block;
    dsts[i] = up ? d : hp;
    srcs[i] = up ? hp : d;
    t[i] = {dsts[i], srcs[i], block};
    // the source page holds seeded bytes, the destination page zeros
    fill(staging.data(), block, o.seed * 7 + i + block);
    if (up) { std::memcpy(h.host + slots_h[i] * block, staging.data(), block); CK(cudaMemset(d, 0, block)); }
    else { CK(cudaMemcpy(d, staging.data(), block, cudaMemcpyHostToDevice)); std::memset(h.host + slots_h[i] * block, 0, block); }
  }
  CK(cudaMemcpy(table, t.data(), n * sizeof(Page), cudaMemcpyHostToDevice));
  cudaMemcpyAttributes attr = batch_attributes(up, o.device);
  size_t attr_idx = 0;
  auto issue = [&] {
    if (pc.mech == "loop") {
      for (size_t i = 0; i < n; ++i)
        CK(cudaMemcpyAsync(dsts[i], srcs[i], block, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, c.a));
    } else if (pc.mech == "batch") {
#if CUDART_VERSION >= 13000
      CK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), n, &attr, &attr_idx, 1, c.a));
#else
      size_t fail_idx = 0;
      CK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), n, &attr, &attr_idx, 1, &fail_idx, c.a));
#endif
    } else {
      gather<<<static_cast<unsigned>(n), 256, 0, c.a>>>(table, static_cast<int>(n));
      CK(cudaGetLastError());
    }
  };
  const Stats s = stats(oneshot(3, o.paged_iters, [&] { issue(); CK(cudaStreamSynchronize(c.a)); }));
  Stats b{0, 0, 0};
  if (o.paged_reps > 0) b = stats(b2b(c, 10, o.paged_reps, false, issue));
  bool ok = true;  // every page's destination against the bytes its source was given
  for (size_t i = 0; i < n && ok; ++i) {
    fill(staging.data(), block, o.seed * 7 + i + block);
    std::vector<u8> got(block);
    if (up) CK(cudaMemcpy(got.data(), dpool + slots_d[i] * block, block, cudaMemcpyDeviceToHost));
    else std::memcpy(got.data(), h.host + slots_h[i] * block, block);
    ok = std::memcmp(got.data(), staging.data(), block) == 0;
  }
  Line l;
  l.str("test", up ? "paged-h2d" : "paged-d2h").str("mechanism", pc.mech).str("kind", pc.kind).str("alloc", alloc);
  l.integer("round", round).integer("bytes", static_cast<long long>(n * block)).integer("pool_bytes", static_cast<long long>(pc.pool));
  l.integer("block_bytes", static_cast<long long>(block)).integer("blocks", static_cast<long long>(n));
  l.integer("oneshot_iterations", o.paged_iters).num("oneshot_us_p50", s.p50).num("oneshot_us_min", s.min);
  l.num("oneshot_us_p99", s.p99).num("per_block_us", s.p50 / n).num("GBps", n * block / (s.p50 * 1e3));
  if (o.paged_reps > 0) {
    l.integer("iterations", 10).integer("reps", o.paged_reps);
    l.num("b2b_per_op_us_median", b.p50).num("b2b_per_op_us_min", b.min).num("b2b_GBps", n * block / (b.p50 * 1e3));
  }
  frames(l, h.host, h.bytes, slots_h, block);
  l.boolean("valid", ok).emit();
  return ok;
}

static bool paged(const Opts& o, const Ctx& c) {
  size_t most = 0;
  for (size_t block : o.page_sizes)
    for (long n : o.pages) most = std::max(most, o.pool_bytes ? o.pool_bytes : block * n);
  for (size_t block : o.page_sizes)
    for (long n : o.pages)
      if (o.pool_bytes && (o.pool_bytes % block || o.pool_bytes / block < static_cast<size_t>(n)))
        usage_error("--pool-bytes: " + std::to_string(o.pool_bytes) + " is not a multiple of every page size holding every page count");
  u8* dpool = nullptr;
  Page* table = nullptr;
  long most_pages = *std::max_element(o.pages.begin(), o.pages.end());
  CK(cudaMalloc(&dpool, most)); CK(cudaMalloc(&table, most_pages * sizeof(Page)));
  bool all_ok = true;
  for (long round = 0; round < o.pools; ++round)
    for (const std::string& alloc : o.allocs) {
      std::vector<HostPool> pools;
      for (const std::string& kind : o.kinds) {
        const auto t0 = Clock::now();
        pools.push_back(alloc_host_pool(alloc, kind, most));
        std::fprintf(stderr, "host_probe: %s %s pool of %zu B in %.2f s\n", alloc.c_str(), kind.c_str(), most,
                     std::chrono::duration<double>(Clock::now() - t0).count());
      }
      for (size_t block : o.page_sizes)
        for (long n : o.pages) {
          const size_t pool = o.pool_bytes ? o.pool_bytes : block * n;
          std::vector<size_t> slots_h = permutation(pool / block, o.seed ^ 0x2b7e151628aed2a6ull ^ block);
          slots_h.resize(n);
          for (const char* test : {"paged-h2d", "paged-d2h"}) {
            if (!o.has(test)) continue;
            for (size_t k = 0; k < o.kinds.size(); ++k)
              for (const char* mech : {"loop", "batch", "kernel"}) {
                if (std::string(mech) == "kernel" && o.kinds[k] != "mapped") continue;
                if (!o.mech(mech)) continue;
                std::fprintf(stderr, "host_probe: %s %s %s %ld x %zu B (%s, round %ld)\n", test, o.kinds[k].c_str(), mech, n, block, alloc.c_str(), round);
                all_ok = paged_case(o, c, {block, static_cast<size_t>(n), pool, test[6] == 'h', o.kinds[k], mech},
                                    pools[k], dpool, table, alloc, round, slots_h) && all_ok;
              }
          }
        }
      for (HostPool& h : pools) free_host_pool(h);
    }
  CK(cudaFree(table)); CK(cudaFree(dpool));
  return all_ok;
}

// ---------------------------------------------------------------- info
static bool read_line(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f || !std::getline(f, *out)) return false;
  while (!out->empty() && (out->back() == ' ' || out->back() == '\r')) out->pop_back();
  return !out->empty();
}

__global__ void nothing() {}

// What one command costs this process: an empty kernel and a 4-byte copy, each waited for (p50 of 200 after 10),
// and the CPU this thread ran on.
static void calibration(const Opts& o, Line& l) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  u8 *d = nullptr, *h = nullptr;
  CK(cudaMalloc(&d, 256)); CK(cudaMallocHost(&h, 4096));
  auto time = [&](auto op) {
    for (int i = 0; i < 10; ++i) { op(); CK(cudaStreamSynchronize(s)); }
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      op();
      CK(cudaStreamSynchronize(s));
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return stats(us).p50;
  };
  l.num("launch_sync_us", time([&] { nothing<<<1, 1, 0, s>>>(); CK(cudaGetLastError()); }));
  l.num("copy_4B_d2d_us", time([&] { CK(cudaMemcpyAsync(d + 128, d, 4, cudaMemcpyDeviceToDevice, s)); }));
  l.num("copy_4B_h2d_us", time([&] { CK(cudaMemcpyAsync(d + 64, h, 4, cudaMemcpyHostToDevice, s)); }));
  l.integer("cpu", sched_getcpu());
  CK(cudaFree(d)); CK(cudaFreeHost(h)); CK(cudaStreamDestroy(s));
  (void)o;
}

static void info(const Opts& o) {
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, o.device));
  char bus[64] = {};
  CK(cudaDeviceGetPCIBusId(bus, sizeof bus, o.device));
  int rt = 0, drv = 0;
  CK(cudaRuntimeGetVersion(&rt));
  CK(cudaDriverGetVersion(&drv));
  std::string id = bus;  // sysfs: lower case, a 4-digit domain
  for (char& ch : id) ch = static_cast<char>(std::tolower(static_cast<u8>(ch)));
  const size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  const std::string dir = "/sys/bus/pci/devices/" + id + "/";
  Line l;
  l.str("test", "info").str("device_name", p.name).integer("device", o.device).str("pci_bus_id", bus);
  l.integer("cuda_runtime_version", rt).integer("cuda_driver_version", drv);
  l.integer("async_engine_count", p.asyncEngineCount).integer("sm_count", p.multiProcessorCount);
  std::string v;
  char* end = nullptr;
  const long numa = read_line(dir + "numa_node", &v) ? std::strtol(v.c_str(), &end, 10) : 0;
  if (end && end != v.c_str() && *end == '\0') l.integer("numa_node", numa);
  else l.null("numa_node");
  if (read_line(dir + "current_link_speed", &v)) {
    l.str("pcie_link_speed", v);
    const double gts = std::strtod(v.c_str(), nullptr), speeds[] = {2.5, 5, 8, 16, 32, 64};  // GT/s of gen 1..6
    int gen = 0;
    for (int i = 0; i < 6; ++i) gen = std::fabs(gts - speeds[i]) < 0.1 ? i + 1 : gen;
    gen ? l.integer("pcie_gen", gen) : l.null("pcie_gen");
  } else {
    l.null("pcie_link_speed").null("pcie_gen");
  }
  if (read_line(dir + "current_link_width", &v)) l.str("pcie_link_width", v);
  else l.null("pcie_link_width");
  l.integer("pages", o.pages.front()).integer("seed", static_cast<long long>(o.seed)).integer("pid", getpid());
  calibration(o, l);
  l.emit();
}

int main(int argc, char** argv) {
  const Opts o = parse(argc, argv);
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (o.device >= count) usage_error("--device: " + std::to_string(o.device) + " is not below the device count " + std::to_string(count));
  CK(cudaSetDevice(o.device));
  info(o);
  Ctx c{};
  CK(cudaStreamCreateWithFlags(&c.a, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&c.b, cudaStreamNonBlocking));
  CK(cudaEventCreate(&c.e0)); CK(cudaEventCreate(&c.e1)); CK(cudaEventCreateWithFlags(&c.join, cudaEventDisableTiming));
  bool ok = true;
  const bool contig = o.has("h2d") || o.has("d2h") || o.has("h2d-bidir");
  if (contig) {
    const size_t max = *std::max_element(o.sizes.begin(), o.sizes.end());
    Contig m{};
    CK(cudaMallocHost(&m.ha, max)); CK(cudaMallocHost(&m.hb, max)); CK(cudaMalloc(&m.d1, max));
    if (o.has("h2d-bidir")) CK(cudaMalloc(&m.d2, max));
    fill(m.ha, max, o.seed);
    for (const char* test : {"h2d", "d2h", "h2d-bidir"})
      if (o.has(test))
        for (size_t bytes : o.sizes) ok = contiguous(o, c, m, test, bytes) && ok;
    if (m.d2) CK(cudaFree(m.d2));
    CK(cudaFree(m.d1)); CK(cudaFreeHost(m.hb)); CK(cudaFreeHost(m.ha));
  }
  if (o.has("paged-h2d") || o.has("paged-d2h")) ok = paged(o, c) && ok;
  CK(cudaEventDestroy(c.join)); CK(cudaEventDestroy(c.e1)); CK(cudaEventDestroy(c.e0));
  CK(cudaStreamDestroy(c.b)); CK(cudaStreamDestroy(c.a));
  if (!ok) std::fprintf(stderr, "host_probe: a destination did not match its source\n");
  return ok ? 0 : 1;
}
