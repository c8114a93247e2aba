// What the reader's error tests share: the error a text or a file gives, and a text edited.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/traces/sample_trace.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::reader_errors {

/// `text` with its only occurrence of `from` replaced by `to`.
inline std::string with(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// The TraceError message of reading `text` as "t.jsonl" (empty if it reads fine).
inline std::string error_of(const std::string& text) {
  try {
    trace_samples::from_text(text, "t.jsonl");
  } catch (const TraceError& error) {
    return error.what();
  }
  return "";
}

/// The TraceError message of reading the file at `path` (empty if it reads fine).
inline std::string file_error_of(const std::filesystem::path& path) {
  try {
    read_trace_file(path);
  } catch (const TraceError& error) {
    return error.what();
  }
  return "";
}

}  // namespace ranklab::reader_errors
