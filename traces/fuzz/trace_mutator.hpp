// Structure-aware mutations for the fuzzers (issue 16): byte flips rarely get a trace past the
// JSON parser and the first field check, so most of libFuzzer's time went into `invalid JSON`.
// These mutators read the input as what it is (JSONL: lines of JSON objects; SimGrid TI: lines
// of words), change one thing a trace writer could get wrong (a value set to a boundary, a
// field dropped or taken from another line, a line repeated, dropped or moved, a rank or
// action swapped), and write it back, so mutants reach the reader's validation and the tools
// behind it. What does not parse gets the byte mutation instead.
//
// The fuzzers call them from LLVMFuzzerCustomMutator with libFuzzer's LLVMFuzzerMutate as the
// byte mutation; tests/traces runs them without libFuzzer (trace_mutator_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ranklab::fuzz {

/// Mutates `size` bytes at `data` in place, up to `max_size`; returns the new size
/// (LLVMFuzzerMutate's contract).
using ByteMutator =
    std::function<std::size_t(std::uint8_t* data, std::size_t size, std::size_t max_size)>;

/// One structural mutation of a JSONL trace, chosen by `seed`: a value anywhere in a line
/// (nested ones too: a group's ranks, compute.flops) set to a boundary number, a name the
/// format knows or the same field's value from another line; a field dropped, or copied in
/// from another line; a line repeated, dropped, swapped, or byte-mutated. Same text and seed,
/// same result.
std::string mutate_jsonl(std::string_view text, std::uint32_t seed, const ByteMutator& bytes);

/// One structural mutation of a SimGrid TI trace: a word set to a boundary number, a nudged
/// number or another action's name; an argument dropped or added; a line repeated, dropped,
/// swapped, moved to another rank, or byte-mutated.
std::string mutate_ti(std::string_view text, std::uint32_t seed, const ByteMutator& bytes);

/// The first lines of `a` then the last lines of `b`, cut at `seed`'s choice: a header of one
/// trace with the events of another (LLVMFuzzerCustomCrossOver).
std::string cross_lines(std::string_view a, std::string_view b, std::uint32_t seed);

/// The mutation of the fuzzer being linked (mutate_jsonl or mutate_ti): each fuzzer defines
/// it, and libfuzzer_hooks.cpp hands it to libFuzzer as LLVMFuzzerCustomMutator.
std::string mutate_input(std::string_view text, std::uint32_t seed, const ByteMutator& bytes);

}  // namespace ranklab::fuzz
