// The flags a process was started with, as given, so that the processes of one MPI job can
// check that they agree before they run: processes that disagree (one records a trace, the
// other not) would wait for each other forever at the first step that only some take.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace ranklab::cli {

/// Each option of `command` that the command line gave, with its values as given ("" for a
/// flag without one), in the command's order of options. --log-level and --help are left
/// out: a process may log more than another without changing what the job does.
using FlagsGiven = std::vector<std::pair<std::string, std::string>>;
FlagsGiven flags_given(const CLI::App& command);

/// One string for each process's flags, to gather at rank 0, and back.
std::string encode_flags(const FlagsGiven& flags);
FlagsGiven decode_flags(const std::string& text);

/// Empty if every process of the job (`by_rank`, indexed by rank) was given the same flags;
/// else one sentence naming the first flag they disagree on and which ranks have which
/// value: "the MPI processes were given different flags: --trace is t.jsonl on rank 0 and
/// not given on rank 1 (start every process with the same flags)".
std::string flags_disagreement(const std::vector<FlagsGiven>& by_rank);

}  // namespace ranklab::cli
