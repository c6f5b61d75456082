#pragma once
// SIGINT and SIGTERM: the first one only asks the sweep to stop (the case in flight finishes and is
// recorded, no later case starts); the handler is then reset, so a second one ends the process at once
// (the results file is still whole: it is only ever replaced atomically). The handlers are installed
// first thing in main and kept to the end, so that no signal can land where the run holds its lock and
// nobody listens (before the sweep: no case starts; after the last case: the run ends as usual).
//
// A console that is gone (`dmabench ... | head`, a closed terminal) never stops a run either: SIGPIPE is
// caught and a standard stream whose reader is gone is pointed at /dev/null, SIGHUP is ignored
// (bench/output/console.hpp writes dmabench's messages and drops what cannot be written).
//
// Whether every process of a multi-process run agrees to stop is team's (team/team.hpp: stop_agreed).
#include <chrono>
#include <stdexcept>
#include <string>

namespace dmabench::interrupt {

// Installs the handlers (SIGINT, SIGTERM, SIGPIPE, SIGHUP) for the life of the guard and, with `restore`,
// puts the previous ones back after (main keeps them to the very end of the process: restore false).
class Guard {
 public:
  explicit Guard(bool restore = true);
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  bool restore_;
};

// The signal that asked the sweep to stop (SIGINT, SIGTERM), or 0.
int requested();
// The documented exit code of an interrupted run: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
int exit_code();
// Thrown by work before the sweep that a signal cut short (a routing being generated): main ends the run with
// exit_code(), nothing recorded.
struct Stopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Blocks until a signal asks the run to stop or `timeout` passes; whether one did. For a thread that acts
// on the signal at once (the handler itself only records it).
bool wait_requested(std::chrono::milliseconds timeout);

}  // namespace dmabench::interrupt
