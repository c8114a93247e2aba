// Values as bytes and back, for what MPI processes send rank 0 after a run (a rank's results,
// its checks): native byte order, since every process of a job runs the same binary.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "traces/error.hpp"

namespace ranklab::cli::wire {

class Writer {
 public:
  template <typename T>
  void value(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename Dense>
  void dense(const Dense& m) {
    value<std::int64_t>(m.rows());
    value<std::int64_t>(m.cols());
    bytes_.append(reinterpret_cast<const char*>(m.data()),
                  static_cast<std::size_t>(m.size()) * sizeof(typename Dense::Scalar));
  }
  /// Its size, then its bytes.
  void bytes(const std::string& b) {
    value<std::uint64_t>(b.size());
    bytes_ += b;
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Throws Error naming `what` if the bytes end early or are left over.
class Reader {
 public:
  Reader(const std::string& bytes, const char* what) : bytes_(bytes), what_(what) {}
  template <typename T>
  T value() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  template <typename Dense>
  void dense(Dense& m) {
    const auto rows = value<std::int64_t>();
    const auto cols = value<std::int64_t>();
    if (rows < 0 || cols < 0) throw Error(std::string(what_) + ": a negative matrix size");
    m.resize(rows, cols);
    const std::size_t n = static_cast<std::size_t>(rows * cols) * sizeof(typename Dense::Scalar);
    if (n > 0) std::memcpy(m.data(), take(n), n);
  }
  std::string bytes() {
    const auto n = value<std::uint64_t>();
    return std::string(take(n), n);
  }
  void expect_end() const {
    if (at_ != bytes_.size()) throw Error(std::string(what_) + ": bytes left over");
  }

 private:
  const char* take(std::size_t n) {
    if (bytes_.size() - at_ < n) throw Error(std::string(what_) + ": truncated");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace ranklab::cli::wire
