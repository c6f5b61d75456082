#pragma once
// The engine registry: which engines exist (independent of what this build has), their options, and
// making one of this build. What an engine implements is engines/engine.hpp; what an option is, and each
// engine's option table, engines/options/.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"
#include "engines/engine.hpp"
#include "engines/options/option.hpp"

namespace dmabench {

// An engine and its options: one variant of an engine as a config's "engines" entry expands into them.
struct EngineVariant {
  std::string engine;
  Options options;  // every option of the engine, defaults filled in
  bool operator==(const EngineVariant&) const = default;
};

struct EngineSpec {
  std::string name;
  // The backend that runs this engine in this build: "host", or the build's GPU backend ("cuda" or
  // "hip"; "cuda" in a build without one). `backends` lists every backend the engine exists for.
  std::string backend;
  std::string description;
  std::vector<OptionSpec> options;
  std::vector<std::string> backends;
  // Whether a run on `backend` can use this engine in this build: its GPU backend, or the host backend
  // for engines that also exist there (host; sdma on the software SDMA engine).
  bool runs_on(std::string_view run_backend) const;
};

// Every engine (of every backend, built or not), its options in table order. Each engine's option
// table lives next to its typed parser (engines/options/<engine>.cpp); this registry assembles them.
const std::vector<EngineSpec>& engine_specs();
const EngineSpec* find_engine_spec(std::string_view name);
// engine_specs() as data, for the results' context (results/SCHEMA.md, `context.engines`): a list of
// {name, backend, backends, description, options: [{name, default, choices, integers: null or
// {min, max}, prefix: null or {value, form}, help}]}.
nlohmann::json engine_specs_json();
// `given` with every option of the engine that it lacks set to its default: for code that builds an
// engine's options by hand (tests); configs get theirs filled in and validated by the config layer.
// Throws std::invalid_argument for an unknown engine.
Options with_defaults(std::string_view engine, Options given);
// An engine variant as case names show it: the engine's name, then ",option=value" for each option not
// at its default, in table order (e.g. "ce,streams=4").
std::string variant_label(std::string_view engine, const Options& options);

// Creates an engine of this build for a run on `backend` (default: the engine's own), or says why it
// cannot (e.g. "this build has no NCCL"). Engines are created once per run and live for the whole sweep.
Maybe<std::unique_ptr<Engine>> make_engine(std::string_view name, std::string_view backend = {});

}  // namespace dmabench
