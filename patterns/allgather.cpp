// allgather: every rank contributes bytes_per_rank; afterwards every rank's destination holds all
// contributions in rank order (rank s's block at offset s * bytes_per_rank), like ncclAllGather.
// Each rank pushes its block to every peer (ring order from its right neighbour) and to itself last.
// In place (in_place()): the same, with each rank's own block already in its destination
// (ncclAllGather with sendbuff = recvbuff + rank * count): no same-GPU copy; it needs 2 ranks or more.
// S = ranks * bytes_per_rank, busbw = algbw * (n-1)/n for both.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class AllGather final : public Pattern {
 public:
  explicit AllGather(bool in_place) : in_place_(in_place) {}
  std::string_view name() const override { return "allgather"; }
  std::string_view description() const override {
    return in_place_ ? "every rank's block to every peer, the own block already in place (in-place ncclAllGather)"
                     : "every rank's block to every rank (ncclAllGather layout)";
  }
  int ranks_used(int available) const override { return in_place_ && available < 2 ? 0 : available; }
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
        const Transfer t{.issuer = s, .src_rank = s, .src_offset = 0, .dst_rank = d,
                         .dst_offset = static_cast<std::size_t>(s) * bytes, .bytes = bytes};
        (in_place_ && d == s ? p.preset : p.transfers).push_back(t);
      }
    return p;
  }
  const Pattern* in_place() const override;

 private:
  bool in_place_;
};

const AllGather kInPlace(true);

const Pattern* AllGather::in_place() const { return in_place_ ? nullptr : &kInPlace; }

}  // namespace

const Pattern& allgather_pattern() {
  static const AllGather pattern(false);
  return pattern;
}

}  // namespace dmabench
