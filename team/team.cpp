#include "team/team.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "team/mpi_team.hpp"
#include "core/plan.hpp"

namespace dmabench::team {
namespace {

class OneProcess final : public Team {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string launcher() const override { return "one process"; }

 protected:
  std::vector<std::string> exchange(const std::string& mine) override { return {mine}; }
};

std::unique_ptr<Team>& world_slot() {
  static std::unique_ptr<Team> w = std::make_unique<OneProcess>();
  return w;
}

// The first of `names` that is set and an integer, with its name.
std::optional<std::pair<std::string, int>> env_int(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (!v || !*v) continue;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (*end == '\0' && x >= 0 && x <= std::numeric_limits<int>::max()) return std::make_pair(std::string(n), static_cast<int>(x));
  }
  return std::nullopt;
}

}  // namespace

Team& world() { return *world_slot(); }

std::vector<std::string> Team::allgather(const std::string& mine) {
  if (!stopped_.empty()) throw TeamStopped(stopped_);
  const std::uint64_t call = ++collectives_;
  std::string tagged(sizeof call, '\0');  // the call's number in front of the payload
  std::memcpy(tagged.data(), &call, sizeof call);
  std::vector<std::string> all;
  try {
    all = exchange(tagged + mine);
  } catch (const TeamStopped& e) {
    if (stopped_.empty()) stopped_ = e.what();
    throw;
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::uint64_t theirs = 0;
    if (all[r].size() >= sizeof theirs) std::memcpy(&theirs, all[r].data(), sizeof theirs);
    if (theirs != call) {
      stopped_ = fmt::format("internal error: the processes are at different collectives (rank {} at its collective {}, "
                             "rank {} at {}): one process skipped or added one",
                             rank(), call, r, theirs);
      throw TeamStopped(stopped_);
    }
    all[r].erase(0, sizeof theirs);
  }
  return all;
}

bool stop_agreed() {
  const bool mine = interrupt::requested() != 0;
  if (!world().multi()) return mine;
  // A process is gone: the sweep stops once a case has failed with the reason. That is the case in
  // flight, or, where the death was noticed between cases (in this very agreement), the next one, which
  // fails at its first agreement: the file says why the run ended wherever the kill landed.
  if (!world().stopped().empty()) return world().stop_is_recorded();
  try {
    return first_error(mine ? "stop" : "").has_value();
  } catch (const TeamStopped&) {
    return false;
  }
}

void stop_recorded() { world().record_stop(); }

WorldForTest::WorldForTest(std::unique_ptr<Team> team) { world_slot() = std::move(team); }
WorldForTest::~WorldForTest() { world_slot() = std::make_unique<OneProcess>(); }

bool local(int rank) { return !world().multi() || rank == world().rank(); }

std::vector<int> local_ranks(const Plan& plan) {
  std::vector<int> r;
  for (int i = 0; i < plan.ranks(); ++i)
    if (local(i)) r.push_back(i);
  return r;
}

std::vector<int> local_issuers(const Plan& plan) {
  std::vector<int> r;
  for (int i : plan.issuers())
    if (local(i)) r.push_back(i);
  return r;
}

void to_json(nlohmann::json& j, const Blob& b) {
  std::string hex;
  hex.reserve(2 * b.bytes.size());
  for (unsigned char c : b.bytes) hex += fmt::format("{:02x}", c);
  j = hex;
}

void from_json(const nlohmann::json& j, Blob& b) {
  const std::string hex = j.get<std::string>();
  const auto digit = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  if (hex.size() % 2 != 0) throw std::invalid_argument("a blob of an odd number of hex digits");
  b.bytes.assign(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument(fmt::format("'{}' is not hex", hex.substr(2 * i, 2)));
    b.bytes[i] = static_cast<char>(hi * 16 + lo);
  }
}

