// The MPI backend's own error: a collective mismatch that every member of the call found at
// once (--check-collectives), so one of them can report it for all.
#pragma once

#include <string>
#include <utility>

#include "comm/errors.hpp"

namespace ranklab {

class CollectiveMismatchError : public MismatchError {
 public:
  /// `table`: every member's call (what()); `sentence`: the culprit line's text; `reporter`:
  /// whether this member (the group's rank 0) is the one to print it.
  CollectiveMismatchError(std::string table, std::string sentence, bool reporter)
      : MismatchError(std::move(table)), sentence_(std::move(sentence)), reporter_(reporter) {}

  const std::string& sentence() const { return sentence_; }
  bool reporter() const { return reporter_; }

 private:
  std::string sentence_;
  bool reporter_;
};

}  // namespace ranklab
