#pragma once
// Vendor-neutral wrapper of the collective library (NCCL; RCCL has the same API). Byte-typed
// calls only: the benchmark moves bytes, it does not reduce.
#include <cstddef>
#include <string>
#include <vector>

#include "gpu/gpu.hpp"

namespace dmabench::gpu {

// Version of the library loaded at run time, e.g. "2.28.3".
std::string nccl_version();

// NCCL's INFO log goes to a file dmabench reads to see which path NCCL took (unless the user set
// NCCL_DEBUG: then their settings stand and the file is theirs, if any). Call before any NCCL call.
void nccl_prepare_log();
// Lines of that log containing `needle`, in order; empty when there is no readable log.
std::vector<std::string> nccl_log_lines(const std::string& needle);
std::string nccl_log_path();

// Why this library lacks NCCL's copy-engine collectives (NCCL_CTA_POLICY_ZERO, symmetric windows), or nullopt.
WhyNot nccl_ce_collectives_unsupported();
// Why the header had no all-to-all call (cmake/nccl_api.cmake), or nullopt.
WhyNot nccl_all_to_all_unsupported();
// ncclMemAlloc'd memory (what NCCL's symmetric windows need).
Memory nccl_allocate(int device, std::size_t bytes);

// A new ncclUniqueId, as bytes (for the other processes of a multi-process run).
std::string nccl_unique_id();

// A communicator over `devices` (rank i on devices[i]) of which this process holds the ranks `local`
// (every rank in a one-process run; calls naming another rank are errors).
class NcclComms {
 public:
  // cta_policy_zero: NCCL_CTA_POLICY_ZERO in the communicator config (copy-engine collectives
  // where NCCL has them). `id`: the communicator's ncclUniqueId (nccl_unique_id() of one process,
  // shared by the launcher's processes); empty: this process makes it (it must then hold every rank).
  NcclComms(const std::vector<int>& devices, const std::vector<int>& local, bool cta_policy_zero,
            const std::string& id = {});
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  void group_start() const;
  void group_end() const;
  void all_gather(int rank, const void* send, void* recv, std::size_t bytes_per_rank, const Stream& s) const;
  void all_to_all(int rank, const void* send, void* recv, std::size_t bytes_per_peer, const Stream& s) const;
  void send(int rank, const void* buf, std::size_t bytes, int peer, const Stream& s) const;
  void recv(int rank, void* buf, std::size_t bytes, int peer, const Stream& s) const;
  // Throws if any communicator reported an asynchronous error.
  void check_async() const;

  // Registers one buffer per rank (same size on every rank; null for ranks of other processes) as a
  // symmetric window; collective. Returns window handles for deregister_windows.
  std::vector<void*> register_windows(const std::vector<void*>& buffers, std::size_t bytes) const;
  void deregister_windows(const std::vector<void*>& windows) const noexcept;

 private:
  std::vector<void*> comms_;
};

}  // namespace dmabench::gpu
