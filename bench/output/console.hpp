#pragma once
// The console: dmabench's own messages (console::say, on stdout or, when stdout carries Google Benchmark's
// JSON, on stderr) and warnings (console::warn, stderr), written whole or not at all. A console that is gone
// (`dmabench ... | head`, a closed terminal) drops what cannot be written and never stops a run (the signal
// side of that: core/interrupt.hpp).
#include <cstdio>
#include <string>
#include <utility>

#include <fmt/format.h>

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
