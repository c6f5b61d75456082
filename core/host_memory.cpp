#include "core/host_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dmabench {

std::string_view to_string(HostKind k) {
  switch (k) {
    case HostKind::pinned: return "pinned";
    case HostKind::mapped: return "mapped";
    case HostKind::registered: return "registered";
    case HostKind::pageable: return "pageable";
  }
  return "?";
}

const std::vector<HostKind>& all_host_kinds() {
  static const std::vector<HostKind> kinds = {HostKind::pinned, HostKind::mapped, HostKind::registered, HostKind::pageable};
  return kinds;
}

std::string NumaRequest::label() const {
  switch (mode) {
    case Mode::local: return "local";
    case Mode::remote: return "remote";
    case Mode::node: return std::to_string(node);
  }
  return "?";
}

}  // namespace dmabench

namespace dmabench::hostmem {
namespace {

// The memory-policy system calls (linux/mempolicy.h), called directly: libnuma is not needed for four
// calls, and the GPU machines have no libnuma headers.
constexpr int kMpolDefault = 0;
constexpr int kMpolBind = 2;
constexpr unsigned kMpolMfStrict = 1u << 0;
constexpr unsigned kMpolMfMove = 1u << 1;
constexpr int kMaxNodes = 1024;  // nodemask bits passed to the kernel

using Mask = std::vector<unsigned long>;
constexpr std::size_t kBitsPerWord = 8 * sizeof(unsigned long);

Mask mask_of(int node) {
  Mask m(kMaxNodes / kBitsPerWord, 0);
  m[static_cast<std::size_t>(node) / kBitsPerWord] |= 1ul << (static_cast<std::size_t>(node) % kBitsPerWord);
  return m;
}

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

// "0-3,5" -> {0, 1, 2, 3, 5}
std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item == "\n") continue;
    int a = 0, b = 0;
    if (std::sscanf(item.c_str(), "%d-%d", &a, &b) == 2) {
      for (int i = a; i <= b && i < kMaxNodes; ++i) out.push_back(i);
    } else if (std::sscanf(item.c_str(), "%d", &a) == 1 && a >= 0 && a < kMaxNodes) {
      out.push_back(a);
    }
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<int> nodes() {
  std::ifstream f("/sys/devices/system/node/online");
  std::string text;
  std::getline(f, text);
  std::vector<int> out = parse_list(text);
  if (out.empty()) out.push_back(0);
  return out;
}

bool node_exists(int node) {
  const auto all = nodes();
  return std::find(all.begin(), all.end(), node) != all.end();
}

namespace {
std::string sysfs_pci(const std::string& bus_id, const std::string& name) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return "/sys/bus/pci/devices/" + id + "/" + name;
}
}  // namespace

std::string pci_attribute(const std::string& bus_id, const std::string& name) {
  std::ifstream f(sysfs_pci(bus_id, name));
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  return line;
}

int pci_device_node(const std::string& bus_id) {
  std::ifstream f(sysfs_pci(bus_id, "numa_node"));
  int node = -1;
  if (!(f >> node) || node < 0 || !node_exists(node)) return -1;
  return node;
}

Maybe<int> resolve(const NumaRequest& request, int local_node) {
  const std::vector<int> all = nodes();
  const int local = local_node >= 0 ? local_node : all.front();
  switch (request.mode) {
    case NumaRequest::Mode::local: return local;
    case NumaRequest::Mode::remote:
      for (int n : all)
        if (n != local) return n;
      return Maybe<int>::no(fmt::format("numa remote: this machine has one NUMA node ({}), so no node is remote", local));
    case NumaRequest::Mode::node:
      if (!node_exists(request.node))
        return Maybe<int>::no(fmt::format("numa node {} does not exist on this machine (online nodes: {})", request.node,
                                          fmt::join(all, ",")));
      return request.node;
  }
  return Maybe<int>::no("unknown NUMA request");
}

namespace {

// The smaps entry of the mapping that holds `addr`: its name and its KernelPageSize and AnonHugePages (bytes).
void read_smaps(std::uintptr_t addr, Frames& f) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {  // a mapping's first line
      if (inside) return;
      inside = addr >= lo && addr < hi;
      if (inside) {
        std::string perms, offset, dev, inode, name;
        head >> perms >> offset >> dev >> inode;
        std::getline(head >> std::ws, name);
        f.mapping = name.empty() ? "[anon]" : name;
      }
      continue;
    }
    if (!inside) continue;
    std::size_t kb = 0;
    if (std::sscanf(line.c_str(), "KernelPageSize: %zu kB", &kb) == 1) f.kernel_page_bytes = kb << 10;
    if (std::sscanf(line.c_str(), "AnonHugePages: %zu kB", &kb) == 1) f.anon_huge_bytes = kb << 10;
  }
}

// Entry bits (Documentation/admin-guide/mm/pagemap.rst): 63 present, 0-54 the page frame number (0 without
// CAP_SYS_ADMIN).
constexpr std::uint64_t kPresent = 1ull << 63, kPfnMask = (1ull << 55) - 1;

