#include "cli/rank_result_wire.hpp"

#include "cli/wire.hpp"

namespace ranklab::cli {
using wire::Reader;
using wire::Writer;

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
  Reader in(bytes, "a rank's results");
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
