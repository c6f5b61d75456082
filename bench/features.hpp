#pragma once
// `dmabench --features`: what this build has and what this machine offers (backends, devices and
// peer access, engines with their options, AMD features, patterns, timing modes).

#include <string>

namespace dmabench {

void print_features();

// `dmabench` with no arguments: the version, the backends of this build (available here or why not) with their
// GPUs and the links between them (host ranks on the host backend), the engines that run here, the command of a
// first sweep and where the docs are. `program`: how dmabench was invoked (argv[0]), for the commands it prints.
// Never throws for a machine without a GPU or driver: such a backend is listed with its reason.
void print_first_run(const std::string& program);

}  // namespace dmabench
