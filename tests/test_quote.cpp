// core/quote.hpp: values quoted back in messages with a cap, control characters escaped (issue 40).
#include <gtest/gtest.h>

#include "core/quote.hpp"

using namespace dmabench;

TEST(Quote, ShortValuesAsTheyAreLongOnesCutWithWhatWasLeftOut) {
  EXPECT_EQ(quote("abc"), "abc");
  const std::string big(1 << 20, 'x');
  const std::string q = quote(big);
  EXPECT_EQ(q.substr(0, kQuoteCap), std::string(kQuoteCap, 'x'));
  EXPECT_NE(q.find("…(1048496 more bytes)"), std::string::npos) << q;
  EXPECT_LT(q.size(), 120u);
}

TEST(Quote, ControlCharactersCannotForgeALine) {
  EXPECT_EQ(quote("a\nFAIL  b\t\x01"), "a\\nFAIL  b\\t\\x01");
  EXPECT_EQ(one_line("error: name\nFAIL  x"), "error: name\\nFAIL  x");
}

TEST(Quote, C1ControlsSeparatorsAndStrayBytesAreEscapedAsThePythonToolsDo) {
  // U+009B is CSI on a terminal that reads C1 controls; U+0085 (NEL) and U+2028 end a line in some readers
  EXPECT_EQ(quote("a\u009b2Jb"), "a\\x9b2Jb");
  EXPECT_EQ(one_line("x\u0085FAIL y\u2028z\u2029"), "x\\x85FAIL y\\u2028z\\u2029");
  EXPECT_EQ(printable("\xff\xc3(\xe2\x82"), "\\xff\\xc3(\\xe2\\x82") << "bytes that are not UTF-8 are shown, not printed raw";
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf") << "an overlong '/' is not a character";
  EXPECT_EQ(printable("é ü 漢 😀 \u00a0"), "é ü 漢 😀 \u00a0") << "printable UTF-8 stays as it is";
  EXPECT_EQ(printable("a\\nb\n"), "a\\nb\\n") << "a name escaped once is not escaped again";
  EXPECT_EQ(quote("a\\n"), "a\\\\n") << "a quoted value's backslash is doubled: its escapes read back one way";
}

TEST(Quote, NeverCutsAUtf8Character) {
  const std::string q = quote(std::string(79, 'a') + "é" + "bbbb");  // é is 2 bytes: it would end at byte 81
  EXPECT_EQ(q.substr(0, 79), std::string(79, 'a'));
  EXPECT_EQ(q.find("é"), std::string::npos) << "cut before the character, not inside it";
}

TEST(Quote, JsonContainersAreShownOnlyToTheCap) {
  EXPECT_EQ(quote_json(nlohmann::json::parse(R"({"a": [1, 2]})")), R"({"a":[1,2]})");
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 5000; ++i) deep.push_back(i);
  const std::string q = quote_json(deep);
  EXPECT_LT(q.size(), 140u) << q;
  EXPECT_NE(q.find("5000 elements"), std::string::npos) << q;
}

TEST(Quote, ALongMessageKeepsItsStartAndItsEnd) {
  const std::string m = "config 'x': " + std::string(5000, 'y') + "; accepted: a, b";
  const std::string line = one_line(m);
  EXPECT_LE(line.size(), 700u);
  EXPECT_EQ(line.substr(0, 12), "config 'x': ");
  EXPECT_EQ(line.substr(line.size() - 16), "; accepted: a, b");
  EXPECT_NE(line.find("characters left out"), std::string::npos);
}
