// The file contract of a run (bench/out_file, core/json_file, core/read_file): the lock, the temporary and
// journal names, the checks of every written path, escaping of non-UTF-8 bytes, reading with limits.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/output/out_file.hpp"
#include "bench/output/report.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "core/read_file.hpp"
#if defined(DMABENCH_HAVE_NCCL)
#include <cstdlib>

#include <fmt/format.h>

#include "gpu/nccl_comm.hpp"
#endif

using namespace dmabench;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const char* name) {
  fs::path d = fs::path(::testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

// Runs taking and releasing the lock on one --out in a tight loop, from several threads (each OutLock opens the
// file itself: flock excludes between open files, as between processes): never two holders at once. With the
// lock released by unlink-then-close and nothing more, a run that opened the file before the unlink locked the
// removed file while the next run locked the new one: both held "the" lock.
TEST(OutLock, NeverHeldByTwoRunsAtOnce) {
  const fs::path dir = fresh_dir("dmabench_lock_stress");
  const std::string out = (dir / "out.json").string();
  std::atomic<int> holders{0}, overlaps{0}, taken{0};
  auto worker = [&] {
    for (int i = 0; i < 3000; ++i) {
      try {
        const OutLock lock(out);
        if (holders.fetch_add(1) != 0) overlaps.fetch_add(1);
        taken.fetch_add(1);
        for (int k = 0; k < 3; ++k) sched_yield();
        holders.fetch_sub(1);
      } catch (const InputError&) {
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0) << "two holders of one lock, " << overlaps.load() << " times in " << taken.load();
  EXPECT_GT(taken.load(), 100);
  EXPECT_FALSE(fs::exists(out + ".lock"));
}

TEST(OutLock, NeverThroughALinkNorOnAFifo) {
  const fs::path dir = fresh_dir("dmabench_lock_link");
  const std::string out = (dir / "out.json").string();
  fs::create_symlink(dir / "target", out + ".lock");
  EXPECT_THROW(OutLock{out}, InputError);
  EXPECT_FALSE(fs::exists(dir / "target")) << "the link's target was created";
  fs::remove(out + ".lock");
  ASSERT_EQ(::mkfifo((out + ".lock").c_str(), 0644), 0);
  EXPECT_THROW(OutLock{out}, InputError);
}

// A link planted at a temporary name is never followed: temporaries are new files under names nobody can guess.
TEST(AtomicWrite, NeverFollowsALinkAtTheTemporaryName) {
  const fs::path dir = fresh_dir("dmabench_tmp_link");
  const std::string path = (dir / "r.json").string();
  put(dir / "victim", "precious");
  fs::create_symlink(dir / "victim", path + ".tmp." + std::to_string(::getpid()));
  write_json_atomically(path, json{{"a", 1}});
  EXPECT_EQ(slurp(dir / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(json::parse(slurp(path)), json({{"a", 1}}));
  std::string tmp;
  const int fd = create_temporary(path, tmp);
  ::close(fd);
  EXPECT_EQ(tmp.size(), path.size() + kTemporarySuffixBytes);
  EXPECT_EQ(tmp.rfind(path + ".tmp.", 0), 0u);
  fs::remove(tmp);
}

// The journal is made under a temporary name and renamed into place: a link at <out>.journal is replaced, its
// target never written; a run that records nothing leaves <out> and an earlier run's journal as they are.
TEST(ResultsFile, JournalNeverWritesThroughALinkAndNothingRecordedChangesNothing) {
  const fs::path dir = fresh_dir("dmabench_journal_link");
  const std::string path = (dir / "run.json").string();
  put(dir / "victim", "precious");
  fs::create_symlink(dir / "victim", path + ".journal");
  {
    ResultsFile file(path, json{{"backend", "host"}});
    file.add(json{{"name", "a"}});
    EXPECT_FALSE(fs::is_symlink(path + ".journal"));
  }
  EXPECT_EQ(slurp(dir / "victim"), "precious");
  put(path, "kept");
  put(path + ".journal", "a killed run's journal");
  {
    ResultsFile empty(path, json{{"backend", "host"}});
    empty.finish();
  }
  EXPECT_EQ(slurp(path), "kept");
  EXPECT_EQ(slurp(path + ".journal"), "a killed run's journal");
}

TEST(ResultsFile, BytesThatAreNotUtf8AreEscapedNeverFatal) {
  EXPECT_EQ(escape_non_utf8("plain/ascii.json"), "plain/ascii.json");
  EXPECT_EQ(escape_non_utf8("caf\xc3\xa9"), "caf\xc3\xa9");             // valid UTF-8 stays
  EXPECT_EQ(escape_non_utf8("a\xff" "b"), "a\\xffb");                    // a stray byte
  EXPECT_EQ(escape_non_utf8("\xc3"), "\\xc3");                            // a truncated sequence
  EXPECT_EQ(escape_non_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
  EXPECT_EQ(escape_non_utf8("\xc0\xaf"), "\\xc0\\xaf");                   // an overlong form
  EXPECT_EQ(escape_non_utf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");     // 4 bytes, valid
  const fs::path dir = fresh_dir("dmabench_utf8");
  const std::string path = (dir / "run.json").string();
  ResultsFile file(path, json{{"config_file", "cfg-\xff.json"}});  // not escaped: the last guard replaces it
  file.add(json{{"name", "a\xfe"}});
  file.finish();
  const json doc = json::parse(slurp(path));
  EXPECT_EQ(doc["results"].size(), 1u);
}

TEST(OutPaths, EveryWrittenPathIsCheckedFirst) {
  const fs::path dir = fresh_dir("dmabench_out_paths");
  const std::string cfg = (dir / "cfg.json").string();
  put(cfg, "{}");
  auto refused = [&](auto&& f, const std::string& fragment) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const std::string out = (dir / "out.json").string();
  for (const char* name : {"x.json.lock", "x.json.journal", "x.json.tmp.4242", "x.json.journal.tmp.aB3xYz"})
    refused([&] { check_out_path((dir / name).string(), cfg); }, "named like a run's own file");
  for (const char* name : {"x.tmp.json", "x.tmp.1.json", "x.tmp.abcdefg"})  // not a temporary name: accepted
    EXPECT_EQ(check_out_path((dir / name).string(), cfg).path, (dir / name).string());
  refused([&] { check_out_path((dir / "new").string() + "/", cfg); }, "no file name");
  refused([&] { check_output_file("--power-trace", (dir / "..").string(), cfg, true); }, "no file name");
  fs::create_directories(out + ".journal");
  refused([&] { check_out_path(out, cfg); }, "out.json.journal exists and is a directory");
  fs::remove(out + ".journal");
  refused([&] { check_out_path((dir / std::string(240, 'b')).string(), cfg); }, "longer than");
  refused([&] { check_output_file("--benchmark_out", (dir / "no" / "x.json").string(), cfg, false); }, "does not exist");
  EXPECT_NO_THROW(check_output_file("--power-trace", (dir / "no" / "x.json").string(), cfg, true));
  refused([&] { check_output_file("--benchmark_out", cfg, cfg, false); }, "the --config file itself");
  {
    const OutLock running((dir / "running.json").string());  // another run's results, being written
    refused([&] { check_output_file("--power-trace", (dir / "running.json").string(), cfg, true); },
            "another dmabench run is writing it");
  }
  EXPECT_NO_THROW(check_output_file("--power-trace", (dir / "running.json").string(), cfg, true));
  refused([&] { check_distinct_outputs({{"--out", out}, {"--benchmark_out", (dir / "." / "out.json").string()}}); },
          "the same file as --out");
  put(dir / "afile", "x");
  refused([&] { check_packets_dir((dir / "afile").string(), {}); }, "not a directory (a regular file)");
  refused([&] { check_packets_dir((dir / "afile" / "sub").string(), {}); }, "not a directory");
  refused([&] { check_packets_dir((dir / std::string(300, 'p')).string(), {}); }, "longer than");
  fs::create_directories(dir / "pk" / "case.json");
  refused([&] { check_packets_dir((dir / "pk").string(), {"case.json"}); }, "case.json exists and is a directory");
  refused([&] { check_packets_dir((dir / "pk").string(), {std::string(250, 'c') + ".json"}); }, "longer than");
  EXPECT_NO_THROW(check_packets_dir((dir / "new" / "pk").string(), {"a.json"}));
}

// A file read under a limit costs its own size, not the limit's: read_small_file allocated and zero-filled the
// whole limit first (--check's 512 MiB for a file of a few bytes; a limit past memory threw std::length_error).
TEST(ReadFile, ASmallFileCostsItsSizeNotTheLimit) {
  const fs::path dir = fresh_dir(("read-" + std::to_string(::getpid())).c_str());
  put(dir / "small.json", "{\"a\": 1}");
  const Maybe<std::string> text = read_small_file((dir / "small.json").string(), std::size_t{1} << 50);
  ASSERT_TRUE(text) << text.why_not();
  EXPECT_EQ(*text, "{\"a\": 1}");
  put(dir / "big", std::string(100000, 'x'));  // past the first buffer (the file's size and 4096): grown, still bounded
  EXPECT_EQ(read_small_file((dir / "big").string(), 100000).value().size(), 100000u);
  EXPECT_FALSE(read_small_file((dir / "big").string(), 99999));
  fs::remove_all(dir);
}

#if defined(DMABENCH_HAVE_NCCL)
// NCCL opens its log with fopen(..., "w"), following links: the log dmabench asks for lies in a new directory of
// its own (mode 0700), never at a predictable name in /tmp ("/tmp/dmabench-nccl-<pid>.log" before), where a link
// planted by another user would have its target truncated. Needs no GPU.
TEST(NcclLog, InADirectoryOfItsOwnNeverAPredictableName) {
  if (std::getenv("NCCL_DEBUG")) GTEST_SKIP() << "NCCL_DEBUG is set: NCCL writes where the user asked";
  gpu::nccl_prepare_log();
  const std::string path = gpu::nccl_log_path();
  ASSERT_FALSE(path.empty());
  EXPECT_NE(path, fmt::format("/tmp/dmabench-nccl-{}.log", ::getpid()));
  struct stat st {};
  ASSERT_EQ(::lstat(fs::path(path).parent_path().c_str(), &st), 0) << path;
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << path;
  EXPECT_EQ(st.st_mode & 0777, 0700u) << path;
  EXPECT_EQ(st.st_uid, ::getuid()) << path;
}
#endif
