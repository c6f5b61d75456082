#pragma once
// Shared by the tests that run cases.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "patterns/pattern.hpp"
#include "bench/cases/cases.hpp"
#include "engines/backend.hpp"
#include "engines/engine.hpp"
#include "core/errors.hpp"

namespace dmabench::testing_support {

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline std::unique_ptr<Backend> host_backend() {
  auto b = make_backend("host");
  EXPECT_TRUE(b) << b.why_not();
  return b ? std::move(b).value() : nullptr;
}

// Test parameters name in-place forms "<pattern>-inplace" (the case-name spelling).
struct NamedPattern {
  std::string pattern;
  bool in_place = false;
  const Pattern* impl = nullptr;
};
inline NamedPattern named_pattern(const std::string& name) {
  const std::string suffix = "-inplace";
  const bool in_place = name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  NamedPattern n{in_place ? name.substr(0, name.size() - suffix.size()) : name, in_place, nullptr};
  const Pattern* p = find_pattern(n.pattern);
  n.impl = p && in_place ? p->in_place() : p;
  return n;
}

// Every pattern of the registry by its case-name spelling, the in-place forms as "<pattern>-inplace":
// suites that loop over patterns take them from here, so a new pattern is covered by registering it.
inline std::vector<std::string> every_pattern_name() {
  std::vector<std::string> out;
  for (const Pattern* p : all_patterns()) {
    out.emplace_back(p->name());
    if (p->in_place()) out.push_back(std::string(p->name()) + "-inplace");
  }
  return out;
}

// The registry's patterns (case-name spelling, in-place forms included) whose plans keep every buffer in
// device memory (`host_memory` false) or put some in host memory (true): the suites that need GPUs for
// every rank and those that test host endpoints take theirs from here.
inline std::vector<std::string> pattern_names_with_host_memory(bool host_memory) {
  std::vector<std::string> out;
  for (const std::string& name : every_pattern_name())
    if (named_pattern(name).impl->uses_host_memory() == host_memory) out.push_back(name);
  return out;
}

// The registry's engines that a run on `backend` can use in this build (EngineSpec::runs_on), in
// registry order: the suites that run every engine take them from here.
inline std::vector<std::string> engines_running_on(std::string_view backend) {
  std::vector<std::string> out;
  for (const EngineSpec& s : engine_specs())
    if (s.runs_on(backend)) out.push_back(s.name);
  return out;
}

// An engine whose operations move a tampered copy of the plan (the harness validates against the true
// one): how tests plant a block in the wrong slot, a missing transfer, a wrong source.
class TamperingEngine final : public Engine {
 public:
  TamperingEngine(Engine& inner, std::function<void(Plan&)> tamper) : inner_(inner), tamper_(std::move(tamper)) {}
  std::unique_ptr<const TypedOptions> parse(const Options& o) const override { return inner_.parse(o); }
  WhyNot unsupported(const Plan& p, const TypedOptions& o, int k) const override { return inner_.unsupported(p, o, k); }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& o) override {
    Plan moved = plan;
    if (tamper_) tamper_(moved);
    return inner_.prepare(moved, o);
  }

 private:
  Engine& inner_;
  std::function<void(Plan&)> tamper_;
};

// An operation that forwards every call to another (the host engine's); a test derives from it and overrides what it
// plants (a launch that throws, times from a script).
class ForwardingOperation : public Operation {
 public:
  explicit ForwardingOperation(std::unique_ptr<Operation> inner) : inner_(std::move(inner)) {}
  void launch() override { inner_->launch(); }
  void wait() override { inner_->wait(); }
  void fill_sources(std::uint64_t seed) override { inner_->fill_sources(seed); }
  void poison_destinations(std::uint64_t seed) override { inner_->poison_destinations(seed); }
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override {
    return inner_->check_destinations(expected, seed);
  }

 protected:
  std::unique_ptr<Operation> inner_;
};

// An engine whose operations are another engine's, each wrapped by `wrap` (into a ForwardingOperation of the test's).
class WrappingEngine final : public Engine {
 public:
  using Wrap = std::function<std::unique_ptr<Operation>(std::unique_ptr<Operation>)>;
  WrappingEngine(Engine& inner, Wrap wrap) : inner_(inner), wrap_(std::move(wrap)) {}
  std::unique_ptr<const TypedOptions> parse(const Options& o) const override { return inner_.parse(o); }
  WhyNot unsupported(const Plan& p, const TypedOptions& o, int k) const override { return inner_.unsupported(p, o, k); }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& o) override {
    return wrap_(inner_.prepare(plan, o));
  }

 private:
  Engine& inner_;
  Wrap wrap_;
};

// The case with its plan (what expand() gives every case), after a test has set its fields.
inline Case planned(Case c) {
  plan_case(c);
  return c;
}

}  // namespace dmabench::testing_support
