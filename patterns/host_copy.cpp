// h2d and d2h: one GPU and host memory, one direction. h2d: a host buffer -> the GPU's memory; d2h:
// the GPU's memory -> a host buffer; pushed by the GPU's copy path (rank 0 issues). The host buffer's
// kind and NUMA node come from the case (Location; results/SCHEMA.md "Host memory").
// S = bytes_per_rank, busbw = algbw (nvbandwidth's host_to_device / device_to_host testcases: bytes / time).
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class HostCopy final : public Pattern {
 public:
  explicit HostCopy(bool to_device) : to_device_(to_device) {}
  std::string_view name() const override { return to_device_ ? "h2d" : "d2h"; }
  std::string_view description() const override {
    return to_device_ ? "host memory -> GPU memory, one GPU" : "GPU memory -> host memory, one GPU";
  }
  int ranks_used(int available) const override { return available >= 1 ? 1 : 0; }
  bool uses_host_memory() const override { return true; }
  bool has_breakdown() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p;
    p.pattern = std::string(name());
    p.devices = {devices.at(0)};
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes;
    p.bus_factor = 1.0;
    p.src_bytes = {bytes};
    p.dst_bytes = {bytes};
    p.src_at = {host_location(to_device_)};
    p.dst_at = {host_location(!to_device_)};
    p.transfers = {Transfer{.issuer = 0, .src_rank = 0, .src_offset = 0, .dst_rank = 0, .dst_offset = 0, .bytes = bytes}};
    return p;
  }

 private:
  bool to_device_;
};

}  // namespace

const Pattern& h2d_pattern() {
  static const HostCopy pattern(true);
  return pattern;
}

const Pattern& d2h_pattern() {
  static const HostCopy pattern(false);
  return pattern;
}

}  // namespace dmabench
