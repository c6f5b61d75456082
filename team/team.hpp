#pragma once
// The processes of a run (docs/multi-process.md, results/SCHEMA.md "Processes"). A run is one
// process driving every rank (the default), or one process per rank started by mpirun / srun: then
// rank r of every plan is world rank r, its buffers live in that process, and the processes agree
// through the collectives below. Everything above this layer asks `world()`; only team/mpi_team.cpp
// sees MPI. Processes agree through agree_all (typed payloads), share and first_error.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench {
struct Plan;
}

namespace dmabench::team {

// What one process of the run is, as every process sees it (gathered at start).
struct RankInfo {
  int rank = 0;
  int local_rank = 0;  // among the processes of its node
  int node = 0;        // index into the run's distinct hosts, in order of first appearance
  std::string host;
  long pid = 0;
  int device = 0;      // the GPU ordinal (or host rank id) the rank drives, as its process numbers GPUs
  std::string bus_id;  // the GPU's PCI bus id; empty on the host backend
  std::string cpu_affinity;  // the CPUs the process may run on, e.g. "0-31" (launchers bind processes)
  std::string pid_namespace;  // e.g. "pid:[4026531836]": a pid means something only within its namespace
};

// A collective failed because another process is gone or the run is stopping: the sweep ends.
class TeamStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Team {
 public:
  virtual ~Team() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "one process" or the MPI library's own version line.
  virtual std::string launcher() const = 0;
  // The collective: every process calls it in the same order. Every process's `mine`, in rank order.
  // (A barrier is an allgather: every agreement doubles as one.) It throws TeamStopped, and the team
  // is stopped from then on, when the exchange fails (a process is gone; the run is being stopped by
  // a signal and the others do not answer within a grace period; an MPI error) and when the processes
  // are not at the same collective: each call carries its sequence number, and a process that skipped
  // or added one (an internal error) would otherwise pair its data with another collective's.
  // Callers agree through agree_all, share and first_error (below), whose transport this is.
  std::vector<std::string> allgather(const std::string& mine);

  bool multi() const { return size() > 1; }
  // Why the team stopped (a collective gave up: a process is gone), or "": afterwards every collective
  // throws TeamStopped at once and the sweep ends, keeping every finished case.
  const std::string& stopped() const { return stopped_; }
  // The processes' descriptions (set once at start by the runner).
  const std::vector<RankInfo>& ranks() const { return ranks_; }
  void set_ranks(std::vector<RankInfo> r) { ranks_ = std::move(r); }
  // Whether a case has failed since the team stopped, its reason recorded (stop_recorded below).
  bool stop_is_recorded() const { return stop_recorded_; }
  void record_stop() { stop_recorded_ = true; }

 protected:
  // The transport under allgather(): every process's `mine`, in rank order; throws TeamStopped when
  // it cannot complete (it may set_stopped() with a more precise reason first).
  virtual std::vector<std::string> exchange(const std::string& mine) = 0;
  void set_stopped(std::string why) { stopped_ = std::move(why); }

