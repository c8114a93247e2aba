// The trace reader rejects every malformed input with `name:line: reason`. Each case
// asserts the message, not just the exception type: the message is the user interface.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tests/traces/reader_errors.hpp"
#include "tests/traces/sample_trace.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using reader_errors::error_of;
using reader_errors::file_error_of;
using reader_errors::with;

const std::string kHeader =
    R"({"format":"ranklab-trace","version":"1.0","world_size":4,"groups":[)"
    R"({"name":"world","ranks":[0,1,2,3]},{"name":"tp[0,1]","ranks":[0,1]}],"config":{}})";
const std::string kSend =
    R"({"rank":0,"rank_seq":0,"op":"send","group":"world","peer":1,"tag":7,"dtype":"f32",)"
    R"("count":4,"bytes":16,"hash":"0123456789abcdef","msg":"0:0","lamport":1})";
const std::string kBroadcast =
    R"({"rank":1,"rank_seq":0,"op":"broadcast","group":"world","dtype":"f64","count":2,)"
    R"("bytes":16,"coll_seq":0,"root":2,"lamport":1})";
const std::string kAllReduce =
    R"({"rank":1,"rank_seq":0,"op":"all_reduce","group":"tp[0,1]","dtype":"i32","count":3,)"
    R"("bytes":12,"coll_seq":0,"reduce_op":"sum","lamport":1})";

// Both readers below must succeed, or every negative case could pass for a wrong reason.
//! The base lines used by the cases are themselves valid.
TEST(ReaderErrorTest, BaseLinesAreValid) {
  EXPECT_EQ(error_of(kHeader + "\n" + kSend + "\n" + kBroadcast + "\n"), "");
  EXPECT_EQ(error_of(kHeader + "\n" + kAllReduce + "\n"), "");
}

//! An empty file, or one of blank lines only, has no header.
TEST(ReaderErrorTest, EmptyFile) {
  EXPECT_EQ(error_of(""), "t.jsonl:1: empty trace file (no header line)");
  EXPECT_EQ(error_of("\n \n\n"), "t.jsonl:1: empty trace file (no header line)");
}

