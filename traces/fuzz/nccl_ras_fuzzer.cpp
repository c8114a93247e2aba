// libFuzzer target: the NCCL RAS snapshot readers (traces/nccl_ras.hpp, both forms) and the
// verdict on what they read.
//
// The contract under test (issue 29 §4): any input either reads into a snapshot or throws
// TraceError whose message starts with the snapshot's name ("NAME:LINE: reason", or "NAME: no
// 'Communicators...' table"); anything else escaping, a crash, a hang or a sanitizer report is
// a bug. A snapshot read must then be judged and reported, alone and against itself (two
// snapshots of one job), and read the same a second time.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "traces/error.hpp"
#include "traces/fuzz/trace_mutator.hpp"
#include "traces/nccl_ras.hpp"
#include "traces/nccl_ras_verdict.hpp"

namespace {

constexpr std::string_view kName = "ras.out";

[[noreturn]] void bug(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "nccl_ras_fuzzer: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ranklab::RasSnapshot snapshot;
  try {
    snapshot = ranklab::parse_nccl_ras(kName, text);
  } catch (const ranklab::TraceError& error) {
    const std::string_view message = error.what();
    if (!message.starts_with(std::string(kName) + ":")) bug("message without NAME:", message);
    return 0;
  }
  if (!(ranklab::parse_nccl_ras(kName, text) == snapshot)) bug("read twice, read differently", text);
  for (const auto& snapshots : {std::vector<ranklab::RasSnapshot>{snapshot},
                                std::vector<ranklab::RasSnapshot>{snapshot, snapshot}}) {
    const ranklab::RasVerdict verdict = ranklab::judge_ras(snapshots);
    (void)ranklab::format_ras_verdict(verdict, snapshots, std::string(kName));
    (void)ranklab::ras_verdict_to_json(verdict, snapshots).dump();
    if (snapshots.size() == 2) {
      for (const auto& comm : verdict.communicators) {
        if (comm.moved == true) bug("a snapshot moved against itself", text);
      }
    }
  }
  return 0;
}

// Structure-aware mutations (libfuzzer_hooks.cpp calls this): both forms are lines of words
// (the JSON form one field a line, as NCCL writes it), so the TI mutator's word and line
// mutations (with nccl_ras.dict's words) serve.
std::string ranklab::fuzz::mutate_input(std::string_view text, std::uint32_t seed,
                                        const ByteMutator& bytes) {
  return mutate_ti(text, seed, bytes);
}