void to_json(nlohmann::json& j, const RankInfo& r) {
  j = {{"rank", r.rank},     {"host", r.host},     {"pid", r.pid},      {"local_rank", r.local_rank},
       {"node", r.node},     {"device", r.device}, {"bus_id", r.bus_id}, {"cpu_affinity", r.cpu_affinity},
       {"pid_namespace", r.pid_namespace}};
}

void from_json(const nlohmann::json& j, RankInfo& r) {
  j.at("rank").get_to(r.rank);
  j.at("host").get_to(r.host);
  j.at("pid").get_to(r.pid);
  j.at("local_rank").get_to(r.local_rank);
  j.at("node").get_to(r.node);
  j.at("device").get_to(r.device);
  j.at("bus_id").get_to(r.bus_id);
  j.at("cpu_affinity").get_to(r.cpu_affinity);
  j.at("pid_namespace").get_to(r.pid_namespace);
}

void unreadable(std::size_t rank, const std::string& why) {
  throw std::runtime_error(fmt::format("rank {} sent a payload this process cannot read ({}): every process of a run "
                                       "must run the same dmabench",
                                       rank, why));
}

std::vector<nlohmann::json> allgather_json(const nlohmann::json& mine) {
  // invalid UTF-8 (an error message quoting a path of raw bytes) replaced, not thrown
  const auto all = world().allgather(mine.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::vector<nlohmann::json> out;
  out.reserve(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    try {
      out.push_back(nlohmann::json::parse(all[r]));
    } catch (const nlohmann::json::parse_error& e) {
      unreadable(r, e.what());
    }
  }
  return out;
}

std::vector<nlohmann::json> share_json(const nlohmann::json& mine, const std::string& error) {
  auto all = allgather_json(error.empty() ? nlohmann::json{{"value", mine}} : nlohmann::json{{"error", error}});
  std::vector<nlohmann::json> values;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto e = all[r].find("error");
    if (e != all[r].end() && e->is_string()) throw std::runtime_error(fmt::format("rank {}: {}", r, e->get<std::string>()));
    if (!all[r].is_object() || !all[r].contains("value")) unreadable(r, "neither a value nor an error");
    values.push_back(std::move(all[r]["value"]));
  }
  return values;
}

std::optional<std::string> first_error(const std::string& mine, bool name_rank) {
  if (!world().multi()) return mine.empty() ? std::nullopt : std::optional<std::string>(mine);
  const auto all = agree_all(mine);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) return name_rank ? fmt::format("rank {}: {}", r, all[r]) : all[r];
  return std::nullopt;
}

