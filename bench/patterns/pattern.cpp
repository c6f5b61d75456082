#include "bench/patterns/pattern.hpp"

namespace dmabench {

const std::vector<const Pattern*>& all_patterns() {
  static const std::vector<const Pattern*> patterns = {&copy_pattern(), &bidir_pattern(), &allgather_pattern(),
                                                       &alltoall_pattern(), &h2d_pattern(), &d2h_pattern(), &h2d_bidir_pattern(),
                                                       &host_to_all_pattern(), &all_to_host_pattern()};
  return patterns;
}

const Pattern* find_pattern(std::string_view name) {
  for (const Pattern* p : all_patterns())
    if (p->name() == name) return p;
  return nullptr;
}

}  // namespace dmabench
