#include "model/data_parallel.hpp"

#include <fmt/format.h>

#include <string_view>

#include "model/span_of.hpp"

namespace ranklab {

namespace {

// all_reduce(sum) then ÷ size, on one parameter's gradient (a matrix or a vector).
template <typename Dense>
void average_one(Communicator& dp, Dense& grad, std::size_t layer, std::string_view name) {
  using Scalar = typename Dense::Scalar;
  const auto scope = dp.annotate(fmt::format("DP all_reduce of the {} gradient of local layer {}", name, layer));
  dp.all_reduce(span_of(grad), {.op = ReduceOp::sum});
  grad /= static_cast<Scalar>(dp.size());
}

}  // namespace

template <typename Scalar>
void average_gradients(Communicator& dp, std::vector<LayerGrads<Scalar>>& grads) {
  if (dp.size() == 1) return;
  for (std::size_t l = 0; l < grads.size(); ++l) {
    LayerGrads<Scalar>& layer = grads[l];
    average_one(dp, layer.w1, l, "w1");
    average_one(dp, layer.b1, l, "b1");
    average_one(dp, layer.w2, l, "w2");
    average_one(dp, layer.b2, l, "b2");
  }
}

template void average_gradients<float>(Communicator&, std::vector<LayerGrads<float>>&);
template void average_gradients<double>(Communicator&, std::vector<LayerGrads<double>>&);

}  // namespace ranklab
