#include "bench/sweep/resources.hpp"

#include <unistd.h>

#include <cctype>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench/output/case_table.hpp"
#include "bench/output/console.hpp"
#include "bench/run/gbench.hpp"
#include "bench/run/transfer_load.hpp"
#include "bench/sweep/sweep.hpp"
#include "core/cpus.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "engines/registry.hpp"
#include "team/team.hpp"

namespace dmabench::sweep {

using json = nlohmann::json;

beside::Load& Workloads::get(const beside::Spec& spec, const std::vector<int>& devices) {
  const std::string key = fmt::format("{}@{}", spec.label(), fmt::join(devices, ","));
  if (key != key_ || !load_) {
    load_.reset();  // free the previous workload's buffers first
    key_.clear();
    auto made = beside::make_load(backend_, spec, devices, beside::transfer_maker());
    if (!made) throw std::runtime_error("compute workload: " + made.why_not());
    load_ = std::move(made).value();
    key_ = key;
  }
  return *load_;
}

Engines make_engines(const std::vector<Case>& cases, const Backend& backend) {
  Engines e;
  for (const auto& c : cases) {
    const std::string& name = c.variant.engine;
    if (e.made.count(name) || e.missing.count(name)) continue;
    if (!find_engine_spec(name)->runs_on(backend.name())) {
      e.missing[name] = "";
      continue;
    }
    if (auto engine = make_engine(name, backend.name()))
      e.made[name] = std::move(engine).value();
    else
      e.missing[name] = engine.why_not();
  }
  // A multi-process run: an engine missing in any process is missing in all of them (every process
  // must skip the same cases).
  if (team::world().multi()) {
    const auto all = team::agree_all(e.missing);
    for (std::size_t r = 0; r < all.size(); ++r)
      for (const auto& [name, why] : all[r])
        if (e.made.erase(name) > 0 || !e.missing.count(name))
          e.missing[name] = why.empty() ? "" : fmt::format("rank {}: {}", r, why);
  }
  return e;
}

// Why the case will be skipped whatever the machine does (CaseExecution::static_skip_reason), known before it runs.
WhyNot static_skip(const Case& c, Engines& engines, Backend& backend) {
  const auto it = engines.made.find(c.variant.engine);
  const CaseExecution ex(c, it == engines.made.end() ? nullptr : it->second.get(), engines.missing[c.variant.engine],
                         backend);
  return ex.static_skip_reason();
}

// --list (and --benchmark_list_tests): each case's name, "#   will skip: REASON" under those that will; a count.
// `cases`: those --benchmark_filter selects of the `expanded` the config makes.
void print_list(const std::vector<Case>& cases, Backend& backend, std::size_t expanded) {
  Engines engines = make_engines(cases, backend);
  std::string text =
      cases.size() == expanded
          ? fmt::format("# {} cases (backend {}); names work with --benchmark_filter\n", cases.size(), backend.name())
          : fmt::format("# {} of the {} cases (backend {}), as --benchmark_filter selects\n", cases.size(), expanded,
                        backend.name());
  std::size_t skip = 0;
  for (const auto& c : cases) {
    const WhyNot why = static_skip(c, engines, backend);
    skip += why.has_value();
    // the mark on a '#' line of its own: a case's line is its name alone, as scripts reading --list expect
    text += why ? fmt::format("{}\n#   will skip: {}\n", c.name(), table::one_line(*why, std::string::npos)) : c.name() + "\n";
  }
  text += fmt::format("# {} cases, {} will run, {} will skip\n", cases.size(), cases.size() - skip, skip);
  console::write(stdout, text);
}

// The file of a case's packet dump in --packets DIR: <case name, '/' and other odd characters as '_'>.json.
std::string packet_file_name(const Case& c) {
  std::string file = c.name();
  for (char& ch : file)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '=' && ch != ',') ch = '_';
  return file + ".json";
}

// --packets DIR: the case's packet dump as DIR/packet_file_name() (results/SCHEMA.md, "Packet dumps"); nothing for
// cases without one.
void write_packet_dump(const std::string& dir, const CaseExecution& e) {
  if (dir.empty() || e.packet_dump().is_null()) return;
  json doc = {{"schema", "dmabench-packets/1"}, {"case", e.spec().name()}, {"engine", e.spec().variant.engine},
              {"options", e.spec().variant.options}};
  doc.update(e.packet_dump());
  write_json_atomically(dir + "/" + packet_file_name(e.spec()), doc);
}

// The cases --benchmark_filter selects; none is bad input (nothing would be recorded).
std::vector<const Case*> selected_cases(const CliOptions& options, const std::vector<Case>& cases) {
  const gbench::Filter filter(options.benchmark_args);
  std::vector<const Case*> selected;
  for (const auto& c : cases)
    if (filter.selects(c)) selected.push_back(&c);
  if (selected.empty() && cases.empty())
    throw InputError(fmt::format("{}: expands to no case on this machine", config_source(options)));
  if (selected.empty())
    throw InputError(fmt::format("{}={}: selects no case of the {} of {}; accepted: a regular expression "
                                 "matching a case name that --list prints",
                                 gbench::flag_name(gbench::Flag::filter),
                                 options.benchmark_args.value(gbench::Flag::filter), cases.size(), config_source(options)));
  return selected;
}

BufferPool::IdleLimit idle_limit(const Backend& backend) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t host = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2 : 0;
  std::map<int, std::size_t> gpu;
  if (backend.name() != "host")
    for (const json& d : backend.context().value("devices", json::array()))
      gpu[d.value("id", -1)] = d.value("memory_bytes", std::size_t{0}) / 2;
  return [host, gpu](const BufferPlace& p) {
    const auto it = gpu.find(p.device);
    return p.host || it == gpu.end() ? host : it->second;
  };
}

// --cpu-choice quiet: the sampling thread's CPU chooser, its first survey done (the context records it); null: off.
// Processes of one node (mpirun, srun) each survey their own share of the allowed CPUs.
std::unique_ptr<measure::CpuChoice> make_cpu_choice(const CliOptions& options) {
  if (options.cpu_choice == "off") return nullptr;
  const auto& world = team::world();
  int local = 0;
  for (const auto& r : world.ranks()) local += r.node == world.ranks()[world.rank()].node;
  auto choice = measure::CpuChoice::make(measure::CpuChoice::candidates(
      cpus::allowed(), world.multi() ? world.ranks()[world.rank()].local_rank : 0, world.multi() ? local : 1));
  choice->survey_now();
  return choice;
}

}  // namespace dmabench::sweep
