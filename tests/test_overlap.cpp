// Overlap cases: the arithmetic on synthetic timings, and the harness's overlap measurement driven
// through the host backend (a real workload) and through a scripted workload (exact numbers).
#include <numeric>

#include <gtest/gtest.h>

#include "bench/run/run_case.hpp"
#include "bench/measure/overlap.hpp"
#include "bench/beside/load.hpp"
#include "bench/run/transfer_load.hpp"
#include "engines/backend.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using measure::overlap_figures;
using measure::OverlapFigures;
using testing_support::host_backend;
using json = nlohmann::json;

TEST(OverlapFigures, FullyHiddenCommunication) {
  // 10 ms of compute; 100 operations of 50 us = 5 ms of communication; together 10 ms.
  const auto f = overlap_figures({.compute_alone_ms = 10, .compute_with_ms = 10, .comm_alone_us = 50,
                                  .comm_with_us = 50, .comm_ops_with = 100});
  EXPECT_DOUBLE_EQ(f.compute_slowdown_pct, 0.0);
  EXPECT_DOUBLE_EQ(f.comm_slowdown_pct, 0.0);
  EXPECT_DOUBLE_EQ(f.overlap_efficiency, 1.0);
}

TEST(OverlapFigures, SerializedCommunication) {
  // Together takes the sum: nothing hidden.
  const auto f = overlap_figures({.compute_alone_ms = 10, .compute_with_ms = 15, .comm_alone_us = 50,
                                  .comm_with_us = 150, .comm_ops_with = 100});
  EXPECT_DOUBLE_EQ(f.compute_slowdown_pct, 50.0);
  EXPECT_DOUBLE_EQ(f.comm_slowdown_pct, 200.0);
  EXPECT_DOUBLE_EQ(f.overlap_efficiency, 0.0);
}

