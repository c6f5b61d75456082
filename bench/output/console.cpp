#include "bench/output/console.hpp"

#include <atomic>
#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace dmabench::console {
namespace {
std::atomic<bool> g_to_stderr{false};
}

void keep_standard_streams() noexcept {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);  // the lowest free number: fd
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

void messages_to_stderr(bool yes) { g_to_stderr.store(yes); }
std::FILE* messages() { return g_to_stderr.load() ? stderr : stdout; }

void write(std::FILE* f, const std::string& text) noexcept {
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::clearerr(f);
  if (f == stderr) std::fflush(f);
}

}  // namespace dmabench::console
