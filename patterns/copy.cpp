// copy: rank 0 sends bytes_per_rank to rank 1 (pushed by rank 0). S = bytes_per_rank, busbw = algbw.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class Copy final : public Pattern {
 public:
  std::string_view name() const override { return "copy"; }
  std::string_view description() const override { return "rank 0 -> rank 1, one direction"; }
  int ranks_used(int available) const override { return available >= 2 ? 2 : 0; }
  bool has_breakdown() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p;
    p.pattern = "copy";
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes;
    p.bus_factor = 1.0;
    p.src_bytes = {bytes, 0};
    p.dst_bytes = {0, bytes};
    p.transfers = {Transfer{.issuer = 0, .src_rank = 0, .src_offset = 0, .dst_rank = 1, .dst_offset = 0, .bytes = bytes}};
    return p;
  }
};

}  // namespace

const Pattern& copy_pattern() {
  static const Copy pattern;
  return pattern;
}

}  // namespace dmabench
