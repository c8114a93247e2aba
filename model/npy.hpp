// NumPy .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html),
// the exchange format with the PyTorch reference (tests/reference). Reads format
// 1.0 and 2.0, writes 1.0 as np.save does; little-endian, C order only; element types
// '<f4', '<f8', '<i4', '<i8' and '|u1'. Every problem with a file is a TraceError whose
// message starts with the path: "PATH: expected shape [64,32], found [32,64]".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model/tensor.hpp"
#include "traces/types.hpp"

namespace ranklab {

/// The contents of a .npy file: element type, shape, and the raw little-endian C-order data.
struct NpyArray {
  DataType dtype = DataType::f64;
  std::vector<std::int64_t> shape;  ///< empty for a 0-d array (one element)
  std::vector<std::byte> data;

  /// Number of elements: the product of shape (1 for a 0-d array).
  std::int64_t element_count() const;
};

/// The .npy descr string of an element type ("<f4", "<f8", "<i4", "<i8", "|u1").
std::string npy_descr(DataType dtype);

/// Shapes as they appear in messages: "[64,32]".
std::string format_shape(std::span<const std::int64_t> shape);

/// Reads a whole .npy file. Throws TraceError "PATH: reason" for a missing or unreadable
/// file, a bad magic string or version, a malformed header, an unsupported dtype,
/// fortran_order data, or a data length that does not match the shape.
NpyArray read_npy(const std::filesystem::path& path);

/// Reads a file that must hold type T (float, double, std::int32_t or std::int64_t) in
/// exactly `expected_shape`; throws TraceError as read_npy does, or with
/// "expected dtype <f4, found <f8" / "expected shape [64,32], found [32,64]".
template <typename T>
std::vector<T> read_npy_values(const std::filesystem::path& path,
                               std::span<const std::int64_t> expected_shape);

/// Reads an array of `expected_shape` (at least one axis) as a [rows, cols] matrix where
/// cols is the last axis and rows the product of the others: [B,S,H] -> [B*S, H].
template <typename Scalar>
Matrix<Scalar> read_npy_matrix(const std::filesystem::path& path,
                               std::span<const std::int64_t> expected_shape);

/// Reads a 1-D array of `expected_size` elements.
template <typename Scalar>
Vector<Scalar> read_npy_vector(const std::filesystem::path& path, std::int64_t expected_size);

/// Writes `values` (C order) as a format 1.0 .npy file of the given shape. Throws
/// UsageError if the shape does not hold values.size() elements, TraceError "PATH: cannot
/// write the array (reason)" if the file cannot be written (write_output_file).
template <typename T>
void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape,
               std::span<const T> values);

/// Writes a matrix with its own shape [rows, cols], or with `shape` when given (which must
/// hold as many elements, e.g. [B,S,H] for a [B*S, H] activation).
template <typename Scalar>
void write_npy_matrix(const std::filesystem::path& path, const Matrix<Scalar>& matrix,
                      std::span<const std::int64_t> shape = {});

/// Writes a vector as a 1-D array.
template <typename Scalar>
void write_npy_vector(const std::filesystem::path& path, const Vector<Scalar>& vector);

}  // namespace ranklab
