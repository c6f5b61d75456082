#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/units.hpp"

using namespace dmabench;

TEST(Units, ParsesPlainAndUnits) {
  EXPECT_EQ(parse_bytes("4096", "f"), 4096u);
  EXPECT_EQ(parse_bytes("1", "f"), 1u);
  EXPECT_EQ(parse_bytes("4KiB", "f"), 4096u);
  EXPECT_EQ(parse_bytes("4K", "f"), 4096u);
  EXPECT_EQ(parse_bytes("4kib", "f"), 4096u);
  EXPECT_EQ(parse_bytes("1MiB", "f"), 1048576u);
  EXPECT_EQ(parse_bytes("1GiB", "f"), 1073741824u);
  EXPECT_EQ(parse_bytes("1TiB", "f"), 1099511627776u);
  EXPECT_EQ(parse_bytes("1.5KiB", "f"), 1536u);
  EXPECT_EQ(parse_bytes(" 64 MiB ", "f"), 64u << 20);
  EXPECT_EQ(parse_bytes("100B", "f"), 100u);
}

TEST(Units, RejectsBadSizesNamingTheField) {
  for (const char* bad : {"", "KiB", "4XB", "-4KiB", "0", "0KiB", "1.3B", "4 KiB x", "1..2K", "abc", "0.1"}) {
    try {
      parse_bytes(bad, "sizes[2]");
      FAIL() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("sizes[2]"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("accepted"), std::string::npos) << e.what();
    }
  }
}

// Issue 52: KB/MB/GB/TB were powers of 1000 beside M's 1024, silently; now refused with both unambiguous spellings.
TEST(Units, RefusesAmbiguousDecimalUnits) {
  const auto error_of = [](const char* text) {
    try {
      parse_bytes(text, "-b");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("1MB"), "-b: '1MB' is ambiguous (MB: powers of 1000 or of 1024?); accepted: 1MiB (powers of 1024, "
                             "as M alone) or the bytes 1000000 (powers of 1000)");
  EXPECT_NE(error_of("4KB").find("4KiB (powers of 1024, as K alone) or the bytes 4000 "), std::string::npos);
  EXPECT_NE(error_of("2gb").find("2GiB (powers of 1024, as G alone) or the bytes 2000000000 "), std::string::npos);
  EXPECT_NE(error_of("1.5TB").find("the bytes 1500000000000 "), std::string::npos);
  EXPECT_EQ(parse_bytes("1M", "f"), 1048576u);  // nccl-tests' M stays a power of 1024
  EXPECT_EQ(parse_bytes("1000000", "f"), 1000000u);
}

TEST(Units, FormatsExactBinaryUnits) {
  EXPECT_EQ(format_bytes(1), "1B");
  EXPECT_EQ(format_bytes(1000), "1000B");
  EXPECT_EQ(format_bytes(1024), "1KiB");
  EXPECT_EQ(format_bytes(1536), "1536B");
  EXPECT_EQ(format_bytes(65536), "64KiB");
  EXPECT_EQ(format_bytes(3u << 20), "3MiB");
  EXPECT_EQ(format_bytes(1u << 30), "1GiB");
  EXPECT_EQ(format_bytes(1ull << 40), "1TiB");
  EXPECT_EQ(format_bytes(1ull << 50), "1024TiB");
}
