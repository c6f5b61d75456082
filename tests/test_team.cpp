// The agreement between the processes of a multi-process run (team/), without MPI: a scripted team
// plays rank 0 of two and answers each collective with what "rank 1" sends.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>  // environ

#include <gtest/gtest.h>

#include "core/interrupt.hpp"
#include "bench/measure/timing.hpp"
#include "team/team.hpp"
#include "engines/backend.hpp"
#include "engines/engine.hpp"
#include "engines/registry.hpp"

namespace dmabench {
namespace {

class ScriptedTeam final : public team::Team {
 public:
  explicit ScriptedTeam(std::deque<std::string> theirs) : theirs_(std::move(theirs)) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string launcher() const override { return "scripted"; }
  int collectives = 0;

 protected:
  // Rank 1 answers at the same collective as rank 0 (Team::allgather numbers each call), unless:
  // "!gone": rank 1 died while this collective waited for it; "!error": the transport failed (an MPI
  // error) without naming a reason of its own; "!ahead": rank 1 is one collective further.
  std::vector<std::string> exchange(const std::string& mine) override {
    if (theirs_.empty()) throw std::logic_error("an unscripted collective");
    std::string other = theirs_.front();
    theirs_.pop_front();
    ++collectives;
    if (other == "!gone") {
      set_stopped("rank 1 (pid 7 on vm) ended while rank 0 waited for it in MPI_Iallgather");
      throw team::TeamStopped(stopped());
    }
    if (other == "!error") throw team::TeamStopped("MPI_Iallgather failed: MPI_ERR_OTHER");
    std::uint64_t call = 0;  // Team::allgather's number in front of each payload
    std::memcpy(&call, mine.data(), sizeof call);
    if (other == "!ahead") ++call;
    std::string tag(sizeof call, '\0');
    std::memcpy(tag.data(), &call, sizeof call);
    return {mine, tag + (other == "!ahead" ? "" : other)};
  }

 private:
  std::deque<std::string> theirs_;
};

// What rank 1 sends for a payload `j` (team::agree_all's JSON text).
std::string sent(const nlohmann::json& j) { return j.dump(); }
// What rank 1 sends to team::share: a value, or an error.
std::string shared(const nlohmann::json& value) { return sent({{"value", value}}); }
std::string shared_error(const std::string& error) { return sent({{"error", error}}); }

TEST(Team, AgreeAllRoundTripsTypedPayloads) {
  team::RankInfo theirs{.rank = 1, .local_rank = 1, .node = 0, .host = "vm", .pid = 42, .device = 3, .bus_id = "0000:c1:00.0",
                        .cpu_affinity = "0-7", .pid_namespace = "pid:[1]"};
  const team::Blob handle{std::string("\0\xff\x10 a", 5)};  // bytes that are not text
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{
      sent(theirs), sent(std::vector<int>{4, 5}), sent(team::Blob{"\x01"}), shared(std::pair{0.5, true})}));
  team::RankInfo me;
  me.host = "a\xff";  // invalid UTF-8 goes as a replacement character, not an exception
  const auto ranks = team::agree_all(me);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].host, "a\xef\xbf\xbd");
  EXPECT_EQ(nlohmann::json(ranks[1]), nlohmann::json(theirs)) << "every field of rank 1 read back";
  EXPECT_EQ(ranks[1].bus_id, "0000:c1:00.0");
  EXPECT_EQ(team::agree_all(std::vector<int>{1}), (std::vector<std::vector<int>>{{1}, {4, 5}}));
  const auto blobs = team::agree_all(handle);
  EXPECT_EQ(blobs[0].bytes, handle.bytes) << "every byte, the NUL and 0xff too";
  EXPECT_EQ(blobs[1].bytes, "\x01");
  const auto samples = team::share(std::pair{0.25, false}, "");
  EXPECT_EQ(samples[1], (std::pair{0.5, true}));
}

