#include "core/read_file.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/interrupt.hpp"

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

// Waits until `fd` has something to read (or its writer is gone) or `deadline` passes: > 0, 0 at the deadline, < 0 on
// an error. A signal that asks the run to stop ends the wait: interrupt::Stopped. SIGINT and SIGTERM are blocked while
// the flag is checked and let in only inside ppoll, so one that comes between the check and the wait interrupts the
// wait (a plain poll would sleep on, and restarting it gave the writer a whole new idle limit: issue 51).
int wait_readable(int fd, std::chrono::steady_clock::time_point deadline) {
  sigset_t stops, old;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stops, &old);
  int r = -1;
  for (;;) {
    if (interrupt::requested()) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      throw interrupt::Stopped("while reading the config from its pipe or socket");
    }
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r = 0;
      break;
    }
    const timespec wait{static_cast<time_t>(left.count() / 1000000000), static_cast<long>(left.count() % 1000000000)};
    pollfd p{fd, POLLIN, 0};
    r = ::ppoll(&p, 1, &wait, &old);
    if (r >= 0 || errno != EINTR) break;  // EINTR: a signal; the loop checks whether it asks the run to stop
  }
  const int err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return r;
}

// Reads `fd` (a pipe or a socket, blocking or not) to its end: at most limit + 1 bytes, waiting before each read so
// that no read blocks; gives up when nothing arrives for idle_s seconds since the last byte.
Maybe<std::string> read_stream(int fd, std::size_t limit_bytes, int idle_s) {
  using R = Maybe<std::string>;
  using Clock = std::chrono::steady_clock;
  std::string text;
  char buf[65536];
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(idle_s);
  while (text.size() <= limit_bytes) {
    const int ready = wait_readable(fd, deadline);
    if (ready == 0) return R::no(fmt::format("nothing arrived for {} s (a pipe is read until its writer closes it)", idle_s));
    if (ready < 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit_bytes + 1 - text.size()));
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      deadline = Clock::now() + std::chrono::seconds(idle_s);
      continue;
    }
    if (n == 0) break;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
      return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  }
  if (text.size() > limit_bytes) return R::no(fmt::format("larger than {} KiB", limit_bytes >> 10));
  return text;
}

std::mutex g_read_mu;
std::vector<FileRead> g_read;  // files_read()

}  // namespace

Maybe<std::string> read_small_input(const std::string& path, std::size_t limit_bytes, int idle_s, bool* regular,
                                    const std::string& what) {
  using R = Maybe<std::string>;
  const bool in = path == "-";
  // a pipe by its descriptor only: a FIFO by another path may have no writer (never opened, as read_small_file says)
  if (!in && path != "/dev/stdin" && path.rfind("/dev/fd/", 0) != 0 && path.rfind("/proc/self/fd/", 0) != 0) {
    if (regular) *regular = true;
    return read_small_file(path, limit_bytes, what);
  }
  struct stat st {};
  if ((in ? ::fstat(0, &st) : ::stat(path.c_str(), &st)) != 0)
    return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (regular) *regular = S_ISREG(st.st_mode) && !in;
  if (S_ISREG(st.st_mode) && !in) return read_small_file(path, limit_bytes, what);
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

Maybe<std::string> read_small_file(const std::string& path, std::size_t limit_bytes, const std::string& what) {
  using R = Maybe<std::string>;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (auto why = not_regular(st.st_mode)) return R::no(*why);  // never opened: opening a FIFO can wait
  // O_NONBLOCK: should the path become a FIFO after the check, open() still does not wait
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (::fstat(fd.get(), &st) != 0) return R::no(fmt::format("cannot read it ({})", std::strerror(errno)));
  if (auto why = not_regular(st.st_mode)) return R::no(*why);
  {
    const std::lock_guard<std::mutex> lock(g_read_mu);
    g_read.push_back({what.empty() ? "a file the run read" : what, path, st.st_dev, st.st_ino});
  }
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

std::vector<FileRead> files_read() {
  const std::lock_guard<std::mutex> lock(g_read_mu);
  return g_read;
}

}  // namespace dmabench
