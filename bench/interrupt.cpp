#include "bench/interrupt.hpp"

#include <atomic>
#include <csignal>

#include "dist/team.hpp"

namespace dmabench::interrupt {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_stop_recorded{false};
struct sigaction g_old_int {}, g_old_term {};

extern "C" void on_signal(int sig) { g_signal.store(sig); }  // lock-free: async-signal-safe

}  // namespace

Guard::Guard() {
  g_signal.store(0);
  g_stop_recorded.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes the default action
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

Guard::~Guard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int requested() { return g_signal.load(); }

bool stop_agreed() {
  const bool mine = g_signal.load() != 0;
  if (!dist::world().multi()) return mine;
  // A process is gone: the sweep stops once a case has failed with the reason. That is the case in
  // flight, or, where the death was noticed between cases (in this very agreement), the next one, which
  // fails at its first agreement: the file says why the run ended wherever the kill landed.
  if (!dist::world().stopped().empty()) return g_stop_recorded.load();
  try {
    return dist::first_error(mine ? "stop" : "").has_value();
  } catch (const dist::TeamStopped&) {
    return false;
  }
}
void stop_recorded() { g_stop_recorded.store(true); }
int exit_code() { return 128 + g_signal.load(); }

}  // namespace dmabench::interrupt
