#include "core/read_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dmabench {
namespace {

// Why a file of this mode is not read; nullopt for a regular file.
WhyNot not_regular(mode_t mode) {
  if (S_ISREG(mode)) return std::nullopt;
  if (S_ISFIFO(mode)) return "not a regular file (a FIFO)";
  if (S_ISDIR(mode)) return "not a regular file (a directory)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file (a device)";
  if (S_ISSOCK(mode)) return "not a regular file (a socket)";
  return "not a regular file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Maybe<std::string> read_small_file(const std::string& path, std::size_t limit_bytes) {
  using R = Maybe<std::string>;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (auto why = not_regular(st.st_mode)) return R::no(*why);  // never opened: opening a FIFO can wait
  // O_NONBLOCK: should the path become a FIFO after the check, open() still does not wait
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (::fstat(fd.get(), &st) != 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (auto why = not_regular(st.st_mode)) return R::no(*why);
  // as large as the file (it may grow while read: then doubled), never more than the limit and a byte
  const std::size_t cap = limit_bytes + 1;
  std::string text(std::min(cap, static_cast<std::size_t>(st.st_size) + 4096), '\0');
  std::size_t got = 0;
  while (got < cap) {
    if (got == text.size()) text.resize(std::min(cap, text.size() * 2));
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > limit_bytes) return R::no(fmt::format("larger than {} KiB", limit_bytes >> 10));
  text.resize(got);
  return text;
}

}  // namespace dmabench
