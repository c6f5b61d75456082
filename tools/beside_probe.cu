// Probe: an independent reference loop for dmabench's "transfer beside transfer" measurement on one GPU
// (device 0). It shares no code with dmabench. A foreground copy (one cudaMemcpyAsync of --fg-bytes on its
// own non-blocking stream) is timed host-side as dmabench's oneshot does: steady_clock, cudaMemcpyAsync,
// cudaStreamSynchronize, steady_clock; 50 warm-up ops, then --iters samples. Meanwhile a background host
// thread loops 4 cudaMemcpyAsync of --bg-bytes on another non-blocking stream then cudaStreamSynchronize,
// until told to stop. The foreground samples start after the background's first batch has completed, and
// the background stops after the last sample; its GB/s counts the batches after the first, from the end
// of the first batch to the end of the last. Background alone runs for --seconds after its first batch.
// Scenarios: background alone (h2d, d2h); foreground h2d and d2h, each alone, beside an h2d background and
// beside a d2h background. Buffers: pinned host (cudaHostAlloc) and device (cudaMalloc), separate for the
// foreground and the background; sources hold non-zero pseudo-random bytes (splitmix64, low bit set).
// Destinations are cleared before each scenario and compared with their sources after it ("validated").
// Output: JSON Lines on stdout. First {"device", "pcie", "pci_bus_id", "fg_bytes", "bg_bytes", "iters",
// "seconds"}; then per background alone {"fg": "none", "bg", "bg_alone_GBps", "bg_seconds", "validated"};
// then per scenario {"fg", "bg": "none"|"h2d"|"d2h", "fg_p50_us", "fg_p99_us", "fg_mean_us", "fg_min_us",
// "fg_samples", "bg_GBps" (null without a background), "bg_alone_GBps" (the background-alone figure of
// that direction; null without a background), "validated"}. Percentiles are nearest-rank; GB/s is 1e9 B/s.
// Exit: 0; 1 on a CUDA error (file:line, call, error string on stderr) or a mismatch; 2 on bad options.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o beside_probe tools/beside_probe.cu
// Run:   ./beside_probe [--fg-bytes 64KiB] [--bg-bytes 256MiB] [--iters 2000] [--seconds 1]
// vendor-header exception: a standalone probe built by hand with nvcc, outside the CMake build and the
// GPU layer (tests/check_vendor_includes.cmake).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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
static double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// ---------------------------------------------------------------- options
struct Opts { size_t fg_bytes = 64u << 10, bg_bytes = 256u << 20; long iters = 2000; double seconds = 1.0; };

[[noreturn]] static void bad(const std::string& msg) {
  std::fprintf(stderr, "beside_probe: %s (usage: beside_probe [--fg-bytes N] [--bg-bytes N] [--iters N] [--seconds S])\n",
               msg.c_str());
  std::exit(2);
}
// "65536", "64KiB", "256MiB", "1GiB": > 0 and at most 64 GiB.
static size_t parse_bytes(const std::string& flag, const std::string& s) {
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<u8>(s[digits]))) ++digits;
  const std::string suf = s.substr(digits);
  const unsigned long long mul = suf.empty() || suf == "B" ? 1 : suf == "KiB" ? 1ull << 10 : suf == "MiB" ? 1ull << 20
                                 : suf == "GiB" ? 1ull << 30 : 0;
  const unsigned long long v = digits && digits <= 12 ? std::strtoull(s.substr(0, digits).c_str(), nullptr, 10) : 0;
  if (!mul || v == 0 || v > (64ull << 30) / mul) bad(flag + ": '" + s + "' is not a byte count in [1, 64GiB] (e.g. 65536, 64KiB, 256MiB)");
  return static_cast<size_t>(v * mul);
}
static Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) bad(flag == "--fg-bytes" || flag == "--bg-bytes" || flag == "--iters" || flag == "--seconds"
                               ? flag + " needs a value" : "unknown option '" + flag + "'");
    const std::string val = argv[++i];
    char* end = nullptr;
    if (flag == "--fg-bytes") o.fg_bytes = parse_bytes(flag, val);
    else if (flag == "--bg-bytes") o.bg_bytes = parse_bytes(flag, val);
    else if (flag == "--iters") {
      const long v = std::strtol(val.c_str(), &end, 10);
      if (val.empty() || *end || v < 1 || v > 10000000) bad("--iters: '" + val + "' is not an integer in [1, 10000000]");
      o.iters = v;
    } else if (flag == "--seconds") {
      const double v = std::strtod(val.c_str(), &end);
      if (val.empty() || *end || !(v >= 0.01 && v <= 600)) bad("--seconds: '" + val + "' is not a number in [0.01, 600]");
      o.seconds = v;
    } else bad("unknown option '" + flag + "'");
  }
  return o;
}

