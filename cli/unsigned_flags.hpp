// Unsigned flags refuse negative numbers and values past 2^64 - 1. CLI11 2.1 reads an unsigned option with strtoull,
// which takes "-1" as 2^64 - 1: `--count -1` then ran with 18446744073709551615 elements.
#pragma once

#include <CLI/CLI.hpp>

namespace ranklab::cli {

/// Gives every unsigned option of `app` and of its subcommands (those added so far) a
/// validator that refuses a leading minus sign and a value past 2^64 - 1 (which strtoull
/// saturates), so a bad count is one usage error (exit 1)
/// naming the flag. Call it once, after every subcommand has added its options.
void refuse_negative_unsigned(CLI::App& app);

}  // namespace ranklab::cli
