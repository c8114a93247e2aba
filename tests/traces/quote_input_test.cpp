// How errors quote input (traces/quote_input.hpp): short tokens as they are, long ones cut
// with their size said, control bytes escaped, UTF-8 never split.
#include "traces/quote_input.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ranklab {
namespace {

//! A token of up to 80 bytes is shown whole, in quotes.
TEST(QuoteInputTest, ShortTokensAreShownWhole) {
  EXPECT_EQ(quote_input("tp[0,1]"), "'tp[0,1]'");
  EXPECT_EQ(quote_input(""), "''");
  EXPECT_EQ(quote_input(std::string(80, 'x')), "'" + std::string(80, 'x') + "'");
  EXPECT_EQ(excerpt("[1,2]"), "[1,2]");
}

//! A 50 MB token becomes 80 bytes and its size: the error stays one short line.
TEST(QuoteInputTest, LongTokensAreCutWithTheirSize) {
  const std::string huge(50'000'000, 'g');
  EXPECT_EQ(quote_input(huge), "'" + std::string(80, 'g') + "'... (50000000 bytes)");
  EXPECT_EQ(excerpt(std::string(41, 'a'), 40), std::string(40, 'a') + "... (41 bytes)");
}

//! Newlines, escape sequences and NULs cannot break the line or drive the terminal.
TEST(QuoteInputTest, ControlBytesAreEscaped) {
  EXPECT_EQ(quote_input("a\nb\x1b[31m\0c\x7f"), "'a\\x0ab\\x1b[31m'");
  EXPECT_EQ(quote_input(std::string("a\0c\x7f", 4)), "'a\\x00c\\x7f'");
}

//! A cut never falls inside a UTF-8 character.
TEST(QuoteInputTest, CutsOnCharacterBoundaries) {
  const std::string text = std::string(79, 'x') + "\u00e9\u00e9";  // 79 + 2 + 2 bytes
  EXPECT_EQ(quote_input(text), "'" + std::string(79, 'x') + "'... (83 bytes)");
}

}  // namespace
}  // namespace ranklab
