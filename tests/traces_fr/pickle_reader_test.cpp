// The pickle-subset reader: what Python's pickle (protocols 2 and 4) writes for a Flight
// Recorder-like dict reads back as JSON, shared (memoized) values included; truncated,
// refused and hostile pickles are one-line errors naming the offset.
#include "traces/pickle_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// pickle.dumps(V, protocol=P) for
//   shared = {'name': 'f', 'filename': '/a.py', 'line': 3}
//   V = {'a': [1, -2, 3.5, None, True, False, 'é'], 't': (1, 2, 3, 4), 'big': 2**40,
//        'neg': -300, 'frames': [shared, shared], 'k': {}}
constexpr std::string_view kProtocol2 =
    "80027d71002858010000006171015d7102284b014afeffffff47400c0000000000004e88895802000000c3a971"
    "03655801000000747104284b014b024b034b04747105580300000062696771068a060000000000015803000000"
    "6e656771074ad4feffff58060000006672616d657371085d7109287d710a2858040000006e616d65710b580100"
    "000066710c580800000066696c656e616d65710d58050000002f612e7079710e58040000006c696e65710f4b03"
    "75680a6558010000006b71107d7111752e";
constexpr std::string_view kProtocol4 =
    "8004958d000000000000007d94288c0161945d94284b014afeffffff47400c0000000000004e88898c02c3a994"
    "658c017494284b014b024b034b0474948c03626967948a060000000000018c036e6567944ad4feffff8c066672"
    "616d6573945d94287d94288c046e616d65948c0166948c0866696c656e616d65948c052f612e7079948c046c69"
    "6e65944b0375680a658c016b947d94752e";

nlohmann::json expected() {
  const nlohmann::json shared = {{"name", "f"}, {"filename", "/a.py"}, {"line", 3}};
  return {{"a", {1, -2, 3.5, nullptr, true, false, "\xc3\xa9"}},
          {"t", {1, 2, 3, 4}},
          {"big", std::uint64_t{1} << 40},
          {"neg", -300},
          {"frames", {shared, shared}},
          {"k", nlohmann::json::object()}};
}

//! Protocol 2 (torch's C++ pickler) and 4 (Python's default) read to the same values; the
//! dict memoized while still empty and fetched again later comes back filled.
TEST(PickleReaderTest, ReadsWhatPythonWrites) {
  EXPECT_EQ(read_pickle(from_hex(kProtocol2), "p2"), expected());
  EXPECT_EQ(read_pickle(from_hex(kProtocol4), "p4"), expected());
}

//! Every prefix of a valid pickle is refused with the offset of the opcode it stopped in,
//! never read past its end.
TEST(PickleReaderTest, TruncatedPicklesAreRefusedWithTheirOffset) {
  const std::string bytes = from_hex(kProtocol2);
  for (std::size_t n = 0; n + 1 < bytes.size(); ++n) {
    try {
      (void)read_pickle(std::string_view(bytes).substr(0, n), "dump");
      ADD_FAILURE() << "a prefix of " << n << " bytes was read";
    } catch (const TraceError& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("dump: offset ")) << e.what();
      EXPECT_NE(std::string(e.what()).find("truncated pickle"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW_MSG((void)read_pickle(std::string_view(bytes).substr(0, 22), "dump"), TraceError,
                   "dump: offset 20: truncated pickle: BININT needs 4 bytes, 1 left");
}

//! Opcodes that would import or call code are refused by name and offset.
TEST(PickleReaderTest, RefusesOpcodesOutsideTheSubset) {
  // PROTO 2, GLOBAL os.system, ...: never run.
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02" "cos\nsystem\n", 13), "evil"),
                   TraceError,
                   "evil: offset 2: unsupported pickle opcode 0x63 (GLOBAL os.system");
  // PROTO 2, EMPTY_DICT, BUILD ('b').
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02}b.", 5), "evil"), TraceError,
                   "evil: offset 3: unsupported pickle opcode 0x62");
  // PROTO 2, NONE, REDUCE of a value that is not one of torch's list builders.
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02NNR.", 6), "evil"), TraceError,
                   "evil: offset 4: unsupported pickle opcode 0x52");
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x09N.", 4), "new"), TraceError,
                   "new: offset 0: pickle protocol 9");
}

