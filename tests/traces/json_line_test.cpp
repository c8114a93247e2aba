// The reader's fast JSON parser against nlohmann (traces/fuzz/json_line_check.hpp): every
// line it takes, nlohmann takes with the same values; what it leaves, it leaves whole.
#include <gtest/gtest.h>

#include <charconv>
#include <filesystem>
#include <optional>
#include <fstream>
#include <string>
#include <vector>

#include "traces/detail/json_fields.hpp"
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

// The string scan reads eight bytes at a time: a byte it must refuse (or the closing quote)
// at every position of strings of every length up to three words, and a string that runs
// to the line's end, each decided as nlohmann decides.
TEST(JsonLineTest, ScansStringsWordByWordAsNlohmannDoes) {
  const std::string specials[] = {"\"", "\\n", std::string(1, '\x01'), "\x7f", "\x80", "\xff",
                                  std::string(1, '\0'), "\x1f", " ", "~"};
  std::size_t taken = 0;
  for (std::size_t length = 0; length <= 24; ++length) {
    for (std::size_t at = 0; at <= length; ++at) {
      for (const std::string& special : specials) {
        std::string text(length, 'x');
        text.insert(at, special);
        const std::string line = "{\"k\":\"" + text + "\",\"n\":1}";
        EXPECT_EQ(fuzz::fast_parser_disagreement(line), "") << length << " " << at;
        taken += fast_takes(line) ? 1 : 0;
        const std::string unterminated = "{\"k\":\"" + text;
        EXPECT_FALSE(fast_takes(unterminated)) << unterminated;
      }
    }
  }
  EXPECT_GT(taken, 300U);  // the printable ones (' ', '~', and an escaped quote's halves)
}

// The parser pads its copy of the line with NULs: a NUL in the line itself is no token
// and no string byte, wherever it is, so such a line is nlohmann's to refuse.
TEST(JsonLineTest, LeavesLinesWithNulBytesToNlohmann) {
  for (const std::string& line : {std::string("{\"a\":1}\0", 8), std::string("{\"a\":\0}", 7),
                                  std::string("{\"a\0\":1}", 8), std::string("\0{\"a\":1}", 8)}) {
    EXPECT_FALSE(fast_takes(line));
    EXPECT_EQ(fuzz::fast_parser_disagreement(line), "");
  }
}

// The values stay valid after the parser's input is gone: they point into its own copy.
TEST(JsonLineTest, ValuesOutliveTheLineTheyCameFrom) {
  detail::JsonLineParser parser;
  std::string line = R"({"op":"send","n":12})";
  const detail::JsonValue* v = parser.parse(line);
  ASSERT_NE(v, nullptr);
  line.assign(line.size(), '#');
  EXPECT_EQ(v->find("op")->text(), "send");
  EXPECT_EQ(v->find("n")->get<std::uint64_t>(), 12U);
}

// parse_digits (each event's hash and msg) is from_chars's rule in a loop of its own:
// the two agree on lengths around the overflow points, either case, signs and strays.
TEST(JsonLineTest, ParsesDigitsAsFromCharsDoes) {
  std::vector<std::string> texts = {"", "0", "-1", "+1", "0x1f", " 1", "1 ", "12a", "FFff",
                                    "ffffffffffffffff", "10000000000000000", "0000000000000000001",
                                    "18446744073709551615", "18446744073709551616",
                                    "99999999999999999999", "00000000000000000000018446744073709551615"};
  for (std::size_t length = 1; length <= 22; ++length) {
    texts.push_back(std::string(length, '9'));
    texts.push_back(std::string(length, 'f'));
    texts.push_back(std::string(length, 'F'));
    texts.push_back("1" + std::string(length - 1, '0'));
  }
  for (const std::string& text : texts) {
    for (const int base : {10, 16}) {
      std::uint64_t expected = 0;
      const char* end = text.data() + text.size();
      const auto [stop, error] = std::from_chars(text.data(), end, expected, base);
      const bool valid = !text.empty() && error == std::errc() && stop == end;
      const std::optional<std::uint64_t> got = detail::parse_digits(text, base);
      EXPECT_EQ(got.has_value(), valid) << text << " base " << base;
      if (got && valid) {
        EXPECT_EQ(*got, expected) << text << " base " << base;
      }
    }
  }
}

}  // namespace
}  // namespace ranklab
