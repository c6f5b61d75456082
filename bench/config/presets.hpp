#pragma once
// Presets: the shipped configs by name (`dmabench crossover`, `dmabench --preset kv-offload`), as TransferBench
// names its tests and nvbandwidth its testcases. A preset NAME is NAME.json in the configs directory: the
// first of $DMABENCH_CONFIGS, <the executable's directory>/../share/dmabench/configs (an installed tree),
// <the executable's directory>/../configs (a build directory inside the source tree) and the source tree's
// configs/ this build was made from, that exists and holds quick.json.
#include <string>
#include <vector>

namespace dmabench {

struct Preset {
  std::string name;         // the file name less ".json"
  std::string path;         // the config file
  std::string description;  // the config's description, its first sentence (at most ~110 characters)
};

// The configs directory presets come from, and every directory looked at (for messages).
std::string presets_dir(std::vector<std::string>* looked_at = nullptr);
// Every preset, by name.
std::vector<Preset> list_presets();
// The config file of preset `name`; throws InputError naming the presets there are.
std::string preset_path(const std::string& name);
// `dmabench --presets`: one line per preset, name and description.
std::string presets_text();

}  // namespace dmabench
