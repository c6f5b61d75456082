#include "bench/measure/core_share.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>

#include "bench/sampling/stats.hpp"

namespace dmabench::measure {
namespace {

using clock = std::chrono::steady_clock;
constexpr long kSteps = 1024;

// kSteps x 8 multiply-adds: of 8 independent chains, or all of one chain. The code shape matters, not only the
// arithmetic: this is tools/vcpu_probe.cu's loop, whose independent form (a load, a multiply-add, a store, a branch on
// `independent` and the loop's own per operation) slowed 1.5x when the core was shared on the H200 VM. It is kept out
// of line and unspecialized (noinline, noclone), and this file is built at -O2 without loop unswitching
// (CMakeLists.txt), so that the branch stays in the loop: at -O3 GCC unswitched it and kept the dependent chain in a
// register, and that form (one multiply port's worth of work) read 0.25 in both modes (results/h200x1/levels/core-share/).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, noclone))
#else
__attribute__((noinline))
#endif
std::uint64_t chains(bool independent) {
  std::uint64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < kSteps; ++i) {
    for (int k = 0; k < 8; ++k) {
      std::uint64_t& v = independent ? x[k] : x[0];
      v = v * 6364136223846793005ull + 1442695040888963407ull;
      asm volatile("" : "+r"(v));
    }
  }
  return x[0] ^ x[7];
}

double ns_per_op(bool independent) {
  const auto t0 = clock::now();
  const std::uint64_t sink = chains(independent);
  const auto t1 = clock::now();
  asm volatile("" : : "r"(sink));
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (kSteps * 8);
}

}  // namespace

CoreShareReading read_core_share() { return {ns_per_op(true), ns_per_op(false)}; }

CoreShare summarize_core_share(const std::vector<double>& ratios) {
  CoreShare c;
  c.probed = ratios.size();
  c.ratios = ratios;
  if (ratios.empty()) return c;
  for (double r : ratios) c.shared += r > kSharedRatio ? 1 : 0;
  c.ratio_p50 = summarize(ratios).p50;
  return c;
}

nlohmann::json to_json(const CoreShare& c, bool with_ratios) {
  const auto round3 = [](double v) { return std::round(v * 1e3) / 1e3; };
  nlohmann::json j = {{"probed", c.probed},
                      {"shared", c.shared},
                      {"ratio_p50", round3(c.ratio_p50)},
                      {"threshold", kSharedRatio}};
  if (with_ratios) {
    j["ratios"] = nlohmann::json::array();
    for (double r : c.ratios) j["ratios"].push_back(round3(r));
  }
  return j;
}

}  // namespace dmabench::measure
