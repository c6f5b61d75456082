#include "bench/features.hpp"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/patterns/pattern.hpp"
#include "engines/backend.hpp"
#include "engines/registry.hpp"
#include "engines/engine_factories.hpp"
#include "gpu/features.hpp"
#include "team/team.hpp"
#include "version.hpp"

namespace dmabench {

using json = nlohmann::json;

namespace {

// Each backend: available (devices, peer access) or why not. Returns backend -> "" or why not.
std::map<std::string, std::string> print_backends() {
  std::map<std::string, std::string> backend_state;
  for (const std::string name : {"cuda", "hip", "host"}) {
    auto made = make_backend(name);
    if (!made) {
      backend_state[name] = "unavailable: " + made.why_not();
      fmt::print("\nbackend {}: unavailable: {}\n", name, made.why_not());
      continue;
    }
    const std::unique_ptr<Backend>& b = *made;
    backend_state[name] = "";
    const json ctx = b->context();
    if (name == "host") {
      fmt::print("\nbackend host: available; ranks are virtual (ids 0..{}), one CPU thread each; CPU {} ({} threads)\n",
                 b->device_count() - 1, ctx["cpu"].get<std::string>(), ctx["cpu_threads"].get<unsigned>());
      continue;
    }
    fmt::print("\nbackend {}: available, {} device(s); versions {}\n", name, b->device_count(), ctx["versions"].dump());
    for (const auto& d : ctx["devices"])
      fmt::print("  GPU {}: {} bus {} memory {:.1f} GiB, {} copy engines, {} multiprocessors, cc {}\n", d["id"].get<int>(),
                 d["name"].get<std::string>(), d["bus_id"].get<std::string>(),
                 d["memory_bytes"].get<double>() / 1073741824.0, d["copy_engines"].get<int>(),
                 d["multiprocessors"].get<int>(), d["compute_capability"].get<std::string>());
    const auto& links = ctx["peer_links"];
    for (std::size_t i = 0; i < links.size(); ++i)
      for (std::size_t j = 0; j < links[i].size(); ++j)
        if (i != j)
          fmt::print("  peer access GPU {} -> GPU {}: {}{}\n", i, j, links[i][j]["access"].get<bool>() ? "yes" : "NO",
                     links[i][j]["access"].get<bool>()
                         ? fmt::format(" (performance rank {})", links[i][j]["performance_rank"].get<int>())
                         : std::string(" (sm engine cases between them are skipped)"));
  }
  return backend_state;
}

void print_engines(const std::map<std::string, std::string>& backend_state) {
  fmt::print("\nengines:\n");
  for (const auto& spec : engine_specs()) {
    std::vector<std::string> runs, states;
    for (const auto& b : built_backends()) {
      if (!spec.runs_on(b)) continue;
      runs.push_back(b);
      const auto engine = make_engine(spec.name, b);
      const bool not_built = !engine && engine.why_not().rfind("this build has no", 0) == 0;
      if (not_built)
        states.push_back(fmt::format("{}: not built: {}", b, engine.why_not()));
      else if (!backend_state.at(b).empty())
        states.push_back(fmt::format("{}: built; backend {}", b, backend_state.at(b)));
      else
        states.push_back(engine ? b + ": available" : fmt::format("{}: unavailable: {}", b, engine.why_not()));
    }
    if (runs.empty()) {  // no backend of this build runs it: why make_engine says so
      const auto engine = make_engine(spec.name);
      states.push_back(engine ? "not available in this build" : "not built: " + engine.why_not());
      runs.push_back(spec.backend);
    }
    fmt::print("  {:<5} [{}] {}\n        {}\n", spec.name, fmt::join(runs, ", "), fmt::join(states, "; "), spec.description);
    for (const auto& o : spec.options)
      fmt::print("        option {}: {} (accepted: {}; default {})\n", o.name, o.help, o.accepted(), o.default_value.dump());
  }
}

// The sdma engine's platform per backend this build runs it on: per GPU whether PCIe 64-bit atomics reach system
// memory (so what sync=auto completes with) and which SDMA engines are usable (after the fused-off guard).
void print_sdma_platforms() {
  for (const auto& b : built_backends()) {
    if (b != "hip" && b != "host") continue;
    auto p = make_sdma_platform(b);
    if (!p) {
      fmt::print("\nsdma platform on {}: unavailable: {}\n", b, p.why_not());
      continue;
    }
    const int shown = b == "host" ? 2 : (*p)->device_count();  // the software engine's devices are all alike
    fmt::print("\nsdma platform on {}: {} ({} device(s){})\n", b, (*p)->name(), (*p)->device_count(),
               shown < (*p)->device_count() ? fmt::format(", the first {} shown", shown) : "");
    for (const auto& line : sdma_platform_facts(**p, shown)) fmt::print("  {}\n", line);
  }
}

}  // namespace

void print_features() {
  fmt::print("dmabench {} (git {})\n", kVersion, kGitRevision);
  fmt::print("backends built: {}\n", fmt::join(built_backends(), ", "));
  fmt::print("multi-process runs (mpirun, srun: one process per rank): {}\n",
             team::mpi_build_unsupported() ? "no: " + *team::mpi_build_unsupported() : "yes, " + team::mpi_build_description());
  print_engines(print_backends());
  print_sdma_platforms();
  // Both vendors' features and the version each needs (gpu/features.cpp): what this build has.
  for (const auto& table : gpu::feature_tables(gpu::this_build())) {
    fmt::print("\n{} features ({} backend), and what this build has:\n", table.vendor, table.backend);
    for (const auto& f : table.features)
      fmt::print("  [{}] {}\n        needs {}{}\n", f.built ? "yes" : "no ", f.name, f.needs, f.note.empty() ? "" : "; " + f.note);
  }
  std::vector<std::string> patterns;
  for (const Pattern* p : all_patterns()) patterns.push_back(fmt::format("{} ({})", p->name(), p->description()));
  fmt::print("\npatterns: {}\n", fmt::join(patterns, "; "));
  fmt::print("timing modes: oneshot (per operation: launch on every issuing rank, wait for all), "
             "pipelined (pipeline_depth operations back to back, one wait, time / depth)\n");
}

}  // namespace dmabench
