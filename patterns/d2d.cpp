// d2d: within one GPU: rank 0's source buffer -> rank 0's destination buffer, another buffer of the same GPU
// (what a serving engine does to move KV blocks between device pools). S = bytes_per_rank, busbw = algbw.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class D2d final : public Pattern {
 public:
  std::string_view name() const override { return "d2d"; }
  std::string_view description() const override { return "one GPU: a buffer -> another buffer of the same GPU"; }
  int ranks_used(int available) const override { return available >= 1 ? 1 : 0; }
  bool has_breakdown() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p;
    p.pattern = "d2d";
    p.devices = {devices.at(0)};
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes;
    p.bus_factor = 1.0;
    p.src_bytes = {bytes};
    p.dst_bytes = {bytes};
    p.transfers = {Transfer{.issuer = 0, .src_rank = 0, .src_offset = 0, .dst_rank = 0, .dst_offset = 0, .bytes = bytes}};
    return p;
  }
};

}  // namespace

const Pattern& d2d_pattern() {
  static const D2d pattern;
  return pattern;
}

}  // namespace dmabench
