#include "model/data_parallel.hpp"

#include <fmt/format.h>

#include <string_view>

#include "model/span_of.hpp"

namespace ranklab {

namespace {

// all_reduce(sum) then ÷ size, on one parameter's gradient (a matrix or a vector), recorded
// at `where` (average_gradients' caller).
template <typename Dense>
void average_one(Communicator& dp, Dense& grad, std::size_t layer, std::string_view name,
                 const ModelDevice<typename Dense::Scalar>& device, std::string_view suffix,
                 Communicator::Where where) {
  using Scalar = typename Dense::Scalar;
  const auto scope = dp.annotate(fmt::format("DP all_reduce of the {} gradient of local layer {}{}", name, layer, suffix));
  dp.all_reduce(device_buffer(grad, device.memory()), {.op = ReduceOp::sum}, where);
  device.divide({grad.data(), static_cast<std::size_t>(grad.size())},
                static_cast<Scalar>(dp.size()));
}

}  // namespace

template <typename Scalar>
void average_gradients(Communicator& dp, std::vector<LayerGrads<Scalar>>& grads,
                       const ModelDevice<Scalar>& device, std::string_view label_suffix,
                       Communicator::Where where) {
  if (dp.size() == 1) return;
  for (std::size_t l = 0; l < grads.size(); ++l) {
    LayerGrads<Scalar>& layer = grads[l];
    average_one(dp, layer.w1, l, "w1", device, label_suffix, where);
    average_one(dp, layer.b1, l, "b1", device, label_suffix, where);
    average_one(dp, layer.w2, l, "w2", device, label_suffix, where);
    average_one(dp, layer.b2, l, "b2", device, label_suffix, where);
  }
}

template void average_gradients<float>(Communicator&, std::vector<LayerGrads<float>>&,
                                       const ModelDevice<float>&, std::string_view,
                                       Communicator::Where);
template void average_gradients<double>(Communicator&, std::vector<LayerGrads<double>>&,
                                        const ModelDevice<double>&, std::string_view,
                                        Communicator::Where);

}  // namespace ranklab
