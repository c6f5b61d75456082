#pragma once
// A routing: how a mixture-of-experts layer's tokens are spread over the ranks, which the alltoallv pattern turns
// into an uneven all-to-all (patterns/alltoallv.cpp). Every rank holds `tokens_per_rank` tokens of
// `token_bytes`; each token picks `topk` distinct experts of `experts` (placed in contiguous runs, expert e on rank
// e / (experts / ranks)) and goes once to every rank that hosts one of them (the per-rank deduplication DeepEP's
// dispatch does). The splits say how experts are picked: uniform, Zipf-skewed, one hot expert, or token counts read
// from a file. Deterministic: a seed gives the same routing on every machine and process.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench {

struct Splits {
  enum class Kind { uniform, zipf, hot, file };
  Kind kind = Kind::uniform;
  double skew = 0;   // zipf: the exponent s (expert of popularity rank k has weight 1 / k^s); hot: the share p of tokens
                     // that pick the hot expert
  std::string path;  // file: the trace (a matrix of token counts, or {"steps": [matrices]})
  int step = 0;      // file: the step of the trace this case moves
  // "uniform", "zipf1.2", "hot0.5", "file=NAME#STEP" (NAME: the file's name without its directory)
  std::string label() const;
  bool operator==(const Splits&) const = default;
};
std::string_view to_string(Splits::Kind k);

struct Routing {
  enum class Direction { dispatch, combine };
  Splits splits;
  std::uint64_t token_bytes = 8192;
  std::uint64_t tokens_per_rank = 16;
  int topk = 2;
  int experts = 0;  // 0: one per rank (and topk at most the ranks)
  std::uint64_t seed = 1;
  // dispatch: tokens from their rank to the ranks of their experts; combine: back, each to its own slot.
  Direction direction = Direction::dispatch;
  // packed: each pair's tokens lie together on both sides (one transfer per non-empty pair: the send buffer a
  // permutation kernel made, DeepEP's receive buffer); scattered: each token is its own transfer, read from (dispatch)
  // or written to (combine) the token's own slot.
  bool scattered = false;
  int ranks = 0;  // 0: one rank per device; else this many ranks over the case's devices (several ranks on one GPU)

  int experts_for(int ranks_used) const { return experts > 0 ? experts : ranks_used; }
  // "dispatch,packed,zipf1.2,16x8KiB,top2of8" (+ ",ranks=8" when set, ",seed=N" when not 1): the case name's part.
  std::string label() const;
  // The routing as a case's identity and record give it (results/SCHEMA.md, `alltoallv`).
  nlohmann::json to_json() const;
  bool operator==(const Routing&) const = default;
};
std::string_view to_string(Routing::Direction d);

// Where every token goes: dests[s][i] is the ascending list of ranks that token i of rank s is sent to (in dispatch).
struct Routed {
  int ranks = 0;
  std::vector<std::vector<std::vector<int>>> dests;
  // Tokens rank s sends to rank d in dispatch.
  std::vector<std::vector<std::uint64_t>> counts() const;
};

// The routing of `ranks` ranks. Throws InputError naming the config field (alltoallv.experts, alltoallv.topk,
// alltoallv.splits, alltoallv.tokens_per_rank) when the routing cannot be made: experts not a multiple of the ranks,
// topk above experts, a trace step of another shape, a count above tokens_per_rank. Cached per (routing, ranks).
const Routed& route(const Routing& r, int ranks);

// Why generating and planning this routing of `ranks` ranks is not done here, or "": its draws past the bound of
// generation work (kMaxRoutingDraws: a routing is made before any case runs, and must stay within seconds and answer a
// signal), or its tables (every token's destinations, and a scattered plan's transfer per token copy) past half of
// `free_host_bytes`. The case is then skipped with this reason (bench/cases/cases.cpp).
inline constexpr std::uint64_t kMaxRoutingDraws = std::uint64_t{1} << 30;
std::string routing_too_costly(const Routing& r, int ranks, std::uint64_t free_host_bytes);

// A trace file, read and checked once per path: its steps, each a square matrix of token counts (>= 0). Throws
// InputError naming `field` and the element (steps[k][s][d]) that is wrong.
const std::vector<std::vector<std::vector<std::uint64_t>>>& trace_steps(const std::string& path, const std::string& field);

}  // namespace dmabench
