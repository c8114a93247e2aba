// libFuzzer target: the SimGrid TI importer (traces/simgrid_ti.hpp), and what runs on what
// it imports.
//
// The contract under test (issue 5 §7): any input either imports as a trace or throws
// TraceError with "NAME:LINE: reason" (or "NAME: reason" for a file with no actions);
// anything else escaping, a crash or a sanitizer report is a bug. An imported trace must
// then survive the JSONL round trip, stats, and timing under a cost model.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "traces/cost_model.hpp"
#include "traces/error.hpp"
#include "traces/fuzz/trace_mutator.hpp"
#include "traces/jsonl.hpp"
#include "traces/simgrid_ti.hpp"
#include "traces/stats.hpp"
#include "traces/virtual_time.hpp"

namespace {

constexpr std::string_view kName = "fuzz.txt";

[[noreturn]] void bug(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "ti_importer_fuzzer: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

void exercise(const ranklab::Trace& trace) {
  std::ostringstream written;
  ranklab::write_trace(written, trace);
  std::istringstream again(written.str());
  if (ranklab::read_trace(again, "imported") != trace) bug("JSONL round trip", written.str());
  (void)ranklab::format_stats(ranklab::compute_stats(trace), kName);
  const ranklab::CostModel model = ranklab::CostModel::alpha_beta(1e-6, 1e9, 1e9);
  const ranklab::VirtualTimes times = ranklab::simulate(trace, model);
  if (times.ranks.size() != trace.ranks.size()) bug("simulate lost ranks", written.str());
  (void)ranklab::format_virtual_times(times, model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ranklab::Trace trace;
  try {
    trace = ranklab::parse_simgrid_ti(text, kName);
  } catch (const ranklab::TraceError& error) {
    const std::string_view message = error.what();
    if (!message.starts_with(std::string(kName) + ":")) bug("message without NAME:", message);
    return 0;
  }
  exercise(trace);
  return 0;
}

// Structure-aware mutations (libfuzzer_hooks.cpp calls this).
std::string ranklab::fuzz::mutate_input(std::string_view text, std::uint32_t seed,
                                        const ByteMutator& bytes) {
  return mutate_ti(text, seed, bytes);
}