TEST(Team, APayloadThatDoesNotReadNamesItsRank) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(
      std::deque<std::string>{"{not json", sent("text"), sent("zz"), shared("text"), sent({{"other", 1}})}));
  const auto fails_naming_rank_1 = [](const std::function<void()>& collective, const std::string& why) {
    try {
      collective();
      ADD_FAILURE() << "rank 1's payload does not read: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("rank 1 sent a payload this process cannot read (", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  fails_naming_rank_1([] { team::agree_all(std::string("mine")); }, "parse error");
  fails_naming_rank_1([] { team::agree_all(7); }, "type must be number");
  fails_naming_rank_1([] { team::agree_all(team::Blob{"ok"}); }, "'zz' is not hex");
  fails_naming_rank_1([] { team::share(7, ""); }, "type must be number");
  fails_naming_rank_1([] { team::share(7, ""); }, "neither a value nor an error");
}

TEST(Team, FirstErrorNamesTheRankUnlessAsked) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{sent(""), sent("boom"), sent("x"), sent("x")}));
  EXPECT_FALSE(team::first_error("")) << "nobody has an error";
  EXPECT_EQ(*team::first_error(""), "rank 1: boom");
  // rank 0's own error comes first
  EXPECT_EQ(*team::first_error("mine"), "rank 0: mine");
  EXPECT_EQ(*team::first_error("", /*name_rank=*/false), "x");
}

TEST(Team, ShareThrowsTheOtherRanksErrorEverywhere) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{shared("theirs"), shared_error("out of memory")}));
  EXPECT_EQ(team::share(std::string("mine"), ""), (std::vector<std::string>{"mine", "theirs"}));
  try {
    team::share(std::string("mine"), "");
    FAIL() << "rank 1's error must stop rank 0 too";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1: out of memory");
  }
}

TEST(Team, ATransportErrorStopsTheTeam) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{"x", "!error"}));
  EXPECT_EQ(team::world().allgather("a"), (std::vector<std::string>{"a", "x"}));
  EXPECT_THROW(team::world().allgather("b"), team::TeamStopped);
  EXPECT_EQ(team::world().stopped(), "MPI_Iallgather failed: MPI_ERR_OTHER") << "the sweep ends, keeping every finished case";
  EXPECT_THROW(team::world().allgather("c"), team::TeamStopped) << "no collective after the team stopped";
}

TEST(Team, ProcessesAtDifferentCollectivesStopTheTeam) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{"x", "!ahead"}));
  EXPECT_EQ(team::world().allgather("a"), (std::vector<std::string>{"a", "x"}));
  try {
    team::world().allgather("b");
    FAIL() << "rank 1's data belongs to another collective";
  } catch (const team::TeamStopped& e) {
    EXPECT_STREQ(e.what(), "internal error: the processes are at different collectives (rank 0 at its collective 2, "
                           "rank 1 at 3): one process skipped or added one");
  }
  EXPECT_FALSE(team::world().stopped().empty());
}

TEST(Team, ANeighbourIsWatchedOnlyInThisHostAndPidNamespace) {
  auto team = std::make_unique<ScriptedTeam>(std::deque<std::string>{});
  const std::string mine = team::pid_namespace();
  EXPECT_EQ(mine.rfind("pid:[", 0), 0u) << "Linux names it pid:[inode]: " << mine;
  team::RankInfo me{.rank = 0, .node = 0, .host = "a", .pid_namespace = mine};
  team::RankInfo same = me, container = me, elsewhere = me;
  same.rank = 1;
  container.pid_namespace = "pid:[1]";  // a container of its own on this host: its pids are not ours to look up
  elsewhere.node = 1;
  team->set_ranks({me, same});
  team::WorldForTest w(std::move(team));
  EXPECT_TRUE(team::sees_process(same));
  EXPECT_FALSE(team::sees_process(container));
  EXPECT_FALSE(team::sees_process(elsewhere));
}

TEST(Team, LocalRanksAreThisProcesssOnly) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{}));
  Plan p;
  p.devices = {0, 1, 2};
  EXPECT_EQ(team::local_ranks(p), (std::vector<int>{0}));
  EXPECT_TRUE(team::local(0));
  EXPECT_FALSE(team::local(1));
}

