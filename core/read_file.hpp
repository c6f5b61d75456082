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

// A file as read_small_file reads it, or a config that comes through a pipe by its descriptor: `path` "-" (standard
// input), /dev/stdin, /dev/fd/N (process substitution) or /proc/self/fd/N. Such a pipe or socket is read until its
// writer closes it, never more than the limit; a writer that sends nothing for `idle_s` seconds is given up ("nothing
// arrived"); a terminal or a device is refused. A FIFO by any other path is refused as read_small_file refuses it (it
// may have no writer). `regular`: set to whether it was read as a file (whose folder relative paths in it are read
// against).
Maybe<std::string> read_small_input(const std::string& path, std::size_t limit_bytes, int idle_s, bool* regular = nullptr);

}  // namespace dmabench
