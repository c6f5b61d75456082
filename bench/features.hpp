#pragma once
// `dmabench --features`: what this build has and what this machine offers (backends, devices and
// peer access, engines with their options, AMD features, patterns, timing modes).

namespace dmabench {

void print_features();

}  // namespace dmabench
