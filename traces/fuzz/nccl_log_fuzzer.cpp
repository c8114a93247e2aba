// libFuzzer target: the NCCL debug log reader and importer (traces/nccl_log.hpp), and what
// runs on what it imports.
//
// The contract under test (issue 29 §3): any input either imports into a trace or throws
// TraceError whose message starts with the log's name ("NAME:LINE: reason", or "NAME: no NCCL
// 'Init COMPLETE' line"); anything else escaping, a crash, a hang or a sanitizer report is a
// bug. An imported trace must then survive the JSONL round trip and stats.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "traces/error.hpp"
#include "traces/fuzz/trace_mutator.hpp"
#include "traces/jsonl.hpp"
#include "traces/nccl_log.hpp"
#include "traces/stats.hpp"

namespace {

constexpr std::string_view kName = "nccl.host.1";

[[noreturn]] void bug(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "nccl_log_fuzzer: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ranklab::Trace trace;
  try {
    trace = ranklab::import_nccl_logs({{std::string(kName), text}});
  } catch (const ranklab::TraceError& error) {
    const std::string_view message = error.what();
    if (!message.starts_with(std::string(kName) + ":")) bug("message without NAME:", message);
    return 0;
  }
  std::ostringstream written;
  ranklab::write_trace(written, trace);
  std::istringstream again(written.str());
  if (ranklab::read_trace(again, "imported") != trace) bug("JSONL round trip", written.str());
  (void)ranklab::format_stats(ranklab::compute_stats(trace), kName);
  return 0;
}

// Structure-aware mutations (libfuzzer_hooks.cpp calls this): a log is lines of words, as a
// TI trace is, so the TI mutator's word and line mutations (with nccl.dict's words) serve.
std::string ranklab::fuzz::mutate_input(std::string_view text, std::uint32_t seed,
                                        const ByteMutator& bytes) {
  return mutate_ti(text, seed, bytes);
}
