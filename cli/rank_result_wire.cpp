#include "cli/rank_result_wire.hpp"

#include <cstring>

#include <fmt/format.h>

#include "traces/error.hpp"

namespace ranklab::cli {
namespace {

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
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
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
    if (rows < 0 || cols < 0) throw Error("a rank's results: a negative matrix size");
    m.resize(rows, cols);
    const std::size_t n = static_cast<std::size_t>(rows * cols) * sizeof(typename Dense::Scalar);
    if (n > 0) std::memcpy(m.data(), take(n), n);
  }
  void expect_end() const {
    if (at_ != bytes_.size()) throw Error("a rank's results: bytes left over");
  }

 private:
  const char* take(std::size_t n) {
    if (bytes_.size() - at_ < n) throw Error("a rank's results: truncated");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

template <typename Scalar>
std::string encode_rank_result(const RankResult<Scalar>& r) {
  Writer w;
  w.value<std::int32_t>(r.rank);
  w.value(r.coords);
  w.value<std::uint64_t>(r.layers.size());
  for (const std::int64_t layer : r.layers) w.value(layer);
  w.dense(r.output);
  w.value<std::uint8_t>(r.output_is_sequence_shard ? 1 : 0);
  w.value<std::uint8_t>(r.loss ? 1 : 0);
  w.value<Scalar>(r.loss.value_or(Scalar(0)));
  w.value<std::uint64_t>(r.grads.size());
  for (const LayerGrads<Scalar>& g : r.grads) {
    w.dense(g.w1);
    w.dense(g.b1);
    w.dense(g.w2);
    w.dense(g.b2);
  }
  return w.take();
}

template <typename Scalar>
RankResult<Scalar> decode_rank_result(const std::string& bytes) {
  Reader in(bytes);
  RankResult<Scalar> r;
  r.rank = in.value<std::int32_t>();
  r.coords = in.value<Coords>();
  r.layers.resize(in.value<std::uint64_t>());
  for (std::int64_t& layer : r.layers) layer = in.value<std::int64_t>();
  in.dense(r.output);
  r.output_is_sequence_shard = in.value<std::uint8_t>() != 0;
  const bool has_loss = in.value<std::uint8_t>() != 0;
  const auto loss = in.value<Scalar>();
  if (has_loss) r.loss = loss;
  r.grads.resize(in.value<std::uint64_t>());
  for (LayerGrads<Scalar>& g : r.grads) {
    in.dense(g.w1);
    in.dense(g.b1);
    in.dense(g.w2);
    in.dense(g.b2);
  }
  in.expect_end();
  return r;
}

template std::string encode_rank_result(const RankResult<float>&);
template std::string encode_rank_result(const RankResult<double>&);
template RankResult<float> decode_rank_result(const std::string&);
template RankResult<double> decode_rank_result(const std::string&);

}  // namespace ranklab::cli
