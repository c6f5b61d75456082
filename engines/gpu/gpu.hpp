#pragma once
// The GPU layer's vendor-neutral interface. Only engines/gpu/*.cu|.cpp include a vendor runtime
// header; everything else (engines, harness) sees these types. Every runtime call is checked and
// throws std::runtime_error with the call, file:line and the vendor's error string.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dmabench::gpu {

// ---- devices -------------------------------------------------------------------------------
// Number of visible GPUs; 0 (never an exception) when there is no driver or device, with the
// reason in *why_not.
int device_count(std::string* why_not = nullptr);

struct DeviceProps {
  int ordinal = 0;
  std::string name;
  std::string bus_id;          // "0000:06:00.0"
  std::size_t memory_bytes = 0;
  int copy_engines = 0;        // asyncEngineCount
  int multiprocessors = 0;
  int cc_major = 0, cc_minor = 0;
};
DeviceProps properties(int device);

struct PeerLink {
  bool access = false;       // can `from` load/store `to`'s memory
  int performance_rank = 0;  // the runtime's relative link performance (lower is better)
  bool native_atomics = false;
};
PeerLink peer_link(int from, int to);

// Enables peer access between every ordered pair that supports it (idempotent).
void enable_peer_access(const std::vector<int>& devices);
std::size_t free_memory(int device);

struct Versions {
  std::string runtime;        // e.g. "13.0"
  std::string driver_api;     // CUDA version the driver supports, e.g. "13.0"
  std::string kernel_driver;  // e.g. "580.159.04" (from /proc/driver/nvidia/version), or ""
};
Versions versions();

// ---- resources (RAII, move-only) -------------------------------------------------------------
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);  // bytes == 0: no allocation
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

class Stream {
 public:
  explicit Stream(int device);  // a non-blocking stream on `device`
  ~Stream();
  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  int device() const { return device_; }
  void synchronize() const;
  void* native() const { return handle_; }  // the vendor stream handle (for engines/gpu only)

 private:
  void* handle_ = nullptr;
  int device_ = -1;
};

// Makes `device` current for the calling thread.
void set_device(int device);

// Asynchronous copy between any two device pointers (peer access or not) on `stream`: the
// runtime's copy path, which uses the copy (DMA) engines.
void copy_async(void* dst, const void* src, std::size_t bytes, const Stream& stream);

// ---- kernels (engines/gpu/kernels.cu) ----------------------------------------------------------
// Fills bytes [0, bytes) of `dst` with datagen::byte_at(key, first_index + i).
void fill(void* dst, std::size_t bytes, std::uint64_t key, std::uint64_t first_index, const Stream& stream);
// Offset of the first byte of `buf` that differs from datagen::byte_at(key, first_index + i), or
// nullopt. Synchronizes the stream.
std::optional<std::size_t> first_mismatch(const void* buf, std::size_t bytes, std::uint64_t key,
                                          std::uint64_t first_index, const Stream& stream);
std::uint8_t read_byte(const void* device_ptr, std::size_t offset);
// Overwrites one byte (used by tests that plant corruption).
void write_byte(void* device_ptr, std::size_t offset, std::uint8_t value);

struct CopyJob {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};

// A GPU-core copy: one kernel launch copies every job (each job gets a share of the blocks),
// loading from `src` and storing to `dst` (a peer's memory over NVLink when dst is remote).
class CopyKernel {
 public:
  // blocks_total: blocks for the whole launch (0: two per multiprocessor of `device`).
  CopyKernel(int device, std::vector<CopyJob> jobs, int blocks_total);
  void launch(const Stream& stream) const;
  int blocks_per_job() const { return blocks_per_job_; }
  int threads_per_block() const;

 private:
  DeviceBuffer table_;
  int jobs_ = 0;
  int blocks_per_job_ = 1;
  bool aligned16_ = false;
};

}  // namespace dmabench::gpu
