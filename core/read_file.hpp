#pragma once
// Reading a small input file (the --config, an engine map) with a limit and a type check: only a
// regular file is read, never a FIFO, a directory or a device (a FIFO with no writer would wait
// forever, /dev/zero never ends), and never more than the limit.
#include <cstddef>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/why_not.hpp"

namespace dmabench {

// The content of the regular file at `path` (a symlink is followed), or why it cannot be read:
// "cannot read it (<strerror>)", "not a regular file (a FIFO)", "larger than <N> KiB".
// Every file read is noted as one of the run's inputs (files_read), `what` saying what it is to the run.
Maybe<std::string> read_small_file(const std::string& path, std::size_t limit_bytes, const std::string& what = "");

// A file this process read through read_small_file: what it is to the run ("the --config file", "the alltoallv trace
// of alltoallv.splits", ...), its path as given, and the file itself (device and inode, as read: another name of it,
// a symlink or a hard link, is the same file).
struct FileRead {
  std::string what, path;
  dev_t device = 0;
  ino_t inode = 0;
};
// Every file read so far, in order (issue 51: one list of what a run reads, against which every output path is
// checked before any work, bench/output/out_file.hpp). Thread-safe.
std::vector<FileRead> files_read();

// A file as read_small_file reads it, or a config that comes through a pipe by its descriptor: `path` "-" (standard
// input), /dev/stdin, /dev/fd/N (process substitution) or /proc/self/fd/N. Such a pipe or socket is read until its
// writer closes it, never more than the limit; a writer that sends nothing for `idle_s` seconds is given up ("nothing
// arrived"); a terminal or a device is refused. A FIFO by any other path is refused as read_small_file refuses it (it
// may have no writer). `regular`: set to whether it was read as a file (whose folder relative paths in it are read
// against).
// A signal that asks the run to stop (core/interrupt.hpp) while it waits for a pipe ends the wait at once: the
// read throws interrupt::Stopped; the idle limit counts from the last byte, not from the last signal.
Maybe<std::string> read_small_input(const std::string& path, std::size_t limit_bytes, int idle_s, bool* regular = nullptr,
                                    const std::string& what = "");

}  // namespace dmabench
