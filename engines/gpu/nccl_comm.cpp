#include "engines/gpu/nccl_comm.hpp"

#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nccl.h>

#include "engines/gpu/check.hpp"

#define DMABENCH_NCCL_CHECK(call)                                                                        \
  do {                                                                                                   \
    ncclResult_t dmabench_res_ = (call);                                                                 \
    if (dmabench_res_ != ncclSuccess && dmabench_res_ != ncclInProgress)                                 \
      throw std::runtime_error(fmt::format("{} at {}:{}: {}", #call, __FILE__, __LINE__,                 \
                                           ncclGetErrorString(dmabench_res_)));                           \
  } while (0)

namespace dmabench::gpu {
namespace {
ncclComm_t comm(void* c) { return static_cast<ncclComm_t>(c); }
cudaStream_t native(const Stream& s) { return static_cast<cudaStream_t>(s.native()); }
}  // namespace

std::string nccl_version() {
  int v = 0;
  DMABENCH_NCCL_CHECK(ncclGetVersion(&v));
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

NcclComms::NcclComms(const std::vector<int>& devices) {
  std::vector<ncclComm_t> c(devices.size());
  DMABENCH_NCCL_CHECK(ncclCommInitAll(c.data(), static_cast<int>(devices.size()), devices.data()));
  for (auto x : c) comms_.push_back(x);
}

NcclComms::~NcclComms() {
  for (void* c : comms_) ncclCommDestroy(comm(c));  // best effort in a destructor
}

void NcclComms::group_start() const { DMABENCH_NCCL_CHECK(ncclGroupStart()); }
void NcclComms::group_end() const { DMABENCH_NCCL_CHECK(ncclGroupEnd()); }

void NcclComms::all_gather(int rank, const void* send, void* recv, std::size_t bytes, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclAllGather(send, recv, bytes, ncclInt8, comm(comms_[rank]), native(s)));
}

void NcclComms::all_to_all(int rank, const void* send, void* recv, std::size_t bytes, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclAlltoAll(send, recv, bytes, ncclInt8, comm(comms_[rank]), native(s)));
}

void NcclComms::send(int rank, const void* buf, std::size_t bytes, int peer, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclSend(buf, bytes, ncclInt8, peer, comm(comms_[rank]), native(s)));
}

void NcclComms::recv(int rank, void* buf, std::size_t bytes, int peer, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclRecv(buf, bytes, ncclInt8, peer, comm(comms_[rank]), native(s)));
}

void NcclComms::check_async() const {
  for (void* c : comms_) {
    ncclResult_t async = ncclSuccess;
    DMABENCH_NCCL_CHECK(ncclCommGetAsyncError(comm(c), &async));
    if (async != ncclSuccess && async != ncclInProgress)
      throw std::runtime_error(fmt::format("NCCL asynchronous error: {}", ncclGetErrorString(async)));
  }
}

}  // namespace dmabench::gpu
