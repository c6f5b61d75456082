#include "bench/output/out_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "core/quote.hpp"
#include "core/read_file.hpp"

namespace dmabench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFileAccepted = "a regular file (replaced once the run has a result) or a new path in a writable directory";
constexpr const char* kJournalSuffix = ".journal";
constexpr const char* kLockSuffix = ".lock";

// Says what was wrong with one flag's path: "<flag> <path>: <why>; accepted: ...".
struct Refuse {
  std::string flag, given, accepted;
  [[noreturn]] void operator()(const std::string& why) const {
    throw InputError(fmt::format("{} {}: {}; accepted: {}", flag, given, why, accepted));
  }
};

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "not a regular file";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The names of a run's own files: "<out>.journal", "<out>.lock", and temporaries "<file>.tmp.<suffix>" (6
// letters and digits: create_temporary(); digits: a process id, as earlier versions named them). Another run's
// lock or journal given as an output would bypass its lock and destroy its results.
std::string own_name_suffix(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  for (const char* s : {kJournalSuffix, kLockSuffix})
    if (name.size() > std::strlen(s) && name.compare(name.size() - std::strlen(s), std::string::npos, s) == 0) return s;
  const auto tmp = name.rfind(".tmp.");
  if (tmp == std::string::npos || tmp == 0 || tmp + 5 == name.size()) return "";
  const std::string suffix = name.substr(tmp + 5);
  const bool digits = std::all_of(suffix.begin(), suffix.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
  const bool alnum = std::all_of(suffix.begin(), suffix.end(), [](unsigned char ch) { return std::isalnum(ch) != 0; });
  return digits || (alnum && suffix.size() + 5 == kTemporarySuffixBytes) ? ".tmp.*" : "";
}

void check_own_name(const std::string& path, const Refuse& refuse) {
  if (const std::string s = own_name_suffix(path); !s.empty())
    refuse(fmt::format("{} is named like a run's own file (a name ending in {}: another run's {} file)", path,
                       s == ".tmp.*" ? ".tmp. and a temporary file's suffix" : s, s == ".tmp.*" ? "temporary" : s.substr(1)));
}

// Every component within NAME_MAX, the last one with the `suffix_bytes` the run adds to it, the whole within PATH_MAX.
void check_name_lengths(const std::string& path, std::size_t suffix_bytes, const Refuse& refuse) {
  if (path.size() + suffix_bytes >= PATH_MAX)
    refuse(fmt::format("the path is longer than the {} bytes a path may have", PATH_MAX - 1 - suffix_bytes));
  const fs::path p(path);
  for (const auto& part : p)
    if (part.string().size() > NAME_MAX)
      refuse(fmt::format("a name in it is longer than the {} bytes a file name may have", NAME_MAX));
  const std::size_t last = p.filename().string().size();
  if (last + suffix_bytes > NAME_MAX)
    refuse(fmt::format("its file name is {} bytes, longer than the {} bytes it may have with the {} bytes the run adds "
                       "(a journal or temporary file beside it)",
                       last, NAME_MAX - suffix_bytes, suffix_bytes));
}

// A symlink is resolved on purpose (a dangling link's target is a new path).
fs::path resolve_links(const std::string& given, const Refuse& refuse) {
  std::error_code ec;
  fs::path p(given);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) refuse("a chain of more than 40 symlinks");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) refuse(fmt::format("a symlink that cannot be read ({})", ec.message()));
    p = target.is_absolute() ? target : (p.parent_path() / target);
  }
  return p;
}

// A path that does not exist yet: its nearest existing ancestor is a directory this user may write (the one
// it goes in, unless `creates_directories`).
void check_new_path(const fs::path& path, bool creates_directories, const Refuse& refuse) {
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  for (fs::path dir = parent;; dir = dir.parent_path()) {
    if (dir.empty()) dir = ".";
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) refuse(fmt::format("{} is {}, not a directory", dir.string(), kind_of(st.st_mode)));
      if (dir != parent && !creates_directories) refuse(fmt::format("the directory {} does not exist", parent.string()));
      if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse(fmt::format("the directory {} is not writable", dir.string()));
      return;
    }
    if (errno != ENOENT) refuse(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    if (dir == "." || dir == dir.root_path()) refuse(fmt::format("the directory {} does not exist", parent.string()));
  }
}

