// alltoallv: the uneven all-to-all of a mixture-of-experts layer, planned from a routing (patterns/routing.hpp):
// every rank's tokens go to the ranks of their experts (dispatch) or come back (combine), so the bytes per
// (source, destination) pair follow the router. Ranks may outnumber the devices (routing `ranks`): rank r then runs on
// devices[r % devices], several ranks on one GPU, each with its own buffers and stream (as h2d-bidir puts two).
//
// Buffers, with B = token_bytes, T = tokens_per_rank and c[s][d] the tokens rank s sends rank d in dispatch:
//   the send buffer of rank s: its tokens packed by destination rank (d ascending), c[s][d] tokens for d: what a
//     permutation kernel makes before a packed dispatch, and where a packed combine brings tokens back to;
//   the receive buffer of rank d: the tokens it gets, packed by source rank (s ascending; DeepEP's layout);
//   the token buffer of rank s: its T tokens in order (what a scattered dispatch reads each token from);
//   the combine slots of rank s: T x F slots, token i's copy from its j-th destination rank in slot i * F + j (F the
//     most ranks one token went to): a scattered combine writes every returned copy into its own slot, and what
//     sums the copies (the weighted top-k reduction) is compute, not a copy.
// dispatch packed:    send buffer -> receive buffer, one transfer per non-empty pair, issued by the sender;
// dispatch scattered: token buffer -> receive buffer, one transfer per (token, destination) (block_bytes = B);
// combine packed:     receive buffer -> send buffer (the transposed pairs), issued by the expert rank;
// combine scattered:  receive buffer -> combine slots, one transfer per token copy (slots of tokens that went to
//                     fewer than F ranks stay unwritten: the plan has gaps, and validation checks they keep the poison).
// S = the bytes moved (every pair, the rank's own included), busbw = algbw * (bytes between different ranks) / S.
// Peers first, self last, as alltoall orders them.
#include <algorithm>
#include <stdexcept>

#include "patterns/pattern.hpp"
#include "patterns/routing.hpp"

namespace dmabench {
namespace {

using Matrix = std::vector<std::vector<std::uint64_t>>;

// offsets[a][b]: where pair (a, b)'s run starts in a's buffer packed by b ascending, counts[a][b] tokens of B bytes each;
// sizes[a]: the buffer's bytes.
struct Packed {
  Matrix offset;
  std::vector<std::size_t> size;
};
Packed pack(const Matrix& counts, std::uint64_t B, bool by_row) {
  const std::size_t n = counts.size();
  Packed p{Matrix(n, std::vector<std::uint64_t>(n, 0)), std::vector<std::size_t>(n, 0)};
  for (std::size_t a = 0; a < n; ++a) {
    std::uint64_t at = 0;
    for (std::size_t b = 0; b < n; ++b) {
      p.offset[a][b] = at;
      at += (by_row ? counts[a][b] : counts[b][a]) * B;
    }
    p.size[a] = at;
  }
  return p;
}

class AllToAllV final : public Pattern {
 public:
  std::string_view name() const override { return "alltoallv"; }
  std::string_view description() const override {
    return "uneven all-to-all of MoE tokens (dispatch/combine) by a routing; ranks may share a GPU";
  }
  int ranks_used(int available) const override { return available; }
  bool routed() const override { return true; }
  // Without a routing (a sweep over sizes): one token of `bytes` per rank, routed top-2 (or top-1 on one rank)
  // uniformly over one expert per rank.
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Routing r;
    r.token_bytes = bytes;
    r.tokens_per_rank = 1;
    return plan_routed(devices, r);
  }
  Plan plan_routed(const std::vector<int>& devices, const Routing& r) const override {
    const int n = r.ranks > 0 ? r.ranks : static_cast<int>(devices.size());
    const Routed& routed = route(r, n);
    const Matrix c = routed.counts();
    const std::uint64_t B = r.token_bytes;
    const bool dispatch = r.direction == Routing::Direction::dispatch;
    Plan p;
    p.pattern = "alltoallv";
    for (int i = 0; i < n; ++i) p.devices.push_back(devices.at(static_cast<std::size_t>(i) % devices.size()));
    p.bytes_per_rank = r.tokens_per_rank * B;
    const Packed send = pack(c, B, true), recv = pack(c, B, false);
    std::size_t fanout = 1;
    for (const auto& tokens : routed.dests)
      for (const auto& d : tokens) fanout = std::max(fanout, d.size());
    // the buffers per rank (a buffer of no bytes gets one token's, never written: a gap)
    std::vector<std::size_t> token_buffer(n, r.tokens_per_rank * B), slots(n, r.tokens_per_rank * fanout * B);
    p.src_bytes = dispatch ? (r.scattered ? token_buffer : send.size) : recv.size;
    p.dst_bytes = dispatch ? recv.size : (r.scattered ? slots : send.size);
    for (int s = 0; s < n; ++s)
      for (int k = 1; k <= n; ++k) {
        const int d = (s + k) % n;  // pair (s, d) of the dispatch, peers first
        const std::uint64_t count = c[s][d];
        if (count == 0) continue;
        const std::uint64_t at_send = send.offset[s][d], at_recv = recv.offset[d][s];
        if (!r.scattered) {
          p.transfers.push_back(dispatch ? Transfer{.issuer = s, .src_rank = s, .src_offset = at_send, .dst_rank = d,
                                                    .dst_offset = at_recv, .bytes = count * B}
                                         : Transfer{.issuer = d, .src_rank = d, .src_offset = at_recv, .dst_rank = s,
                                                    .dst_offset = at_send, .bytes = count * B});
          continue;
        }
        std::uint64_t j = 0;  // the j-th token of s for d: slot j of s's run in d's receive buffer
        const auto& tokens = routed.dests[s];
        for (std::uint64_t i = 0; i < tokens.size(); ++i) {
          const auto& dests = tokens[i];
          const auto at = std::find(dests.begin(), dests.end(), d);
          if (at == dests.end()) continue;
          const std::uint64_t slot = (i * fanout + static_cast<std::uint64_t>(at - dests.begin())) * B;
          p.transfers.push_back(dispatch ? Transfer{.issuer = s, .src_rank = s, .src_offset = i * B, .dst_rank = d,
                                                    .dst_offset = at_recv + j * B, .bytes = B}
                                         : Transfer{.issuer = d, .src_rank = d, .src_offset = at_recv + j * B, .dst_rank = s,
                                                    .dst_offset = slot, .bytes = B});
          ++j;
        }
      }
    if (r.scattered) p.block_bytes = B;
    std::size_t written = 0, peer = 0;
    for (const Transfer& t : p.transfers) {
      written += t.bytes;
      if (t.src_rank != t.dst_rank) peer += t.bytes;
    }
    p.total_bytes = written;
    p.bus_factor = written ? static_cast<double>(peer) / static_cast<double>(written) : 0.0;
    for (int i = 0; i < n; ++i) {
      if (p.src_bytes[i] == 0) p.src_bytes[i] = B;
      if (p.dst_bytes[i] == 0) p.dst_bytes[i] = B;
    }
    std::vector<std::size_t> received(n, 0);
    for (const Transfer& t : p.transfers) received[t.dst_rank] += t.bytes;
    for (int i = 0; i < n; ++i) p.gaps = p.gaps || received[i] != p.dst_bytes[i];
    return p;
  }
};

}  // namespace

const Pattern& alltoallv_pattern() {
  static const AllToAllV pattern;
  return pattern;
}

}  // namespace dmabench
