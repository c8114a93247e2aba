// The shared text tools every text reader parses with: numbers and trimming (traces/text.hpp),
// enum names (traces/enum_names.hpp).
#include "traces/text.hpp"

#include "traces/enum_names.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace ranklab {
namespace {

TEST(TextTest, ParseWholeTakesOnlyTheWholeString) {
  EXPECT_EQ(parse_whole<int>("42"), 42);
  EXPECT_EQ(parse_whole<std::int64_t>("-7"), -7);
  EXPECT_EQ(parse_whole<std::uint64_t>("18446744073709551615"),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_whole<int>(""), std::nullopt);
  EXPECT_EQ(parse_whole<int>("4x"), std::nullopt);
  EXPECT_EQ(parse_whole<int>(" 4"), std::nullopt);
  EXPECT_EQ(parse_whole<int>("+4"), std::nullopt);
  EXPECT_EQ(parse_whole<std::uint64_t>("-1"), std::nullopt);
  EXPECT_EQ(parse_whole<int>("2147483648"), std::nullopt);  // over INT_MAX
}

TEST(TextTest, ParseWholeDoubleIsFinite) {
  EXPECT_EQ(parse_whole<double>("2.5e3"), 2500.0);
  EXPECT_EQ(parse_whole<double>("-0.5"), -0.5);
  EXPECT_EQ(parse_whole<double>("inf"), std::nullopt);
  EXPECT_EQ(parse_whole<double>("nan"), std::nullopt);
  EXPECT_EQ(parse_whole<double>("1e400"), std::nullopt);
  EXPECT_EQ(parse_whole<double>("1.5 "), std::nullopt);
}

TEST(TextTest, TrimDropsSpacesTabsAndCarriageReturns) {
  EXPECT_EQ(trim(" \tkey = 1\r"), "key = 1");
  EXPECT_EQ(trim(" \t\r"), "");
  EXPECT_EQ(trim("x"), "x");
}

enum class Colour { red, green, blue };
constexpr EnumNames<Colour, 3> kColours({"red", "green", "blue"});

TEST(TextTest, EnumNamesNameParseAndListFromOneTable) {
  EXPECT_EQ(kColours[Colour::blue], "blue");
  EXPECT_EQ(kColours.parse("green"), Colour::green);
  EXPECT_EQ(kColours.parse("Green"), std::nullopt);
  EXPECT_EQ(kColours.alternatives(), "red, green or blue");
}

}  // namespace
}  // namespace ranklab
