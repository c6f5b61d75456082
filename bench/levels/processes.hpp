#pragma once
// The start of a run with one process per rank (mpirun, srun; team/team.hpp): each process's device
// (from its launcher's local rank, or --devices), the check that every process loaded the same
// config with the same flags, and the results' `context.processes` (results/SCHEMA.md).
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/config/config.hpp"
#include "core/errors.hpp"
#include "team/team.hpp"
#include "engines/backend.hpp"

namespace dmabench {

// Runs `f`; an InputError (or another error) in any process of a multi-process run becomes the same
// InputError (std::runtime_error) in every process: the first by rank, naming it unless every process
// had the same one. Collective.
template <class F>
auto agreed_input(F&& f) -> decltype(f()) {
  std::optional<decltype(f())> value;
  std::string mine;  // 'i' + an InputError, 'x' + any other error
  try {
    value.emplace(f());
  } catch (const InputError& e) {
    if (!team::world().multi()) throw;
    mine = std::string("i") + e.what();
  } catch (const std::exception& e) {
    if (!team::world().multi()) throw;
    mine = std::string("x") + e.what();
  }
  if (team::world().multi()) {
    const auto all = team::agree_all(mine);
    for (std::size_t r = 0; r < all.size(); ++r)
      if (!all[r].empty()) {
        bool same = true;
        for (const auto& o : all) same = same && o == all[r];
        const std::string what = same ? all[r].substr(1) : "rank " + std::to_string(r) + ": " + all[r].substr(1);
        if (all[r][0] == 'i') throw InputError(what);
        throw std::runtime_error(what);
      }
  }
  return std::move(*value);
}

// Every process's rank, host, device and bus id, gathered into team::world().ranks(): this process
// drives the GPU of its local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, LOCAL_RANK, or its
// place among the processes of its host), or --devices[local rank], or its only GPU when the launcher
// set CUDA/HIP/ROCR_VISIBLE_DEVICES to one; on the host backend, host rank = world rank. Throws InputError (on every process) for a local rank without a GPU. Collective.
void setup_ranks(const CliOptions& options, const Backend& backend);

// Throws InputError on every process when any process loaded another config or was given other
// flags than rank 0. Collective.
void check_same_run(const std::vector<std::string>& command_line, const std::string& config_path, const Config& config);

// `context.processes`: the launcher and, in a multi-process run, every rank and which share a node.
nlohmann::json processes_context();

}  // namespace dmabench
