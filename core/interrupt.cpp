#include "core/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <semaphore.h>
#include <unistd.h>

namespace dmabench::interrupt {
namespace {

std::atomic<int> g_signal{0};
struct sigaction g_old_int {}, g_old_term {}, g_old_pipe {}, g_old_hup {};
sem_t g_posted;  // posted by the handler (sem_post is async-signal-safe): wait_requested()

extern "C" void on_signal(int sig) {  // lock-free: async-signal-safe
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) sem_post(&g_posted);
}

// A write to a pipe or socket whose reader is gone: stdout or stderr, if it is one of them, is pointed
// at /dev/null, so that the run goes on and later messages go nowhere (open, dup2, poll and close are
// async-signal-safe). The write that raised it fails with EPIPE; console::write drops it.
extern "C" void on_sigpipe(int) {
  const int saved = errno;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 0) != 1 || (p.revents & (POLLERR | POLLHUP)) == 0) continue;
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) continue;
    ::dup2(null, fd);
    ::close(null);
  }
  errno = saved;
}

}  // namespace

Guard::Guard(bool restore) : restore_(restore) {
  g_signal.store(0);
  sem_init(&g_posted, 0, 0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes the default action
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  struct sigaction pipe {};
  pipe.sa_handler = on_sigpipe;
  sigemptyset(&pipe.sa_mask);
  pipe.sa_flags = SA_RESTART;
  sigaction(SIGPIPE, &pipe, &g_old_pipe);
  struct sigaction hup {};  // a closed terminal: the run goes on (its output to the terminal is dropped)
  hup.sa_handler = SIG_IGN;
  sigemptyset(&hup.sa_mask);
  sigaction(SIGHUP, &hup, &g_old_hup);
  // Let them in now that they are handled: a process that --processes started has them blocked from its fork until
  // here (bench/levels/levels_run.cpp: spawn), so that one passed on before this point waits for this handler.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
}

Guard::~Guard() {
  if (!restore_) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGPIPE, &g_old_pipe, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

int requested() { return g_signal.load(); }

bool wait_requested(std::chrono::milliseconds timeout) {
  if (g_signal.load() != 0) return true;
  timespec until{};
  clock_gettime(CLOCK_REALTIME, &until);
  const long long ns = until.tv_nsec + static_cast<long long>(timeout.count() % 1000) * 1000000;
  until.tv_sec += static_cast<time_t>(timeout.count() / 1000 + ns / 1000000000);
  until.tv_nsec = static_cast<long>(ns % 1000000000);
  while (sem_timedwait(&g_posted, &until) != 0)
    if (errno != EINTR) break;
  if (g_signal.load() == 0) return false;
  sem_post(&g_posted);  // the next waiter sees it too
  return true;
}

int exit_code() { return 128 + g_signal.load(); }

}  // namespace dmabench::interrupt
