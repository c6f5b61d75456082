// Probe: what the CPU does inside the runtime's copy calls (issue 54: h2d ce-batch spends 2-7x the probe's CPU time
// per descriptor inside cudaMemcpyBatchAsync, growing with the bytes). An LD_PRELOAD library that wraps
// cudaMemcpyBatchAsync and cudaMemcpyAsync and, while the calling thread is inside one of them, counts what libc sees
// of it: ioctl calls (by request code), memcpy/memmove calls of 256 bytes or more and their bytes, and the thread's
// page faults and context switches (getrusage(RUSAGE_THREAD) before and after). A staging copy of the source shows as
// memcpy bytes; pinning or looking up pages in the kernel as ioctls or faults. At exit one JSON line per wrapped
// call on stderr: {"call_meter": NAME, "calls", "entries" (batch: the copies carried), "in_call_us", "ioctls",
// "ioctl_codes" {hex: count}, "copies", "copy_bytes", "minflt", "majflt", "nvcsw", "nivcsw"}.
// Works on a program that reaches the runtime through the shared libcudart (dmabench; nvcc -cudart shared for a
// probe); calls the driver makes on other threads are not counted. Standalone, not in the CMake build:
//   g++ -O2 -shared -fPIC -fno-builtin -fno-tree-loop-distribute-patterns -o call_meter.so tools/call_meter.cpp -ldl
//   LD_PRELOAD=$PWD/call_meter.so build/dmabench ...
// Argument forwarding as tools/slowdown_shim.cpp: twelve machine words handed on untouched (x86-64 System V).
#include <dlfcn.h>
#include <sys/resource.h>
#include <time.h>

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

using Word = std::uintptr_t;
using Call = int (*)(Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word, Word);
using Copy = void* (*)(void*, const void*, std::size_t);
using Ioctl = int (*)(int, unsigned long, void*);

constexpr int kCodes = 32;
struct Meter {
  const char* name;
  std::atomic<long> calls{0}, entries{0}, ns{0}, ioctls{0}, copies{0}, copy_bytes{0};
  std::atomic<long> minflt{0}, majflt{0}, nvcsw{0}, nivcsw{0};
  std::atomic<unsigned long> code[kCodes] = {};
  std::atomic<long> code_n[kCodes] = {};
};

Meter batch_meter{"cudaMemcpyBatchAsync"};
Meter async_meter{"cudaMemcpyAsync"};
__attribute__((tls_model("initial-exec"))) thread_local Meter* inside = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool resolving = false;  // this thread is inside dlsym already

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void* symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "call_meter: %s: not found after the shim\n", name);
    std::abort();
  }
  return f;
}

void note_code(Meter& m, unsigned long req) {
  for (int i = 0; i < kCodes; ++i) {
    unsigned long expected = 0;
    if (m.code[i].load() == req || m.code[i].compare_exchange_strong(expected, req) || expected == req) {
      ++m.code_n[i];
      return;
    }
  }
}

// A byte loop for copies made before dlsym has answered (the flags above keep it a loop).
void* bootstrap_copy(void* d, const void* s, std::size_t n) {
  auto* dd = static_cast<volatile unsigned char*>(d);
  const auto* ss = static_cast<const volatile unsigned char*>(s);
  if (dd < ss)
    for (std::size_t i = 0; i < n; ++i) dd[i] = ss[i];
  else
    for (std::size_t i = n; i > 0; --i) dd[i - 1] = ss[i - 1];
  return d;
}

Copy real_copy(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  return f ? reinterpret_cast<Copy>(f) : nullptr;
}

// memcpy / memmove: `real` resolved on first use (a byte loop meanwhile: dlsym itself may copy), the copy counted.
void* metered_copy(Copy& real, const char* name, void* d, const void* s, std::size_t n) {
  if (!real) {
    if (resolving) return bootstrap_copy(d, s, n);
    resolving = true;
    real = real_copy(name);
    resolving = false;
    if (!real) return bootstrap_copy(d, s, n);
  }
  if (inside && n >= 256) {
    ++inside->copies;
    inside->copy_bytes += static_cast<long>(n);
  }
  return real(d, s, n);
}

