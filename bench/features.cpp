#include "bench/features.hpp"

#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/config/presets.hpp"
#include "bench/output/console.hpp"
#include "patterns/pattern.hpp"
#include "core/exe_dir.hpp"
#include "core/read_file.hpp"
#include "core/revision.hpp"
#include "engines/backend.hpp"
#include "engines/registry.hpp"
#include "engines/engine_factories.hpp"
#include "gpu/features.hpp"
#include "team/team.hpp"
#include "version.hpp"

namespace dmabench {

using json = nlohmann::json;

namespace {

// What --features and a first run print, gathered and written whole at the end (console::write: a console
// that is gone, `dmabench --features | head`, ends nothing).
struct Text {
  std::string text;
  template <typename... T>
  void operator()(fmt::format_string<T...> format, T&&... args) {
    fmt::format_to(std::back_inserter(text), format, std::forward<T>(args)...);
  }
};

// A backend as found on this machine: its description, or why it cannot start (never an exception: a
// machine without a GPU or a driver is a normal answer).
struct FoundBackend {
  std::string name;
  std::string why_not;  // "" when available
  int device_count = 0;
  json context;
};

FoundBackend find_backend(const std::string& name) {
  FoundBackend f{name, "", 0, json::object()};
  try {
    auto made = make_backend(name);
    if (!made) {
      f.why_not = made.why_not();
      return f;
    }
    f.device_count = (*made)->device_count();
    f.context = (*made)->context();
  } catch (const std::exception& e) {
    f.why_not = std::string("failed to start: ") + e.what();
  }
  return f;
}

// Each backend: available (devices, peer access) or why not. Returns backend -> "" or why not.
std::map<std::string, std::string> print_backends(Text& out) {
  std::map<std::string, std::string> backend_state;
  for (const std::string name : {"cuda", "hip", "host"}) {
    const FoundBackend b = find_backend(name);
    if (!b.why_not.empty()) {
      backend_state[name] = "unavailable: " + b.why_not;
      out("\nbackend {}: unavailable: {}\n", name, b.why_not);
      continue;
    }
    backend_state[name] = "";
    const json& ctx = b.context;
    if (name == "host") {
      out("\nbackend host: available; ranks are virtual (ids 0..{}), one CPU thread each; CPU {} ({} threads)\n",
          b.device_count - 1, ctx["cpu"].get<std::string>(), ctx["cpu_threads"].get<unsigned>());
      continue;
    }
    out("\nbackend {}: available, {} device(s); versions {}\n", name, b.device_count, ctx["versions"].dump());
    for (const auto& d : ctx["devices"])
      out("  GPU {}: {} bus {} memory {:.1f} GiB, {} copy engines, {} multiprocessors, cc {}\n", d["id"].get<int>(),
          d["name"].get<std::string>(), d["bus_id"].get<std::string>(),
          d["memory_bytes"].get<double>() / 1073741824.0, d["copy_engines"].get<int>(),
          d["multiprocessors"].get<int>(), d["compute_capability"].get<std::string>());
    const auto& links = ctx["peer_links"];
    for (std::size_t i = 0; i < links.size(); ++i)
      for (std::size_t j = 0; j < links[i].size(); ++j)
        if (i != j)
          out("  peer access GPU {} -> GPU {}: {}{}\n", i, j, links[i][j]["access"].get<bool>() ? "yes" : "NO",
              links[i][j]["access"].get<bool>()
                  ? fmt::format(" (performance rank {})", links[i][j]["performance_rank"].get<int>())
                  : std::string(" (sm engine cases between them are skipped)"));
  }
  return backend_state;
}

void print_engines(Text& out, const std::map<std::string, std::string>& backend_state) {
  out("\nengines:\n");
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
        states.push_back(fmt::format("{}: built; the {} backend is unavailable (above)", b, b));
      else
        states.push_back(engine ? b + ": available" : fmt::format("{}: unavailable: {}", b, engine.why_not()));
    }
    if (runs.empty()) {  // no backend of this build runs it: why make_engine says so
      const auto engine = make_engine(spec.name);
      states.push_back(engine ? "not available in this build" : "not built: " + engine.why_not());
      runs.push_back(spec.backend);
    }
    out("  {:<5} [{}] {}\n        {}\n", spec.name, fmt::join(runs, ", "), fmt::join(states, "; "), spec.description);
    for (const auto& o : spec.options)
      out("        option {}: {} (accepted: {}; default {})\n", o.name, o.help, o.accepted(), o.default_value.dump());
  }
}

