#pragma once
// The git revision this build was made from: `git describe --always --dirty --abbrev=12` of the source tree at
// build time ("-dirty" when a tracked file differed from the commit), -DDMABENCH_GIT_REVISION where given (a
// copy without .git), else "unknown". Defined in the generated <build>/generated/revision.cpp (cmake/revision.cmake),
// which every `cmake --build` rewrites when the revision changed: --version, every results file's context and
// the history database name the code that made them.
namespace dmabench {
const char* git_revision();
}  // namespace dmabench
