#include "model/data_parallel.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "model/span_of.hpp"

namespace ranklab {

namespace {

// all_reduce(sum) then ÷ size, on one parameter's gradient (a matrix or a vector), labelled,
// recorded at `where` (average_gradients' caller).
template <typename Dense>
void average_one(Communicator& dp, Dense& grad, std::string label,
                 const ModelDevice<typename Dense::Scalar>& device, Communicator::Where where) {
  const auto scope = dp.annotate(std::move(label));
  dp.all_reduce(device_buffer(grad, device.memory()), {.op = ReduceOp::sum}, where);
  device.divide({grad.data(), static_cast<std::size_t>(grad.size())},
                static_cast<typename Dense::Scalar>(dp.size()));
}

// The label of the all_reduce of `name`'s gradient (parameter `param` of local layer `layer`),
// from `labels` where the caller keeps them.
std::string label_of(std::size_t layer, int param, std::string_view name,
                     std::string_view suffix, LabelCache* labels) {
  const auto make = [&] {
    return fmt::format("DP all_reduce of the {} gradient of local layer {}{}", name, layer, suffix);
  };
  if (labels == nullptr) return make();
  return labels->get({static_cast<int>(layer), param, 0, 0}, make);
}

}  // namespace

template <typename Scalar>
void average_gradients(Communicator& dp, std::vector<LayerGrads<Scalar>>& grads,
                       const ModelDevice<Scalar>& device, std::string_view label_suffix,
                       LabelCache* labels, Communicator::Where where) {
  if (dp.size() == 1) return;
  const auto label = [&](std::size_t layer, int param, std::string_view name) {
    return label_of(layer, param, name, label_suffix, labels);
  };
  for (std::size_t l = 0; l < grads.size(); ++l) {
    LayerGrads<Scalar>& layer = grads[l];
    average_one(dp, layer.w1, label(l, 0, "w1"), device, where);
    average_one(dp, layer.b1, label(l, 1, "b1"), device, where);
    average_one(dp, layer.w2, label(l, 2, "w2"), device, where);
    average_one(dp, layer.b2, label(l, 3, "b2"), device, where);
  }
}

template void average_gradients<float>(Communicator&, std::vector<LayerGrads<float>>&,
                                       const ModelDevice<float>&, std::string_view, LabelCache*,
                                       Communicator::Where);
template void average_gradients<double>(Communicator&, std::vector<LayerGrads<double>>&,
                                        const ModelDevice<double>&, std::string_view,
                                        LabelCache*, Communicator::Where);

}  // namespace ranklab
