#pragma once
// SIGINT and SIGTERM during a sweep: the first one only asks the sweep to stop (the case in flight
// finishes and is recorded, no later case starts); the handler is then reset, so a second one ends
// the process at once (the results file is still whole: it is only ever replaced atomically).
namespace dmabench::interrupt {

// Installs the handlers for the life of the guard (the sweep), restoring the previous ones after.
class Guard {
 public:
  Guard();
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// The signal that asked the sweep to stop (SIGINT, SIGTERM), or 0.
int requested();
// Whether the sweep stops before its next case: a signal came to this process or, in a multi-process
// run, to any of them (then it is collective: every process asks at the same point), or a process of
// the run is gone and a case has failed with the reason (stop_recorded).
bool stop_agreed();
// A case failed after a process of the run was gone: the reason is in the results, the sweep may stop.
void stop_recorded();
// The documented exit code of an interrupted run: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
int exit_code();

}  // namespace dmabench::interrupt
