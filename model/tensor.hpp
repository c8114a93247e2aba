// Eigen aliases for the model. Activations are [B*S, H] matrices: the batch and sequence
// axes are flattened into rows, so a C-order [B, S, H] NumPy array maps onto the same bytes.
// Row-major storage keeps that mapping (and a micro-batch, a block of whole rows, is one
// contiguous slice that Eigen::Ref can view without a copy).
#pragma once

#include <Eigen/Core>
#include <type_traits>

namespace ranklab {

/// Dense, dynamic, row-major matrix: weights [out, in] and activations [rows, features].
template <typename Scalar>
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Dense, dynamic column vector: biases and per-feature sums.
template <typename Scalar>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

// The views below name Scalar through std::type_identity_t, a non-deduced context: a
// function template taking one deduces Scalar from its other parameters (a LayerParams, a
// cache, an output Matrix) and then converts a plain Matrix argument to the view. Functions
// whose parameters are all views need the Scalar spelled out: mse_loss<float>(y, t).

/// Read-only view of a matrix or of a block of its rows (no copy for contiguous rows).
template <typename Scalar>
using ConstMatrixRef = Eigen::Ref<const Matrix<std::type_identity_t<Scalar>>>;

/// Read-only view of a vector.
template <typename Scalar>
using ConstVectorRef = Eigen::Ref<const Vector<std::type_identity_t<Scalar>>>;

/// Optional output matrix (nullptr: not wanted), e.g. the dx of a first layer.
template <typename Scalar>
using MatrixPtr = Matrix<std::type_identity_t<Scalar>>*;

}  // namespace ranklab
