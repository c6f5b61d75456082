#include "patterns/routing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "core/interrupt.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/quote.hpp"
#include "core/read_file.hpp"
#include "core/units.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;
using Matrix = std::vector<std::vector<std::uint64_t>>;

constexpr std::size_t kMaxTraceBytes = 64u << 20;
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 32;
constexpr std::size_t kMaxTraceRanks = 4096;
constexpr int kMaxTraceDepth = 32;

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw InputError(fmt::format("config: {}: {}", field, what));
}

// A double in [0, 1) from 53 bits of the generator (std::uniform_real_distribution's algorithm is left open).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A seeded permutation of 0..n-1 (the shuffle done here: std::shuffle's algorithm is left open too).
std::vector<int> permutation(int n, std::mt19937_64& rng) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(p[static_cast<std::size_t>(i)], p[rng() % static_cast<std::uint64_t>(i + 1)]);
  return p;
}

// Experts chosen for the token at hand: chosen[e] == stamp (a new stamp per token: no clearing, O(1) membership).
struct Chosen {
  std::vector<std::uint32_t> mark;
  std::uint32_t stamp = 0;
  void next_token() {
    if (++stamp == 0) {  // wrapped: every mark is stale again
      std::fill(mark.begin(), mark.end(), 0u);
      stamp = 1;
    }
  }
  bool has(int e) const { return mark[static_cast<std::size_t>(e)] == stamp; }
  void add(int e) { mark[static_cast<std::size_t>(e)] = stamp; }
};

// The weight of expert e from cumulative weights (its own, not a difference of sums: past the first few experts of a
// steep Zipf their weights vanish below a double's precision in the sums).
// Picks `k` distinct experts: draws from the cumulative weights `cum` (cum.back() the total) and redraws a duplicate,
// which is sampling without replacement (each later pick renormalised over the rest). Where 64 k draws were not enough
// (a distribution so skewed that redraws keep hitting the chosen ones: zipf 10, or top-64 of 256), the rest are picked
// by their own `weights` over the experts not chosen, one pass each (Efraimidis-Spirakis keys u^(1/w), largest first).
void pick(const std::vector<double>& weights, const std::vector<double>& cum, int k, std::mt19937_64& rng, Chosen& seen,
          std::vector<int>& chosen) {
  const int n = static_cast<int>(cum.size());
  for (int e : chosen) seen.add(e);
  for (int attempts = 0; static_cast<int>(chosen.size()) < k && ++attempts <= 64 * k;) {
    int e = static_cast<int>(std::upper_bound(cum.begin(), cum.end(), unit(rng) * cum.back()) - cum.begin());
    e = std::min(e, n - 1);
    if (!seen.has(e) && weights[static_cast<std::size_t>(e)] > 0) {
      seen.add(e);
      chosen.push_back(e);
    }
  }
  if (static_cast<int>(chosen.size()) >= k) return;
  std::vector<std::pair<double, int>> keys;  // log(u) / w: the largest keys are the picks
  for (int e = 0; e < n; ++e) {
    const double w = weights[static_cast<std::size_t>(e)];
    if (seen.has(e)) continue;
    const double u = std::max(unit(rng), 0x1.0p-60);
    keys.emplace_back(w > 0 ? std::log(u) / w : -std::numeric_limits<double>::infinity(), e);  // weight 0: last
  }
  const std::size_t more = std::min(keys.size(), static_cast<std::size_t>(k) - chosen.size());
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(more), keys.end(), std::greater<>());
  for (std::size_t i = 0; i < more; ++i) chosen.push_back(keys[i].second);
}

