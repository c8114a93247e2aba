// The root of ranklab's exception hierarchy. It lives in the leaf module so that every
// module, trace tools included, throws the same types; comm/errors.hpp adds the
// run-time errors (deadlock, peer failure, mismatch).
#pragma once

#include <stdexcept>
#include <string>

namespace ranklab {

/// Any error raised by ranklab.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad arguments or API misuse (CLI exit code 1).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A trace (or other input file) that cannot be read: the message is `file:line: reason`.
class TraceError : public Error {
 public:
  using Error::Error;
};

}  // namespace ranklab
