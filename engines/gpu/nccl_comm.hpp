#pragma once
// Vendor-neutral wrapper of the collective library (NCCL; RCCL has the same API). Byte-typed
// calls only: the benchmark moves bytes, it does not reduce.
#include <cstddef>
#include <string>
#include <vector>

#include "engines/gpu/gpu.hpp"

namespace dmabench::gpu {

// Version of the library loaded at run time, e.g. "2.28.3".
std::string nccl_version();

// One single-process communicator over `devices` (rank i on devices[i]).
class NcclComms {
 public:
  explicit NcclComms(const std::vector<int>& devices);
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  int size() const { return static_cast<int>(comms_.size()); }
  void group_start() const;
  void group_end() const;
  void all_gather(int rank, const void* send, void* recv, std::size_t bytes_per_rank, const Stream& s) const;
  void all_to_all(int rank, const void* send, void* recv, std::size_t bytes_per_peer, const Stream& s) const;
  void send(int rank, const void* buf, std::size_t bytes, int peer, const Stream& s) const;
  void recv(int rank, void* buf, std::size_t bytes, int peer, const Stream& s) const;
  // Throws if any communicator reported an asynchronous error.
  void check_async() const;

 private:
  std::vector<void*> comms_;
};

}  // namespace dmabench::gpu