Routed generate(const Routing& r, int ranks) {
  const int experts = r.experts_for(ranks);
  if (experts % ranks != 0)
    fail("alltoallv.experts", fmt::format("{} experts over {} ranks: the experts must be a multiple of the ranks (each rank "
                                          "hosts experts / ranks of them)",
                                          experts, ranks));
  // experts left at one per rank: top-k of them at most (a sweep over device sets keeps its topk where it fits)
  const int topk = r.experts > 0 ? r.topk : std::min(r.topk, experts);
  if (topk > experts)
    fail("alltoallv.topk", fmt::format("top-{} of {} experts: a token cannot pick more experts than there are", r.topk, experts));
  const int per_rank = experts / ranks;
  std::mt19937_64 order_rng(r.seed * 0x9e3779b97f4a7c15ull + 0x5eed);
  const std::vector<int> popular = permutation(experts, order_rng);  // popular[k]: the expert of popularity rank k
  std::vector<double> weights(static_cast<std::size_t>(experts)), cum(weights.size());
  double total = 0;
  for (int k = 0; k < experts; ++k) {
    const double w = r.splits.kind == Splits::Kind::zipf ? std::pow(static_cast<double>(k + 1), -r.splits.skew) : 1.0;
    weights[static_cast<std::size_t>(popular[static_cast<std::size_t>(k)])] = w;
  }
  for (std::size_t e = 0; e < weights.size(); ++e) cum[e] = (total += weights[e]);  // cumulative
  const int hot = popular[0];
  std::vector<double> other_weights, others;  // hot: every expert but the hot one, equally likely
  if (r.splits.kind == Splits::Kind::hot) {
    double t = 0;
    for (int e = 0; e < experts; ++e) {
      other_weights.push_back(e == hot ? 0.0 : 1.0);
      others.push_back(t += other_weights.back());
    }
  }
  Chosen seen{std::vector<std::uint32_t>(static_cast<std::size_t>(experts), 0u), 0};
  Routed out;
  out.ranks = ranks;
  out.dests.resize(static_cast<std::size_t>(ranks));
  std::vector<int> chosen;
  for (int s = 0; s < ranks; ++s) {
    std::mt19937_64 rng(r.seed * 0x9e3779b97f4a7c15ull + 2 * static_cast<std::uint64_t>(s) + 1);
    auto& tokens = out.dests[static_cast<std::size_t>(s)];
    tokens.resize(r.tokens_per_rank);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      auto& dests = tokens[i];
      if (i % 4096 == 0 && interrupt::requested())
        throw interrupt::Stopped(fmt::format("while generating the {} routing", r.label()));
      chosen.clear();
      seen.next_token();
      if (r.splits.kind == Splits::Kind::hot) {
        if (unit(rng) < r.splits.skew) chosen.push_back(hot);
        if (experts > 1) {
          const int rest = std::min(topk - static_cast<int>(chosen.size()), experts - 1);
          std::vector<int> picked = chosen;
          pick(other_weights, others, static_cast<int>(picked.size()) + rest, rng, seen, picked);
          chosen = picked;
        } else if (chosen.empty()) {
          chosen.push_back(hot);
        }
      } else {
        pick(weights, cum, topk, rng, seen, chosen);
      }
      for (int e : chosen) dests.push_back(e / per_rank);
      std::sort(dests.begin(), dests.end());
      dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    }
  }
  return out;
}

// A trace step's counts as a routing: rank s's tokens for rank d are count[s][d] consecutive tokens (wrapping) from
// where its tokens for rank d - 1 ended, so a source's destinations spread over its tokens.
Routed from_counts(const Matrix& m, const Routing& r, int ranks) {
  const std::string where = fmt::format("file:{} step {}", r.splits.path, r.splits.step);
  if (m.size() != static_cast<std::size_t>(ranks))
    fail("alltoallv.splits", fmt::format("{} is a {} x {} matrix; the case has {} ranks (alltoallv.ranks, or one per device)",
                                         where, m.size(), m.size(), ranks));
  Routed out;
  out.ranks = ranks;
  out.dests.resize(static_cast<std::size_t>(ranks));
  const std::uint64_t T = r.tokens_per_rank;
  bool any = false;
  for (int s = 0; s < ranks; ++s) {
    auto& tokens = out.dests[static_cast<std::size_t>(s)];
    tokens.resize(T);
    std::uint64_t start = 0;
    for (int d = 0; d < ranks; ++d) {
      const std::uint64_t n = m[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
      if (n > T)
        fail("alltoallv.tokens_per_rank",
             fmt::format("{}: steps[{}][{}][{}] is {} tokens from rank {} to rank {}, more than the {} tokens a rank holds "
                         "(tokens_per_rank); a rank sends each of its tokens at most once to a rank",
                         where, r.splits.step, s, d, n, s, d, T));
      for (std::uint64_t i = 0; i < n; ++i) tokens[(start + i) % T].push_back(d);
      start = (start + n) % std::max<std::uint64_t>(T, 1);
      any = any || n > 0;
    }
  }
  if (!any) fail("alltoallv.splits", fmt::format("{} moves no token", where));
  return out;
}

Matrix read_matrix(const json& v, const std::string& field) {
  if (!v.is_array() || v.empty()) fail(field, "expected a non-empty list of rows (a square matrix of token counts)");
  if (v.size() > kMaxTraceRanks) fail(field, fmt::format("{} rows; at most {} ranks", v.size(), kMaxTraceRanks));
  Matrix m;
  for (std::size_t s = 0; s < v.size(); ++s) {
    const json& row = v[s];
    if (!row.is_array() || row.size() != v.size())
      fail(fmt::format("{}[{}]", field, s),
           fmt::format("expected a row of {} token counts (the matrix is square: one row and one column per rank), got {}",
                       v.size(), row.is_array() ? fmt::format("{} entries", row.size()) : std::string(row.type_name())));
    m.emplace_back();
    for (std::size_t d = 0; d < row.size(); ++d) {
      const json& x = row[d];
      const std::string at = fmt::format("{}[{}][{}]", field, s, d);
      if (x.is_number_integer() && !x.is_number_unsigned() && x.get<std::int64_t>() < 0)
        fail(at, fmt::format("{} is negative; a token count is 0 or more", x.get<std::int64_t>()));
      if (!x.is_number_unsigned()) fail(at, fmt::format("expected a whole number of tokens, got {}", quote_json(x)));
      if (x.get<std::uint64_t>() > kMaxCount) fail(at, fmt::format("{} tokens; at most {}", x.get<std::uint64_t>(), kMaxCount));
      m.back().push_back(x.get<std::uint64_t>());
    }
  }
  return m;
}

}  // namespace