TEST(OverlapFigures, PartialOverlapAndClamping) {
  // C = 10, M = 200 x 40 us = 8 ms, together 12 ms: (10 + 8 - 12) / 8 = 0.75.
  const auto f = overlap_figures({.compute_alone_ms = 10, .compute_with_ms = 12, .comm_alone_us = 40,
                                  .comm_with_us = 60, .comm_ops_with = 200});
  EXPECT_NEAR(f.compute_slowdown_pct, 20.0, 1e-12);
  EXPECT_NEAR(f.comm_slowdown_pct, 50.0, 1e-12);
  EXPECT_NEAR(f.overlap_efficiency, 0.75, 1e-12);
  // Worse than serialized is still 0; communication that did nothing hid nothing.
  EXPECT_DOUBLE_EQ(overlap_figures({10, 30, 40, 60, 200}).overlap_efficiency, 0.0);
  EXPECT_DOUBLE_EQ(overlap_figures({10, 10, 40, 60, 0}).overlap_efficiency, 0.0);
  // Communication longer than compute: min() picks compute as the shorter one.
  EXPECT_NEAR(overlap_figures({10, 21, 100, 100, 200}).overlap_efficiency, (10 + 20 - 21) / 10.0, 1e-12);
  EXPECT_THROW(overlap_figures({0, 1, 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(overlap_figures({1, 1, 0, 1, 1}), std::invalid_argument);
}

namespace {

Case overlap_case(const std::string& kind, Timing timing = Timing::oneshot) {
  OverlapConfig o;
  o.compute.kind = kind;
  o.compute.bytes = 4 << 20;
  o.duration_ms = 5;
  o.rounds = 2;
  o.min_samples = 5;
  return Case{.pattern = "allgather",
              .variant = EngineVariant{"host", json::object()},
              .devices = {0, 1},
              .bytes_per_rank = 64 << 10,
              .timing = timing,
              .run = {.warmup = 1,
                      .iterations = 10,
                      .pipeline_depth = timing == Timing::pipelined ? 4 : 1,
                      .overlap = o}};
}

json run_overlap(CaseExecution& ex, const std::function<beside::Load&()>& workload) {
  json r = to_json(run_case(ex, CaseHooks{.workload = workload}));
  ex.release();
  return r;
}

// The case run beside the workload its overlap names, made by beside::make_load: the record.
json run_beside_its_workload(const Case& c, Engine& engine, Backend& backend) {
  CaseExecution ex(testing_support::planned(c), &engine, "", backend);
  auto made = beside::make_load(backend, c.run.overlap->compute, c.devices, beside::transfer_maker());
  if (!made) return {{"status", "no workload"}, {"reason", made.why_not()}};
  std::unique_ptr<beside::Load> load = std::move(made).value();
  return run_overlap(ex, [&]() -> beside::Load& { return *load; });
}

// A workload whose device times are scripted: alone runs take `alone_ms`, runs beside the
// communication `with_ms`; each run "finishes" after `polls` finished() calls.
class ScriptedLoad final : public beside::Load {
 public:
  ScriptedLoad(double alone_ms, double with_ms, int polls) : alone_(alone_ms), with_(with_ms), polls_(polls) {}
  void start(int launches) override {
    launches_ = launches;
    ++runs_;
    left_ = polls_;
    polled_ = false;
  }
  bool finished() override {
    polled_ = true;
    return left_-- <= 0;
  }
  std::vector<double> wait_ms() override {
    // Calibration: runs 1-2 (one launch each); run 3 the untimed warm-up at the sized length (its time, 50x
    // the others, must reach no figure). Then the harness alternates alone / with; a run that was polled ran
    // beside communication.
    if (runs_ == 3) return {alone_ * 50, alone_ * 50};
    const double ms = polled_ ? with_ : alone_;
    return {ms, ms * 0.9};
  }
  json details() const override { return {{"clock", "scripted"}}; }
  int runs_ = 0, launches_ = 0;

 private:
  double alone_, with_;
  int polls_, left_ = 0;
  bool polled_ = false;
};

}  // namespace

TEST(Overlap, ScriptedWorkloadGivesExactFigures) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  ASSERT_NE(engine, nullptr);
  CaseExecution ex(testing_support::planned(overlap_case("stream")), engine.get(), "", *backend);
  // Scripted compute times are far above any host copy's p50, even on a loaded CI machine, so the
  // launch count below does not depend on how busy the machine is.
  ScriptedLoad load(1000.0, 1250.0, 5);
  const json r = run_overlap(ex, [&]() -> beside::Load& { return load; });
  ASSERT_EQ(r["status"], "ok") << r["reason"];
  const json& o = r["overlap"];
  ASSERT_FALSE(o.contains("error")) << o["error"];
  EXPECT_EQ(o["validated"], true);
  EXPECT_DOUBLE_EQ(o["compute_alone_ms"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(o["compute_with_ms"].get<double>(), 1250.0);
  EXPECT_DOUBLE_EQ(o["compute_slowdown_pct"].get<double>(), 25.0);
  EXPECT_EQ(o["compute_with_ms_per_device"], (json{1250.0, 1250.0 * 0.9}));
  // finished() is asked before and after every sample; the run ends at its 6th call (after the 3rd
  // sample): 2 samples kept per round, the 3rd dropped (the run ended during it).
  EXPECT_EQ(o["comm_with_samples"], 4);
  EXPECT_EQ(o["comm_samples_dropped"], 2);
  EXPECT_DOUBLE_EQ(o["comm_ops_with"].get<double>(), 2.0);
  EXPECT_EQ(o["rounds"], 2);
  // 2 calibration runs + 1 untimed warm-up + 2 rounds x (alone + with) + 1 validation beside the workload.
  EXPECT_EQ(load.runs_, 8);
  // launches = ceil(max(duration 5 ms, 5 samples x p50) / 1000 ms per launch) = 1.
  EXPECT_EQ(o["launches"], 1);
  const double alone = r["latency_us"]["p50"].get<double>();
  EXPECT_DOUBLE_EQ(o["comm_alone_us"].get<double>(), alone);
  EXPECT_NEAR(o["comm_slowdown_pct"].get<double>(), (o["comm_with_us"].get<double>() / alone - 1) * 100, 1e-9);
  const OverlapFigures f = overlap_figures({1000.0, 1250.0, alone, o["comm_with_us"].get<double>(),
                                            o["comm_ops_with"].get<double>()});
  EXPECT_DOUBLE_EQ(o["overlap_efficiency"].get<double>(), f.overlap_efficiency);
}

TEST(Overlap, HostStreamWorkloadRunsBesideEveryTiming) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  ASSERT_NE(engine, nullptr);
  for (Timing t : {Timing::oneshot, Timing::pipelined}) {
    Case c = overlap_case("stream", t);
    c.run.overlap->duration_ms = 100;  // long enough for samples on a busy 2-core machine (30 ms missed them under load)
    const json r = run_beside_its_workload(c, *engine, *backend);
    ASSERT_EQ(r["status"], "ok") << r["reason"];
    const json& o = r["overlap"];
    ASSERT_FALSE(o.contains("error")) << o.dump();
    EXPECT_EQ(o["validated"], true);
    EXPECT_GT(o["compute_alone_ms"].get<double>(), 0.0);
    EXPECT_GE(o["comm_with_samples"].get<int>(), 1);
    EXPECT_GE(o["overlap_efficiency"].get<double>(), 0.0);
    EXPECT_LE(o["overlap_efficiency"].get<double>(), 1.0);
    EXPECT_NEAR(o["compute_slowdown_pct"].get<double>(),
                (o["compute_with_ms"].get<double>() / o["compute_alone_ms"].get<double>() - 1) * 100, 1e-9);
    EXPECT_EQ(o["compute"]["rate_unit"], "GB/s");
    EXPECT_GT(o["compute"]["rate_alone"].get<double>(), 0.0);
    EXPECT_LE(o["comm_with_latency_us"]["p50"].get<double>(), o["comm_with_latency_us"]["p99"].get<double>());
  }
}

TEST(Overlap, WorkloadTheBackendLacksSkipsTheCase) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  CaseExecution ex(testing_support::planned(overlap_case("gemm")), engine.get(), "", *backend);
  ASSERT_TRUE(ex.static_skip_reason().has_value());
  EXPECT_NE(ex.static_skip_reason()->find("needs a GPU backend"), std::string::npos) << *ex.static_skip_reason();
  const auto load = beside::make_load(*backend, overlap_case("gemm").run.overlap->compute, {0, 1});
  EXPECT_FALSE(load);
  EXPECT_NE(load.why_not().find("gemm"), std::string::npos) << load.why_not();
}

namespace {

// Operations right the first time they are checked and wrong afterwards: the validation beside the workload must
// catch it.
class BreaksLaterOperation final : public testing_support::ForwardingOperation {
 public:
  using ForwardingOperation::ForwardingOperation;
  std::optional<Mismatch> check_destinations(const Plan& p, std::uint64_t s) override {
    if (checks_++ == 0) return inner_->check_destinations(p, s);
    inner_->poison_destinations(s + 1);  // the bytes are lost after the first check
    return inner_->check_destinations(p, s);
  }

 private:
  int checks_ = 0;
};

// The host engine, its operations breaking after their first check.
testing_support::WrappingEngine breaks_later(Engine& host) {
  return testing_support::WrappingEngine(host, [](std::unique_ptr<Operation> op) -> std::unique_ptr<Operation> {
    return std::make_unique<BreaksLaterOperation>(std::move(op));
  });
}

}  // namespace

TEST(Overlap, WrongDataBesideTheWorkloadFailsTheCase) {
  auto backend = host_backend();
  auto host = make_engine("host").value();
  auto engine = breaks_later(*host);
  Case c = overlap_case("stream");
  CaseExecution ex(testing_support::planned(c), &engine, "", *backend);
  ScriptedLoad load(10.0, 11.0, 3);
  const json r = run_overlap(ex, [&]() -> beside::Load& { return load; });
  EXPECT_EQ(r["status"], "failed");
  EXPECT_NE(r["reason"].get<std::string>().find("validation beside stream-4MiB"), std::string::npos) << r["reason"];
  EXPECT_EQ(r["latency_us"], nullptr);
  EXPECT_EQ(r["overlap"]["validated"], false);
}

TEST(Overlap, WorkloadErrorsAreRecordedNotThrown) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  CaseExecution ex(testing_support::planned(overlap_case("stream")), engine.get(), "", *backend);
  const json r = run_overlap(ex, []() -> beside::Load& { throw std::runtime_error("out of device memory"); });
  EXPECT_EQ(r["status"], "ok");  // the alone figures stand
  EXPECT_EQ(r["overlap"]["error"], "out of device memory");
}

namespace {

// A 64 KiB h2d case on host rank 0 beside a `transfer` workload: `pattern` moved by the host engine.
Case beside_transfer(const std::string& pattern) {
  Case c = overlap_case("transfer");
  c.pattern = "h2d";
  c.devices = {0};
  c.run.overlap->compute.pattern = pattern;
  c.run.overlap->compute.variant = {"host", with_defaults("host", json::object())};
  c.run.overlap->compute.bytes = 8 << 20;
  c.run.overlap->compute.depth = 2;
  c.run.overlap->duration_ms = 100;  // long enough for samples on a busy 2-core machine (30 ms missed them under load)
  return c;
}

}  // namespace

TEST(Overlap, TransferWorkloadRunsBesideACaseWithBothSidesValidated) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  for (const std::string pattern : {"d2h", "h2d"}) {  // the other direction, and the same one
    const json r = run_beside_its_workload(beside_transfer(pattern), *engine, *backend);
    ASSERT_EQ(r["status"], "ok") << r["reason"];
    const json& o = r["overlap"];
    ASSERT_FALSE(o.contains("error")) << o.dump();
    EXPECT_EQ(o["validated"], true);
    EXPECT_EQ(o["compute"]["kind"], "transfer");
    EXPECT_EQ(o["compute"]["pattern"], pattern);
    EXPECT_EQ(o["compute"]["details"]["case"], pattern + "/host/pipelined/dev=0/8MiB/host=pinned,numa=local");
    EXPECT_DOUBLE_EQ(o["compute"]["details"]["total_bytes"].get<double>(), 8 << 20);
    // The background's bandwidth is its bytes over its own time: depth x S x launches / ms.
    const double launches = o["launches"].get<double>();
    EXPECT_EQ(o["compute"]["rate_unit"], "GB/s");
    EXPECT_NEAR(o["compute"]["rate_alone"].get<double>(),
                2.0 * (8 << 20) * launches / (o["compute_alone_ms"].get<double>() * 1e-3) / 1e9, 1e-9);
    EXPECT_NEAR(o["compute"]["rate_with"].get<double>(),
                2.0 * (8 << 20) * launches / (o["compute_with_ms"].get<double>() * 1e-3) / 1e9, 1e-9);
    // The foreground alone and under the load, at the p50 and the p99.
    EXPECT_GT(o["comm_alone_p99_us"].get<double>(), 0.0);
    EXPECT_GE(o["comm_with_samples"].get<int>(), 1);
    EXPECT_LE(o["comm_with_us"].get<double>(), o["comm_with_p99_us"].get<double>());
  }
}