// The pagemap entries of a range, page by page in order: present pages, runs of consecutive frames and
// the 2 MiB frames, into `f` (and huge_pages, any_pfn).
struct FrameWalk {
  FrameWalk(Frames& frames, std::size_t page_bytes) : f(frames), ps(page_bytes), per_huge((2u << 20) / ps) {}

  Frames& f;
  const std::size_t ps;
  const std::size_t per_huge;  // base pages in a 2 MiB frame
  std::uint64_t prev_pfn = 0, run = 0, huge_pages = 0;
  bool prev_present = false, any_pfn = false;
  // a 2 MiB-aligned chunk of the range: its first page's frame, and whether it is still one aligned frame
  std::uint64_t chunk_first_pfn = 0;
  std::size_t chunk_ok = 0;

  void add(std::uint64_t page, std::uint64_t e) {
    const std::uint64_t pfn = e & kPfnMask;
    const bool present = (e & kPresent) != 0;
    any_pfn = any_pfn || pfn != 0;
    if (present) {
      ++f.present;
      if (prev_present && pfn == prev_pfn + 1) {
        ++run;
      } else {
        ++f.runs;
        run = 1;
      }
      f.largest_run_bytes = std::max<std::size_t>(f.largest_run_bytes, run * ps);
    }
    prev_present = present;
    prev_pfn = pfn;
    // 2 MiB chunks wholly inside the range: every page present, frames following the first, the first aligned
    if (page % per_huge == 0) {
      chunk_first_pfn = pfn;
      chunk_ok = present && pfn % per_huge == 0 ? 1 : 0;
    } else if (chunk_ok && present && pfn == chunk_first_pfn + page % per_huge) {
      ++chunk_ok;
    } else {
      chunk_ok = 0;
    }
    if (chunk_ok == per_huge) huge_pages += per_huge;
  }
};

}  // namespace

Frames read_frames(const void* p, std::size_t bytes) {
  Frames f;
  f.page_bytes = page_size();
  if (!p || bytes == 0) {
    f.why = "no pages";
    return f;
  }
  const std::size_t ps = f.page_bytes;
  const auto first = reinterpret_cast<std::uintptr_t>(p) / ps;
  const auto last = (reinterpret_cast<std::uintptr_t>(p) + bytes - 1) / ps;
  f.pages = last - first + 1;
  read_smaps(reinterpret_cast<std::uintptr_t>(p), f);
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    f.why = fmt::format("/proc/self/pagemap: {}", std::strerror(errno));
    return f;
  }
  std::vector<std::uint64_t> entries(std::min<std::size_t>(f.pages, 1u << 16));
  FrameWalk walk(f, ps);
  for (std::size_t at = 0; at < f.pages;) {
    const std::size_t k = std::min(entries.size(), f.pages - at);
    const ssize_t got = ::pread(fd, entries.data(), k * 8, static_cast<off_t>((first + at) * 8));
    if (got != static_cast<ssize_t>(k * 8)) {
      f.why = fmt::format("/proc/self/pagemap: {}", got < 0 ? std::strerror(errno) : "short read");
      ::close(fd);
      return f;
    }
    for (std::size_t i = 0; i < k; ++i) walk.add(first + at + i, entries[i]);
    at += k;
  }
  ::close(fd);
  if (f.present > 0 && !walk.any_pfn) {
    f.why = "page frame numbers read as 0: reading them needs CAP_SYS_ADMIN (root)";
    f.runs = 0;
    f.largest_run_bytes = 0;
    return f;
  }
  f.readable = true;
  f.huge_fraction = static_cast<double>(walk.huge_pages) / static_cast<double>(f.pages);
  return f;
}

nlohmann::json to_json(const Frames& f) {
  nlohmann::json j = {{"readable", f.readable},
                      {"mapping", f.mapping.empty() ? nlohmann::json() : nlohmann::json(f.mapping)},
                      {"kernel_page_bytes", f.kernel_page_bytes ? nlohmann::json(f.kernel_page_bytes) : nlohmann::json()},
                      {"anon_huge_bytes", f.kernel_page_bytes ? nlohmann::json(f.anon_huge_bytes) : nlohmann::json()},
                      {"pages", f.pages},
                      {"present", f.present}};
  if (!f.readable) {
    j["why"] = f.why;
    return j;
  }
  j["runs"] = f.runs;
  j["mean_run_bytes"] = f.mean_run_bytes();
  j["largest_run_bytes"] = f.largest_run_bytes;
  j["huge_fraction"] = f.huge_fraction;
  return j;
}