// The sdma engine's platform per backend this build runs it on: per GPU whether PCIe 64-bit atomics reach system
// memory (so what sync=auto completes with) and which SDMA engines are usable (after the fused-off guard).
void print_sdma_platforms(Text& out) {
  for (const auto& b : built_backends()) {
    if (b != "hip" && b != "host") continue;
    auto p = make_sdma_platform(b);
    if (!p) {
      out("\nsdma platform on {}: unavailable: {}\n", b, p.why_not());
      continue;
    }
    const int shown = b == "host" ? 2 : (*p)->device_count();  // the software engine's devices are all alike
    out("\nsdma platform on {}: {} ({} device(s){})\n", b, (*p)->name(), (*p)->device_count(),
        shown < (*p)->device_count() ? fmt::format(", the first {} shown", shown) : "");
    for (const auto& line : sdma_platform_facts(**p, shown)) out("  {}\n", line);
  }
}

// ---- `dmabench` with no arguments: what it found, and a first command ----

// The peer links of a GPU backend as a matrix: the driver's performance rank where peer access works, "no" where not.
void print_links(Text& out, const json& links) {
  if (!links.is_array() || links.size() < 2) return;
  out("    peer access between GPUs (a number: yes, with the driver's performance rank; no: none):\n      {:>6}", "");
  for (std::size_t j = 0; j < links.size(); ++j) out(" {:>6}", fmt::format("GPU{}", j));
  out("\n");
  for (std::size_t i = 0; i < links.size(); ++i) {
    out("      {:>6}", fmt::format("GPU{}", i));
    for (std::size_t j = 0; j < links[i].size(); ++j) {
      const json& l = links[i][j];
      std::string cell = "-";
      if (i != j) cell = l.value("access", false) ? fmt::format("{}", l.value("performance_rank", 0)) : "no";
      out(" {:>6}", cell);
    }
    out("\n");
  }
}

// One backend: available (host ranks or GPUs: name, bus id; the links between them) or why not.
void print_found_backend(Text& out, const FoundBackend& b) {
  if (!b.why_not.empty()) {
    out("  {}: unavailable: {}\n", b.name, b.why_not);
    return;
  }
  const json& ctx = b.context;
  if (b.name == "host") {
    out("  host: available: host ranks 0..{} are CPU threads copying host memory; CPU {} ({} threads)\n",
        b.device_count - 1, ctx.value("cpu", std::string("unknown")), ctx.value("cpu_threads", 0u));
    return;
  }
  const json devices = ctx.value("devices", json::array());
  out("  {}: available: {} GPU(s)\n", b.name, devices.size());
  for (const auto& d : devices)
    out("    GPU {}: {}, bus {}\n", d.value("id", -1), d.value("name", std::string("?")),
        d.value("bus_id", std::string("?")));
  print_links(out, ctx.value("peer_links", json::array()));
}

// The engines that run on each available backend, and why the others of this build do not.
void print_engines_here(Text& out, const std::vector<FoundBackend>& found) {
  std::map<std::string, std::vector<std::string>> runs;  // backend -> engines
  std::vector<std::string> not_here;
  for (const auto& spec : engine_specs()) {
    bool ran = false;
    std::string why;
    for (const auto& b : found) {
      if (!spec.runs_on(b.name)) continue;
      const auto engine = b.why_not.empty() ? make_engine(spec.name, b.name)
                                            : Maybe<std::unique_ptr<Engine>>::no("the " + b.name + " backend is unavailable");
      if (engine) runs[b.name].push_back(spec.name);
      else if (why.empty()) why = engine.why_not();
      ran = ran || engine;
    }
    if (!ran) not_here.push_back(fmt::format("{} ({})", spec.name, why.empty() ? "not in this build" : why));
  }
  out("\nengines that run here:{}\n", runs.empty() ? " none" : "");
  for (const auto& [backend, engines] : runs) out("  on {}: {}\n", backend, fmt::join(engines, ", "));
  if (!not_here.empty()) out("not here: {}\n", fmt::join(not_here, "; "));
}

// `path` written so that a shell reads it back as one word.
std::string shell_word(const std::string& path) {
  const bool plain = !path.empty() && path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_./-+=:,@%") == std::string::npos;
  if (plain) return path;
  std::string quoted = "'";
  for (char ch : path) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

// The dmabench source tree's `relative` file: from the working directory when it is there, else from the
// directory holding this executable or one of its parents (a build directory inside the tree); "" if neither.
std::string source_file(const std::string& relative) {
  namespace fs = std::filesystem;
  std::error_code ec;  // any error: not there
  if (fs::is_regular_file(relative, ec)) return relative;
  fs::path dir = exe_dir();
  if (dir.empty()) return "";
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / relative, ec)) return (dir / relative).string();
    if (dir == dir.root_path()) break;
  }
  return "";
}

// What a config file says it is (its "description"), or "" (unreadable, or no description). Read as --config is:
// a regular file of at most 1 MiB (core/read_file).
std::string config_description(const std::string& path) {
  const Maybe<std::string> text = read_small_file(path, std::size_t{1} << 20);
  if (!text) return "";
  try {
    const json config = json::parse(*text);
    return config.value("description", std::string());
  } catch (const std::exception&) {
    return "";
  }
}

