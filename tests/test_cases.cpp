// Case identity: the validation seed comes from what a case is, not from how its name is spelled.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/cases/cases.hpp"
#include "engines/engine.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

Case sdma_case(json options) {
  return Case{.pattern = "allgather",
              .variant = EngineVariant{"sdma", std::move(options)},
              .devices = {0, 1},
              .bytes_per_rank = 64 << 10,
              .run = {.warmup = 1,
                      .iterations = 4,
                      .pipeline_depth = 1}};
}

TEST(CaseSeed, DefaultsGivenOrLeftOutAreOneCase) {
  const Case bare = sdma_case(json::object());
  const Case filled = sdma_case(with_defaults("sdma", json::object()));
  EXPECT_EQ(bare.name(), filled.name());
  EXPECT_EQ(bare.seed(), filled.seed());
  // An option set to its default value explicitly is the same case, too.
  const json defaults = with_defaults("sdma", json::object());
  const std::string first = defaults.begin().key();
  EXPECT_EQ(sdma_case({{first, defaults[first]}}).seed(), bare.seed());
}

TEST(CaseSeed, DiffersWhereTheCaseDiffers) {
  const Case base = sdma_case(with_defaults("sdma", json::object()));
  Case other_size = base;
  other_size.bytes_per_rank *= 2;
  Case other_devices = base;
  other_devices.devices = {1, 0};
  Case in_place = base;
  in_place.in_place = true;
  Case pipelined = base;
  pipelined.timing = Timing::pipelined;
  Case other_option = sdma_case(with_defaults("sdma", {{"schedule", "b2b"}}));
  ASSERT_NE(other_option.variant.options, base.variant.options);
  for (const Case* c : {&other_size, &other_devices, &in_place, &pipelined, &other_option})
    EXPECT_NE(c->seed(), base.seed()) << c->name();
}

// The seed does not read the name: a case whose name would be spelled differently (the name leaves out
// options at their default) keeps its seed when the option is spelled out.
TEST(CaseSeed, IsNotAHashOfTheName) {
  const Case c = sdma_case(with_defaults("sdma", json::object()));
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a of the name: what the seed was
  for (unsigned char ch : c.name()) h = (h ^ ch) * 1099511628211ull;
  EXPECT_NE(c.seed(), h);
}

}  // namespace
}  // namespace dmabench