fs::path canonical_of(const std::string& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec).lexically_normal();
  const fs::path c = fs::weakly_canonical(abs, ec);
  return ec ? abs : c;
}

// Whether `path`, a name the run writes (`name`: how the message calls it, "" for the flag's own path), is one of the
// run's inputs: the --config file or any file read so far (core/read_file.hpp's files_read: the config, the --check
// reference, alltoallv traces, an engine map). The same file where it exists (device and inode: through a symlink,
// a hard link or another name), the same canonical path where it does not.
void check_not_input(const std::string& path, const std::string& config_path, const std::string& name,
                     const Refuse& refuse) {
  std::vector<FileRead> inputs = files_read();
  if (!config_path.empty()) {
    struct stat cs {};
    if (::stat(config_path.c_str(), &cs) == 0) inputs.push_back({"the --config file", config_path, cs.st_dev, cs.st_ino});
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  const fs::path canonical = exists ? fs::path() : canonical_of(path);
  for (const FileRead& in : inputs)
    if (exists ? st.st_dev == in.device && st.st_ino == in.inode : canonical == canonical_of(in.path))
      refuse(fmt::format("{}{} itself ({}), which the run reads", name.empty() ? "" : name + " is ", in.what, quote(in.path)));
}

// The file is written through a temporary beside it and a rename (core/json_file.hpp): the directory it goes in must
// let this user create and remove a file, whatever the file itself allows. Proven the way it will be done: a
// temporary made there and removed (access() says nothing of a read-only mount and little to root).
void prove_temporary(const std::string& path, const Refuse& refuse) {
  std::string tmp;
  try {
    const int fd = create_temporary(path, tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
  } catch (const std::runtime_error& e) {
    const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
    refuse(fmt::format("the file is written through a temporary beside it and a rename, and the directory {} does not "
                       "let this user create one ({})",
                       quote(dir.string()), e.what()));
  }
}

// An existing file the run writes is a regular file this user may write and none of the run's inputs; a new path can
// be made; either way a temporary can be made beside it where its directory exists.
void check_written_file(const std::string& path, const std::string& config_path, bool creates_directories,
                        const Refuse& refuse) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) refuse(kind_of(st.st_mode));
    check_not_input(path, config_path, "", refuse);
    if (::access(path.c_str(), W_OK) != 0) refuse("an existing file this user may not write");
  } else if (errno == ENOENT) {
    check_not_input(path, config_path, "", refuse);
    check_new_path(fs::path(path), creates_directories, refuse);
  } else {
    refuse(errno == ENOTDIR ? std::string("a path through something that is not a directory") : std::strerror(errno));
  }
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) prove_temporary(path, refuse);  // else made by the run
}

// What stands at a name the run will replace: nothing or a regular file (a stale journal, a dump of an earlier run).
void check_replaceable(const std::string& path, const Refuse& refuse) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    refuse(fmt::format("{} exists and is {}; the run writes that name", path, kind_of(st.st_mode)));
}

