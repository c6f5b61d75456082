#include "core/json_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace dmabench {

void write_json_atomically(const std::string& path, const nlohmann::json& doc) { write_text_atomically(path, dump_json(doc, 1) + "\n"); }

int create_temporary(const std::string& path, std::string& tmp) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = path + ".tmp.";
    for (int i = 0; i < 6; ++i) tmp += kChars[pick(rng)];
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;  // a name taken (by anything, a link too) is never opened: the next one
  }
  throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
}

namespace {

// Removes the temporary and throws, naming what failed with errno's reason.
[[noreturn]] void fail_write(const std::string& tmp, const char* what, const std::string& name, int fd = -1) {
  const int err = errno;
  if (fd >= 0) ::close(fd);
  ::unlink(tmp.c_str());
  throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, name, std::strerror(err)));
}

}  // namespace

void write_text_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string tmp;
  const int fd = create_temporary(path, tmp);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_write(tmp, "write", tmp, fd);
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail_write(tmp, "write", tmp, fd);
  if (::close(fd) != 0) fail_write(tmp, "write", tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail_write(tmp, "replace", path);
}

std::string escape_non_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    // the length of a valid sequence starting at i (RFC 3629, section 4), or 0
    std::size_t len = 0;
    auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
      return k < s.size() && b(k) >= lo && b(k) <= hi;
    };
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = cont(i + 1) ? 2 : 0;
    else if (c == 0xE0) len = cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = cont(i + 1) && cont(i + 2) ? 3 : 0;
    else if (c == 0xED) len = cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
    else if (c == 0xF0) len = cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c >= 0xF1 && c <= 0xF3) len = cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c == 0xF4) len = cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (len == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string dump_json(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dmabench
