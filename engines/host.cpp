// The `host` backend and its engine: CPU threads, one per rank, memcpy between per-rank host
// buffers. It runs anywhere and makes every pattern, the harness and the JSON testable without a GPU.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>


#include "engines/backend.hpp"
#include "core/datagen.hpp"
#include "engines/engine_factories.hpp"
#include "engines/host_validation.hpp"

namespace dmabench {
namespace {

constexpr int kMaxHostRanks = 64;

// 64-byte aligned heap bytes.
struct HostBytes {
  explicit HostBytes(std::size_t n) : size(n) {
    if (n) {
      data = static_cast<char*>(std::aligned_alloc(64, (n + 63) / 64 * 64));
      if (!data) throw std::bad_alloc();
    }
  }
  ~HostBytes() { std::free(data); }
  HostBytes(const HostBytes&) = delete;
  HostBytes& operator=(const HostBytes&) = delete;
  char* data = nullptr;
  std::size_t size = 0;
};

void fill_bytes(char* p, std::size_t n, std::uint64_t key) { fill_stream(reinterpret_cast<unsigned char*>(p), n, key); }

// One persistent worker thread per issuing rank. launch() posts one more operation; each worker
// runs its rank's transfers once per posted operation, in order; wait() returns when every worker
// has finished every posted operation.
class HostOperation final : public Operation {
 public:
  explicit HostOperation(const Plan& plan) : plan_(plan) {
    for (int r = 0; r < plan.ranks(); ++r) {
      src_.push_back(std::make_unique<HostBytes>(plan.src_allocation(r)));
      dst_.push_back(std::make_unique<HostBytes>(plan.dst_allocation(r)));
    }
    for (int r : plan.issuers()) workers_.push_back(std::make_unique<Worker>(Worker{r, plan.issued_by(r), 0, {}}));
    for (auto& w : workers_) w->thread = std::thread([this, w = w.get()] { run(*w); });
  }
  ~HostOperation() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w->thread.join();
  }

  void launch() override {
    {
      std::lock_guard lock(mu_);
      ++posted_;
    }
    cv_.notify_all();
  }

  void wait() override {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] {
      return std::all_of(workers_.begin(), workers_.end(), [&](const auto& w) { return w->done == posted_; });
    });
  }

  void fill_sources(std::uint64_t seed) override {
    for (int r = 0; r < plan_.ranks(); ++r) fill_bytes(src_[r]->data, src_[r]->size, datagen::stream_key(seed, r));
  }
  void poison_destinations(std::uint64_t seed) override {
    for (int r = 0; r < plan_.ranks(); ++r)
      fill_bytes(dst_[r]->data, dst_[r]->size, datagen::stream_key(seed ^ datagen::kPoisonSalt, r));
    for (int set = 0; set < plan_.sets; ++set)
      for (const Transfer& t : plan_.preset)  // in-place blocks: there before the operation starts
        std::memcpy(dst(t.dst_rank, set) + t.dst_offset, src(t.src_rank, set) + t.src_offset, t.bytes);
  }
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override {
    if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
    return first_host_mismatch(expected, seed, [&](int r) { return reinterpret_cast<const unsigned char*>(dst_[r]->data); });
  }

 private:
  struct Worker {
    int rank;
    std::vector<Transfer> transfers;
    std::uint64_t done;
    std::thread thread;
  };

  char* src(int rank, int set) const { return src_[rank]->data + set * plan_.src_stride(rank); }
  char* dst(int rank, int set) const { return dst_[rank]->data + set * plan_.dst_stride(rank); }

  void run(Worker& w) {
    for (;;) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || w.done < posted_; });
        if (stop_) return;
      }
      const int set = plan_.set_of(w.done);
      for (const Transfer& t : w.transfers)
        std::memcpy(dst(t.dst_rank, set) + t.dst_offset, src(t.src_rank, set) + t.src_offset, t.bytes);
      {
        std::lock_guard lock(mu_);
        ++w.done;
      }
      done_cv_.notify_all();
    }
  }

  Plan plan_;
  std::vector<std::unique_ptr<HostBytes>> src_, dst_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::uint64_t posted_ = 0;
  bool stop_ = false;
};

class HostEngine final : public Engine {
 public:
  WhyNot unsupported(const Plan& plan, const Options&, int) const override {
    std::size_t bytes = 0;
    for (int r = 0; r < plan.ranks(); ++r) bytes += plan.src_allocation(r) + plan.dst_allocation(r);
    return host_memory_shortfall(bytes);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const Options&) override {
    return std::make_unique<HostOperation>(plan);
  }
};

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

class HostBackend final : public Backend {
 public:
  std::string_view name() const override { return "host"; }
  int device_count() const override { return kMaxHostRanks; }
  std::vector<int> default_devices() const override { return {0, 1}; }
  nlohmann::json context() const override {
    return {{"devices", nlohmann::json::array()},
            {"host_ranks", "virtual: one CPU thread per rank, memcpy between per-rank host buffers"},
            {"cpu", cpu_model()},
            {"cpu_threads", std::thread::hardware_concurrency()}};
  }
  void prepare_devices(const std::vector<int>&) override {}
};

}  // namespace

std::unique_ptr<Engine> make_host_engine() { return std::make_unique<HostEngine>(); }
std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace dmabench