std::string_view to_string(Splits::Kind k) {
  switch (k) {
    case Splits::Kind::uniform: return "uniform";
    case Splits::Kind::zipf: return "zipf";
    case Splits::Kind::hot: return "hot";
    case Splits::Kind::file: return "file";
  }
  return "?";
}

std::string_view to_string(Routing::Direction d) { return d == Routing::Direction::dispatch ? "dispatch" : "combine"; }

std::string Splits::label() const {
  switch (kind) {
    case Kind::uniform: return "uniform";
    case Kind::zipf: return fmt::format("zipf{}", skew);
    case Kind::hot: return fmt::format("hot{}", skew);
    case Kind::file: {
      // the file's name is the user's: escaped (core/quote.hpp), so that a case name, printed in the console table, the
      // progress line, --list and every message, never carries a control character (a newline forged a table line)
      const std::size_t slash = path.find_last_of('/');
      return fmt::format("file={}#{}", quote(slash == std::string::npos ? path : path.substr(slash + 1), 0), step);
    }
  }
  return "?";
}

std::string Routing::label() const {
  std::string s = fmt::format("{},{},{},{}x{}", to_string(direction), scattered ? "scattered" : "packed", splits.label(),
                              tokens_per_rank, format_bytes(token_bytes));
  if (splits.kind != Splits::Kind::file) s += experts > 0 ? fmt::format(",top{}of{}", topk, experts) : fmt::format(",top{}", topk);
  if (ranks > 0) s += fmt::format(",ranks={}", ranks);
  if (seed != 1 && splits.kind != Splits::Kind::file) s += fmt::format(",seed={}", seed);
  return s;
}

nlohmann::json Routing::to_json() const {
  const bool generated = splits.kind != Splits::Kind::file;
  return {{"direction", to_string(direction)},
          {"tokens", scattered ? "scattered" : "packed"},
          {"splits", to_string(splits.kind)},
          {"skew", splits.kind == Splits::Kind::zipf || splits.kind == Splits::Kind::hot ? json(splits.skew) : json()},
          {"file", generated ? json() : json(splits.path)},
          {"step", generated ? json() : json(splits.step)},
          {"token_bytes", token_bytes},
          {"tokens_per_rank", tokens_per_rank},
          {"topk", generated ? json(topk) : json()},
          {"experts", generated && experts > 0 ? json(experts) : json()},
          {"seed", generated ? json(seed) : json()},
          {"ranks_asked", ranks > 0 ? json(ranks) : json()}};
}

std::vector<std::vector<std::uint64_t>> Routed::counts() const {
  Matrix m(static_cast<std::size_t>(ranks), std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 0));
  for (std::size_t s = 0; s < dests.size(); ++s)
    for (const auto& token : dests[s])
      for (int d : token) ++m[s][static_cast<std::size_t>(d)];
  return m;
}

