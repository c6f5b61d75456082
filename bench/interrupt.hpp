#pragma once
// SIGINT and SIGTERM: the first one only asks the sweep to stop (the case in flight finishes and is
// recorded, no later case starts); the handler is then reset, so a second one ends the process at once
// (the results file is still whole: it is only ever replaced atomically). The handlers are installed
// first thing in main and kept to the end, so that no signal can land where the run holds its lock and
// nobody listens (before the sweep: no case starts; after the last case: the run ends as usual).
//
// The console: a console that is gone (`dmabench ... | head`, a closed terminal) never stops a run:
// SIGPIPE is caught, a standard stream whose reader is gone is pointed at /dev/null, SIGHUP is ignored,
// and dmabench's messages are written by console::say / console::warn, which drop what cannot be written.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

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
// Whether the sweep stops before its next case: a signal came to this process or, in a multi-process
// run, to any of them (then it is collective: every process asks at the same point), or a process of
// the run is gone and a case has failed with the reason (stop_recorded).
bool stop_agreed();
// A case failed after a process of the run was gone: the reason is in the results, the sweep may stop.
void stop_recorded();
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

namespace dmabench::console {

// Standard input, output and error that were closed when the process started (`dmabench ... >&- 2>&-`) are
// opened on /dev/null: else the first files the run opens (its lock, its journal) would get their numbers, and
// the console's lines (the progress line) would be written into them. Call first in main.
void keep_standard_streams() noexcept;
// dmabench's own messages go to stderr instead of stdout (stdout carries Google Benchmark's JSON).
void messages_to_stderr(bool yes);
std::FILE* messages();
// Writes the text whole or not at all; never throws (a console that is gone drops it).
void write(std::FILE* f, const std::string& text) noexcept;

template <typename... T>
void say(fmt::format_string<T...> format, T&&... args) {
  write(messages(), fmt::format(format, std::forward<T>(args)...));
}
template <typename... T>
void warn(fmt::format_string<T...> format, T&&... args) {
  write(stderr, fmt::format(format, std::forward<T>(args)...));
}

}  // namespace dmabench::console
