// The fuzzers' structure-aware mutators (traces/fuzz/trace_mutator.hpp), run here without
// libFuzzer: a short fuzz of every example in the ordinary suite (so under ASan and UBSan
// too), and a check that the mutants reach past the JSON parser into the reader's validation,
// which is what they are for.
#include "traces/fuzz/trace_mutator.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "traces/error.hpp"
#include "traces/jsonl.hpp"
#include "traces/simgrid_ti.hpp"
#include "traces/stats.hpp"

namespace ranklab {
namespace {

const std::filesystem::path kExamples =
    std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A stand-in for LLVMFuzzerMutate: one byte flipped where the size says.
std::size_t flip_byte(std::uint8_t* data, std::size_t size, std::size_t max_size) {
  if (size == 0) {
    if (max_size > 0) data[0] = '{';
    return max_size > 0 ? 1 : 0;
  }
  data[(size * 2654435761u) % size] ^= 0x5a;
  return size;
}

/// How mutants of one format fared.
struct Outcomes {
  int valid = 0;
  int invalid_json = 0;  ///< stopped at the parser
  int rejected = 0;      ///< parsed, then refused by the reader's checks
};

/// `rounds` chains of 3 mutations from `seed_text` (libFuzzer, too, mutates what it kept, a
/// few steps from a seed); every mutant must read or be a TraceError naming `name`, and one
/// that reads must survive stats and the writer.
template <typename Mutate, typename Read>
Outcomes fuzz(const std::string& seed_text, int rounds, const std::string& name, Mutate mutate,
              Read read) {
  Outcomes outcomes;
  for (int round = 0; round < rounds; ++round) {
    std::string text = seed_text;
    for (int step = 0; step < 3; ++step) {
      text = mutate(text, static_cast<std::uint32_t>(round * 3 + step), flip_byte);
      try {
        const Trace trace = read(text);
        (void)format_stats(compute_stats(trace), name);
        std::ostringstream written;
        write_trace(written, trace);
        ++outcomes.valid;
      } catch (const TraceError& error) {
        const std::string message = error.what();
        EXPECT_EQ(message.rfind(name + ":", 0), 0u) << message;
        ++(message.find("invalid JSON") != std::string::npos ? outcomes.invalid_json
                                                             : outcomes.rejected);
      }
    }
  }
  return outcomes;
}

//! Same input and seed, same mutant: a fuzzer's finding can be reproduced.
TEST(TraceMutatorTest, IsDeterministic) {
  const std::string text = read_text(kExamples / "allreduce_w8.jsonl");
  for (std::uint32_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(fuzz::mutate_jsonl(text, seed, flip_byte), fuzz::mutate_jsonl(text, seed, flip_byte));
  }
  std::set<std::string> distinct;
  for (std::uint32_t seed = 0; seed < 50; ++seed)
    distinct.insert(fuzz::mutate_jsonl(text, seed, flip_byte));
  EXPECT_GT(distinct.size(), 40u);
}

//! Mutants of every JSONL example read or fail with NAME:LINE; most get past the JSON parser
//! (byte flips alone mostly do not), and some still read, so the tools behind run too.
TEST(TraceMutatorTest, JsonlMutantsReachTheReadersChecks) {
  Outcomes total;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".jsonl") continue;
    const Outcomes o = fuzz(read_text(entry.path()), 30, "m.jsonl", fuzz::mutate_jsonl,
                            [](const std::string& text) {
                              std::istringstream in(text);
                              return read_trace(in, "m.jsonl");
                            });
    total.valid += o.valid;
    total.invalid_json += o.invalid_json;
    total.rejected += o.rejected;
  }
  EXPECT_GT(total.rejected, 2 * total.invalid_json)
      << total.valid << " valid, " << total.rejected << " rejected, " << total.invalid_json
      << " invalid JSON";
  EXPECT_GT(total.valid, 20) << total.rejected << " rejected";
}

//! The same for SimGrid TI recordings: mutants import or fail with NAME:LINE.
TEST(TraceMutatorTest, TiMutantsReachTheImportersChecks) {
  Outcomes total;
  for (const char* name : {"ring8", "mix4", "deadlock3"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(kExamples / "ti" / name / "trace.txt_files")) {
      const Outcomes o =
          fuzz(read_text(entry.path()), 10, "m.txt", fuzz::mutate_ti,
               [](const std::string& text) { return parse_simgrid_ti(text, "m.txt"); });
      total.valid += o.valid;
      total.rejected += o.rejected;
    }
  }
  EXPECT_GT(total.valid, 20) << total.rejected << " rejected";
  EXPECT_GT(total.rejected, 20) << total.valid << " valid";
}

//! A crossover keeps whole lines: the header of one trace with events of another.
TEST(TraceMutatorTest, CrossoverKeepsWholeLines) {
  const std::string a = "h1\na1\na2\n";
  const std::string b = "h2\nb1\nb2\n";
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    const std::string crossed = fuzz::cross_lines(a, b, seed);
    EXPECT_TRUE(crossed.empty() || crossed.back() == '\n') << crossed;
    for (const std::string& line : {std::string("h1"), std::string("a1"), std::string("b2")}) {
      const std::size_t at = crossed.find(line);
      if (at != std::string::npos) {
        EXPECT_EQ(crossed[at + line.size()], '\n') << crossed;
      }
    }
  }
}

}  // namespace
}  // namespace ranklab
