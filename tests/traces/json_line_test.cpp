// The reader's fast JSON parser against nlohmann (traces/fuzz/json_line_check.hpp): every
// line it takes, nlohmann takes with the same values; what it leaves, it leaves whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "traces/detail/json_line.hpp"
#include "traces/fuzz/json_line_check.hpp"

namespace ranklab {
namespace {

bool fast_takes(std::string_view line) {
  detail::JsonLineParser parser;
  return parser.parse(line) != nullptr;
}

TEST(JsonLineTest, AgreesWithNlohmannOnEveryExampleLine) {
  std::size_t lines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces/examples")) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      ++lines;
      EXPECT_TRUE(fast_takes(line) || line.find("\"format\"") != std::string::npos)
          << entry.path() << ": an event line ranklab wrote left to nlohmann: " << line;
      EXPECT_EQ(fuzz::fast_parser_disagreement(line), "") << line;
    }
  }
  EXPECT_GT(lines, 100U);
}

TEST(JsonLineTest, TypesNumbersAsNlohmannDoes) {
  detail::JsonLineParser parser;
  const detail::JsonValue* v = parser.parse(R"({"u":7,"n":-0,"i":-5,"d":1.5e3,"big":18446744073709551615})");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->find("u")->is_number_unsigned());
  EXPECT_FALSE(v->find("n")->is_number_unsigned());  // "-0": signed, as nlohmann has it
  EXPECT_TRUE(v->find("n")->is_number_integer());
  EXPECT_EQ(v->find("i")->get<std::int64_t>(), -5);
  EXPECT_FALSE(v->find("d")->is_number_integer());
  EXPECT_EQ(v->find("d")->get<double>(), 1500.0);
  EXPECT_EQ(v->find("big")->get<std::uint64_t>(), UINT64_MAX);
  EXPECT_EQ(v->find("absent"), nullptr);
}

TEST(JsonLineTest, LeavesToNlohmannWhatItCannotVouchFor) {
  for (const char* line : {
           R"({"a":18446744073709551616})",   // past uint64: nlohmann makes it a double
           R"({"a":-9223372036854775809})",   // past int64
           R"({"a":1e400})",                  // nlohmann: out of range
           R"({"a":1e-400})",                 // strtod: 0, from_chars: out of range
           R"({"a":01})", R"({"a":1.})", R"({"a":.5})", R"({"a":1e})", R"({"a":+1})",
           R"({"a":"\n"})", R"({"a":"\u00e9"})", "{\"a\":\"\xc3\xa9\"}", "{\"a\":\"\x01\"}",
           R"({"a":1,"a":2})",                // repeated key: nlohmann keeps the last
           R"({"a":1} x)", R"({"a":1)", R"({"a" 1})", R"({"a":1,})", R"([1])", R"("s")",
           R"({"a":tru})", R"({"a":nul})", R"({"a":[[[[[[[[[1]]]]]]]]]})",
       }) {
    EXPECT_FALSE(fast_takes(line)) << line;
    EXPECT_EQ(fuzz::fast_parser_disagreement(line), "") << line;
  }
}

TEST(JsonLineTest, TakesWhitespaceNestingAndLiterals) {
  for (const char* line : {
           " {\t\"a\" : [ 1 , {\"b\":true} , null ,false, \"x y\", [] , {} ] }\r ",
           R"({"a":-9223372036854775808,"b":0,"c":-1.25E-2,"d":[0.1,2e+5]})",
           R"({})", R"({"":""})",
       }) {
    EXPECT_TRUE(fast_takes(line)) << line;
    EXPECT_EQ(fuzz::fast_parser_disagreement(line), "") << line;
  }
}

}  // namespace
}  // namespace ranklab
