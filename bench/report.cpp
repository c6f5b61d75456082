#include "bench/report.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sched.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace dmabench {

ResultsFile::ResultsFile(std::string path, nlohmann::json context) : path_(std::move(path)) {
  doc_ = {{"schema", kSchemaVersion}, {"context", std::move(context)}, {"results", nlohmann::json::array()}};
}

void ResultsFile::add(nlohmann::json result) {
  doc_["results"].push_back(std::move(result));
  write();
}

void ResultsFile::write() const {
  if (!path_.empty()) write_json_atomically(path_, doc_);
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
