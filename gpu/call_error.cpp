#include "gpu/call_error.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace dmabench::gpu {

void throw_call_error(std::string_view api, std::string_view call, std::string_view file, int line, long long code,
                      std::string_view what) {
  throw std::runtime_error(fmt::format("{} at {}:{}: {} error {}: {}", call, file, line, api, code, what));
}

}  // namespace dmabench::gpu
