// Probe: an independent reference loop for dmabench's host<->GPU numbers on one GPU. It shares no code
// with dmabench; every test is the plainest CUDA-runtime form of a dmabench case:
//   h2d, d2h        contiguous `ce` copies: oneshot (issue, cudaStreamSynchronize, steady_clock around
//                   both) and pipelined (N copies back to back on one stream between two events).
//                   The 4 KiB and 64 KiB lines carry "lone_small": true (a lone small copy + sync).
//   h2d-bidir       one host->device and one device->host copy of the same size on two streams at once.
//   paged-h2d/-d2h  pages at seeded random slots of a host pool and of a device pool, one operation
//                   moves all of them: mechanism "loop" = `ce` back to back, one cudaMemcpyAsync per
//                   block; "batch" = `ce-batch`, one cudaMemcpyBatchAsync; "kernel" = `sm`, one
//                   gather/scatter kernel over mapped host memory (cudaHostAllocMapped).
// Output: JSON Lines on stdout (a first {"test":"info"} line, then one line per case); progress and
// errors on stderr. Times in µs, bandwidth in GB/s (1e9 B/s). Percentiles are nearest-rank. Every
// destination is cleared before a case and checked against its source after it ("valid"); a failed
// check makes the exit status 1. Sources hold splitmix64 words with every byte's low bit set (non-zero).
// "iterations" is the number of operations between the two events of one back-to-back sample.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o host_probe tools/host_probe.cu
// Run:   ./host_probe [--device 0] [--tests h2d,d2h,h2d-bidir,paged-h2d,paged-d2h] [--sizes 4KiB,1GiB]
//        [--iters 20] [--reps 5] [--oneshot-iters 50] [--page-sizes 4KiB,512KiB] [--pages 4096]
//        [--paged-iters 30] [--seed 1]
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
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
  long iters = 20, reps = 5, oneshot_iters = 50, pages = 4096, paged_iters = 30;
  std::vector<size_t> page_sizes{4u << 10, 16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10};
  uint64_t seed = 1;
  std::vector<std::string> tests{"h2d", "d2h", "h2d-bidir", "paged-h2d", "paged-d2h"};
  bool has(const char* t) const { return std::find(tests.begin(), tests.end(), t) != tests.end(); }
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
                           "  [--oneshot-iters N] [--page-sizes LIST] [--pages N] [--paged-iters N] [--seed N]\n"
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
    else if (flag == "--pages") o.pages = parse_long(flag, val, 1, 1 << 24);
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