// make_load makes a `transfer` workload only through the maker its caller passes (the case runner's,
// beside::transfer_maker()): without one it refuses with the reason instead of calling up into bench/run.
TEST(Overlap, TransferWorkloadIsMadeOnlyThroughTheMakerGiven) {
  auto backend = host_backend();
  const beside::Spec s = beside_transfer("d2h").run.overlap->compute;
  const auto refused = beside::make_load(*backend, s, {0});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.why_not().find("a transfer workload is made by the case runner (none given)"), std::string::npos)
      << refused.why_not();
  int calls = 0;
  const beside::TransferMaker counting = [&](Backend& b, const beside::Spec& spec, const std::vector<int>& devices) {
    ++calls;
    return beside::transfer_maker()(b, spec, devices);
  };
  const auto made = beside::make_load(*backend, s, {0}, counting);
  ASSERT_TRUE(made) << made.why_not();
  EXPECT_EQ(calls, 1);
}

TEST(Overlap, WrongDataOnTheBackgroundSideFailsTheCase) {
  auto backend = host_backend();
  auto engine = make_engine("host").value();
  Case c = beside_transfer("d2h");
  CaseExecution ex(testing_support::planned(c), engine.get(), "", *backend);
  // Right when it is validated before use, wrong in every run after: only the per-run check sees it.
  auto host = make_engine("host").value();  // outlives the load, whose engine wraps it
  auto load = beside::make_transfer_load(
      *backend, c.run.overlap->compute, c.devices,
      std::make_unique<testing_support::WrappingEngine>(breaks_later(*host)));
  const json r = run_overlap(ex, [&]() -> beside::Load& { return *load; });
  EXPECT_EQ(r["status"], "failed");
  EXPECT_NE(r["reason"].get<std::string>().find("the workload's own data beside the case: transfer-d2h-host-8MiB"),
            std::string::npos)
      << r["reason"];
  EXPECT_EQ(r["overlap"]["validated"], false);
}

