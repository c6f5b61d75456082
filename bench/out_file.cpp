#include "bench/out_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace dmabench {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& out, const std::string& why) {
  throw InputError(fmt::format("--out {}: {}; accepted: a regular file (replaced once the run has a result) or a new "
                               "path in a writable directory",
                               out, why));
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

OutPath check_out_path(const std::string& out, const std::string& config_path) {
  if (out.empty()) refuse(out, "empty");
  OutPath r{out, ""};
  std::error_code ec;
  fs::path p(out);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {  // a dangling link's target is a new path
    if (hops == 40) refuse(out, "a chain of more than 40 symlinks");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) refuse(out, fmt::format("a symlink that cannot be read ({})", ec.message()));
    p = target.is_absolute() ? target : (p.parent_path() / target);
  }
  if (p != fs::path(out)) {
    r.path = p.lexically_normal().string();
    r.note = fmt::format("--out {} is a symlink: writing its target {}", out, r.path);
  }
  struct stat st {};
  if (::stat(r.path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse(out, "a directory");
    if (S_ISFIFO(st.st_mode)) refuse(out, "a FIFO");
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) refuse(out, "a device");
    if (S_ISSOCK(st.st_mode)) refuse(out, "a socket");
    if (!S_ISREG(st.st_mode)) refuse(out, "not a regular file");
    if (!config_path.empty() && same_file(r.path, config_path)) refuse(out, "the --config file itself");
    if (::access(r.path.c_str(), W_OK) != 0) refuse(out, "an existing file this user may not write");
  } else if (errno != ENOENT) {
    refuse(out, std::strerror(errno));
  }
  const fs::path dir = fs::path(r.path).has_parent_path() ? fs::path(r.path).parent_path() : fs::path(".");
  if (fs::exists(dir, ec) && ::access(dir.c_str(), W_OK) != 0)
    refuse(out, fmt::format("the directory {} is not writable", dir.string()));
  return r;
}

OutLock::OutLock(const std::string& path) : lock_path_(path + ".lock") {
  std::error_code ec;
  const fs::path dir = fs::path(lock_path_).parent_path();
  if (!dir.empty()) fs::create_directories(dir, ec);
  fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("--out {}: cannot create the lock file {}: {}", path, lock_path_, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(fmt::format("--out {}: another dmabench run is writing it (it holds {}); wait for it or choose "
                                 "another --out",
                                 path, lock_path_));
  }
}

OutLock::~OutLock() { release(); }

void OutLock::release() const {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace dmabench
