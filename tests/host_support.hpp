#pragma once
// Shared by the unit tests that run cases on the host backend.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engines/backend.hpp"

namespace dmabench::testing_support {

inline std::unique_ptr<Backend> host_backend() {
  std::string why;
  auto b = make_backend("host", &why);
  EXPECT_NE(b, nullptr) << why;
  return b;
}

}  // namespace dmabench::testing_support
