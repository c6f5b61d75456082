// alltoall: every rank sends a distinct block of bytes_per_rank to every rank (itself included):
// block d of rank s's source (offset d * bytes_per_rank) lands in block s of rank d's destination,
// like ncclAlltoAll with count = bytes_per_rank. Source and destination hold ranks blocks each.
// S = ranks * bytes_per_rank (the per-rank buffer, nccl-tests' "size"), busbw = algbw * (n-1)/n.
#include "bench/patterns/pattern.hpp"

namespace dmabench {
namespace {

class AllToAll final : public Pattern {
 public:
  std::string_view name() const override { return "alltoall"; }
  std::string_view description() const override { return "a distinct block from every rank to every rank (ncclAlltoAll layout)"; }
  int ranks_used(int available) const override { return available; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    const int n = static_cast<int>(devices.size());
    Plan p;
    p.pattern = "alltoall";
    p.collective = Collective::all_to_all;
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes * n;
    p.bus_factor = static_cast<double>(n - 1) / n;
    p.src_bytes.assign(n, bytes * n);
    p.dst_bytes.assign(n, bytes * n);
    for (int s = 0; s < n; ++s)
      for (int k = 1; k <= n; ++k) {
        const int d = (s + k) % n;  // peers first, self last
        p.transfers.push_back(Transfer{.issuer = s, .src_rank = s, .src_offset = static_cast<std::size_t>(d) * bytes,
                                       .dst_rank = d, .dst_offset = static_cast<std::size_t>(s) * bytes, .bytes = bytes});
      }
    return p;
  }
};

}  // namespace

const Pattern& alltoall_pattern() {
  static const AllToAll pattern;
  return pattern;
}

}  // namespace dmabench