//! torch's list builders (torch.jit._pickle.build_intlist) return their list as it is.
TEST(PickleReaderTest, TorchListBuildersReturnTheirList) {
  // PROTO 2, GLOBAL torch.jit._pickle build_intlist, ( ] K1 K2 APPENDS... as torch writes:
  // GLOBAL, MARK, EMPTY_LIST, MARK, 1, 2, APPENDS, TUPLE, REDUCE, STOP.
  std::string bytes = "\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n";
  bytes += "(](K\x01K\x02" "et" "R.";
  EXPECT_EQ(read_pickle(bytes, "ints"), nlohmann::json({1, 2}));
}

/// BINUNICODE then BINPUT `memo`, as torch's C++ pickler writes every new string.
std::string str(std::string_view text, char memo) {
  std::string out = "X";
  const auto n = static_cast<std::uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += text;
  out += "q";
  out.push_back(memo);
  return out;
}

//! What torch's C++ pickler (torch/csrc/jit/serialization/pickler.cpp) writes for a dump:
//! every dict and list wrapped in restore_type_tag (GLOBAL memoized, then fetched again by
//! BINGET), strings memoized, LONG1 of 8 bytes for large integers.
TEST(PickleReaderTest, ReadsTorchsTypeTaggedLayout) {
  std::string b = "\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\nq";
  b.push_back('\x00');
  b += "}(" + str("version", 1) + str("2.4", 2) + str("entries", 3);
  b += "h";
  b.push_back('\x00');
  b += "](";
  b += "h";
  b.push_back('\x00');
  b += "}(" + str("time_created_ns", 4) + "\x8a\x08" + std::string("\x00\x00\x00\x00\x00\x00\x00\x01", 8);
  b += "u" + str("Dict[str, Any]", 5) + "\x86R";
  b += "e" + str("List[Any]", 6) + "\x86R";
  b += "u" + str("Dict[str, Any]", 7) + "\x86R.";
  const nlohmann::json expected = {
      {"version", "2.4"},
      {"entries", {{{"time_created_ns", std::uint64_t{1} << 56}}}}};
  EXPECT_EQ(read_pickle(b, "torch"), expected);
}

//! Integers: LONG1 of 1 to 8 bytes, signed; wider ones are refused.
TEST(PickleReaderTest, LongIntegersUpTo64Bits) {
  EXPECT_EQ(read_pickle(std::string("\x80\x02\x8a\x01\xff.", 6), "n"), nlohmann::json(-1));
  EXPECT_EQ(read_pickle(std::string("\x80\x02\x8a\x00.", 5), "n"), nlohmann::json(0));
  EXPECT_EQ(read_pickle(std::string("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80.", 13), "n"),
            nlohmann::json(INT64_MIN));
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02\x8a\x09", 4), "n"), TraceError,
                   "n: offset 2: an integer of 9 bytes");
}

//! Hostile structures: a list that contains itself, values that the memo repeats into an
//! exponential tree, stack misuse; each is an error, never a crash or a hang.
TEST(PickleReaderTest, HostileStructuresAreErrors) {
  // ] q0 h0 a . : a list appended to itself.
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02]q\x00h\x00" "a.", 9), "loop"),
                   TraceError, "nested deeper than 64");
  // Doubling: L0 = [], then 40 times L(k+1) = [Lk, Lk] through the memo; then L40.
  std::string doubling = "\x80\x02]q";
  doubling.push_back('\x00');
  doubling += "0";
  for (int k = 0; k < 40; ++k) {
    doubling += "(h";
    doubling.push_back(static_cast<char>(k));
    doubling += "h";
    doubling.push_back(static_cast<char>(k));
    doubling += "lq";
    doubling.push_back(static_cast<char>(k + 1));
    doubling += "0";
  }
  doubling += "h";
  doubling.push_back(static_cast<char>(40));
  doubling += ".";
  EXPECT_THROW_MSG((void)read_pickle(doubling, "bomb"), TraceError, "bomb: the memo repeats");
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02" "a.", 4), "s"), TraceError,
                   "s: offset 2: APPEND with no value on the stack");
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02NN.", 5), "s"), TraceError,
                   "s: offset 4: STOP with 2 values on the stack");
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02h\x05.", 5), "s"), TraceError,
                   "s: offset 2: memo GET of index 5, never PUT");
  EXPECT_THROW_MSG((void)read_pickle(std::string("\x80\x02X\x02\x00\x00\x00\xff\xfe.", 10), "u"),
                   TraceError, "u: offset 2: a string that is not valid UTF-8");
}

}  // namespace
}  // namespace ranklab
