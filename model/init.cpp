#include "model/init.hpp"

#include <cmath>

#include "model/random.hpp"

namespace ranklab {

template <typename Scalar>
std::vector<LayerParams<Scalar>> default_layers(const ModelShape& shape, std::uint64_t seed) {
  shape.validate();
  const Eigen::Index h = shape.hidden;
  const Eigen::Index i = shape.inter;
  const double w1_std = 1.0 / std::sqrt(static_cast<double>(h));
  const double w2_std = 1.0 / std::sqrt(static_cast<double>(i));
  std::vector<LayerParams<Scalar>> layers;
  layers.reserve(static_cast<std::size_t>(shape.layers));
  for (std::int64_t l = 0; l < shape.layers; ++l) {
    const auto layer = static_cast<std::uint64_t>(l);
    layers.push_back({random_normal_matrix<Scalar>(i, h, weight_seed(seed, layer, 0), w1_std),
                      random_normal_vector<Scalar>(i, weight_seed(seed, layer, 1), kBiasStddev),
                      random_normal_matrix<Scalar>(h, i, weight_seed(seed, layer, 2), w2_std),
                      random_normal_vector<Scalar>(h, weight_seed(seed, layer, 3), kBiasStddev)});
  }
  return layers;
}

template <typename Scalar>
Matrix<Scalar> default_inputs(const ModelShape& shape, std::uint64_t replica, std::uint64_t seed) {
  shape.validate();
  return random_normal_matrix<Scalar>(shape.rows(), shape.hidden, input_seed(seed, replica), 1.0);
}

template <typename Scalar>
Matrix<Scalar> default_targets(const ModelShape& shape, std::uint64_t replica, std::uint64_t seed) {
  shape.validate();
  return random_normal_matrix<Scalar>(shape.rows(), shape.hidden, target_seed(seed, replica),
                                      kTargetStddev);
}

template std::vector<LayerParams<float>> default_layers<float>(const ModelShape&, std::uint64_t);
template std::vector<LayerParams<double>> default_layers<double>(const ModelShape&, std::uint64_t);
template Matrix<float> default_inputs<float>(const ModelShape&, std::uint64_t, std::uint64_t);
template Matrix<double> default_inputs<double>(const ModelShape&, std::uint64_t, std::uint64_t);
template Matrix<float> default_targets<float>(const ModelShape&, std::uint64_t, std::uint64_t);
template Matrix<double> default_targets<double>(const ModelShape&, std::uint64_t, std::uint64_t);

}  // namespace ranklab
