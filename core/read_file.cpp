#include "core/read_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
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

// Reads `fd` (a pipe or a socket) to its end: at most limit + 1 bytes; on a non-blocking fd, waits at most idle_s
// seconds between two pieces.
Maybe<std::string> read_stream(int fd, std::size_t limit_bytes, int idle_s) {
  using R = Maybe<std::string>;
  std::string text;
  char buf[65536];
  while (text.size() <= limit_bytes) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit_bytes + 1 - text.size()));
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, idle_s * 1000);
    if (r == 0) return R::no(fmt::format("nothing arrived for {} s (a pipe is read until its writer closes it)", idle_s));
    if (r < 0 && errno != EINTR) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  }
  if (text.size() > limit_bytes) return R::no(fmt::format("larger than {} KiB", limit_bytes >> 10));
  return text;
}

}  // namespace

Maybe<std::string> read_small_input(const std::string& path, std::size_t limit_bytes, int idle_s, bool* regular) {
  using R = Maybe<std::string>;
  const bool in = path == "-";
  // a pipe by its descriptor only: a FIFO by another path may have no writer (never opened, as read_small_file says)
  if (!in && path != "/dev/stdin" && path.rfind("/dev/fd/", 0) != 0 && path.rfind("/proc/self/fd/", 0) != 0) {
    if (regular) *regular = true;
    return read_small_file(path, limit_bytes);
  }
  struct stat st {};
  if ((in ? ::fstat(0, &st) : ::stat(path.c_str(), &st)) != 0)
    return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (regular) *regular = S_ISREG(st.st_mode) && !in;
  if (S_ISREG(st.st_mode) && !in) return read_small_file(path, limit_bytes);
  if (in && ::isatty(0)) return R::no("standard input is a terminal (pipe a config in: dmabench --config - < FILE)");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) return R::no(*not_regular(st.st_mode));
  // a pipe opened anew (stdin's through /proc) without waiting for a writer and non-blocking, so that an idle writer
  // is given up; a socket on stdin is read as it is (blocking)
  const Fd fd(S_ISFIFO(st.st_mode) || !in ? ::open(in ? "/proc/self/fd/0" : path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
                                          : -1);
  if (fd.get() < 0 && !(in && !S_ISFIFO(st.st_mode)))
    return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  return read_stream(fd.get() >= 0 ? fd.get() : 0, limit_bytes, idle_s);
}

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