// A process that dies between two cases is noticed in the agreement on whether to stop; the sweep goes
// on to the next case, which fails with the reason at its first agreement, and stops after it: the
// results say why the run ended wherever the kill landed.
TEST(Team, ADeathBetweenCasesStopsTheSweepOnceACaseHasTheReason) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{sent(""), "!gone"}));
  const interrupt::Guard signals;
  EXPECT_FALSE(team::stop_agreed()) << "nobody asked to stop";
  EXPECT_FALSE(team::stop_agreed()) << "rank 1 died in this agreement: the next case must record why";
  EXPECT_FALSE(team::world().stopped().empty());
  EXPECT_THROW(team::first_error(""), team::TeamStopped) << "that case's first agreement fails at once";
  EXPECT_FALSE(team::stop_agreed()) << "no case has failed with the reason yet";
  team::stop_recorded();
  EXPECT_TRUE(team::stop_agreed());
}

// An operation whose launch..wait takes ~`seconds`.
class SleepyOperation final : public Operation {
 public:
  explicit SleepyOperation(double seconds) : seconds_(seconds) {}
  void launch() override {}
  void wait() override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds_);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  void fill_sources(std::uint64_t) override {}
  void poison_destinations(std::uint64_t) override {}
  std::optional<Mismatch> check_destinations(const Plan&, std::uint64_t) override { return std::nullopt; }

 private:
  double seconds_;
};

struct SampleFixture {
  Case spec;
  Plan plan;
  std::unique_ptr<Backend> backend = std::move(make_backend("host")).value();
  std::unique_ptr<Engine> engine = std::move(make_engine("host", "host")).value();
  std::unique_ptr<const TypedOptions> options = engine->parse(nlohmann::json::object());
};

TEST(Team, ASampleIsTheSlowestRanksTime) {
  auto team = std::make_unique<ScriptedTeam>(std::deque<std::string>{sent(""), shared({0.25, false, 0.125}), sent(""), shared({1e-6, true, 1e-9})});
  ScriptedTeam* t = team.get();
  team::WorldForTest w(std::move(team));
  SampleFixture f;
  SleepyOperation op(0.002);
  const measure::Subject s{f.spec, f.plan, *f.engine, *f.options, op, *f.backend};
  const measure::Sample slow = measure::take_sample(s);
  EXPECT_DOUBLE_EQ(slow.seconds_per_op, 0.25) << "rank 1 took 0.25 s: the sample is its time";
  EXPECT_FALSE(slow.gpu_clock);
  EXPECT_DOUBLE_EQ(slow.submit_seconds_per_op, 0.125) << "the submit is the longest of the processes' submits";
  const measure::Sample mine = measure::take_sample(s);
  EXPECT_GE(mine.seconds_per_op, 0.002) << "rank 0 was the slower one";
  EXPECT_LT(mine.seconds_per_op, 0.2);
  EXPECT_TRUE(mine.gpu_clock) << "a GPU-clock sample on any rank makes the sample GPU-timed";
  EXPECT_GE(mine.submit_seconds_per_op, 1e-9) << "this process's own submit, the longer one";
  EXPECT_LE(mine.submit_seconds_per_op, mine.seconds_per_op);
  EXPECT_EQ(t->collectives, 4) << "per sample: one agreement before timing (the barrier), one gather after";
}

// The submit is the time inside launch(): an operation whose launch spins 2 ms and whose wait spins 3 ms.
TEST(Team, TheSubmitIsTheTimeInsideTheLaunchCalls) {
  class SlowLaunch final : public Operation {
   public:
    void launch() override { spin(0.002); }
    void wait() override { spin(0.003); }
    void fill_sources(std::uint64_t) override {}
    void poison_destinations(std::uint64_t) override {}
    std::optional<Mismatch> check_destinations(const Plan&, std::uint64_t) override { return std::nullopt; }

   private:
    static void spin(double seconds) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  };
  SampleFixture f;
  SlowLaunch op;
  const measure::Subject s{f.spec, f.plan, *f.engine, *f.options, op, *f.backend};
  const measure::Sample one = measure::take_sample(s);
  EXPECT_GE(one.submit_seconds_per_op, 0.002);
  EXPECT_LT(one.submit_seconds_per_op, 0.004) << "the wait is not part of the submit";
  EXPECT_GE(one.seconds_per_op, 0.005);
}

