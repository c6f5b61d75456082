#include "bench/levels/processes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/output/report.hpp"
#include "core/hash.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

// The host name; DMABENCH_FAKE_HOST overrides it (tests only: ranks on "different hosts" of one machine).
std::string host_name() {
  if (const char* fake = std::getenv("DMABENCH_FAKE_HOST"); fake && *fake) return fake;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string digest(const std::string& text) { return fmt::format("{:016x}", fnv1a(text)); }

// Whether the launcher narrowed this process to one GPU (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES or
// ROCR_VISIBLE_DEVICES naming exactly one).
bool launcher_gave_one_gpu() {
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    const char* v = std::getenv(name);
    if (v && *v && std::string(v).find(',') == std::string::npos) return true;
  }
  return false;
}

}  // namespace

void setup_ranks(const CliOptions& options, const Backend& backend) {
  team::Team& team = team::world();
  const team::LaunchEnv env = team::launch_env();
  const std::string host = host_name();
  const auto hosts = team::agree_all(host);
  team::RankInfo me;
  me.rank = team.rank();
  me.host = host;
  me.pid = static_cast<long>(::getpid());
  me.cpu_affinity = cpu_affinity();
  me.pid_namespace = team::pid_namespace();
  for (int r = 0; r < me.rank; ++r) me.local_rank += hosts[r] == host ? 1 : 0;  // place among its host's processes
  if (env.local_rank >= 0) me.local_rank = env.local_rank;
  agreed_input([&] {
    if (backend.name() == "host") {  // host ranks are the processes themselves
      if (options.devices && !options.devices->all)
        throw InputError("--devices: on the host backend a multi-process run's ranks are its processes; leave --devices out");
      me.device = me.rank;
      return 0;
    }
    const std::string where = fmt::format("local rank {} on {}{}", me.local_rank, host,
                                          env.source.empty() ? "" : " (" + env.source + ")");
    if (options.devices && !options.devices->all) {
      const auto& ids = options.devices->ids;
      if (me.local_rank >= static_cast<int>(ids.size()))
        throw InputError(fmt::format("--devices {}: {} has no GPU in it; in a multi-process run --devices lists one GPU "
                                     "per process of a node, by local rank",
                                     fmt::join(ids, ","), where));
      me.device = ids[static_cast<std::size_t>(me.local_rank)];
    } else if (backend.device_count() == 1 && launcher_gave_one_gpu()) {
      me.device = 0;  // srun --gpus-per-task=1 and the like: the launcher gave this process its GPU
    } else {
      me.device = me.local_rank;
    }
    if (me.device >= backend.device_count())
      throw InputError(fmt::format("{} would drive GPU {}, but its host has GPUs 0..{}: start at most {} processes per "
                                   "node, or name their GPUs with --devices",
                                   where, me.device, backend.device_count() - 1, backend.device_count()));
    const json devices = backend.context().value("devices", json::array());
    if (me.device < static_cast<int>(devices.size())) me.bus_id = devices[me.device].value("bus_id", "");
    return 0;
  });
  std::vector<team::RankInfo> all;
  std::vector<std::string> distinct;
  for (team::RankInfo r : team::agree_all(me)) {
    auto it = std::find(distinct.begin(), distinct.end(), r.host);
    r.node = static_cast<int>(it - distinct.begin());
    if (it == distinct.end()) distinct.push_back(r.host);
    all.push_back(r);
  }
  team.set_ranks(std::move(all));
}

void check_same_run(const std::vector<std::string>& command_line, const std::string& config_path, const Config& config) {
  if (!team::world().multi()) return;
  std::vector<std::string> flags(command_line.begin() + (command_line.empty() ? 0 : 1), command_line.end());
  for (auto& f : flags) f = escape_non_utf8(f);  // arguments are bytes
  const json mine = {{"config", fmt::format("{} (digest {})", escape_non_utf8(config_path), digest(to_json(config).dump()))},
                     {"flags", flags}};
  const auto all = team::agree_all(mine);
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    const json& theirs = all[r];
    const json& first = all[0];
    const bool config_differs = theirs["config"] != first["config"];
    throw InputError(fmt::format(
        "rank {} {} than rank 0 ({} against {}): every process of a run must load the same config with the same flags",
        r, config_differs ? "loaded another config" : "was given other flags",
        config_differs ? theirs["config"].get<std::string>() : fmt::format("{}", fmt::join(theirs["flags"].get<std::vector<std::string>>(), " ")),
        config_differs ? first["config"].get<std::string>() : fmt::format("{}", fmt::join(first["flags"].get<std::vector<std::string>>(), " "))));
  }
}

json processes_context() {
  const team::Team& team = team::world();
  json ctx = {{"count", team.size()}, {"launcher", team.launcher()}};
  if (!team.multi()) return ctx;
  json ranks = json::array(), nodes = json::array();
  for (const auto& r : team.ranks()) {
    ranks.push_back(json(r));
    if (r.node >= static_cast<int>(nodes.size())) nodes.push_back({{"host", r.host}, {"ranks", json::array()}});
    nodes[r.node]["ranks"].push_back(r.rank);
  }
  ctx["ranks"] = ranks;
  ctx["nodes"] = nodes;
  return ctx;
}

}  // namespace dmabench