// Whether another run holds the lock beside `path`: the file is that run's results, being written. (A shared lock
// taken for an instant: a run starting at that very instant on that file would refuse, as with any holder.)
bool written_by_a_run(const std::string& path) {
  const int fd = ::open((path + kLockSuffix).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool held = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

OutPath resolved(const std::string& flag, const std::string& given, const Refuse& refuse) {
  if (given.empty()) refuse("empty");
  if (const fs::path name = fs::path(given).filename(); name.empty() || name == "." || name == "..")
    refuse("no file name (it ends in '/', '.' or '..')");
  check_own_name(given, refuse);
  OutPath r{given, ""};
  const fs::path p = resolve_links(given, refuse);
  if (p != fs::path(given)) {
    r.path = p.lexically_normal().string();
    r.note = fmt::format("{} {} is a symlink: writing its target {}", flag, given, r.path);
    check_own_name(r.path, refuse);
  }
  return r;
}

}  // namespace

OutPath check_out_path(const std::string& out, const std::string& config_path) {
  const Refuse refuse{"--out", out, kFileAccepted};
  OutPath r = resolved("--out", out, refuse);
  // the longest name the run makes beside it: "<out>.journal.tmp.XXXXXX"
  check_name_lengths(r.path, std::strlen(kJournalSuffix) + kTemporarySuffixBytes, refuse);
  check_written_file(r.path, config_path, /*creates_directories=*/true, refuse);
  for (const char* beside : {kJournalSuffix, kLockSuffix}) {
    check_replaceable(r.path + beside, refuse);
    check_not_input(r.path + beside, config_path, r.path + beside, refuse);
  }
  return r;
}

OutPath check_output_file(const std::string& flag, const std::string& path, const std::string& config_path,
                          bool creates_directories) {
  const Refuse refuse{flag, path,
                      creates_directories ? "a regular file or a new path in a writable directory"
                                          : "a regular file or a new path in an existing writable directory"};
  OutPath r = resolved(flag, path, refuse);
  check_name_lengths(r.path, creates_directories ? kTemporarySuffixBytes : 0, refuse);
  check_written_file(r.path, config_path, creates_directories, refuse);
  if (written_by_a_run(r.path))
    refuse(fmt::format("another dmabench run is writing it (it holds {}{})", r.path, kLockSuffix));
  return r;
}

void check_not_an_input(const std::string& flag, const std::string& given, const std::string& path) {
  check_not_input(path, "", path, Refuse{flag, given, "a file of its own"});
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  const auto canonical = canonical_of;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(outputs[i].second, outputs[j].second) || canonical(outputs[i].second) == canonical(outputs[j].second))
        throw InputError(fmt::format("{} {}: the same file as {} {}; accepted: a file of its own", outputs[i].first,
                                     outputs[i].second, outputs[j].first, outputs[j].second));
}

void check_packets_dir(const std::string& dir, const std::vector<std::string>& file_names) {
  if (dir.empty()) return;
  const Refuse refuse{"--packets", dir, "a directory this user may write (made if missing)"};
  check_name_lengths(dir, 0, refuse);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) refuse(fmt::format("not a directory ({})", kind_of(st.st_mode)));
    if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse("a directory this user may not write");
  } else if (errno == ENOENT) {
    if (::lstat(dir.c_str(), &st) == 0) refuse("a symlink to nothing");
    check_new_path(fs::path(dir) / "x", /*creates_directories=*/true, refuse);
  } else {
    refuse(errno == ENOTDIR ? std::string("a path through something that is not a directory") : std::strerror(errno));
  }
  for (const auto& name : file_names) {
    const std::string file = (fs::path(dir) / name).string();
    check_name_lengths(file, kTemporarySuffixBytes, refuse);
    check_replaceable(file, refuse);
    check_not_input(file, "", file, refuse);
  }
  if (!file_names.empty() && ::stat(dir.c_str(), &st) == 0) prove_temporary((fs::path(dir) / file_names.front()).string(), refuse);
}

OutLock::OutLock(const std::string& path) : lock_path_(path + kLockSuffix) {
  std::error_code ec;
  const fs::path dir = fs::path(lock_path_).parent_path();
  if (!dir.empty()) fs::create_directories(dir, ec);
  for (int attempt = 0;; ++attempt) {
    // never through a link, never a FIFO or a device: only a regular file is locked
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw InputError(fmt::format("--out {}: cannot create the lock file {}: {}", path, lock_path_,
                                   errno == ELOOP ? "it is a symlink" : std::strerror(errno)));
    struct stat mine {}, now {};
    const bool regular = ::fstat(fd_, &mine) == 0 && S_ISREG(mine.st_mode);
    const bool locked = regular && ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
    // The holder removes the file before it lets go: a file we opened before that and locked after is no
    // longer at the name, and another run may hold the one that is. Only the file at the name is the lock.
    if (locked && ::lstat(lock_path_.c_str(), &now) == 0 && now.st_dev == mine.st_dev && now.st_ino == mine.st_ino) return;
    ::close(fd_);
    fd_ = -1;
    if (!regular) throw InputError(fmt::format("--out {}: the lock file {} is not a regular file", path, lock_path_));
    if (!locked || attempt == 100)
      throw InputError(fmt::format("--out {}: another dmabench run is writing it (it holds {}); wait for it or choose "
                                   "another --out",
                                   path, lock_path_));
  }
}

OutLock::~OutLock() { release(); }

// Removed while still held, then closed: whoever opened the file before the removal finds, once it has
// the lock, that the file is no longer at the name (the constructor), so only one run ever holds the lock.
void OutLock::release() const {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace dmabench
