#pragma once
// Where this program's file is: the one reader of /proc/self/exe, for everything that finds a file beside the
// program (the presets of an installed tree or a build directory, the source tree above a build directory, the
// installed share/doc and bin/dmabench-results).
#include <filesystem>

namespace dmabench {

// The directory holding this executable (the link /proc/self/exe resolved), or an empty path where it cannot be read.
std::filesystem::path exe_dir();

}  // namespace dmabench
