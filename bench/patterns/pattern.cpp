#include "bench/patterns/pattern.hpp"

#include <stdexcept>
#include <string>

namespace dmabench {
namespace {

std::vector<const Pattern*>& registry() {
  static std::vector<const Pattern*> patterns = {&copy_pattern(), &bidir_pattern(), &allgather_pattern(),
                                                 &alltoall_pattern(), &h2d_pattern(), &d2h_pattern(), &h2d_bidir_pattern(),
                                                 &host_to_all_pattern(), &all_to_host_pattern(), &alltoallv_pattern(), &d2d_pattern()};
  return patterns;
}

}  // namespace

Plan Pattern::plan_routed(const std::vector<int>&, const Routing&) const {
  throw std::logic_error("pattern " + std::string(name()) + " is not planned from a routing");
}

const std::vector<const Pattern*>& all_patterns() { return registry(); }

const Pattern* find_pattern(std::string_view name) {
  for (const Pattern* p : all_patterns())
    if (p->name() == name) return p;
  return nullptr;
}

void register_pattern(const Pattern& pattern) {
  if (pattern.name().empty()) throw std::invalid_argument("register_pattern: a pattern needs a name");
  if (find_pattern(pattern.name()))
    throw std::invalid_argument("register_pattern: a pattern named '" + std::string(pattern.name()) + "' exists already");
  registry().push_back(&pattern);
}

}  // namespace dmabench
