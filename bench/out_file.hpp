#pragma once
// Where the results go, decided and checked before any case runs: a regular file or a new path,
// never the config, a directory, a FIFO or a device; a symlink is resolved (and said so); and an
// advisory lock so that two runs never write one results file.
#include <string>

namespace dmabench {

struct OutPath {
  std::string path;  // the file that will be written (a symlink's target)
  std::string note;  // non-empty: what was decided, for the console (e.g. the symlink resolved)
};

// Checks `out` against the config file and the filesystem. Throws InputError naming --out.
OutPath check_out_path(const std::string& out, const std::string& config_path);

// An exclusive advisory lock (flock) on "<path>.lock", held for the life of the object and the
// file removed at the end. Throws InputError when another run holds it.
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
