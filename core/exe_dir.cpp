#include "core/exe_dir.hpp"

#include <system_error>

namespace dmabench {

std::filesystem::path exe_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

}  // namespace dmabench
