#pragma once
// The one way this tree says why something cannot be done (header-only; C++17, since gpu/'s .cu and
// HIP kernel sources include headers that include it):
//   WhyNot    a predicate's answer: the reason it cannot, or nullopt when it can
//             (Engine::unsupported, beside::unsupported, gpu::copy_batch_unsupported, ...).
//   Maybe<T>  a factory's answer: a T, or the reason there is none (make_backend, power::open, ...).
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace dmabench {

// The reason it cannot, or nullopt when it can.
using WhyNot = std::optional<std::string>;

// A value, or the reason there is none:
//   Maybe<int> count() { if (bad) return Maybe<int>::no("the reason"); return 4; }
//   if (auto n = count()) use(*n); else report(n.why_not());
template <class T>
class Maybe {
 public:
  // A value (implicit: `return value;`). Not from nullptr: a null pointer is no value, say why instead.
  template <class U = T,
            std::enable_if_t<std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, Maybe> &&
                                 !std::is_same_v<std::decay_t<U>, std::nullptr_t>,
                             int> = 0>
  Maybe(U&& value) : value_(std::forward<U>(value)) {}  // NOLINT(google-explicit-constructor)

  // No value, and why.
  static Maybe no(std::string why) { return Maybe(Reason{std::move(why)}); }

  explicit operator bool() const { return value_.has_value(); }

  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

  // The value; throws std::logic_error with the reason when there is none.
  T& value() & { return (check(), *value_); }
  const T& value() const& { return (check(), *value_); }
  T&& value() && { return (check(), std::move(*value_)); }

  // Why there is no value; "" when there is one.
  const std::string& why_not() const { return why_; }

 private:
  struct Reason {
    std::string why;
  };
  explicit Maybe(Reason r) : why_(std::move(r.why)) {}
  void check() const {
    if (!value_) throw std::logic_error("no value: " + why_);
  }

  std::optional<T> value_;
  std::string why_;
};

}  // namespace dmabench