const std::vector<std::vector<std::vector<std::uint64_t>>>& trace_steps(const std::string& path, const std::string& field) {
  static std::mutex mu;
  static std::map<std::string, std::vector<Matrix>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  const std::string where = fmt::format("{}: file:{}", field, quote(path));
  auto text = read_small_file(path, kMaxTraceBytes, "the alltoallv trace of " + field);
  if (!text) throw InputError(fmt::format("config: {}: {}", where, text.why_not()));
  // a trace nests 4 levels ({"steps": [[[...]]]}): bounded like a config, no key twice (core/json_input.hpp)
  const json doc = parse_input_json(*text, "config: " + where, kMaxTraceDepth);
  std::vector<Matrix> steps;
  if (doc.is_array()) {
    steps.push_back(read_matrix(doc, where));
  } else if (doc.is_object() && doc.contains("steps")) {
    const json& list = doc["steps"];
    if (!list.is_array() || list.empty()) fail(where + ": steps", "expected a non-empty list of matrices, one per step");
    for (std::size_t k = 0; k < list.size(); ++k) steps.push_back(read_matrix(list[k], fmt::format("{}: steps[{}]", where, k)));
    if (doc.contains("ranks")) {
      const json& n = doc["ranks"];
      if (!n.is_number_unsigned()) fail(where + ": ranks", fmt::format("expected a whole number, got {}", quote_json(n)));
      for (std::size_t k = 0; k < steps.size(); ++k)
        if (steps[k].size() != n.get<std::uint64_t>())
          fail(fmt::format("{}: steps[{}]", where, k),
               fmt::format("a {} x {} matrix; the file says ranks {}", steps[k].size(), steps[k].size(), n.get<std::uint64_t>()));
    }
  } else {
    fail(where, "expected a matrix of token counts ([[...], ...]) or an object with \"steps\" (a list of matrices)");
  }
  return cache.emplace(path, std::move(steps)).first->second;
}

const Routed& route(const Routing& r, int ranks) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, Routed> cache;
  const std::pair<std::string, int> key{r.to_json().dump(), ranks};
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  if (ranks < 1) throw std::invalid_argument("route: no ranks");
  if (r.tokens_per_rank < 1) fail("alltoallv.tokens_per_rank", "must be at least 1");
  if (r.topk < 1) fail("alltoallv.topk", "must be at least 1");
  Routed routed;
  if (r.splits.kind == Splits::Kind::file) {
    const std::string field = "alltoallv.splits";  // named: a temporary argument makes GCC 14 warn of a dangling reference
    const auto& steps = trace_steps(r.splits.path, field);
    if (r.splits.step < 0 || static_cast<std::size_t>(r.splits.step) >= steps.size())
      fail("alltoallv.splits", fmt::format("file:{} has {} steps; step {} does not exist", r.splits.path, steps.size(), r.splits.step));
    routed = from_counts(steps[static_cast<std::size_t>(r.splits.step)], r, ranks);
  } else {
    routed = generate(r, ranks);
  }
  const std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(key, std::move(routed)).first->second;
}

std::string routing_too_costly(const Routing& r, int ranks, std::uint64_t free_host_bytes) {
  const double tokens = static_cast<double>(ranks) * static_cast<double>(r.tokens_per_rank);
  const int experts = r.experts_for(ranks);
  const double k = std::min(r.topk, experts), fanout = std::min<double>(k, ranks);
  if (r.splits.kind != Splits::Kind::file) {
    // the most a token costs: 64 k draws of log2(experts) steps each, then one pass over the experts
    const double draws = tokens * (64.0 * k * std::log2(std::max(2, experts)) + experts);
    if (draws > static_cast<double>(kMaxRoutingDraws))
      return fmt::format("generating the routing {} could take up to {:.2g} draws ({} ranks x {} tokens x top-{} of {} experts), "
                         "more than the {:.2g} a routing may take before the cases run; fewer tokens_per_rank, topk or experts",
                         r.label(), draws, ranks, r.tokens_per_rank, r.topk, experts, static_cast<double>(kMaxRoutingDraws));
  }
  // every token's destination list, and a scattered plan's transfer per token copy (patterns/alltoallv.cpp)
  const double bytes = tokens * (sizeof(std::vector<int>) + fanout * sizeof(int)) + (r.scattered ? tokens * fanout * 64.0 : 0.0);
  if (free_host_bytes > 0 && bytes > static_cast<double>(free_host_bytes) / 2)
    return fmt::format("the routing {}'s tables ({} ranks x {} tokens, up to {:.0f} copies each) would take {:.2f} GiB of host "
                       "memory, more than half of the {:.2f} GiB free",
                       r.label(), ranks, r.tokens_per_rank, fanout, bytes / 1073741824.0,
                       static_cast<double>(free_host_bytes) / 1073741824.0);
  return "";
}

}  // namespace dmabench
