#include "model/data_parallel.hpp"

#include <span>

namespace ranklab {

namespace {

// all_reduce(sum) then ÷ size, on one parameter's gradient (a matrix or a vector).
template <typename Dense>
void average_one(Communicator& dp, Dense& grad) {
  using Scalar = typename Dense::Scalar;
  dp.all_reduce(std::span<Scalar>(grad.data(), static_cast<std::size_t>(grad.size())),
                {.op = ReduceOp::sum});
  grad /= static_cast<Scalar>(dp.size());
}

}  // namespace

template <typename Scalar>
void average_gradients(Communicator& dp, std::vector<LayerGrads<Scalar>>& grads) {
  if (dp.size() == 1) return;
  for (LayerGrads<Scalar>& layer : grads) {
    average_one(dp, layer.w1);
    average_one(dp, layer.b1);
    average_one(dp, layer.w2);
    average_one(dp, layer.b2);
  }
}

template void average_gradients<float>(Communicator&, std::vector<LayerGrads<float>>&);
template void average_gradients<double>(Communicator&, std::vector<LayerGrads<double>>&);

}  // namespace ranklab