TEST(Overlap, TransferWorkloadThatCannotRunSaysWhy) {
  auto backend = host_backend();
  beside::Spec s = beside_transfer("copy").run.overlap->compute;  // copy needs two devices; the case has one
  try {
    beside::make_transfer_load(*backend, s, {0});
    FAIL() << "a copy on one device was made";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("copy cannot run on the case's 1 device"), std::string::npos) << e.what();
  }
  s.variant = {"ce", with_defaults("ce", json::object())};  // an engine of the GPU backends: skipped with the engine's reason
  EXPECT_THROW(beside::make_transfer_load(*backend, s, {0}), std::exception);
}

// On AMD the record names the SDMA engines each side used: the background's engine details carry its
// queues' engines (here the software SDMA engine of the host backend; the foreground's are in the record's
// own engine_details).
TEST(Overlap, SdmaBackgroundNamesTheEnginesItUsed) {
  auto backend = host_backend();
  auto sdma = make_engine("sdma", "host");
  ASSERT_TRUE(sdma) << sdma.why_not();
  Case c = beside_transfer("d2h");
  c.variant = EngineVariant{"sdma", with_defaults("sdma", json::object())};
  c.run.overlap->compute.variant = {"sdma", with_defaults("sdma", json::object())};
  const json r = run_beside_its_workload(c, **sdma, *backend);
  ASSERT_EQ(r["status"], "ok") << r["reason"];
  const json& o = r["overlap"];
  ASSERT_FALSE(o.contains("error")) << o.dump();
  const json& queues = o["compute"]["details"]["engine_details"]["queues"];
  ASSERT_TRUE(queues.is_array() && !queues.empty()) << o["compute"]["details"].dump();
  EXPECT_TRUE(queues[0].contains("engine")) << queues.dump();
  EXPECT_TRUE(r["engine_details"]["queues"][0].contains("engine")) << r["engine_details"].dump();
}
