// The host backend's compute workload: `stream`, one CPU thread per rank copying between two
// buffers of its own. It exists so the overlap mode runs (and is tested) without a GPU.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "bench/beside/load.hpp"

namespace dmabench::beside {
namespace {

class HostStreamLoad final : public Load {
 public:
  HostStreamLoad(const Spec& spec, int ranks) : spec_(spec), ms_(ranks, 0.0) {
    for (int r = 0; r < ranks; ++r) {
      src_.emplace_back(spec.bytes, static_cast<char>(r + 1));
      dst_.emplace_back(spec.bytes, 0);
    }
  }
  ~HostStreamLoad() override { join(); }

  void start(int launches) override {
    join();
    remaining_ = static_cast<int>(ms_.size());
    for (std::size_t r = 0; r < ms_.size(); ++r)
      threads_.emplace_back([this, r, launches] {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < launches; ++i) std::memcpy(dst_[r].data(), src_[r].data(), spec_.bytes);
        ms_[r] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        remaining_.fetch_sub(1, std::memory_order_release);
      });
  }
  bool finished() override { return remaining_.load(std::memory_order_acquire) == 0; }
  std::vector<double> wait_ms() override {
    join();
    return ms_;
  }
  nlohmann::json details() const override {
    return {{"clock", "host steady_clock per worker thread"}, {"workers", ms_.size()}};
  }

 private:
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  Spec spec_;
  std::vector<std::vector<char>> src_, dst_;
  std::vector<double> ms_;
  std::vector<std::thread> threads_;
  std::atomic<int> remaining_{0};
};

}  // namespace

std::unique_ptr<Load> make_host_load(const Spec& spec, const std::vector<int>& ranks) {
  return std::make_unique<HostStreamLoad>(spec, static_cast<int>(ranks.size()));
}

}  // namespace dmabench::beside