bool process_gone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  // plain read(2): a /proc file of a process that just went fails with ESRCH, which iostreams throw
  char buf[512];
  const int fd = ::open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY);
  if (fd < 0) return errno == ENOENT || errno == ESRCH;
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return true;
  const std::string text(buf, static_cast<std::size_t>(n));
  const auto paren = text.rfind(')');  // "pid (comm) S ...": the state after the command name
  return paren != std::string::npos && paren + 2 < text.size() && (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

std::string pid_namespace() {
  char buf[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

bool sees_process(const RankInfo& r) {
  const auto& all = world().ranks();
  const int me = world().rank();
  if (me >= static_cast<int>(all.size())) return false;
  return r.node == all[static_cast<std::size_t>(me)].node && r.pid_namespace == all[static_cast<std::size_t>(me)].pid_namespace;
}

bool different_nodes(int a, int b) {
  const auto& r = world().ranks();
  if (!world().multi() || a >= static_cast<int>(r.size()) || b >= static_cast<int>(r.size())) return false;
  return r[a].node != r[b].node;
}

LaunchEnv launch_env() {
  LaunchEnv e;
  std::vector<std::string> read;
  // Open MPI, PMIx (Open MPI 5, srun --mpi=pmix), a task of srun (SLURM_STEP_NUM_TASKS; an sbatch or
  // salloc shell has SLURM_NTASKS but is no task), MPICH / Intel MPI (PMI), MVAPICH; torchrun's
  // WORLD_SIZE only with its RANK and LOCAL_RANK (a bare WORLD_SIZE is often inherited)
  auto size = env_int({"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"});
  if (!size && std::getenv("RANK") && std::getenv("LOCAL_RANK")) size = env_int({"WORLD_SIZE"});
  if (size) {
    e.launched = true;
    e.size = std::max(1, size->second);
    read.push_back(fmt::format("{}={}", size->first, size->second));
  }
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) e.launched = true;
  if (size && size->first == "SLURM_STEP_NUM_TASKS" && size->second > 1) {
    bool pmi = false;
    for (char** v = environ; *v && !pmi; ++v)
      for (const char* prefix : {"PMIX_", "PMI_", "PALS_"})  // Slurm's pmix and pmi2 plugins, Cray's PALS
        pmi = pmi || std::strncmp(*v, prefix, std::strlen(prefix)) == 0;
    e.srun_without_pmi = !pmi;
  }
  if (auto l = env_int({"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                        "LOCAL_RANK"})) {
    e.local_rank = l->second;
    read.push_back(fmt::format("{}={}", l->first, l->second));
  }
  e.source = fmt::format("{}", fmt::join(read, ", "));
  return e;
}

void start() {
  static bool started = false;
  if (started) return;
  started = true;
  const LaunchEnv env = launch_env();
  if (!env.launched) return;
  if (env.srun_without_pmi)  // MPI_Init would fail (Open MPI aborts) or give each task a world of its own
    throw InputError(fmt::format("started by srun as one of {} tasks ({}) without a process-management interface "
                                 "(no PMIX_* or PMI_* variable: srun --mpi=none, or the cluster's MpiDefault): MPI "
                                 "cannot connect the tasks; launch with srun --mpi=pmix (srun --mpi=list names the "
                                 "cluster's), or mpirun",
                                 env.size, env.source));
#ifdef DMABENCH_HAVE_MPI
  std::unique_ptr<Team> team = start_mpi();
  if (env.size > 1 && team->size() != env.size)  // e.g. torchrun, or srun with an MPI that lacks Slurm's PMI
    throw InputError(fmt::format(
        "started as one of {} processes ({}) but {} sees {}: this MPI cannot reach the launcher that "
        "started the processes, and each would run the whole sweep and write the same file; launch with this "
        "MPI's mpirun, or srun --mpi=pmix (srun --mpi=list) with an MPI built for it",
        env.size, env.source, mpi_library_version(), team->size() == 1 ? "one" : std::to_string(team->size())));
  if (team->size() > 1) {
    world_slot() = std::move(team);
    // rank 0 still writes its results when the launcher (which holds the other end of stdout and
    // stderr) is gone: a failed write is not a reason to die
    std::signal(SIGPIPE, SIG_IGN);
  }  // else one process under a launcher: an ordinary run
#else
  if (env.size > 1)
    throw InputError(fmt::format("started as one of {} processes ({}) but this build has no MPI (--features): each "
                                 "process would run the whole sweep and write the same file; install libopenmpi-dev and "
                                 "rebuild, or run one process",
                                 env.size, env.source));
#endif
}

void finish(bool clean) {
#ifdef DMABENCH_HAVE_MPI
  finish_mpi(clean && world().stopped().empty());  // MPI_Finalize would wait for a process that is gone
#else
  (void)clean;
#endif
}

std::optional<std::string> mpi_build_unsupported() {
#ifdef DMABENCH_HAVE_MPI
  return std::nullopt;
#else
  return std::string("this build has no MPI (find_package(MPI) found none: install libopenmpi-dev and rebuild)");
#endif
}

std::string mpi_build_description() {
#ifdef DMABENCH_HAVE_MPI
  return mpi_library_version();
#else
  return *mpi_build_unsupported();
#endif
}

}  // namespace dmabench::team
