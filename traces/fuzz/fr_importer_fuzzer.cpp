// libFuzzer target: the Flight Recorder pickle-subset reader (traces/pickle_reader.hpp) and
// the importer on top of it (traces/flight_recorder.hpp), and what runs on what it imports.
//
// The contract under test (issue 17 §1): any input either reads (as a pickle: a JSON value
// that serializes; as a dump: a trace) or throws TraceError whose message starts with the
// file's name ("NAME: offset N: reason", "NAME: entry N: reason"); anything else escaping,
// a crash, a hang or a sanitizer report is a bug. An imported trace must then survive the
// JSONL round trip and stats, and its export as dumps (issue 29 §1, both forms) must import
// again with as many operations per rank.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "traces/error.hpp"
#include "traces/export_flight_recorder.hpp"
#include "traces/flight_recorder.hpp"
#include "traces/fuzz/trace_mutator.hpp"
#include "traces/jsonl.hpp"
#include "traces/pickle_reader.hpp"
#include "traces/stats.hpp"

namespace {

constexpr std::string_view kName = "nccl_trace_rank_0";

[[noreturn]] void bug(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fr_importer_fuzzer: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

void expect_named(const ranklab::TraceError& error) {
  const std::string_view message = error.what();
  if (!message.starts_with(std::string(kName) + ":")) bug("message without NAME:", message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json value = ranklab::read_pickle(bytes, kName);
    (void)value.dump();  // strings were checked as UTF-8: this must not throw
  } catch (const ranklab::TraceError& error) {
    expect_named(error);
  }
  ranklab::Trace trace;
  try {
    trace = ranklab::import_flight_recorder({{std::string(kName), bytes}});
  } catch (const ranklab::TraceError& error) {
    expect_named(error);
    return 0;
  }
  std::ostringstream written;
  ranklab::write_trace(written, trace);
  std::istringstream again(written.str());
  if (ranklab::read_trace(again, "imported") != trace) bug("JSONL round trip", written.str());
  (void)ranklab::format_stats(ranklab::compute_stats(trace), kName);
  for (const auto form : {ranklab::FrDumpForm::pickle, ranklab::FrDumpForm::json}) {
    std::vector<ranklab::FrDumpFile> dumps;
    for (int rank : ranklab::flight_recorder_ranks(trace)) {
      dumps.push_back({ranklab::flight_recorder_file_name(rank, form),
                       ranklab::flight_recorder_file(trace, rank, form)});
    }
    ranklab::Trace back;
    try {
      back = ranklab::import_flight_recorder(dumps);
    } catch (const ranklab::TraceError& error) {
      bug("an export that does not import again", error.what());
    }
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      if (r >= back.ranks.size() || back.ranks[r].size() != trace.ranks[r].size()) {
        bug("an export that imports to other operations", written.str());
      }
    }
  }
  return 0;
}

// Structure-aware mutations (libfuzzer_hooks.cpp calls this): a JSON dump mutates as JSON
// values and fields; a pickle's structure is its opcodes, which libFuzzer's byte mutations
// (with fr.dict's opcodes and field names) reach.
std::string ranklab::fuzz::mutate_input(std::string_view text, std::uint32_t seed,
                                        const ByteMutator& bytes) {
  if (!text.empty() && text.front() == '{') return mutate_jsonl(text, seed, bytes);
  std::string out(text);
  out.resize(text.size() * 2 + 64);
  out.resize(bytes(reinterpret_cast<std::uint8_t*>(out.data()), text.size(), out.size()));
  return out;
}