int metered(Meter& m, Call real, long entries, Word a, Word b, Word c, Word d, Word e, Word f, Word g, Word h, Word i,
            Word j, Word k, Word l) {
  if (inside) return real(a, b, c, d, e, f, g, h, i, j, k, l);  // one call inside another: counted by the outer
  rusage r0{}, r1{};
  getrusage(RUSAGE_THREAD, &r0);
  const long t0 = now_ns();
  inside = &m;
  const int rc = real(a, b, c, d, e, f, g, h, i, j, k, l);
  inside = nullptr;
  m.ns += now_ns() - t0;
  getrusage(RUSAGE_THREAD, &r1);
  ++m.calls;
  m.entries += entries;
  m.minflt += r1.ru_minflt - r0.ru_minflt;
  m.majflt += r1.ru_majflt - r0.ru_majflt;
  m.nvcsw += r1.ru_nvcsw - r0.ru_nvcsw;
  m.nivcsw += r1.ru_nivcsw - r0.ru_nivcsw;
  return rc;
}

void report(const Meter& m) {
  if (m.calls == 0) return;
  std::fprintf(stderr,
               "{\"call_meter\":\"%s\",\"calls\":%ld,\"entries\":%ld,\"in_call_us\":%.1f,\"ioctls\":%ld,\"copies\":%ld,"
               "\"copy_bytes\":%ld,\"minflt\":%ld,\"majflt\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,\"ioctl_codes\":{",
               m.name, m.calls.load(), m.entries.load(), m.ns.load() / 1e3, m.ioctls.load(), m.copies.load(),
               m.copy_bytes.load(), m.minflt.load(), m.majflt.load(), m.nvcsw.load(), m.nivcsw.load());
  const char* sep = "";
  for (int i = 0; i < kCodes; ++i)
    if (m.code_n[i] > 0) {
      std::fprintf(stderr, "%s\"0x%lx\":%ld", sep, m.code[i].load(), m.code_n[i].load());
      sep = ",";
    }
  std::fprintf(stderr, "}}\n");
}

struct AtExit {
  ~AtExit() {
    report(batch_meter);
    report(async_meter);
  }
} at_exit;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cudaMemcpyBatchAsync(Word a, Word b, Word c, Word d, Word e, Word f, Word g,
                                                                 Word h, Word i, Word j, Word k, Word l) {
  static const Call real = reinterpret_cast<Call>(symbol("cudaMemcpyBatchAsync"));
  return metered(batch_meter, real, static_cast<long>(d), a, b, c, d, e, f, g, h, i, j, k, l);  // d: the count
}

__attribute__((visibility("default"))) int cudaMemcpyAsync(Word a, Word b, Word c, Word d, Word e, Word f, Word g,
                                                            Word h, Word i, Word j, Word k, Word l) {
  static const Call real = reinterpret_cast<Call>(symbol("cudaMemcpyAsync"));
  return metered(async_meter, real, 1, a, b, c, d, e, f, g, h, i, j, k, l);
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long req, ...) {
  static const Ioctl real = reinterpret_cast<Ioctl>(symbol("ioctl"));
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (inside) {
    ++inside->ioctls;
    note_code(*inside, req);
  }
  return real(fd, req, arg);
}

__attribute__((visibility("default"))) void* memcpy(void* d, const void* s, std::size_t n) {
  static Copy real = nullptr;
  return metered_copy(real, "memcpy", d, s, n);
}

__attribute__((visibility("default"))) void* memmove(void* d, const void* s, std::size_t n) {
  static Copy real = nullptr;
  return metered_copy(real, "memmove", d, s, n);
}

}  // extern "C"
