// allgather: every rank contributes bytes_per_rank; afterwards every rank's destination holds all
// contributions in rank order (rank s's block at offset s * bytes_per_rank), like ncclAllGather.
// Each rank pushes its block to every peer (ring order from its right neighbour) and to itself last.
// S = ranks * bytes_per_rank, busbw = algbw * (n-1)/n.
#include "bench/patterns/pattern.hpp"

namespace dmabench {
namespace {

class AllGather final : public Pattern {
 public:
  std::string_view name() const override { return "allgather"; }
  std::string_view description() const override { return "every rank's block to every rank (ncclAllGather layout)"; }
  int ranks_used(int available) const override { return available; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    const int n = static_cast<int>(devices.size());
    Plan p;
    p.pattern = "allgather";
    p.collective = Collective::all_gather;
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes * n;
    p.bus_factor = static_cast<double>(n - 1) / n;
    p.src_bytes.assign(n, bytes);
    p.dst_bytes.assign(n, bytes * n);
    for (int s = 0; s < n; ++s)
      for (int k = 1; k <= n; ++k) {
        const int d = (s + k) % n;  // peers first, self (k == n) last
        p.transfers.push_back(Transfer{.issuer = s, .src_rank = s, .src_offset = 0, .dst_rank = d,
                                       .dst_offset = static_cast<std::size_t>(s) * bytes, .bytes = bytes});
      }
    return p;
  }
};

}  // namespace

const Pattern& allgather_pattern() {
  static const AllGather pattern;
  return pattern;
}

}  // namespace dmabench
