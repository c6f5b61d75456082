// bidir: rank 0 -> rank 1 and rank 1 -> rank 0 at once, each pushed by its source rank.
// S = 2 * bytes_per_rank (both directions), busbw = algbw.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class Bidir final : public Pattern {
 public:
  std::string_view name() const override { return "bidir"; }
  std::string_view description() const override { return "rank 0 <-> rank 1, both directions at once"; }
  int ranks_used(int available) const override { return available >= 2 ? 2 : 0; }
  bool bidirectional() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p;
    p.pattern = "bidir";
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = 2 * bytes;
    p.bus_factor = 1.0;
    p.src_bytes = {bytes, bytes};
    p.dst_bytes = {bytes, bytes};
    p.transfers = {
        Transfer{.issuer = 0, .src_rank = 0, .src_offset = 0, .dst_rank = 1, .dst_offset = 0, .bytes = bytes},
        Transfer{.issuer = 1, .src_rank = 1, .src_offset = 0, .dst_rank = 0, .dst_offset = 0, .bytes = bytes},
    };
    return p;
  }
};

}  // namespace

const Pattern& bidir_pattern() {
  static const Bidir pattern;
  return pattern;
}

}  // namespace dmabench
