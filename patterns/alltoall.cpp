// alltoall: every rank sends a distinct block of bytes_per_rank to every rank (itself included):
// block d of rank s's source (offset d * bytes_per_rank) lands in block s of rank d's destination,
// like ncclAlltoAll with count = bytes_per_rank. Source and destination hold ranks blocks each.
// S = ranks * bytes_per_rank (the per-rank buffer, nccl-tests' "size"), busbw = algbw * (n-1)/n.
// In place (in_place()): one buffer per rank is source and destination (Plan::exchange), so block d of
// rank s and block s of rank d trade places; a rank's own block stays (preset). Only an engine that
// exchanges blocks (sdma packet=swap, DMA-Latte's all-to-all) can run it.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class AllToAll final : public Pattern {
 public:
  explicit AllToAll(bool in_place) : in_place_(in_place) {}
  std::string_view name() const override { return "alltoall"; }
  std::string_view description() const override {
    return in_place_ ? "every pair of ranks exchanges blocks in one buffer per rank (in place)"
                     : "a distinct block from every rank to every rank (ncclAlltoAll layout)";
  }
  int ranks_used(int available) const override { return in_place_ && available < 2 ? 0 : available; }
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
        const Transfer t{.issuer = s, .src_rank = s, .src_offset = static_cast<std::size_t>(d) * bytes,
                         .dst_rank = d, .dst_offset = static_cast<std::size_t>(s) * bytes, .bytes = bytes};
        (in_place_ && d == s ? p.preset : p.transfers).push_back(t);
      }
    p.exchange = in_place_;
    return p;
  }
  const Pattern* in_place() const override;

 private:
  bool in_place_;
};

const AllToAll kInPlace(true);

const Pattern* AllToAll::in_place() const { return in_place_ ? nullptr : &kInPlace; }

}  // namespace

const Pattern& alltoall_pattern() {
  static const AllToAll pattern(false);
  return pattern;
}

}  // namespace dmabench
