#include "bench/measure/pairs.hpp"

#include <exception>
#include <map>
#include <vector>

#include "bench/measure/timing.hpp"
#include "bench/measure/validation.hpp"
#include "bench/sampling/stats.hpp"
#include "team/team.hpp"

namespace dmabench::measure {

HeaviestPair measure_heaviest_pair(const Subject& s, int samples) {
  HeaviestPair h;
  std::map<std::pair<int, int>, std::uint64_t> bytes;
  for (const Transfer& t : s.plan.transfers) bytes[{t.src_rank, t.dst_rank}] += t.bytes;
  for (const auto& [pair, n] : bytes)
    if (n > h.bytes) {
      h.src = pair.first;
      h.dst = pair.second;
      h.bytes = n;
    }
  if (h.bytes == 0) {
    h.error = "the operation moves no bytes";
    return h;
  }
  if (team::world().multi()) {
    h.error = "not measured in a multi-process run";
    return h;
  }
  Plan pair = s.plan;
  pair.transfers.clear();
  for (const Transfer& t : s.plan.transfers)
    if (t.src_rank == h.src && t.dst_rank == h.dst) pair.transfers.push_back(t);
  pair.gaps = true;  // every other byte of the destinations is left as it was: validation checks it keeps the poison
  try {
    if (auto why = s.engine.unsupported(pair, s.options, s.depth())) {
      h.error = *why;
      return h;
    }
    auto op = s.engine.prepare(pair, s.options);
    const Subject alone{s.spec, pair, s.engine, s.options, *op, s.backend};
    if (auto bad = validate_once(alone)) {
      h.error = "validation: " + *bad;
      return h;
    }
    h.validated = true;
    for (int i = 0; i < 2; ++i) take_sample(alone);
    std::vector<double> us;
    for (int i = 0; i < samples; ++i) us.push_back(take_sample(alone).seconds_per_op * 1e6);
    h.p50_us = median(us);
    h.samples = samples;
  } catch (const std::exception& e) {
    h.error = e.what();
  }
  return h;
}

}  // namespace dmabench::measure
