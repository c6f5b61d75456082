#pragma once
// Reading a small input file (the --config, an engine map) with a limit and a type check: only a
// regular file is read, never a FIFO, a directory or a device (a FIFO with no writer would wait
// forever, /dev/zero never ends), and never more than the limit.
#include <cstddef>
#include <string>

#include "core/why_not.hpp"

namespace dmabench {

// The content of the regular file at `path` (a symlink is followed), or why it cannot be read:
// "cannot read it (<strerror>)", "not a regular file (a FIFO)", "larger than <N> KiB".
Maybe<std::string> read_small_file(const std::string& path, std::size_t limit_bytes);

}  // namespace dmabench
