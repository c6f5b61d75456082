#include "team/mpi_team.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#define OMPI_SKIP_MPICXX 1   // the C API only (the C++ bindings are deprecated and not linked)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "core/interrupt.hpp"

namespace dmabench::team {
namespace {

bool g_initialized = false;

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw TeamStopped(fmt::format("{} failed: {}", call, std::string(text, static_cast<std::size_t>(len))));
}

// How long a collective may stay unanswered after this process was asked to stop (a signal) before
// it gives up: a launcher may signal the survivors of a job whose process on another node died, and
// their next collective would never complete. Long enough for a slow but live process to finish its
// step (NCCL set-up, a large validation); a dead process of this node is noticed at once instead.
constexpr auto kStopGrace = std::chrono::seconds(10);

class MpiTeam final : public Team {
 public:
  MpiTeam() {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string launcher() const override { return "MPI: " + mpi_library_version(); }

 protected:
  std::vector<std::string> exchange(const std::string& mine) override;

 private:
  // The first process of this host (and PID namespace) that is gone, or -1.
  int gone_neighbour() const {
    const auto& all = ranks();
    for (const auto& r : all)
      if (r.rank != rank_ && sees_process(r) && process_gone(r.pid)) return r.rank;
    return -1;
  }

  // Polls the request, yielding the CPU when it takes long. While it waits it notices a process of
  // this host that is gone (launchers kill the survivors of a job a moment later: rank 0 writes its
  // file first) and, on other hosts, a stop request (a signal) that the others do not answer.
  void complete(MPI_Request& req, const char* what) {
    using clock = std::chrono::steady_clock;
    std::optional<clock::time_point> stop_seen;
    const auto since = clock::now();
    auto next_look = since + std::chrono::milliseconds(10);
    for (unsigned spin = 0;; ++spin) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
      if (done) return;
      if (spin > 2000) std::this_thread::yield();
      if ((spin & 0x3ff) != 0) continue;
      const auto now = clock::now();
      if (now >= next_look && !ranks().empty()) {
        next_look = now + std::chrono::milliseconds(10);
        if (const int gone = gone_neighbour(); gone >= 0) {
          const auto& r = ranks()[static_cast<std::size_t>(gone)];
          set_stopped(fmt::format("rank {} (pid {} on {}) ended while rank {} waited for it in {}", gone, r.pid, r.host,
                                  rank_, what));
          throw TeamStopped(stopped());
        }
      }
      if (!interrupt::requested()) continue;
      if (!stop_seen) stop_seen = now;
      if (now - *stop_seen > kStopGrace) {
        set_stopped(fmt::format("rank {} stopped waiting for the other processes ({} unanswered {} s after a signal): "
                                "a process of the run ended or was killed",
                                rank_, what, std::chrono::duration<double>(kStopGrace).count()));
        throw TeamStopped(stopped());
      }
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

std::vector<std::string> MpiTeam::exchange(const std::string& mine) {
  const int n = static_cast<int>(mine.size());
  std::vector<int> sizes(size_);
  MPI_Request req;
  check(MPI_Iallgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_, &req), "MPI_Iallgather");
  complete(req, "MPI_Iallgather");
  std::vector<int> displs(size_);
  long total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[r] = static_cast<int>(total);
    total += sizes[r];
  }
  if (total > (1L << 30)) throw TeamStopped("allgather: more than 1 GiB gathered");
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Iallgatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, comm_, &req),
        "MPI_Iallgatherv");
  complete(req, "MPI_Iallgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(sizes[r])));
  return out;
}

}  // namespace

std::unique_ptr<Team> start_mpi() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  g_initialized = true;
  return std::make_unique<MpiTeam>();
}

void finish_mpi(bool clean) {
  if (!g_initialized || !clean) return;
  g_initialized = false;
  MPI_Finalize();
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, strnlen(text, static_cast<std::size_t>(len)));
  if (auto end = s.find_first_of(",\r\n"); end != std::string::npos) s.resize(end);  // "Open MPI v4.1.4"
  while (!s.empty() && (s.back() == ',' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace dmabench::team
