#include "bench/output/report.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <sched.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace dmabench {

std::string utc_iso8601_ms(std::chrono::system_clock::time_point t) {
  const auto whole = std::chrono::floor<std::chrono::seconds>(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - whole).count();
  const std::time_t s = std::chrono::system_clock::to_time_t(whole);
  std::tm utc{};
  gmtime_r(&s, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", date, ms);
}

ResultsFile::ResultsFile(std::string path, nlohmann::json context, const RunStart& start)
    : path_(std::move(path)), context_(std::move(context)), started_(start.steady) {
  context_["started_at"] = start.started_at;
}

ResultsFile::~ResultsFile() {
  if (journal_) std::fclose(journal_);
}

void ResultsFile::append_line(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), journal_) != line.size() || std::fputc('\n', journal_) == EOF ||
      std::fflush(journal_) != 0)  // through to the kernel: a killed process loses no finished case
    throw std::runtime_error(fmt::format("cannot append to '{}': {}", journal_path(), std::strerror(errno)));
}

// The journal is made under a temporary name and renamed into place: whatever stood at <out>.journal (an
// earlier run's journal; the checks before the run refuse anything but a regular file) is replaced, and a
// link there is never written through.
void ResultsFile::open_journal() {
  std::error_code ec;
  if (const auto dir = std::filesystem::path(path_).parent_path(); !dir.empty()) std::filesystem::create_directories(dir, ec);
  std::string tmp;
  const int fd = create_temporary(journal_path(), tmp);
  journal_ = ::fdopen(fd, "w");
  if (!journal_) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
  }
  try {
    append_line(dump_json({{"schema", kJournalSchema}, {"results_schema", kSchemaVersion}, {"context", context_}}));
    if (std::rename(tmp.c_str(), journal_path().c_str()) != 0)
      throw std::runtime_error(fmt::format("cannot replace '{}': {}", journal_path(), std::strerror(errno)));
  } catch (...) {
    std::fclose(journal_);
    journal_ = nullptr;
    ::unlink(tmp.c_str());
    throw;
  }
}

void ResultsFile::add(nlohmann::json result) {
  std::lock_guard lock(mu_);
  if (!path_.empty() && !journal_) open_journal();  // the first record: a new journal with the context, and <out> replaced
  records_.push_back(dump_json(result));
  if (journal_) append_line(records_.back());
  const bool first = records_.size() == 1;
  if (first || std::chrono::steady_clock::now() - written_at_ >= std::chrono::duration<double>(kRewriteSeconds)) write();
}

void ResultsFile::finish() {
  std::lock_guard lock(mu_);
  // No case recorded (a filter or an interrupt before the first case): an existing <out> and an earlier run's
  // journal stay as they are.
  if (records_.empty()) return;
  context_["finished_at"] = utc_iso8601_ms(std::chrono::system_clock::now());
  context_["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  write();
  if (path_.empty()) return;
  if (journal_) {
    std::fclose(journal_);
    journal_ = nullptr;
  }
  ::unlink(journal_path().c_str());
}

// {"schema": ..., "context": ..., "results": [one record per line]}
void ResultsFile::write() {
  written_at_ = std::chrono::steady_clock::now();
  if (path_.empty()) return;
  std::size_t size = 64;
  for (const auto& r : records_) size += r.size() + 2;
  std::string text = fmt::format("{{\"schema\": \"{}\",\n \"context\": {},\n \"results\": [", kSchemaVersion, dump_json(context_, 1));
  text.reserve(text.size() + size);
  for (std::size_t i = 0; i < records_.size(); ++i) {
    text += i ? ",\n  " : "\n  ";
    text += records_[i];
  }
  text += records_.empty() ? "]}\n" : "\n ]}\n";
  write_text_atomically(path_, text);
}

std::string cpu_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out.push_back(',');
    out.append(last == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, last));
    c = last;
  }
  return out;
}

namespace {
std::optional<nlohmann::json>& start_environment() {
  static std::optional<nlohmann::json> kept;
  return kept;
}

nlohmann::json current_environment() {
  nlohmann::json env = nlohmann::json::object();  // an object: its keys come out sorted
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    for (const char* prefix : kEnvironmentPrefixes)
      if (name.rfind(prefix, 0) == 0) {
        env[escape_non_utf8(name)] = escape_non_utf8(entry.substr(eq + 1));
        break;
      }
  }
  return env;
}
}  // namespace

void keep_start_environment() { start_environment() = current_environment(); }

nlohmann::json environment_context() { return start_environment() ? *start_environment() : current_environment(); }

nlohmann::json host_context() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  struct utsname u {};
  ::uname(&u);
  return {{"date", date},
          {"host", host},
          {"os", fmt::format("{} {} {}", u.sysname, u.release, u.machine)},
          {"cpu_affinity", cpu_affinity()}};
}

}  // namespace dmabench
