// gbench::Session, the program's sampler and table: a case that fails while Google Benchmark samples it is
// told by the table's error row alone (the sweep printed it a second time on a line of its own); a case that
// failed after clean samples is not, so the sweep still says why.
#include <stdexcept>

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
              .bytes_per_rank = 4096, .timing = Timing::oneshot, .warmup = 1, .iterations = 5};
}

}  // namespace

TEST(GbenchSession, AFailureWhileSampledIsTheTablesErrorRowAlone) {
  auto backend = host_backend();
  auto host = make_engine("host").value();
  gbench::Session session({}, 60, true);
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
