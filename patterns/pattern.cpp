#include "patterns/pattern.hpp"

#include <stdexcept>
#include <string>

namespace dmabench {
namespace {

std::vector<const Pattern*>& registry() {
#define DMABENCH_PATTERN_ADDRESS(name) &name##_pattern(),
  static std::vector<const Pattern*> patterns = {DMABENCH_PATTERNS(DMABENCH_PATTERN_ADDRESS)};
#undef DMABENCH_PATTERN_ADDRESS
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

std::string_view pairing(const Pattern& p) {
  if (p.ranks_used(1) == 1 && p.ranks_used(2) == 1) return "one-device";
  if (p.ranks_used(1) == 0 && p.ranks_used(2) == 2 && p.ranks_used(3) == 2) return "two-device";
  return "";
}

nlohmann::json pattern_specs_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Pattern* p : all_patterns()) {
    const std::string_view pairs = pairing(*p);
    out.push_back({{"name", p->name()},
                   {"description", p->description()},
                   {"bidirectional", p->bidirectional()},
                   {"host_memory", p->uses_host_memory()},
                   {"routed", p->routed()},
                   {"breakdown", p->has_breakdown()},
                   {"in_place", p->in_place() != nullptr},
                   {"pairs", pairs.empty() ? nlohmann::json() : nlohmann::json(pairs)}});
  }
  return out;
}

void register_pattern(const Pattern& pattern) {
  if (pattern.name().empty()) throw std::invalid_argument("register_pattern: a pattern needs a name");
  if (find_pattern(pattern.name()))
    throw std::invalid_argument("register_pattern: a pattern named '" + std::string(pattern.name()) + "' exists already");
  registry().push_back(&pattern);
}

}  // namespace dmabench
