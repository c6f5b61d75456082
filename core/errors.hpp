#pragma once
#include <stdexcept>
#include <string>

namespace dmabench {

// Bad input (config, flags, devices): stops the program before any work, exit code 2.
// The message names the field and what is accepted.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case that cannot run as asked (engine, plan or machine lacks something): the result is
// `skipped` with this reason and the sweep goes on.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dmabench
