#pragma once
// Every path a run writes, decided and checked before anything runs (docs/user-guide.md, "Files the run writes"): the
// results file --out with its journal and lock beside it, --benchmark_out, --power-trace and the
// --packets directory. A file the run writes is a regular file or a new path, never a file the run reads (the
// config, the --check reference, a trace: through links too), a directory, a FIFO or a device, in a directory where a
// temporary can be made beside it (every file is written through one and a rename), never named like a run's own files (".journal", ".lock",
// ".tmp.*": another run's lock or journal), and its name leaves room for the suffixes the run adds;
// a symlink given as one is resolved on purpose (and said so). And an advisory lock so that two
// runs never write one results file.
#include <string>
#include <utility>
#include <vector>

namespace dmabench {

struct OutPath {
  std::string path;  // the file that will be written (a symlink's target)
  std::string note;  // non-empty: what was decided, for the console (e.g. the symlink resolved)
};

// --out, with `<out>.journal` and `<out>.lock` beside it (absent or regular files). Throws InputError naming --out.
OutPath check_out_path(const std::string& out, const std::string& config_path);
// Another file the run writes whole (--benchmark_out, --power-trace): the checks of --out.
// `creates_directories`: missing directories are made (else the directory must exist).
OutPath check_output_file(const std::string& flag, const std::string& path, const std::string& config_path,
                          bool creates_directories);
// Every check above refuses a path that is one of the run's inputs: the config, or any file read so far through
// core/read_file.hpp (files_read: --check's reference, alltoallv traces, an engine map), through symlinks and hard
// links; so the inputs are read before the outputs are checked. For another name the run writes (a --processes
// process file): the same refusal, naming `flag given`.
void check_not_an_input(const std::string& flag, const std::string& given, const std::string& path);
// Refuses two outputs that are one file: (flag, path as checked) pairs.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);
// --packets DIR: a directory this user may write (made if missing), and the names of the files the
// run will write in it (each absent or a regular file, short enough with a temporary suffix).
void check_packets_dir(const std::string& dir, const std::vector<std::string>& file_names);

// An exclusive advisory lock (flock) on "<path>.lock", held for the life of the object and the
// file removed at the end. Throws InputError when another run holds it. A lock taken on a file that
// its holder removed before we locked it is no lock: it is dropped and taken again on the file now
// at that name, so two runs never both hold "the" lock.
class OutLock {
 public:
  explicit OutLock(const std::string& path);
  ~OutLock();
  // Removes the lock file now (before a process ends without unwinding); the destructor then does nothing.
  void release() const;
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;

 private:
  std::string lock_path_;
  mutable int fd_ = -1;
};

}  // namespace dmabench
