#include "gpu/nccl_comm.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/call_error.hpp"
#include "gpu/features.hpp"
#include "gpu/vendor.hpp"
#if defined(DMABENCH_HAVE_RCCL)
#include <rccl/rccl.h>  // RCCL: NCCL's API on AMD
#else
#include <nccl.h>
#endif

// DMABENCH_NCCL_HAS_CE_COLLECTIVES (NCCL_CTA_POLICY_ZERO, ncclMemAlloc, ncclCommWindowRegister: NCCL >= 2.28;
// RCCL has none of them so far) and DMABENCH_NCCL_ALLTOALL come from CMake, which decides them for the
// feature table (gpu/features.cpp) too.
#if defined(DMABENCH_HAVE_RCCL)
constexpr const char* kLibraryName = "RCCL";
[[maybe_unused]] constexpr const char* kAllToAllFeature = "nccl alltoall on AMD";
#else
constexpr const char* kLibraryName = "NCCL";
[[maybe_unused]] constexpr const char* kAllToAllFeature = "nccl alltoall on NVIDIA";
#endif

#define DMABENCH_NCCL_CHECK(call)                                                                        \
  do {                                                                                                   \
    ncclResult_t dmabench_res_ = (call);                                                                 \
    if (dmabench_res_ != ncclSuccess && dmabench_res_ != ncclInProgress)                                 \
      ::dmabench::gpu::throw_call_error(kLibraryName, #call, __FILE__, __LINE__, dmabench_res_,          \
                                        ncclGetErrorString(dmabench_res_));                               \
  } while (0)

namespace dmabench::gpu {
namespace {
ncclComm_t comm(void* c) { return static_cast<ncclComm_t>(c); }
GPU(Stream_t) native(const Stream& s) { return static_cast<GPU(Stream_t)>(s.native()); }

std::string& log_path() {
  static std::string path;
  return path;
}
std::string& log_dir() {  // the private directory of the log dmabench asks NCCL for, or empty
  static std::string dir;
  return dir;
}
}  // namespace

void nccl_prepare_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("NCCL_DEBUG") != nullptr) {
      const char* f = std::getenv("NCCL_DEBUG_FILE");
      if (f && std::string(f).find('%') == std::string::npos) log_path() = f;
      return;
    }
    // NCCL opens its log with fopen(..., "w"), following links: never a predictable name in /tmp (another user
    // could plant a link there and have the file it names truncated), but a directory of this process's own
    // (mkdtemp: a new directory, mode 0700, under a random name). Without one, no log: nothing is read from it.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string dir = fmt::format("{}/dmabench-nccl-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (::mkdtemp(dir.data()) == nullptr) return;
    log_dir() = dir;
    log_path() = dir + "/nccl.log";
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);  // setup messages only: nothing per collective
    setenv("NCCL_DEBUG_FILE", log_path().c_str(), 1);
    std::atexit([] {
      std::remove(log_path().c_str());
      ::rmdir(log_dir().c_str());
    });
  });
}

std::string nccl_log_path() { return log_path(); }

