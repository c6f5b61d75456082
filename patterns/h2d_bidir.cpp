// h2d-bidir: one GPU, both directions at once: host -> GPU and GPU -> host, each on its own stream or
// queue. Planned as two ranks on the one GPU: rank 0 moves a host buffer into the GPU's memory, rank 1
// the GPU's memory into a second host buffer; each issues its own transfer.
// S = 2 * bytes_per_rank (both directions, as bidir), busbw = algbw. (nvbandwidth's bidirectional
// host testcases report one direction's bandwidth while the other runs; this is their sum.)
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class H2dBidir final : public Pattern {
 public:
  std::string_view name() const override { return "h2d-bidir"; }
  std::string_view description() const override { return "host <-> GPU memory, both directions at once, one GPU"; }
  int ranks_used(int available) const override { return available >= 1 ? 1 : 0; }
  bool uses_host_memory() const override { return true; }
  bool bidirectional() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p;
    p.pattern = "h2d-bidir";
    p.devices = {devices.at(0), devices.at(0)};
    p.bytes_per_rank = bytes;
    p.total_bytes = 2 * bytes;
    p.bus_factor = 1.0;
    p.src_bytes = {bytes, bytes};
    p.dst_bytes = {bytes, bytes};
    p.src_at = {host_location(true), Location{}};
    p.dst_at = {Location{}, host_location(true)};
    for (int r = 0; r < 2; ++r)
      p.transfers.push_back(Transfer{.issuer = r, .src_rank = r, .src_offset = 0, .dst_rank = r, .dst_offset = 0, .bytes = bytes});
    return p;
  }
};

}  // namespace

const Pattern& h2d_bidir_pattern() {
  static const H2dBidir pattern;
  return pattern;
}

}  // namespace dmabench