// ---------------------------------------------------------------- data, buffers, JSON
static void fill(u8* p, size_t n, uint64_t x) {  // splitmix64 bytes, each with its low bit set (non-zero)
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z = (z ^ (z >> 31)) | 0x0101010101010101ull;
    std::memcpy(p + i, &z, std::min<size_t>(8, n - i));
  }
}

// One direction's worth of memory: pinned source, device buffer, pinned destination (and check buffer).
struct Bufs {
  size_t bytes;
  u8 *src = nullptr, *dev = nullptr, *dst = nullptr;
  Bufs(size_t n, uint64_t seed) : bytes(n) {
    CK(cudaHostAlloc(&src, n, cudaHostAllocDefault));
    CK(cudaHostAlloc(&dst, n, cudaHostAllocDefault));
    CK(cudaMalloc(&dev, n));
    fill(src, n, seed);
  }
  ~Bufs() { CK(cudaFree(dev)); CK(cudaFreeHost(dst)); CK(cudaFreeHost(src)); }
  Bufs(const Bufs&) = delete;
  Bufs& operator=(const Bufs&) = delete;
  // Clear the destination of `h2d` (device) or d2h (host); a d2h source on the device gets the host source.
  void prepare(bool h2d) {
    if (h2d) CK(cudaMemset(dev, 0, bytes));
    else { CK(cudaMemcpy(dev, src, bytes, cudaMemcpyHostToDevice)); std::memset(dst, 0, bytes); }
  }
  void issue(bool h2d, cudaStream_t s) {
    CK(h2d ? cudaMemcpyAsync(dev, src, bytes, cudaMemcpyHostToDevice, s) : cudaMemcpyAsync(dst, dev, bytes, cudaMemcpyDeviceToHost, s));
  }
  bool valid(bool h2d) {  // an h2d destination is read back into dst
    if (h2d) CK(cudaMemcpy(dst, dev, bytes, cudaMemcpyDeviceToHost));
    return std::memcmp(dst, src, bytes) == 0;
  }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { CK(cudaStreamDestroy(s)); }
};

static std::string json_str(const std::string& v) {
  std::string s = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') s += '\\';
    if (static_cast<u8>(c) >= 0x20) s += c;
  }
  return s + "\"";
}
static std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return std::isfinite(v) ? b : "null";
}
static const char* dir(bool h2d) { return h2d ? "\"h2d\"" : "\"d2h\""; }

// ---------------------------------------------------------------- background
// Started by the constructor, stopped by stop() (or the destructor). GB/s over batches 2..N.
class Background {
 public:
  Background(Bufs& b, bool h2d, cudaStream_t s) : th_([this, &b, h2d, s] { loop(b, h2d, s); }) {
    while (batches_.load() < 1) std::this_thread::yield();  // the first batch has completed
  }
  ~Background() { stop(); }
  double stop() {  // GB/s after the first batch
    if (th_.joinable()) {
      stop_.store(true);
      th_.join();
    }
    return gbps_;
  }