struct Case {
  const char* name;
  std::string text;    ///< the whole file
  std::string reason;  ///< expected message prefix, "t.jsonl:LINE: ..."
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class ReaderErrorCaseTest : public ::testing::TestWithParam<Case> {};

//! Each malformed input gives exactly the documented `name:line: reason`.
TEST_P(ReaderErrorCaseTest, ReportsNameLineAndReason) {
  const Case& c = GetParam();
  const std::string message = error_of(c.text);
  EXPECT_EQ(message.substr(0, c.reason.size()), c.reason) << "full message: " << message;
}

std::string header_with(const std::string& from, const std::string& to) {
  return with(kHeader, from, to) + "\n";
}

/// A file whose second line is `event`.
std::string event(const std::string& line) { return kHeader + "\n" + line + "\n"; }

std::vector<Case> header_cases() {
  return {
      {"HeaderInvalidJson", "{\"format\":\"ranklab-trace\",\n", "t.jsonl:1: invalid JSON (column"},
      {"HeaderNotObject", "[1,2]\n",
       "t.jsonl:1: not a ranklab trace header (expected a JSON object, got [1,2])"},
      {"FirstLineIsAnEvent", kSend + "\n",
       "t.jsonl:1: not a ranklab trace header (no 'format' field)"},
      {"WrongFormat", header_with("ranklab-trace", "chrome-trace"),
       "t.jsonl:1: not a ranklab trace (format 'chrome-trace', expected 'ranklab-trace')"},
      {"FormatNotString", header_with(R"("ranklab-trace")", "7"),
       "t.jsonl:1: field 'format' must be a string, got 7"},
      {"MajorVersion2", header_with(R"("1.0")", R"("2.0")"),
       "t.jsonl:1: unsupported trace version 2.0 (this reader supports 1.x)"},
      {"MajorVersion0", header_with(R"("1.0")", R"("0.9")"),
       "t.jsonl:1: unsupported trace version 0.9 (this reader supports 1.x)"},
      {"MalformedVersion", header_with(R"("1.0")", R"("1")"),
       "t.jsonl:1: malformed version '1' (expected \"MAJOR.MINOR\")"},
      {"VersionNotString", header_with(R"("1.0")", "1.0"),
       "t.jsonl:1: field 'version' must be a string, got 1.0"},
      {"MissingVersion", header_with(R"("version":"1.0",)", ""),
       "t.jsonl:1: missing required field 'version'"},
      {"WorldSizeZero", header_with(R"("world_size":4)", R"("world_size":0)"),
       "t.jsonl:1: world_size 0 out of range [1, 1048576]"},
      {"WorldSizeAbsurd", header_with(R"("world_size":4)", R"("world_size":99999999)"),
       "t.jsonl:1: world_size 99999999 out of range [1, 1048576]"},
      {"WorldSizeString", header_with(R"("world_size":4)", R"("world_size":"4")"),
       "t.jsonl:1: field 'world_size' must be an integer, got \"4\""},
      {"GroupsNotArray", header_with(R"("groups":[)", R"("groups":7,"x":[)"),
       "t.jsonl:1: field 'groups' must be an array, got 7"},
      {"GroupRankOutOfRange", header_with("[0,1]}]", "[0,4]}]"),
       "t.jsonl:1: group 'tp[0,1]' lists rank 4, out of range [0, 4)"},
      {"GroupRankTwice", header_with("[0,1]}]", "[1,1]}]"),
       "t.jsonl:1: group 'tp[0,1]' lists rank 1 twice"},
      {"GroupWithoutRanks", header_with("[0,1]}]", "[]}]"),
       "t.jsonl:1: group 'tp[0,1]' has no ranks"},
      {"DuplicateGroupName", header_with("tp[0,1]", "world"),
       "t.jsonl:1: duplicate group name 'world'"},
      {"FirstGroupNotWorld", header_with("[0,1,2,3]", "[0,1,3,2]"),
       "t.jsonl:1: the first group must be 'world' with ranks 0..3 in order"},
      {"ConfigNotObject", header_with(R"("config":{})", R"("config":[])"),
       "t.jsonl:1: field 'config' must be an object, got []"},
  };
}

std::vector<Case> field_cases() {
  return {
      {"TruncatedLine", event(kSend.substr(0, 40)), "t.jsonl:2: invalid JSON (column 41"},
      {"EventNotObject", event("42"), "t.jsonl:2: event must be a JSON object, got 42"},
      {"MissingRank", event(with(kSend, R"("rank":0,)", "")),
       "t.jsonl:2: missing required field 'rank'"},
      {"MissingRankSeq", event(with(kSend, R"("rank_seq":0,)", "")),
       "t.jsonl:2: missing required field 'rank_seq'"},
      {"MissingOp", event(with(kSend, R"("op":"send",)", "")),
       "t.jsonl:2: missing required field 'op'"},
      {"MissingGroup", event(with(kSend, R"("group":"world",)", "")),
       "t.jsonl:2: missing required field 'group'"},
      {"MissingPeer", event(with(kSend, R"("peer":1,)", "")),
       "t.jsonl:2: missing required field 'peer'"},
      {"MissingTag", event(with(kSend, R"("tag":7,)", "")),
       "t.jsonl:2: missing required field 'tag'"},
      {"MissingDtype", event(with(kSend, R"("dtype":"f32",)", "")),
       "t.jsonl:2: missing required field 'dtype'"},
      {"MissingCount", event(with(kSend, R"("count":4,)", "")),
       "t.jsonl:2: missing required field 'count'"},
      {"MissingBytes", event(with(kSend, R"("bytes":16,)", "")),
       "t.jsonl:2: missing required field 'bytes'"},
      {"MissingLamport", event(with(kSend, R"(,"lamport":1)", "")),
       "t.jsonl:2: missing required field 'lamport'"},
      {"MissingCollSeq", event(with(kBroadcast, R"("coll_seq":0,)", "")),
       "t.jsonl:2: missing required field 'coll_seq'"},
      {"MissingRoot", event(with(kBroadcast, R"(,"root":2)", "")),
       "t.jsonl:2: missing required field 'root'"},
      {"MissingReduceOp", event(with(kAllReduce, R"(,"reduce_op":"sum")", "")),
       "t.jsonl:2: missing required field 'reduce_op'"},
      {"RankAsString", event(with(kSend, R"("rank":0)", R"("rank":"0")")),
       "t.jsonl:2: field 'rank' must be an integer, got \"0\""},
      {"RankSeqNegative", event(with(kSend, R"("rank_seq":0)", R"("rank_seq":-1)")),
       "t.jsonl:2: field 'rank_seq' must be a non-negative integer, got -1"},
      {"OpAsNumber", event(with(kSend, R"("op":"send")", R"("op":0)")),
       "t.jsonl:2: field 'op' must be a string, got 0"},
      {"CountAsFloat", event(with(kSend, R"("count":4)", R"("count":4.0)")),
       "t.jsonl:2: field 'count' must be a non-negative integer, got 4.0"},
      {"NegativeCount", event(with(kSend, R"("count":4)", R"("count":-4)")),
       "t.jsonl:2: field 'count' must be a non-negative integer, got -4"},
      {"HugeLamport", event(with(kSend, R"("lamport":1)", R"("lamport":1e30)")),
       "t.jsonl:2: field 'lamport' must be a non-negative integer, got 1e+30"},
      {"TagAsString", event(with(kSend, R"("tag":7)", R"("tag":"7")")),
       "t.jsonl:2: field 'tag' must be an integer, got \"7\""},
      {"TagOutOfRange", event(with(kSend, R"("tag":7)", R"("tag":4294967296)")),
       "t.jsonl:2: field 'tag' is out of range, got 4294967296"},
  };
}

std::vector<Case> value_cases() {
  return {
      {"AbsurdCount",
       event(with(with(kSend, R"("count":4)", R"("count":281474976710657)"), R"("bytes":16)",
                  R"("bytes":1125899906842628)")),
       "t.jsonl:2: count 281474976710657 exceeds the limit of 2^48 elements"},
      {"BytesMismatch", event(with(kSend, R"("bytes":16)", R"("bytes":15)")),
       "t.jsonl:2: bytes 15 != count 4 * 4 (size of f32)"},
      {"UnknownOp", event(with(kSend, R"("send")", R"("sendrecv")")),
       "t.jsonl:2: unknown op 'sendrecv'"},
      {"UnknownDtype", event(with(kSend, R"("f32")", R"("f8")")),
       "t.jsonl:2: unknown dtype 'f8'"},
      {"UnknownReduceOp", event(with(kAllReduce, R"("sum")", R"("xor")")),
       "t.jsonl:2: unknown reduce_op 'xor'"},
      {"UnknownStatus", event(with(kSend, R"("group")", R"("status":"lost","group")")),
       "t.jsonl:2: unknown status 'lost'"},
      {"RankTooLarge", event(with(kSend, R"("rank":0)", R"("rank":4)")),
       "t.jsonl:2: rank 4 out of range [0, 4)"},
      {"RankNegative", event(with(kSend, R"("rank":0)", R"("rank":-1)")),
       "t.jsonl:2: rank -1 out of range [0, 4)"},
      {"UnknownGroup", event(with(kSend, R"("world")", R"("tp[2,3]")")),
       "t.jsonl:2: unknown group 'tp[2,3]'"},
      // The reader reuses the group of the line before: a line of another group, known
      // or not, and another rank of the same group are still checked.
      {"UnknownGroupAfterAKnownOne",
       event(kSend + "\n" + with(with(kSend, R"("world")", R"("tp[2,3]")"), R"("rank_seq":0)",
                                R"("rank_seq":1)")),
       "t.jsonl:3: unknown group 'tp[2,3]'"},
      {"RankNotInTheGroupOfTheLineBefore",
       event(kAllReduce + "\n" + with(kAllReduce, R"("rank":1)", R"("rank":3)")),
       "t.jsonl:3: rank 3 is not a member of group 'tp[0,1]'"},
      {"PeerOutOfRange", event(with(kSend, R"("peer":1)", R"("peer":9)")),
       "t.jsonl:2: peer 9 out of range [0, 4)"},
      {"RootOutOfRange", event(with(kBroadcast, R"("root":2)", R"("root":-3)")),
       "t.jsonl:2: root -3 out of range [0, 4)"},
      {"RankNotInGroup",
       event(with(with(kSend, R"("world")", R"("tp[0,1]")"), R"("rank":0)", R"("rank":2)")),
       "t.jsonl:2: rank 2 is not a member of group 'tp[0,1]'"},
      {"PeerNotInGroup",
       event(with(with(kSend, R"("world")", R"("tp[0,1]")"), R"("peer":1)", R"("peer":3)")),
       "t.jsonl:2: peer 3 is not a member of group 'tp[0,1]'"},
      {"MsgWithoutColon", event(with(kSend, R"("0:0")", R"("0-0")")),
       "t.jsonl:2: malformed msg '0-0' (expected \"SENDER:SEQ\")"},
      {"MsgNotNumbers", event(with(kSend, R"("0:0")", R"("a:1")")),
       "t.jsonl:2: malformed msg 'a:1' (expected \"SENDER:SEQ\")"},
      {"MsgEmptySeq", event(with(kSend, R"("0:0")", R"("0:")")),
       "t.jsonl:2: malformed msg '0:' (expected \"SENDER:SEQ\")"},
      {"MsgThreeParts", event(with(kSend, R"("0:0")", R"("0:1:2")")),
       "t.jsonl:2: malformed msg '0:1:2' (expected \"SENDER:SEQ\")"},
      {"MsgSenderOutOfRange", event(with(kSend, R"("0:0")", R"("7:0")")),
       "t.jsonl:2: msg sender 7 out of range [0, 4)"},
      {"HashTooShort", event(with(kSend, R"("0123456789abcdef")", R"("abc")")),
       "t.jsonl:2: malformed hash 'abc' (expected 16 hex digits)"},
      {"HashNotHex", event(with(kSend, R"("0123456789abcdef")", R"("0123456789abcdeg")")),
       "t.jsonl:2: malformed hash '0123456789abcdeg' (expected 16 hex digits)"},
      {"HashAsNumber", event(with(kSend, R"("0123456789abcdef")", "12")),
       "t.jsonl:2: field 'hash' must be a string, got 12"},
  };
}

std::vector<Case> structure_cases() {
  const std::string send1 = with(kSend, R"("rank_seq":0)", R"("rank_seq":1)");
  return {
      {"CollSeqOnSend", event(with(kSend, R"("lamport")", R"("coll_seq":0,"lamport")")),
       "t.jsonl:2: field 'coll_seq' does not apply to send"},
      {"TagOnCollective", event(with(kBroadcast, R"("lamport")", R"("tag":0,"lamport")")),
       "t.jsonl:2: field 'tag' does not apply to broadcast"},
      {"RootOnAllReduce", event(with(kAllReduce, R"("lamport")", R"("root":0,"lamport")")),
       "t.jsonl:2: field 'root' does not apply to all_reduce"},
      {"ReduceOpOnBroadcast",
       event(with(kBroadcast, R"("lamport")", R"("reduce_op":"sum","lamport")")),
       "t.jsonl:2: field 'reduce_op' does not apply to broadcast"},
      {"CompletedRecvWithoutPeer",
       event(with(with(kSend, R"("send")", R"("recv")"), R"("peer":1,)", "")),
       "t.jsonl:2: missing required field 'peer'"},
      {"DuplicateRankSeq", kHeader + "\n" + kSend + "\n" + send1 + "\n" + kSend + "\n",
       "t.jsonl:4: rank 0 rank_seq 0 repeats line 2"},
      {"LineNumbersCountBlankLines", kHeader + "\n\n" + kSend + "\n\n" + with(kSend, "f32", "f99"),
       "t.jsonl:5: unknown dtype 'f99'"},
      {"InFlightNotArray", event(with(send1, R"("lamport":1)", R"("lamport":1,"in_flight":0)")),
       "t.jsonl:2: field 'in_flight' must be an array, got 0"},
      {"InFlightNotEarlier",
       event(with(send1, R"("lamport":1)", R"("lamport":1,"in_flight":[0,1])")),
       "t.jsonl:2: in_flight lists rank_seq 1, not earlier than this operation's 1"},
      {"InFlightNotIncreasing",
       event(with(with(send1, R"("rank_seq":1)", R"("rank_seq":5)"), R"("lamport":1)",
                  R"("lamport":1,"in_flight":[3,2])")),
       "t.jsonl:2: in_flight must be strictly increasing (2 after 3)"},
      {"InFlightNegative", event(with(send1, R"("lamport":1)", R"("lamport":1,"in_flight":[-1])")),
       "t.jsonl:2: field 'in_flight' must be a non-negative integer, got -1"},
      {"BlockedOnCompleted", event(with(kSend, R"("lamport":1)", R"("lamport":1,"blocked":true)")),
       "t.jsonl:2: field 'blocked' applies only to pending operations"},
      {"BlockedNotBoolean",
       event(with(with(kSend, R"("group")", R"("status":"pending","group")"), R"("lamport":1)",
                  R"("lamport":1,"blocked":1)")),
       "t.jsonl:2: field 'blocked' must be true or false, got 1"},
      {"AnySourceOnSend", event(with(kSend, R"("lamport":1)", R"("lamport":1,"any_source":true)")),
       "t.jsonl:2: field 'any_source' applies only to recv"},
      {"AnySourceNotBoolean",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"any_source":"yes")")),
       "t.jsonl:2: field 'any_source' must be true or false, got \"yes\""},
      {"ComputeNotObject", event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":3)")),
       "t.jsonl:2: field 'compute' must be an object or an array of compute events, got 3"},
      {"ComputeEventNotObject",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":[{"s":1},2])")),
       "t.jsonl:2: field 'compute[1]' must be an object, got 2"},
      {"ComputeEventLayerNegative",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":[{"layer":-1}])")),
       "t.jsonl:2: field 'compute[0].layer' must be a non-negative integer, got -1"},
      {"ComputeEventLabelNumber",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":[{"label":7}])")),
       "t.jsonl:2: field 'compute[0].label' must be a string, got 7"},
      {"ComputeEventNegativeFlops",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute_after":[{"flops":-1}])")),
       "t.jsonl:2: field 'compute_after[0].flops' must be a finite number >= 0, got -1"},
      {"ComputeEventEndBeforeStart",
       event(with(kSend, R"("lamport":1)",
                  R"("lamport":1,"compute":[{"vt_start_ns":5,"vt_end_ns":4}])")),
       "t.jsonl:2: field 'compute[0].vt_end_ns' must come with an earlier or equal vt_start_ns"},
      {"StagingCopyUnknown",
       event(with(kSend, R"("lamport":1)",
                  R"("lamport":1,"compute":[{"label":"staging","copy":"d2d","bytes":4}])")),
       "t.jsonl:2: field 'compute[0].copy' must be \"d2h\" or \"h2d\", got 'd2d'"},
      {"StagingBytesWithoutCopy",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":[{"bytes":4}])")),
       "t.jsonl:2: field 'compute[0]' has 'bytes' or 'device' without 'copy'"},
      {"StagingBytesNegative",
       event(with(kSend, R"("lamport":1)",
                  R"("lamport":1,"compute_after":[{"copy":"h2d","bytes":-4}])")),
       "t.jsonl:2: field 'compute_after[0].bytes' must be a non-negative integer, got -4"},
      {"StagingDeviceNumber",
       event(with(kSend, R"("lamport":1)",
                  R"("lamport":1,"compute":[{"copy":"h2d","bytes":4,"device":3}])")),
       "t.jsonl:2: field 'compute[0].device' must be a string, got 3"},
      {"ComputeNegative",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute":{"flops":-2})")),
       "t.jsonl:2: field 'compute.flops' must be a finite number >= 0, got -2"},
      {"ComputeString",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"compute_after":{"s":"1"})")),
       "t.jsonl:2: field 'compute_after.s' must be a finite number >= 0, got \"1\""},
      {"ComputeAfterNotLast",
       kHeader + "\n" + with(kSend, R"("lamport":1)", R"("lamport":1,"compute_after":{"s":1})") +
           "\n" + send1 + "\n",
       "t.jsonl:2: compute_after on rank 0 rank_seq 0, which is not the rank's last operation"},
      {"VirtualEndBeforePost",
       event(with(kSend, R"("lamport":1)", R"("lamport":1,"vt_post_ns":5,"vt_end_ns":4)")),
       "t.jsonl:2: vt_end_ns 4 is before vt_post_ns 5"},
      {"VirtualEndAlone", event(with(kSend, R"("lamport":1)", R"("lamport":1,"vt_end_ns":4)")),
       "t.jsonl:2: vt_end_ns without vt_post_ns"},
      {"VirtualPostFloat", event(with(kSend, R"("lamport":1)", R"("lamport":1,"vt_post_ns":1.5)")),
       "t.jsonl:2: field 'vt_post_ns' must be a non-negative integer, got 1.5"},
      {"TruncatedLastLine", kHeader + "\n" + kSend + "\n" + send1.substr(0, send1.size() - 1),
       "t.jsonl:3: invalid JSON (column"},
  };
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Header, ReaderErrorCaseTest, ::testing::ValuesIn(header_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Fields, ReaderErrorCaseTest, ::testing::ValuesIn(field_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Values, ReaderErrorCaseTest, ::testing::ValuesIn(value_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Structure, ReaderErrorCaseTest, ::testing::ValuesIn(structure_cases()),
                         case_name);

//! A pending receive from any source has no peer and no msg, and is valid.
TEST(ReaderErrorTest, PendingAnySourceRecvNeedsNoPeer) {
  const std::string recv =
      with(with(with(kSend, R"("send")", R"("recv","status":"pending")"), R"("peer":1,)", ""),
           R"(,"msg":"0:0")", "");
  const Trace trace = trace_samples::from_text(event(recv));
  EXPECT_EQ(trace.ranks[0].at(0).peer, kNoRank);
  EXPECT_EQ(trace.ranks[0].at(0).status, OpStatus::pending);
}

//! A missing file, or a directory, names the path and the reason.
TEST(ReaderErrorTest, UnreadableFile) {
  EXPECT_EQ(file_error_of("/nonexistent-ranklab-dir/missing.jsonl"),
            "/nonexistent-ranklab-dir/missing.jsonl: cannot open trace file "
            "(No such file or directory)");
  EXPECT_EQ(file_error_of("/"), "/: not a regular file (a directory)");
}

/// Reads `text`: the trace, or nothing on a TraceError. Any other exception fails the test.
std::optional<Trace> read_or_trace_error(const std::string& text) {
  try {
    return trace_samples::from_text(text);
  } catch (const TraceError&) {
    return std::nullopt;
  } catch (const std::exception& other) {
    ADD_FAILURE() << "not a TraceError: " << other.what() << "\ninput: " << text;
    return std::nullopt;
  }
}

/// Reads `text`; true if it is valid. Any exception other than TraceError fails the test.
bool reads_or_trace_error(const std::string& text) { return read_or_trace_error(text).has_value(); }

//! Every truncation of a valid trace is either still valid (cut at a line end) or a
//! TraceError; never a crash or another exception type.
TEST(ReaderErrorTest, EveryTruncationIsValidOrATraceError) {
  const std::string text = trace_samples::to_text(trace_samples::sample_trace());
  for (std::size_t size = 0; size < text.size(); ++size) {
    // Valid exactly when the cut falls at the end of a line, before or after its newline.
    const bool whole_lines = size > 0 && (text[size - 1] == '\n' || text[size] == '\n');
    EXPECT_EQ(reads_or_trace_error(text.substr(0, size)), whole_lines) << "prefix of " << size;
  }
}

/// Line and column (from 1) of byte `at`, and that line as corrupted, for failure messages.
std::string where(const std::string& corrupted, std::size_t at) {
  const std::size_t start = at == 0 ? 0 : corrupted.rfind('\n', at - 1) + 1;  // npos + 1 = 0
  const std::size_t end = corrupted.find('\n', at);
  const auto line = std::count(corrupted.begin(), corrupted.begin() + static_cast<long>(at), '\n');
  std::string shown = corrupted.substr(start, end == std::string::npos ? end : end - start);
  for (char& c : shown) c = (c == '\0' ? '@' : c);  // a NUL would end gtest's message
  return "line " + std::to_string(line + 1) + " column " + std::to_string(at - start + 1) + ": " +
         shown;
}

//! Overwriting any byte with a character that JSON cannot hold there (a NUL, a quote, a byte
//! that is not UTF-8) gives a TraceError, never a trace nor another exception; overwriting it
//! with a digit gives a TraceError or a trace that reads differently from the original
//! (written back, it is another text): a corrupted file is never read as the one it was.
TEST(ReaderErrorTest, CorruptedBytesGiveTraceErrors) {
  const std::string text = trace_samples::to_text(trace_samples::sample_trace());
  std::size_t rejected = 0, read_differently = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    for (const char replacement : {'\0', '"', '9', '\xff'}) {
      if (text[at] == replacement) continue;  // not a corruption
      std::string corrupted = text;
      corrupted[at] = replacement;
      const std::optional<Trace> read = read_or_trace_error(corrupted);
      if (!read) {
        ++rejected;
      } else if (replacement != '9') {
        ADD_FAILURE() << "read as valid with byte " << at << " overwritten by "
                      << static_cast<int>(static_cast<unsigned char>(replacement)) << ", "
                      << where(corrupted, at);
      } else if (trace_samples::to_text(*read) == text) {
        ADD_FAILURE() << "read as the original trace with byte " << at << " overwritten by '9', "
                      << where(corrupted, at);
      } else {
        ++read_differently;
      }
    }
  }
  // Both outcomes happen: the loop reached the reader, and a digit does not always break it.
  EXPECT_GT(rejected, text.size());
  EXPECT_GT(read_differently, 0u);
}

//! TraceError is part of the ranklab::Error hierarchy (the CLI maps it to exit code 1).
TEST(ReaderErrorTest, TraceErrorIsARanklabError) {
  EXPECT_THROW(trace_samples::from_text(""), Error);
}

}  // namespace
}  // namespace ranklab
