// gbench::Session, the program's sampler and console. With Google Benchmark's JSON on the console, a case that fails
// while Google Benchmark samples it is told by the JSON's error run alone (the sweep printed it a second time on a
// line of its own); a case that failed after clean samples is not, so the sweep still says why. dmabench's table
// (the default console) shows every case as one row, whatever happened to it.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "bench/run/gbench.hpp"
#include "bench/run/run_case.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using testing_support::host_backend;
using json = nlohmann::json;

namespace {

// Launches after the first `good` (validation and warm-up) throw.
class FailingOperation final : public testing_support::ForwardingOperation {
 public:
  FailingOperation(std::unique_ptr<Operation> inner, int good) : ForwardingOperation(std::move(inner)), good_(good) {}
  void launch() override {
    if (launches_++ >= good_) throw std::runtime_error("launch refused by the test");
    inner_->launch();
  }

 private:
  int good_, launches_ = 0;
};

Case copy_case() {
  return Case{.pattern = "copy", .variant = EngineVariant{"host", json::object()}, .devices = {0, 1},
              .bytes_per_rank = 4096, .timing = Timing::oneshot, .run = {.warmup = 1, .iterations = 5}};
}

}  // namespace

TEST(GbenchSession, AFailureWhileSampledIsTheJsonErrorRunAlone) {
  auto backend = host_backend();
  auto host = make_engine("host").value();
  gbench::Session session({"--benchmark_format=json"}, 60, true);
  bool sampled = false;
  CaseHooks hooks{.sampler = [&](CaseExecution& e) {
    sampled = true;
    return session.sample(e);
  }};
  // Validation and the warm-up launch once each; the third launch, the first timed one, throws.
  testing_support::WrappingEngine failing(*host, [](std::unique_ptr<Operation> op) -> std::unique_ptr<Operation> {
    return std::make_unique<FailingOperation>(std::move(op), 2);
  });
  CaseExecution bad(testing_support::planned(copy_case()), &failing, "", *backend);
  const CaseRecord& r = run_case(bad, hooks);
  bad.release();
  ASSERT_TRUE(sampled);
  ASSERT_EQ(r.status, Status::failed) << r.reason;
  EXPECT_NE(r.reason.find("launch refused by the test"), std::string::npos) << r.reason;
  EXPECT_TRUE(session.show(r));  // the error row says it

  CaseExecution good(testing_support::planned(copy_case()), host.get(), "", *backend);
  CaseRecord ok = run_case(good, hooks);
  good.release();
  ASSERT_EQ(ok.status, Status::ok) << ok.reason;
  CaseRecord failed_after = ok;  // failed after clean samples (a measurement beside a workload, say)
  failed_after.status = Status::failed;
  failed_after.reason = "overlap: the workload stopped";
  EXPECT_FALSE(session.show(failed_after));  // the table shows no error: the sweep must say why
  CaseExecution again(testing_support::planned(copy_case()), host.get(), "", *backend);
  const CaseRecord& ok2 = run_case(again, hooks);
  again.release();
  EXPECT_TRUE(session.show(ok2));
  EXPECT_FALSE(session.show(ok2));  // nothing held any more: a case never sampled
}

TEST(GbenchSession, TheTableShowsEveryCaseAsOneRow) {
  auto backend = host_backend();
  auto host = make_engine("host").value();
  const Case c = testing_support::planned(copy_case());
  gbench::Session session({}, 60, true, "", gbench::Console{1, 0, gbench::table_widths({&c})});
  EXPECT_TRUE(session.shows_every_case());
  CaseHooks hooks{.sampler = [&](CaseExecution& e) { return session.sample(e); }};
  CaseExecution good(c, host.get(), "", *backend);
  const CaseRecord ok = run_case(good, hooks);
  good.release();
  ASSERT_EQ(ok.status, Status::ok) << ok.reason;
  CaseRecord skipped;
  skipped.spec = c;
  skipped.status = Status::skipped;
  skipped.reason = "engine x runs on the cuda backend;\nthis run uses the host backend";
  CaseRecord failed_after = ok;
  failed_after.status = Status::failed;
  failed_after.reason = "overlap: the workload stopped";
  ::testing::internal::CaptureStdout();
  EXPECT_TRUE(session.show(ok));
  EXPECT_TRUE(session.show(skipped));  // never sampled: its row all the same
  EXPECT_TRUE(session.show(failed_after));
  std::fflush(stdout);
  const std::string text = ::testing::internal::GetCapturedStdout();
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(lines.size(), 4u) << text;  // the header, then one row per case
  EXPECT_NE(lines[0].find("p50"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].substr(0, 15), "    4 KiB  copy") << lines[1];
  EXPECT_NE(lines[1].find(fmt::format("  {}  ", ok.timed->latency_us.count)), std::string::npos) << lines[1];
  EXPECT_TRUE(lines[1].ends_with(ok.timed->noisy ? "noisy" : "ok")) << lines[1];
  EXPECT_TRUE(lines[2].ends_with("skipped  engine x runs on the cuda backend;\\nthis run uses the host backend")) << lines[2];
  EXPECT_TRUE(lines[3].ends_with("FAILED   overlap: the workload stopped")) << lines[3];
  // -v: an ok row says how its sampling stopped and its setup time
  const table::CaseRow detailed = gbench::case_row(ok, true);
  EXPECT_TRUE(detailed.reason.starts_with("stopped: iterations, setup ")) << detailed.reason;
  EXPECT_EQ(gbench::case_row(ok).reason, "");
  EXPECT_EQ(detailed.variant, "host");
  EXPECT_EQ(detailed.devices, "0,1");
  EXPECT_EQ(detailed.timing, "oneshot");
}

// The progress line's weights: a case's estimated cost grows with its bytes and samples, and an adaptive case
// costs its time limit (what it may take), whatever its few samples would; a case beside a workload its rounds.
TEST(GbenchLoops, EstimatesFollowTheWork) {
  const gbench::Loops loops({});
  const Case small = copy_case();  // 4 KiB, 1 warm-up, 5 samples
  Case big = small, more = small, adaptive = small;
  big.bytes_per_rank = 64u << 20;
  more.run.iterations = 500;
  adaptive.run.sampling.adaptive = true;
  adaptive.run.sampling.max_time_s = 0.5;
  EXPECT_GT(loops.estimated_seconds(big), 10 * loops.estimated_seconds(small));
  EXPECT_GT(loops.estimated_seconds(more), 2 * loops.estimated_seconds(small));
  EXPECT_NEAR(loops.estimated_seconds(adaptive), 0.5, 0.01);
  adaptive.run.sampling.min_time_s = 3.0;  // never less than min_time
  EXPECT_NEAR(loops.estimated_seconds(adaptive), 3.0, 0.01);
  EXPECT_GT(gbench::Loops({"--benchmark_repetitions=3"}).estimated_seconds(more), 2 * loops.estimated_seconds(more));
  EXPECT_NEAR(gbench::Loops({"--benchmark_min_time=0.5"}).estimated_seconds(small), 0.5, 0.01);
  // beside a workload: its rounds alone and with the case, each at least duration_ms (a 4 KiB case's 20 samples
  // are far shorter): 2 x 3 x 50 ms more
  Case beside = small;
  beside.run.overlap = OverlapConfig{};
  EXPECT_NEAR(loops.estimated_seconds(beside) - loops.estimated_seconds(small), 0.3, 0.01);
  beside.run.overlap->rounds = 1;
  beside.run.overlap->duration_ms = 500;
  EXPECT_NEAR(loops.estimated_seconds(beside) - loops.estimated_seconds(small), 1.0, 0.01);
}
