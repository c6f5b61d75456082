#pragma once
// Host memory as an endpoint: NUMA nodes, placement and its verification, and the record of one host
// buffer (C++17: gpu/gpu.hpp includes it into kernel sources). Vendor-neutral (Linux system calls only, no libnuma): the GPU layer adds the runtime's
// pinning on top (gpu::allocate_host), the host backend uses it as it is.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"

namespace dmabench {

// Host memory kinds (results/SCHEMA.md, "Host memory"): how a host buffer is allocated.
//   pinned      page-locked by the runtime (cudaMallocHost / hipHostMalloc)
//   mapped      pinned and mapped into the GPUs' address space, so a kernel can load and store it
//               (cudaHostAlloc / hipHostMalloc with the mapped flag)
//   registered  ordinary pages (mmap), placed, touched, then page-locked (cudaHostRegister / hipHostRegister)
//   pageable    ordinary pages (mmap), placed and touched, never locked: only the runtime copy engines take it
enum class HostKind { pinned, mapped, registered, pageable };
std::string_view to_string(HostKind k);
const std::vector<HostKind>& all_host_kinds();

// Which NUMA node a host buffer must be placed on: the node closest to the rank's GPU (local), any
// other node (remote: the first node that is not the local one), or a node by number.
struct NumaRequest {
  enum class Mode { local, remote, node } mode = Mode::local;
  int node = -1;  // Mode::node
  std::string label() const;  // "local", "remote", "2"
  bool operator==(const NumaRequest& o) const { return mode == o.mode && node == o.node; }  // C++17: gpu/'s kernels include this
};

}  // namespace dmabench

namespace dmabench::hostmem {

// The online NUMA nodes (/sys/devices/system/node/online); {0} where the kernel shows none.
std::vector<int> nodes();
bool node_exists(int node);
// The NUMA node of a PCI device ("0000:06:00.0", from /sys/bus/pci/devices/<id>/numa_node), or -1 when
// the machine does not say (a single-node machine or VM reports -1).
int pci_device_node(const std::string& bus_id);
// A PCI device's sysfs attribute (e.g. "current_link_speed": "32.0 GT/s PCIe"), or "" when unreadable.
std::string pci_attribute(const std::string& bus_id, const std::string& name);

// The node a request names for a device whose closest node is `local_node` (-1: unknown, taken as the
// first node), or why there is none (remote on a one-node machine; a node that does not exist).
Maybe<int> resolve(const NumaRequest& request, int local_node);

// How a range's pages lie in physical memory, read from /proc/self/pagemap and /proc/self/smaps
// (results/SCHEMA.md, `host_memory.buffers[].frames`): the GPU and the IOMMU map host memory by its physical
// frames, so a pool in few large contiguous runs and one scattered over 4 KiB frames can move small blocks at
// different rates. Page frame numbers need CAP_SYS_ADMIN (root): without it `readable` is false and `why` says so.
struct Frames {
  bool readable = false;
  std::string why;                  // why the frames could not be read ("" when readable)
  std::size_t page_bytes = 0;       // the base page size
  std::size_t pages = 0;            // base pages of the range
  std::size_t present = 0;          // of them, present in the page tables
  std::size_t runs = 0;             // maximal runs of pages whose frames follow each other (present pages only)
  std::size_t largest_run_bytes = 0;
  double huge_fraction = 0;         // share of the pages in 2 MiB-aligned chunks that sit on one 2 MiB-aligned frame
  std::string mapping;              // the mapping's name in smaps ("/dev/nvidiactl", "[anon]", ...), "" unknown
  std::size_t kernel_page_bytes = 0, anon_huge_bytes = 0;  // smaps' KernelPageSize, AnonHugePages (0 unknown)
  double mean_run_bytes() const { return runs ? static_cast<double>(present * page_bytes) / static_cast<double>(runs) : 0; }
};
Frames read_frames(const void* p, std::size_t bytes);
nlohmann::json to_json(const Frames& f);

// Page placement read back from the kernel (move_pages without moving): how many of the range's
// pages sit on `node`, and a line that says so or what was wrong; and how its pages lie in physical memory.
struct Placement {
  bool verified = false;       // every page of the range is on the node
  std::size_t pages = 0;       // pages checked
  std::size_t on_node = 0;     // of them, on the node
  std::string detail;          // e.g. "262144 of 262144 pages on node 0", or the error
  Frames frames;               // read_frames() of the range
};
Placement verify(const void* p, std::size_t bytes, int node);

// Sets the calling thread's memory policy to `node` (MPOL_BIND) for the scope's life and restores
// the default after: for allocators that fault their pages in themselves (cudaMallocHost).
class ScopedPolicy {
 public:
  explicit ScopedPolicy(int node);
  ~ScopedPolicy();
  ScopedPolicy(const ScopedPolicy&) = delete;
  ScopedPolicy& operator=(const ScopedPolicy&) = delete;

 private:
  bool set_ = false;
};

// What a case records about one host buffer (results/SCHEMA.md, `host_memory`).
struct BufferInfo {
  int rank = 0;
  std::string side;  // "src" or "dst"
  HostKind kind = HostKind::pinned;
  std::string numa;  // the request: "local", "remote", a number
  int numa_node = -1;
  std::size_t bytes = 0;
  Placement placement;
  double alloc_s = 0;                     // allocating (and first-touching) the buffer
  std::optional<double> register_s;       // page-locking it afterwards (registered; mlock on the host backend)
  std::string method;                     // how it was allocated, e.g. "cudaMallocHost", "mmap+mbind+cudaHostRegister"
  bool reused = false;  // allocated for an earlier case of the sweep and lent again (engines/buffer_pool.hpp)
};
// The record's `host_memory`: null for none, else the buffers with a summary in front.
nlohmann::json to_json(const std::vector<BufferInfo>& buffers);

// Host memory with its own release.
using Memory = std::unique_ptr<void, std::function<void(void*)>>;

// Anonymous pages bound to `node` (mbind MPOL_BIND, -1: no binding) and touched, so that they exist
// where the policy put them; `lock`: mlock'ed afterwards (the host backend's stand-in for pinning),
// timed as register_s. Fills info's placement, alloc_s, register_s and method. Throws on failure.
Memory map_pages(std::size_t bytes, int node, bool lock, BufferInfo& info);

}  // namespace dmabench::hostmem