// An installed tree's `relative` file: <exe>/../`relative` (share/doc/dmabench/..., bin/dmabench-results); "" if not
// there.
std::string installed_file(const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path bin = exe_dir();
  if (bin.empty()) return "";
  std::error_code ec;
  const fs::path p = (bin / ".." / relative).lexically_normal();
  return fs::is_regular_file(p, ec) ? p.string() : "";
}

// The first steps, each valid where this program is: in a source tree (or a build directory inside one), or
// installed (`cmake --install`, the .deb: bin/ beside share/dmabench/configs and share/doc/dmabench).
void print_first_steps(Text& out, const std::string& program) {
  std::string quick = source_file("configs/quick.json");
  if (const std::string presets = presets_dir(); quick.empty() && !presets.empty()) quick = presets + "/quick.json";
  const std::string summarize = source_file("scripts/summarize.py");
  const std::string results_tool = summarize.empty() ? installed_file("bin/dmabench-results") : std::string();
  const std::string exe = shell_word(program.empty() ? std::string("dmabench") : program);
  const std::string what = quick.empty() ? std::string() : config_description(quick);
  out("\na first sweep{}:\n", what.empty() ? std::string() : " (configs/quick.json: " + what + ")");
  out("  {} --config {} --out results/first.json\n", exe,
      quick.empty() ? std::string("configs/quick.json") : shell_word(quick));
  if (quick.empty()) out("  (configs/quick.json is in the dmabench source tree: run it from there)\n");
  if (!summarize.empty())
    out("then: python3 {} results/first.json   (tables of the results)\n", shell_word(summarize));
  else if (!results_tool.empty())
    out("then: {} summarize results/first.json   (tables of the results)\n", shell_word(results_tool));
  else
    out("then: dmabench-results summarize results/first.json   (tables of the results: the Python package, "
        "pip install ./python from the dmabench source tree)\n");
  out("      {} --features   (everything this build and machine support, and why not)\n", exe);
  out("      {} --help       (every flag)\n", exe);
  std::vector<std::string> docs;
  for (const char* doc : {"README.md", "docs/user-guide.md"})
    if (const std::string found = source_file(doc); !found.empty()) docs.push_back(found);
  if (docs.empty())
    for (const char* doc : {"share/doc/dmabench/README.md", "share/doc/dmabench/docs/user-guide.md"})
      if (const std::string found = installed_file(doc); !found.empty()) docs.push_back(found);
  out("docs: {}\n", docs.empty() ? std::string("README.md and docs/ in the dmabench source tree")
                                 : fmt::format("{}", fmt::join(docs, ", ")));
}

}  // namespace

void print_features() {
  Text out;
  out("dmabench {} (git {})\n", kVersion, git_revision());
  out("backends built: {}\n", fmt::join(built_backends(), ", "));
  out("multi-process runs (mpirun, srun: one process per rank): {}\n",
      team::mpi_build_unsupported() ? "no: " + *team::mpi_build_unsupported() : "yes, " + team::mpi_build_description());
  print_engines(out, print_backends(out));
  print_sdma_platforms(out);
  // Both vendors' features and the version each needs (gpu/features.cpp): what this build has.
  for (const auto& table : gpu::feature_tables(gpu::this_build())) {
    out("\n{} features ({} backend), and what this build has:\n", table.vendor, table.backend);
    for (const auto& f : table.features)
      out("  [{}] {}\n        needs {}{}\n", f.built ? "yes" : "no ", f.name, f.needs, f.note.empty() ? "" : "; " + f.note);
  }
  std::vector<std::string> patterns;
  for (const Pattern* p : all_patterns()) patterns.push_back(fmt::format("{} ({})", p->name(), p->description()));
  out("\npatterns: {}\n", fmt::join(patterns, "; "));
  out("timing modes: oneshot (per operation: launch on every issuing rank, wait for all), "
      "pipelined (pipeline_depth operations back to back, one wait, time / depth)\n");
  console::write(stdout, out.text);
}

void print_first_run(const std::string& program) {
  Text out;
  out("dmabench {} (git {}): measures copies and collectives over GPU copy engines (DMA), GPU cores, NCCL and\n"
      "host threads. Run with no arguments, it says what it found here and how to start.\n",
      kVersion, git_revision());
  std::vector<FoundBackend> found;
  for (const auto& name : built_backends()) found.push_back(find_backend(name));
  out("\nbackends of this build: {}\n", fmt::join(built_backends(), ", "));
  for (const auto& b : found) {
    try {
      print_found_backend(out, b);
    } catch (const std::exception& e) {  // a description of an unexpected shape: said, not fatal
      out("  {}: available, but its description could not be read: {}\n", b.name, e.what());
    }
  }
  print_engines_here(out, found);
  print_first_steps(out, program);
  console::write(stdout, out.text);
}

}  // namespace dmabench