 private:
  void loop(Bufs& b, bool h2d, cudaStream_t s) {
    CK(cudaSetDevice(0));  // the current device is per thread
    Clock::time_point first{};
    double bytes = 0;
    for (long n = 1;; ++n) {
      for (int i = 0; i < 4; ++i) b.issue(h2d, s);
      CK(cudaStreamSynchronize(s));
      if (n == 1) first = Clock::now();
      else bytes += 4.0 * b.bytes;
      batches_.store(n);
      if (n > 1 && stop_.load()) {
        gbps_ = bytes / secs(first, Clock::now()) / 1e9;
        return;
      }
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<long> batches_{0};
  double gbps_ = NAN;
  std::thread th_;  // last: starts after the members above exist
};

// ---------------------------------------------------------------- scenarios
static double bg_alone(const Opts& o, Bufs& bg, bool h2d, cudaStream_t s, bool* ok_all) {
  std::fprintf(stderr, "beside_probe: background %s alone, %g s\n", h2d ? "h2d" : "d2h", o.seconds);
  bg.prepare(h2d);
  double gbps;
  {
    Background run(bg, h2d, s);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    gbps = run.stop();
  }
  const bool ok = bg.valid(h2d);
  std::printf("{\"fg\":\"none\",\"bg\":%s,\"bg_bytes\":%zu,\"bg_alone_GBps\":%s,\"bg_seconds\":%s,\"validated\":%s}\n",
              dir(h2d), bg.bytes, num(gbps).c_str(), num(o.seconds).c_str(), ok ? "true" : "false");
  std::fflush(stdout);
  *ok_all = *ok_all && ok;
  return gbps;
}

// bg_mode: 0 none, 1 h2d, 2 d2h. alone[]: bg-alone GB/s of h2d, d2h.
static bool scenario(const Opts& o, Bufs& fg, Bufs& bg, bool fg_h2d, int bg_mode, const double alone[2],
                     cudaStream_t fs, cudaStream_t bs) {
  const bool bg_h2d = bg_mode == 1;
  std::fprintf(stderr, "beside_probe: fg %s, bg %s\n", fg_h2d ? "h2d" : "d2h", bg_mode ? (bg_h2d ? "h2d" : "d2h") : "none");
  fg.prepare(fg_h2d);
  if (bg_mode) bg.prepare(bg_h2d);
  std::vector<double> us;
  us.reserve(o.iters);
  double bg_gbps = NAN;
  {
    std::optional<Background> run;
    if (bg_mode) run.emplace(bg, bg_h2d, bs);  // returns after its first batch
    for (long i = 0; i < 50 + o.iters; ++i) {
      const auto t0 = Clock::now();
      fg.issue(fg_h2d, fs);
      CK(cudaStreamSynchronize(fs));
      const auto t1 = Clock::now();
      if (i >= 50) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    if (run) bg_gbps = run->stop();
  }
  const bool ok = fg.valid(fg_h2d) && (!bg_mode || bg.valid(bg_h2d));
  double mean = 0;
  for (double v : us) mean += v / us.size();
  std::sort(us.begin(), us.end());
  auto rank = [&](double q) { return us[std::max<size_t>(1, static_cast<size_t>(std::ceil(q * us.size()))) - 1]; };
  std::printf("{\"fg\":%s,\"bg\":%s,\"fg_bytes\":%zu,\"bg_bytes\":%zu,\"fg_p50_us\":%s,\"fg_p99_us\":%s,\"fg_mean_us\":%s,"
              "\"fg_min_us\":%s,\"fg_samples\":%zu,\"bg_GBps\":%s,\"bg_alone_GBps\":%s,\"validated\":%s}\n",
              dir(fg_h2d), bg_mode ? dir(bg_h2d) : "\"none\"", fg.bytes, bg.bytes, num(rank(0.5)).c_str(),
              num(rank(0.99)).c_str(), num(mean).c_str(), num(us.front()).c_str(), us.size(), num(bg_gbps).c_str(),
              num(bg_mode ? alone[bg_h2d ? 0 : 1] : NAN).c_str(), ok ? "true" : "false");
  std::fflush(stdout);
  return ok;
}

static std::string pcie(const char* bus) {  // "<speed> x<width>" from sysfs, or "" when unreadable
  std::string id = bus, speed, width;  // sysfs: lower case, a 4-digit domain
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<u8>(c)));
  const size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  std::ifstream fs("/sys/bus/pci/devices/" + id + "/current_link_speed"), fw("/sys/bus/pci/devices/" + id + "/current_link_width");
  if (!std::getline(fs, speed) || !std::getline(fw, width)) return "";
  return speed + " x" + width;
}

int main(int argc, char** argv) {
  const Opts o = parse(argc, argv);
  CK(cudaSetDevice(0));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  char bus[64] = {};
  CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  const std::string link = pcie(bus);
  std::printf("{\"device\":%s,\"pcie\":%s,\"pci_bus_id\":%s,\"fg_bytes\":%zu,\"bg_bytes\":%zu,\"iters\":%ld,\"seconds\":%s}\n",
              json_str(p.name).c_str(), link.empty() ? "null" : json_str(link).c_str(), json_str(bus).c_str(), o.fg_bytes,
              o.bg_bytes, o.iters, num(o.seconds).c_str());
  std::fflush(stdout);
  bool ok = true;
  {
    Bufs fg(o.fg_bytes, 1), bg(o.bg_bytes, 2);
    Stream fs, bs;
    const double alone[2] = {bg_alone(o, bg, true, bs.s, &ok), bg_alone(o, bg, false, bs.s, &ok)};
    for (bool fg_h2d : {true, false})
      for (int bg_mode : {0, 1, 2}) ok = scenario(o, fg, bg, fg_h2d, bg_mode, alone, fs.s, bs.s) && ok;
  }
  if (!ok) std::fprintf(stderr, "beside_probe: a destination did not match its source\n");
  return ok ? 0 : 1;
}