// Page i: destination slot ds[i] of dpool, source slot ss[i] of spool; does every page match?
static bool pages_match(const u8* dpool, const std::vector<size_t>& ds, const u8* spool, const std::vector<size_t>& ss,
                        size_t block) {
  for (size_t i = 0; i < ds.size(); ++i)
    if (std::memcmp(dpool + ds[i] * block, spool + ss[i] * block, block) != 0) return false;
  return true;
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

static bool paged(const Opts& o, const Ctx& c, size_t block) {
  const size_t n = static_cast<size_t>(o.pages), pool = n * block;
  const std::vector<size_t> perm_d = permutation(n, o.seed ^ 0xd5a61266f0c9392cull);
  const std::vector<size_t> perm_h = permutation(n, o.seed ^ 0x2b7e151628aed2a6ull);
  u8 *dpool, *hpool, *mpool, *mdev, *chk;  // device pool; pinned, mapped (and its device address), check pools
  CK(cudaMalloc(&dpool, pool)); CK(cudaMallocHost(&hpool, pool)); CK(cudaHostAlloc(&mpool, pool, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mdev), mpool, 0));
  Page* table;
  CK(cudaMallocHost(&chk, pool)); CK(cudaMalloc(&table, n * sizeof(Page)));
  bool all_ok = true;
  for (const char* test : {"paged-h2d", "paged-d2h"}) {
    if (!o.has(test)) continue;
    const bool up = test[6] == 'h';
    if (up) {  // source: the host pools (same bytes in both)
      fill(hpool, pool, o.seed * 3 + block);
      std::memcpy(mpool, hpool, pool);
    } else {  // source: the device pool, its bytes kept in chk
      fill(chk, pool, o.seed * 5 + block);
      CK(cudaMemcpy(dpool, chk, pool, cudaMemcpyHostToDevice));
    }
    for (const char* mech : {"loop", "batch", "kernel"}) {
      std::fprintf(stderr, "host_probe: %s %s %zu x %zu B\n", test, mech, n, block);
      const bool kernel = mech[0] == 'k';
      u8* host = kernel ? mdev : hpool;  // the host pool's address as the copy sees it
      std::vector<void*> dsts(n), srcs(n);
      std::vector<size_t> sizes(n, block);
      std::vector<Page> t(n);
      for (size_t i = 0; i < n; ++i) {
        u8* d = dpool + perm_d[i] * block;
        u8* h = host + perm_h[i] * block;
        dsts[i] = up ? d : h;
        srcs[i] = up ? h : d;
        t[i] = {dsts[i], srcs[i], block};
      }
      CK(cudaMemcpy(table, t.data(), n * sizeof(Page), cudaMemcpyHostToDevice));
      if (up) CK(cudaMemset(dpool, 0, pool));
      else std::memset(kernel ? mpool : hpool, 0, pool);
      cudaMemcpyAttributes attr = batch_attributes(up, o.device);
      size_t attr_idx = 0;
      auto issue = [&] {
        if (mech[0] == 'l') {
          for (size_t i = 0; i < n; ++i)
            CK(cudaMemcpyAsync(dsts[i], srcs[i], block, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, c.a));
        } else if (mech[0] == 'b') {
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
      const Stats b = stats(b2b(c, 10, o.reps, false, issue));
      bool ok;
      if (up) {
        CK(cudaMemcpy(chk, dpool, pool, cudaMemcpyDeviceToHost));
        ok = pages_match(chk, perm_d, hpool, perm_h, block);
      } else {
        ok = pages_match(kernel ? mpool : hpool, perm_h, chk, perm_d, block);
      }
      all_ok = all_ok && ok;
      Line l;
      l.str("test", test).str("mechanism", mech).integer("bytes", pool).integer("block_bytes", block);
      l.integer("blocks", n).integer("iterations", 10).integer("reps", o.reps);
      l.integer("oneshot_iterations", o.paged_iters).num("oneshot_us_p50", s.p50).num("oneshot_us_min", s.min);
      l.num("oneshot_us_p99", s.p99).num("per_block_us", s.p50 / n).num("GBps", pool / (s.p50 * 1e3));
      l.num("b2b_per_op_us_median", b.p50).num("b2b_per_op_us_min", b.min).num("b2b_GBps", pool / (b.p50 * 1e3));
      l.boolean("valid", ok).emit();
    }
  }
  CK(cudaFree(table)); CK(cudaFreeHost(chk)); CK(cudaFreeHost(mpool)); CK(cudaFreeHost(hpool)); CK(cudaFree(dpool));
  return all_ok;
}

// ---------------------------------------------------------------- info
static bool read_line(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f || !std::getline(f, *out)) return false;
  while (!out->empty() && (out->back() == ' ' || out->back() == '\r')) out->pop_back();
  return !out->empty();
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
  l.integer("pages", o.pages).integer("seed", static_cast<long long>(o.seed)).emit();
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
  if (o.has("paged-h2d") || o.has("paged-d2h"))
    for (size_t block : o.page_sizes) ok = paged(o, c, block) && ok;
  CK(cudaEventDestroy(c.join)); CK(cudaEventDestroy(c.e1)); CK(cudaEventDestroy(c.e0));
  CK(cudaStreamDestroy(c.b)); CK(cudaStreamDestroy(c.a));
  if (!ok) std::fprintf(stderr, "host_probe: a destination did not match its source\n");
  return ok ? 0 : 1;
}
