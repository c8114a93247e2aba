// The reader's direct decoding of the lines ranklab writes (EventParser::parse_written)
// against its general decoding (traces/fuzz/written_line_check.hpp): every line it takes
// decodes to the same event, every line it leaves is left whole; and it does take what
// ranklab writes, or the reader's speed (issue 30) would go without a failing test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "traces/detail/event_parser.hpp"
#include "traces/fuzz/written_line_check.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

struct ExampleFile {
  std::filesystem::path path;
  TraceHeader header;
  std::vector<std::string> events;  ///< event lines
};

std::vector<ExampleFile> example_files() {
  std::vector<ExampleFile> files;
  const auto dir = std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces/examples";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    ExampleFile file{.path = entry.path()};
    std::ifstream in(entry.path());
    std::string line;
    std::getline(in, line);
    std::istringstream header_only(line);
    file.header = read_trace(header_only, "header").header;
    while (std::getline(in, line)) {
      if (!line.empty()) file.events.push_back(line);
    }
    files.push_back(std::move(file));
  }
  return files;
}

bool takes(const detail::EventParser& parser, const std::string& line) {
  TraceEvent event;
  try {
    return parser.parse_written(line, event);
  } catch (const detail::LineError&) {
    return false;
  }
}

TEST(WrittenLineTest, TakesEveryExampleLineWithoutComputeAndAgrees) {
  std::size_t taken = 0;
  for (const ExampleFile& file : example_files()) {
    const detail::EventParser direct(file.header);
    const detail::EventParser general(file.header);
    for (const std::string& line : file.events) {
      EXPECT_EQ(fuzz::written_line_disagreement(direct, general, line), "") << file.path;
      const bool has_compute = line.find(R"("compute)") != std::string::npos;
      EXPECT_EQ(takes(direct, line), !has_compute) << file.path << ": " << line;
      taken += has_compute ? 0 : 1;
    }
  }
  EXPECT_GT(taken, 100U);
}

/// One byte deleted, or one of the bytes that most change JSON inserted, at every position
/// of each of the first lines of every example: each variant either left to parse() or
/// decoded as parse() decodes it.
TEST(WrittenLineTest, AgreesOnEveryOneByteVariantOfExampleLines) {
  const std::string inserted = "0-.e\"\\ ,:}]{[1t\x7f\x01";
  std::size_t variants = 0;
  std::size_t taken = 0;
  for (const ExampleFile& file : example_files()) {
    const detail::EventParser direct(file.header);
    const detail::EventParser general(file.header);
    for (std::size_t n = 0; n < file.events.size() && n < 6; ++n) {
      const std::string& line = file.events[n];
      for (std::size_t at = 0; at <= line.size(); ++at) {
        std::vector<std::string> mutants;
        if (at < line.size()) mutants.push_back(line.substr(0, at) + line.substr(at + 1));
        for (const char c : inserted) mutants.push_back(line.substr(0, at) + c + line.substr(at));
        for (const std::string& mutant : mutants) {
          ++variants;
          taken += takes(direct, mutant) ? 1 : 0;
          ASSERT_EQ(fuzz::written_line_disagreement(direct, general, mutant), "")
              << file.path << ":\n" << mutant;
        }
      }
    }
  }
  EXPECT_GT(variants, 10000U);
  EXPECT_GT(taken, 100U);  // digits inserted into numbers, and the like: still the writer's form
}

TEST(WrittenLineTest, LeavesWhatTheWriterNeverWritesToTheGeneralParse) {
  TraceHeader header;
  header.world_size = 4;
  header.groups = {{"world", {0, 1, 2, 3}}, {"pair", {0, 1}}};
  const detail::EventParser direct(header);
  const std::string base =
      R"({"rank":0,"rank_seq":1,"op":"send","group":"pair","peer":1,"tag":3,"dtype":"f32",)"
      R"("count":2,"bytes":8,"msg":"0:1","lamport":1})";
  EXPECT_TRUE(takes(direct, base));
  // Each: `base` with its first `from` replaced by `to`.
  const std::vector<std::pair<std::string, std::string>> edits = {
      {R"({"rank":0,"rank_seq":1,)", R"({"rank_seq":1,"rank":0,)"},  // keys in another order
      {R"("peer":1)", R"("peer":2)"},                              // not in the group
      {R"("bytes":8)", R"("bytes":4)"},                            // not count * size
      {R"("lamport":1})", R"("lamport":1,"x":1})"},                // a key it does not know
      {R"("lamport":1})", R"("lamport":1,"compute":{"s":1}})"},    // compute: the tape's
      {R"("lamport":1})", R"("lamport":1,"in_flight":[1]})"},      // not before rank_seq 1
      {R"("lamport":1)", R"("lamport":01)"},                       // not JSON
      {R"("lamport":1)", R"("lamport":1.0)"},                      // a double
      {R"("lamport":1)", R"("lamport":12345678901234567890)"},     // 20 digits
      {R"("lamport":1})", R"("lamport":1,"site":{"file":"a\"b"}})"},         // an escape
      {R"("lamport":1})", R"("lamport":1,"site":{"line":1,"file":"a"}})"},    // unsorted
      {R"("lamport":1})", R"("lamport":1} )"},                     // a blank after it
      {R"("op":"send")", R"("op":"all_reduce")"},                  // a collective with a peer
      {R"({"rank":0,)", R"({"rank":2,)"},                          // not in the group
  };
  for (const auto& [from, to] : edits) {
    std::string line = base;
    ASSERT_NE(line.find(from), std::string::npos) << from;
    line.replace(line.find(from), from.size(), to);
    EXPECT_FALSE(takes(direct, line)) << line;
  }
}

}  // namespace
}  // namespace ranklab