TEST(Team, AnErrorInAnotherRanksSampleFailsItHereToo) {
  team::WorldForTest w(std::make_unique<ScriptedTeam>(std::deque<std::string>{sent(""), shared_error("stream synchronize failed")}));
  SampleFixture f;
  SleepyOperation op(0);
  const measure::Subject s{f.spec, f.plan, *f.engine, *f.options, op, *f.backend};
  try {
    measure::take_sample(s);
    FAIL() << "rank 1's error must fail the sample here";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1: stream synchronize failed");
  }
}

// Sets an environment variable for one test.
struct Env {
  Env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~Env() { unsetenv(name_); }
  const char* name_;
};

TEST(Team, LaunchersAreRecognisedAndBatchShellsAreNot) {
  for (const char* n : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                        "WORLD_SIZE", "RANK", "LOCAL_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_NTASKS", "SLURM_LOCALID",
                        "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK"})
    unsetenv(n);
  // a machine's own PMIx / PMI settings (the GPU machine's image sets PMIX_MCA_* for its Open MPI) would read as
  // srun's PMI plugin: this test's environment holds only what each case sets
  std::vector<std::string> launcher_vars;
  for (char** e = environ; *e; ++e) {
    const std::string var(*e);
    for (const char* prefix : {"PMIX_", "PMI_", "PALS_"})
      if (var.rfind(prefix, 0) == 0) launcher_vars.push_back(var.substr(0, var.find('=')));
  }
  for (const auto& n : launcher_vars) unsetenv(n.c_str());
  EXPECT_FALSE(team::launch_env().launched);
  {
    Env a("SLURM_NTASKS", "8");  // an sbatch / salloc shell: not a task of srun
    EXPECT_FALSE(team::launch_env().launched);
    Env b("WORLD_SIZE", "8");  // inherited without torchrun's RANK and LOCAL_RANK
    EXPECT_FALSE(team::launch_env().launched);
  }
  {
    Env a("OMPI_COMM_WORLD_SIZE", "4"), b("OMPI_COMM_WORLD_LOCAL_RANK", "3");
    const team::LaunchEnv e = team::launch_env();
    EXPECT_TRUE(e.launched);
    EXPECT_EQ(e.size, 4);
    EXPECT_EQ(e.local_rank, 3);
    EXPECT_EQ(e.source, "OMPI_COMM_WORLD_SIZE=4, OMPI_COMM_WORLD_LOCAL_RANK=3");
  }
  {
    Env a("SLURM_STEP_NUM_TASKS", "16"), b("SLURM_LOCALID", "5");
    EXPECT_EQ(team::launch_env().size, 16);
    EXPECT_EQ(team::launch_env().local_rank, 5);
    EXPECT_TRUE(team::launch_env().srun_without_pmi) << "srun --mpi=none: nothing for MPI to connect the tasks with";
    Env c("PMIX_NAMESPACE", "slurm.pmix.7.0");  // srun --mpi=pmix
    EXPECT_FALSE(team::launch_env().srun_without_pmi);
  }
  {
    Env a("SLURM_STEP_NUM_TASKS", "2"), b("PMI_FD", "5");  // srun --mpi=pmi2
    EXPECT_FALSE(team::launch_env().srun_without_pmi);
  }
  {
    Env a("SLURM_STEP_NUM_TASKS", "1");  // one task: an ordinary run
    EXPECT_FALSE(team::launch_env().srun_without_pmi);
  }
  {
    Env a("OMPI_COMM_WORLD_SIZE", "4"), b("SLURM_STEP_NUM_TASKS", "2");  // mpirun inside an allocation
    EXPECT_FALSE(team::launch_env().srun_without_pmi);
  }
  {
    Env a("WORLD_SIZE", "2"), b("RANK", "1"), c("LOCAL_RANK", "1");
    EXPECT_TRUE(team::launch_env().launched);
    EXPECT_EQ(team::launch_env().size, 2);
  }
}

}  // namespace
}  // namespace dmabench
