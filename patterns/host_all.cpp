// host-to-all and all-to-host: every GPU of the case at once, each with a host buffer of its own
// (placed by the case's NUMA request relative to that GPU): host-to-all moves each host buffer into
// its GPU, all-to-host each GPU's buffer out to its host buffer; every GPU issues its own transfer.
// S = ranks * bytes_per_rank (the aggregate, the sum of nvbandwidth's per-GPU host_to_all /
// all_to_host figures), busbw = algbw.
#include "patterns/pattern.hpp"

namespace dmabench {
namespace {

class HostAll final : public Pattern {
 public:
  explicit HostAll(bool to_devices) : to_devices_(to_devices) {}
  std::string_view name() const override { return to_devices_ ? "host-to-all" : "all-to-host"; }
  std::string_view description() const override {
    return to_devices_ ? "a host buffer per GPU -> every GPU at once" : "every GPU at once -> a host buffer per GPU";
  }
  int ranks_used(int available) const override { return available; }
  bool uses_host_memory() const override { return true; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    const int n = static_cast<int>(devices.size());
    Plan p;
    p.pattern = std::string(name());
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes * n;
    p.bus_factor = 1.0;
    p.src_bytes.assign(n, bytes);
    p.dst_bytes.assign(n, bytes);
    p.src_at.assign(n, host_location(to_devices_));
    p.dst_at.assign(n, host_location(!to_devices_));
    for (int r = 0; r < n; ++r)
      p.transfers.push_back(Transfer{.issuer = r, .src_rank = r, .src_offset = 0, .dst_rank = r, .dst_offset = 0, .bytes = bytes});
    return p;
  }

 private:
  bool to_devices_;
};

}  // namespace

const Pattern& host_to_all_pattern() {
  static const HostAll pattern(true);
  return pattern;
}

const Pattern& all_to_host_pattern() {
  static const HostAll pattern(false);
  return pattern;
}

}  // namespace dmabench