Placement verify(const void* p, std::size_t bytes, int node) {
  Placement out;
  if (!p || bytes == 0) {
    out.verified = true;
    out.detail = "no pages";
    return out;
  }
  out.frames = read_frames(p, bytes);
  const std::size_t ps = page_size();
  const auto first = reinterpret_cast<std::uintptr_t>(p) / ps * ps;
  const auto end = reinterpret_cast<std::uintptr_t>(p) + bytes;
  const std::size_t n = (end - first + ps - 1) / ps;
  std::vector<void*> pages(n);
  for (std::size_t i = 0; i < n; ++i) pages[i] = reinterpret_cast<void*>(first + i * ps);
  std::vector<int> status(n, -1);
  // move_pages with no target nodes moves nothing: it reports each page's node (or -errno)
  constexpr std::size_t kChunk = 1 << 16;
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t k = std::min(kChunk, n - at);
    if (syscall(SYS_move_pages, 0, static_cast<unsigned long>(k), pages.data() + at, nullptr, status.data() + at, 0) != 0) {
      out.detail = fmt::format("move_pages: {}", std::strerror(errno));
      return out;
    }
  }
  out.pages = n;
  int other = -1, error = 0;
  for (int s : status) {
    if (s == node) ++out.on_node;
    else if (s < 0) error = -s;
    else other = s;
  }
  out.verified = out.on_node == n;
  out.detail = fmt::format("{} of {} pages on node {}", out.on_node, n, node);
  if (other >= 0) out.detail += fmt::format(" (others on node {})", other);
  if (error) out.detail += fmt::format(" (a page: {})", std::strerror(error));
  return out;
}

ScopedPolicy::ScopedPolicy(int node) {
  if (node < 0) return;
  const Mask m = mask_of(node);
  if (syscall(SYS_set_mempolicy, kMpolBind, m.data(), static_cast<unsigned long>(kMaxNodes)) != 0)
    throw std::runtime_error(fmt::format("set_mempolicy(MPOL_BIND, node {}): {}", node, std::strerror(errno)));
  set_ = true;
}

ScopedPolicy::~ScopedPolicy() {
  if (set_) syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0ul);
}

Memory map_pages(std::size_t bytes, int node, bool lock, BufferInfo& info) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t ps = page_size();
  const std::size_t length = std::max<std::size_t>(ps, (bytes + ps - 1) / ps * ps);
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(fmt::format("mmap of {} bytes of host memory: {}", length, std::strerror(errno)));
  Memory m(p, [length](void* q) { munmap(q, length); });
  if (node >= 0) {
    const Mask mask = mask_of(node);
    if (syscall(SYS_mbind, p, static_cast<unsigned long>(length), kMpolBind, mask.data(), static_cast<unsigned long>(kMaxNodes),
                kMpolMfStrict | kMpolMfMove) != 0)
      throw std::runtime_error(fmt::format("mbind of {} bytes to NUMA node {}: {}", length, node, std::strerror(errno)));
  }
  std::memset(p, 0, length);  // faults every page in where the policy puts it
  info.alloc_s = seconds_since(t0);
  info.method = node >= 0 ? "mmap+mbind" : "mmap";
  if (lock) {
    const auto t1 = std::chrono::steady_clock::now();
    if (mlock(p, length) != 0)
      throw std::runtime_error(fmt::format("mlock of {} bytes: {} (RLIMIT_MEMLOCK too small?)", length, std::strerror(errno)));
    info.register_s = seconds_since(t1);
    info.method += "+mlock";
    m = Memory(m.release(), [length](void* q) {
      munlock(q, length);
      munmap(q, length);
    });
  }
  info.placement = verify(p, bytes, node >= 0 ? node : nodes().front());
  return m;
}

nlohmann::json to_json(const std::vector<BufferInfo>& buffers) {
  if (buffers.empty()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  bool verified = true;
  double alloc = 0, reg = 0;
  bool any_reg = false;
  std::vector<int> nodes_used;
  for (const BufferInfo& b : buffers) {
    verified = verified && b.placement.verified;
    if (!b.reused) alloc += b.alloc_s;  // the time spent for this case
    if (b.register_s && !b.reused) {
      any_reg = true;
      reg += *b.register_s;
    }
    if (std::find(nodes_used.begin(), nodes_used.end(), b.numa_node) == nodes_used.end()) nodes_used.push_back(b.numa_node);
    list.push_back({{"rank", b.rank},
                    {"side", b.side},
                    {"kind", to_string(b.kind)},
                    {"numa", b.numa},
                    {"numa_node", b.numa_node},
                    {"bytes", b.bytes},
                    {"verified", b.placement.verified},
                    {"placement", b.placement.detail},
                    {"frames", to_json(b.placement.frames)},
                    {"alloc_s", b.alloc_s},
                    {"register_s", b.register_s ? nlohmann::json(*b.register_s) : nlohmann::json()},
                    {"method", b.method},
                    {"reused", b.reused}});
  }
  return {{"kind", to_string(buffers.front().kind)},
          {"numa", buffers.front().numa},
          {"numa_node", nodes_used.size() == 1 ? nlohmann::json(nodes_used.front()) : nlohmann::json()},
          {"verified", verified},
          {"alloc_s", alloc},
          {"register_s", any_reg ? nlohmann::json(reg) : nlohmann::json()},
          {"buffers", list}};
}

}  // namespace dmabench::hostmem
