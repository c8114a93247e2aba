// The pickle writer: every value kind reads back through ranklab's own reader (integers at
// each opcode's edges, floats, text, nesting, batches past 1000 items), tuples where asked,
// the bytes of a small dict exactly as pickletools describes protocol 2, and its refusals.
#include "traces/pickle_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/error.hpp"
#include "traces/pickle_reader.hpp"

namespace ranklab {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

json round_trip(const ordered_json& value) {
  return read_pickle(write_pickle(value), "written");
}

class PickleWriterIntegerTest : public ::testing::TestWithParam<std::int64_t> {};

//! Integers at the edges of BININT1, BININT2, BININT and LONG1 read back as written.
TEST_P(PickleWriterIntegerTest, ReadsBack) {
  EXPECT_EQ(round_trip(GetParam()), json(GetParam()));
  EXPECT_EQ(round_trip(ordered_json::array({GetParam()})), json::array({GetParam()}));
}

INSTANTIATE_TEST_SUITE_P(
    Edges, PickleWriterIntegerTest,
    ::testing::Values(0, 1, 255, 256, 65535, 65536, -1, -128, -129, -256, -257,
                      std::int64_t{INT32_MAX}, std::int64_t{INT32_MIN},
                      std::int64_t{INT32_MAX} + 1, std::int64_t{INT32_MIN} - 1,
                      std::int64_t{1} << 39, -(std::int64_t{1} << 39), 1'700'000'000'123'456'789,
                      std::numeric_limits<std::int64_t>::max(),
                      std::numeric_limits<std::int64_t>::min()));

//! Every kind of value a Flight Recorder dump holds reads back equal, nested.
TEST(PickleWriterTest, DumpLikeValuesReadBack) {
  const ordered_json value = {
      {"version", "2.10"},
      {"pg_config", {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}}}},
      {"entries",
       {{{"frames", ordered_json::array()},
         {"record_id", 0},
         {"input_sizes", {{1024}, {3, 4}}},
         {"time_discovered_completed_ns", nullptr},
         {"retired", true},
         {"is_p2p", false},
         {"duration_ms", 0.25},
         {"thread_name", "rank 0 \xc3\xa9\xe2\x82\xac"}}}},
      {"empty", ordered_json::object()},
      {"negative_float", -1e300}};
  EXPECT_EQ(round_trip(value), json::parse(value.dump()));
}

//! Lists and dicts past Python's 1000-item batches read back whole.
TEST(PickleWriterTest, BatchesPastAThousandItems) {
  ordered_json list = ordered_json::array();
  ordered_json dict = ordered_json::object();
  for (int i = 0; i < 2501; ++i) {
    list.push_back(i);
    dict[std::to_string(i)] = i;
  }
  EXPECT_EQ(round_trip(list), json::parse(list.dump()));
  EXPECT_EQ(round_trip(dict), json::parse(dict.dump()));
}

//! The keys named as tuples are written with the tuple opcodes (read back as lists), and the
//! bytes are protocol 2 as pickletools lists them: PROTO 2, EMPTY_DICT, MARK,
//! BINUNICODE 'process_group', TUPLE2 of two BINUNICODE, SETITEMS, STOP.
TEST(PickleWriterTest, TupleKeysAndExactBytes) {
  const ordered_json value = {{"process_group", {"0", "default_pg"}}};
  const std::string bytes = write_pickle(value, {.tuple_keys = {"process_group"}});
  const std::string expected =
      std::string("\x80\x02}(X\x0d\x00\x00\x00process_groupX\x01\x00\x00\x00" "0"
                  "X\x0a\x00\x00\x00" "default_pg\x86u.", 46);
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(read_pickle(bytes, "t"), json::parse(value.dump()));
  // Tuples of every length (EMPTY_TUPLE, TUPLE1..3, MARK ... TUPLE).
  for (std::size_t n = 0; n <= 5; ++n) {
    ordered_json items = ordered_json::array();
    for (std::size_t i = 0; i < n; ++i) items.push_back(i);
    const ordered_json doc = {{"t", items}};
    EXPECT_EQ(read_pickle(write_pickle(doc, {.tuple_keys = {"t"}}), "t"), json::parse(doc.dump())) << n;
  }
}

//! Text that is not UTF-8 and nesting past the reader's bound are refused, not written.
TEST(PickleWriterTest, RefusesWhatCannotBeRead) {
  EXPECT_THROW_MSG(write_pickle(ordered_json("\xff\xfe")), TraceError, "not UTF-8 text");
  ordered_json deep = 1;
  for (std::size_t i = 0; i < kMaxPickleDepth + 1; ++i) deep = ordered_json::array({deep});
  EXPECT_THROW_MSG(write_pickle(deep), TraceError, "nested deeper than");
}

}  // namespace
}  // namespace ranklab