std::vector<std::string> nccl_log_lines(const std::string& needle) {
  std::vector<std::string> out;
  struct stat st {};  // a regular file only: a FIFO at a user's NCCL_DEBUG_FILE would make the open wait
  if (log_path().empty() || ::stat(log_path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
  std::ifstream f(log_path());
  std::string line;
  while (std::getline(f, line))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

std::string nccl_version() {
  nccl_prepare_log();
  int v = 0;
  DMABENCH_NCCL_CHECK(ncclGetVersion(&v));
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

WhyNot nccl_ce_collectives_unsupported() {
#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
  return std::nullopt;
#else
  return missing(this_build(), "nccl cta_policy zero");
#endif
}

WhyNot nccl_all_to_all_unsupported() {
#ifdef DMABENCH_NCCL_ALLTOALL
  return std::nullopt;
#else
  return missing(this_build(), kAllToAllFeature);
#endif
}

Memory nccl_allocate(int device, std::size_t bytes) {
  if (bytes == 0) return Memory(nullptr, [](void*) {});
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  void* p = nullptr;
#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
  DMABENCH_NCCL_CHECK(ncclMemAlloc(&p, bytes));
#else
  throw std::runtime_error("ncclMemAlloc: " + nccl_ce_collectives_unsupported().value());
#endif
  return Memory(p, [device](void* q) {
    (void)GPU(SetDevice)(device);
#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
    ncclMemFree(q);
#else
    (void)q;
#endif
  });
}

std::string nccl_unique_id() {
  nccl_prepare_log();
  ncclUniqueId id;
  DMABENCH_NCCL_CHECK(ncclGetUniqueId(&id));
  return std::string(reinterpret_cast<const char*>(&id), sizeof id);
}

NcclComms::NcclComms(const std::vector<int>& devices, const std::vector<int>& local, bool cta_policy_zero,
                     const std::string& id_bytes) {
  nccl_prepare_log();
  const int n = static_cast<int>(devices.size());
  comms_.assign(devices.size(), nullptr);
  if (id_bytes.empty() && static_cast<int>(local.size()) != n)
    throw std::logic_error("NcclComms: a communicator with ranks in other processes needs their shared unique id");
  if (!cta_policy_zero && id_bytes.empty()) {
    std::vector<ncclComm_t> c(devices.size());
    DMABENCH_NCCL_CHECK(ncclCommInitAll(c.data(), n, devices.data()));
    for (int r = 0; r < n; ++r) comms_[r] = c[r];
    return;
  }
  if (local.empty()) return;  // a process outside the communicator
  ncclUniqueId id;
  if (id_bytes.empty()) {
    DMABENCH_NCCL_CHECK(ncclGetUniqueId(&id));
  } else {
    if (id_bytes.size() != sizeof id) throw std::runtime_error("NcclComms: a unique id of the wrong size");
    std::memcpy(&id, id_bytes.data(), sizeof id);
  }
#ifndef DMABENCH_NCCL_HAS_CE_COLLECTIVES
  if (cta_policy_zero) throw std::runtime_error(nccl_ce_collectives_unsupported().value());
#endif
  std::vector<ncclComm_t> c(devices.size(), nullptr);
  DMABENCH_NCCL_CHECK(ncclGroupStart());
  for (int r : local) {
    DMABENCH_GPU_CHECK(GPU(SetDevice)(devices[r]));
#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
    if (cta_policy_zero) {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
      DMABENCH_NCCL_CHECK(ncclCommInitRankConfig(&c[r], n, id, r, &config));
      continue;
    }
#endif
    DMABENCH_NCCL_CHECK(ncclCommInitRank(&c[r], n, id, r));
  }
  DMABENCH_NCCL_CHECK(ncclGroupEnd());
  for (int r : local) comms_[r] = c[r];
}

NcclComms::~NcclComms() {
  for (void* c : comms_)
    if (c) ncclCommDestroy(comm(c));  // best effort in a destructor
}

void NcclComms::group_start() const { DMABENCH_NCCL_CHECK(ncclGroupStart()); }
void NcclComms::group_end() const { DMABENCH_NCCL_CHECK(ncclGroupEnd()); }

void NcclComms::all_gather(int rank, const void* send, void* recv, std::size_t bytes, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclAllGather(send, recv, bytes, ncclInt8, comm(comms_[rank]), native(s)));
}

// The all-to-all call as the header spells it (cmake/nccl_api.cmake): ncclAlltoAll in NCCL >= 2.28,
// ncclAllToAll in RCCL.
void NcclComms::all_to_all(int rank, const void* send, void* recv, std::size_t bytes, const Stream& s) const {
#ifdef DMABENCH_NCCL_ALLTOALL
  DMABENCH_NCCL_CHECK(DMABENCH_NCCL_ALLTOALL(send, recv, bytes, ncclInt8, comm(comms_[rank]), native(s)));
#else
  (void)rank, (void)send, (void)recv, (void)bytes, (void)s;
  throw std::runtime_error(nccl_all_to_all_unsupported().value());
#endif
}

void NcclComms::send(int rank, const void* buf, std::size_t bytes, int peer, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclSend(buf, bytes, ncclInt8, peer, comm(comms_[rank]), native(s)));
}

void NcclComms::recv(int rank, void* buf, std::size_t bytes, int peer, const Stream& s) const {
  DMABENCH_NCCL_CHECK(ncclRecv(buf, bytes, ncclInt8, peer, comm(comms_[rank]), native(s)));
}

void NcclComms::check_async() const {
  for (void* c : comms_) {
    if (!c) continue;
    ncclResult_t async = ncclSuccess;
    DMABENCH_NCCL_CHECK(ncclCommGetAsyncError(comm(c), &async));
    if (async != ncclSuccess && async != ncclInProgress)
      throw_call_error(kLibraryName, "asynchronous error (ncclCommGetAsyncError)", __FILE__, __LINE__, async,
                       ncclGetErrorString(async));
  }
}

#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
std::vector<void*> NcclComms::register_windows(const std::vector<void*>& buffers, std::size_t bytes) const {
  std::vector<ncclWindow_t> w(buffers.size());
  DMABENCH_NCCL_CHECK(ncclGroupStart());
  for (std::size_t r = 0; r < buffers.size(); ++r)
    if (buffers[r])
      DMABENCH_NCCL_CHECK(ncclCommWindowRegister(comm(comms_[r]), buffers[r], bytes, &w[r], NCCL_WIN_COLL_SYMMETRIC));
  DMABENCH_NCCL_CHECK(ncclGroupEnd());
  return std::vector<void*>(w.begin(), w.end());
}

void NcclComms::deregister_windows(const std::vector<void*>& windows) const noexcept {
  if (windows.empty()) return;
  ncclGroupStart();
  for (std::size_t r = 0; r < windows.size(); ++r)
    if (windows[r]) ncclCommWindowDeregister(comm(comms_[r]), static_cast<ncclWindow_t>(windows[r]));
  ncclGroupEnd();
}

#else
std::vector<void*> NcclComms::register_windows(const std::vector<void*>&, std::size_t) const {
  throw std::runtime_error(nccl_ce_collectives_unsupported().value());
}
void NcclComms::deregister_windows(const std::vector<void*>&) const noexcept {}
#endif

}  // namespace dmabench::gpu
