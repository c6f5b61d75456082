// The `transfer` workload: DMA beside DMA. A pattern's bytes moved by an engine, run back to back on a
// thread of its own while the case's operation is sampled (real nodes run KV offload, checkpoint and
// prefetch copies beside their collectives). It is a case of its own, run by the same harness code as
// every case (bench/run/run_case.hpp: prepared, validated once before it is used, sampled pipelined), so
// every engine and pattern that can be a case can be a background; each run's destinations are
// poisoned before it and checked after it (data_problem), so both sides of an overlap case are validated.
#include "bench/run/transfer_load.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "patterns/pattern.hpp"
#include "bench/run/run_case.hpp"
#include "core/errors.hpp"
#include "engines/registry.hpp"

namespace dmabench::beside {
namespace {

Case background_case(const Spec& spec, const std::vector<int>& devices) {
  const Pattern* p = find_pattern(spec.pattern);
  if (!p) throw std::invalid_argument(fmt::format("unknown pattern '{}'", spec.pattern));
  const int used = p->ranks_used(static_cast<int>(devices.size()));
  if (used == 0)
    throw Unsupported(fmt::format("{} cannot run on the case's {} device(s)", spec.pattern, devices.size()));
  Case c;
  c.pattern = spec.pattern;
  c.variant = spec.variant;
  c.devices = std::vector<int>(devices.begin(), devices.begin() + used);
  c.bytes_per_rank = spec.bytes;
  c.timing = Timing::pipelined;
  c.run.pipeline_depth = spec.depth;  // pipelined: each sample is `depth` operations
  c.host = spec.host;
  plan_case(c);
  return c;
}

class TransferLoad final : public Load {
 public:
  TransferLoad(Backend& backend, const Spec& spec, const std::vector<int>& devices, std::unique_ptr<Engine> engine)
      : spec_(spec), engine_(std::move(engine)) {
    if (!engine_) {  // an engine of its own: the case's engine object serves the case alone
      auto made = make_engine(spec.variant.engine, backend.name());
      if (!made) throw Unsupported(fmt::format("engine {}: {}", spec.variant.engine, made.why_not()));
      engine_ = std::move(made).value();
    }
    case_ = std::make_unique<CaseExecution>(background_case(spec, devices), engine_.get(), "", backend);
    case_->setup();  // prepared and validated once, like any case
    if (case_->status() != Status::ok)
      throw std::runtime_error(fmt::format("{} {}: {}", spec.label(), case_->status() == Status::skipped ? "skipped" : "failed",
                                           case_->reason()));
    ms_.assign(case_->spec().devices.size(), 0.0);
    total_bytes_ = static_cast<double>(case_->spec().plan->total_bytes);
    engine_details_ = case_->record().engine_details;  // e.g. the copy engines it was given (AMD)
  }
  ~TransferLoad() override {
    join();
    case_->release();
  }

  void start(int launches) override {
    join();
    case_->poison_destinations();  // before the first mark: the run's own writes are what wait_ms checks
    done_.store(false, std::memory_order_release);
    error_.clear();
    worker_ = std::thread([this, launches] {
      try {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < launches; ++i) case_->sample_seconds();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        ms_.assign(ms_.size(), ms);
      } catch (const std::exception& e) {
        error_ = e.what();
      }
      done_.store(true, std::memory_order_release);
    });
  }
  bool finished() override { return done_.load(std::memory_order_acquire); }
  std::vector<double> wait_ms() override {
    join();
    if (!error_.empty()) throw std::runtime_error(fmt::format("{}: {}", spec_.label(), error_));
    if (auto bad = case_->check_destinations(); bad && !problem_) problem_ = fmt::format("{}: {}", spec_.label(), *bad);
    return ms_;
  }
  nlohmann::json details() const override {
    return {{"clock", "host steady_clock around each run's back-to-back pipelined samples"},
            {"case", case_->spec().name()},
            {"total_bytes", total_bytes_},
            {"engine_details", engine_details_},
            {"validated", "before use, and every run's destinations poisoned before it and checked after it"}};
  }
  std::optional<double> work_per_launch() const override { return total_bytes_ * spec_.depth; }
  std::optional<std::string> data_problem() override { return std::exchange(problem_, std::nullopt); }

 private:
  void join() {
    if (worker_.joinable()) worker_.join();
  }
  Spec spec_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<CaseExecution> case_;
  std::vector<double> ms_;
  double total_bytes_ = 0;
  nlohmann::json engine_details_;
  std::thread worker_;
  std::atomic<bool> done_{true};
  std::string error_;
  std::optional<std::string> problem_;
};

}  // namespace

std::unique_ptr<Load> make_transfer_load(Backend& backend, const Spec& spec, const std::vector<int>& devices,
                                         std::unique_ptr<Engine> engine) {
  return std::make_unique<TransferLoad>(backend, spec, devices, std::move(engine));
}

TransferMaker transfer_maker() {
  return [](Backend& backend, const Spec& spec, const std::vector<int>& devices) {
    return make_transfer_load(backend, spec, devices);
  };
}

}  // namespace dmabench::beside