 private:
  std::vector<RankInfo> ranks_;
  std::string stopped_;
  bool stop_recorded_ = false;
  std::uint64_t collectives_ = 0;  // allgather() calls so far
};

// The run's processes: a one-process team unless start() found a launcher.
Team& world();

// Tests: `team` is the world while the guard lives (then the one-process team again).
class WorldForTest {
 public:
  explicit WorldForTest(std::unique_ptr<Team> team);
  ~WorldForTest();
  WorldForTest(const WorldForTest&) = delete;
  WorldForTest& operator=(const WorldForTest&) = delete;
};

// ---- agreement: typed payloads over world() -----------------------------------------------------
// Every payload travels as JSON text, written and read with nlohmann::json's to_json / from_json of
// its type; a payload that does not read back as its type ends the collective with an error naming
// the rank that sent it (on every process: each reads the same payloads).

// Bytes that are not text (a GPU IPC handle, NCCL's unique id): sent as hex.
struct Blob {
  std::string bytes;
};
void to_json(nlohmann::json& j, const Blob& b);
void from_json(const nlohmann::json& j, Blob& b);
void to_json(nlohmann::json& j, const RankInfo& r);
void from_json(const nlohmann::json& j, RankInfo& r);

// The transport of agree_all: every process's `mine`, in rank order, parsed. Collective.
std::vector<nlohmann::json> allgather_json(const nlohmann::json& mine);
// The transport of share: every process's `mine`, once no process has an `error`. Collective.
std::vector<nlohmann::json> share_json(const nlohmann::json& mine, const std::string& error);
// Throws std::runtime_error: rank `rank`'s payload does not read as what this process expects.
[[noreturn]] void unreadable(std::size_t rank, const std::string& why);

namespace detail {
template <class T>
std::vector<T> read_all(const std::vector<nlohmann::json>& all) {
  std::vector<T> out;
  out.reserve(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    try {
      out.push_back(all[r].template get<T>());
    } catch (const std::exception& e) {  // nlohmann's type errors, a from_json's own
      unreadable(r, e.what());
    }
  }
  return out;
}
}  // namespace detail

// Every process's `mine`, in rank order. Collective.
template <class T>
std::vector<T> agree_all(const T& mine) {
  return detail::read_all<T>(allgather_json(nlohmann::json(mine)));
}

// Every process's `mine`, once no process has an `error` (empty: none); otherwise throws
// std::runtime_error with the first error, naming its rank, on every process. Collective.
template <class T>
std::vector<T> share(const T& mine, const std::string& error) {
  return detail::read_all<T>(share_json(error.empty() ? nlohmann::json(mine) : nlohmann::json(), error));
}

// Every process's error (empty: none) gathered; the first non-empty one, prefixed "rank K: " in a
// multi-process run (unless `name_rank` is false: the error names its rank itself), or nullopt when no
// process has one. Collective.
std::optional<std::string> first_error(const std::string& mine, bool name_rank = true);

// Whether the sweep stops before its next case: a signal came to this process (core/interrupt.hpp) or, in a
// multi-process run, to any of them (then it is collective: every process asks at the same point), or a
// process of the run is gone and a case has failed with the reason (stop_recorded).
bool stop_agreed();
// A case failed after a process of the run was gone: the reason is in the results, the sweep may stop.
void stop_recorded();

// ---- helpers over world() ------------------------------------------------------------------------
// Whether plan rank `r` lives in this process (always, in a one-process run).
bool local(int rank);
// The plan's ranks that live in this process, in order.
std::vector<int> local_ranks(const Plan& plan);
// The plan's issuing ranks that live in this process, in order.
std::vector<int> local_issuers(const Plan& plan);
// Whether the process `pid` of this host no longer runs (or is a zombie).
bool process_gone(long pid);
// Whether this process can look at rank r's process (process_gone): it runs on this host, in this
// process's PID namespace (containers of one host with a host name in common may each have their own).
bool sees_process(const RankInfo& r);
// This process's PID namespace ("pid:[4026531836]"), or "" where /proc does not say.
std::string pid_namespace();
// Whether plan ranks a and b run on different hosts.
bool different_nodes(int a, int b);

// ---- start -----------------------------------------------------------------------------------------
// What the environment says about a launcher (mpirun, srun, torchrun): whether one started this
// process as one of several, how many, this process's local rank (-1: not said) and the variables read.
struct LaunchEnv {
  bool launched = false;  // a launcher variable is set (even for one process)
  int size = 1;           // world size the launcher announced (1 when none says)
  int local_rank = -1;
  std::string source;     // e.g. "OMPI_COMM_WORLD_SIZE=2, OMPI_COMM_WORLD_LOCAL_RANK=1"
  // srun started this process (the size came from SLURM_STEP_NUM_TASKS) with no process-management
  // interface for MPI to wire the tasks up with (srun --mpi=none, or a cluster's MpiDefault=none):
  // no PMIX_* / PMI_* / PALS_* variable and no other launcher's own.
  bool srun_without_pmi = false;
};
LaunchEnv launch_env();

// Starts the team this process belongs to: MPI where a launcher started it and the build has MPI.
// Throws InputError when a launcher announced several processes and this build has no MPI (each would
// run the whole sweep and write the same file). Idempotent.
void start();
// Ends MPI cleanly (every process calls it at the same point), or, after a failure that left
// collectives unmatched, does nothing (the process exits without it). Idempotent.
void finish(bool clean);
// Whether this build can run under a launcher: "MPI (Open MPI v4.1.4, ...)" or why not.
std::optional<std::string> mpi_build_unsupported();
std::string mpi_build_description();

}  // namespace dmabench::team
