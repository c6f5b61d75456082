#include "bench/overlap.hpp"

#include <algorithm>
#include <stdexcept>


namespace dmabench {

OverlapFigures overlap_figures(const OverlapTimes& t) {
  if (!(t.compute_alone_ms > 0) || !(t.comm_alone_us > 0))
    throw std::invalid_argument("overlap: alone times must be positive");
  OverlapFigures f;
  f.compute_slowdown_pct = (t.compute_with_ms / t.compute_alone_ms - 1.0) * 100.0;
  f.comm_slowdown_pct = (t.comm_with_us / t.comm_alone_us - 1.0) * 100.0;
  const double c = t.compute_alone_ms, m = t.comm_ops_with * t.comm_alone_us * 1e-3, together = t.compute_with_ms;
  const double shorter = std::min(c, m);
  f.overlap_efficiency = shorter > 0 ? std::clamp((c + m - together) / shorter, 0.0, 1.0) : 0.0;
  return f;
}

}  // namespace dmabench
