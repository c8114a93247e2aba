#include "model/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

#include "model/detail/fail.hpp"
#include "model/detail/npy_header.hpp"
#include "traces/error.hpp"
#include "traces/output_file.hpp"

namespace ranklab {

namespace {

using detail::fail;

static_assert(std::endian::native == std::endian::little,
              "model/npy.cpp copies little-endian .npy data as is; a big-endian host would "
              "need a byte swap here");

// np.save pads the header so that the data starts at a multiple of 64 bytes.
constexpr std::size_t kAlignment = 64;

struct DescrInfo {
  DataType type;
  std::string_view descr;
  std::size_t item_size;
};

constexpr DescrInfo kDescrs[] = {{DataType::f32, "<f4", 4},
                                 {DataType::f64, "<f8", 8},
                                 {DataType::i32, "<i4", 4},
                                 {DataType::i64, "<i8", 8},
                                 {DataType::u8, "|u1", 1}};

const DescrInfo* find_descr(std::string_view descr) {
  for (const auto& info : kDescrs) {
    if (info.descr == descr) return &info;
  }
  return nullptr;
}

const DescrInfo& info_of(DataType type) {
  for (const auto& info : kDescrs) {
    if (info.type == type) return info;
  }
  throw UsageError("npy: unknown DataType");
}

template <typename T>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, float>) return DataType::f32;
  if constexpr (std::is_same_v<T, double>) return DataType::f64;
  if constexpr (std::is_same_v<T, std::int32_t>) return DataType::i32;
  if constexpr (std::is_same_v<T, std::int64_t>) return DataType::i64;
}

std::vector<char> read_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail(path, "no such file");
  if (!std::filesystem::is_regular_file(path, error)) fail(path, "not a regular file");
  const auto size = std::filesystem::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (error || !in) fail(path, "cannot open for reading");
  std::vector<char> bytes(size);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) fail(path, "read error");
  return bytes;
}

std::int64_t element_count_of(std::span<const std::int64_t> shape) {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim != 0 && count > std::numeric_limits<std::int64_t>::max() / dim) return -1;
    count *= dim;
  }
  return count;
}

// The data block after the header, checked against fortran_order and the shape.
std::span<const char> checked_data(const std::filesystem::path& path,
                                   const detail::NpyHeader& header, const std::vector<char>& bytes,
                                   std::size_t item_size) {
  if (header.fortran_order) fail(path, "fortran_order arrays are not supported");
  const std::int64_t count = element_count_of(header.shape);
  const auto limit = static_cast<std::int64_t>(std::numeric_limits<std::size_t>::max() / 16);
  if (count < 0 || count > limit) {
    fail(path, fmt::format("shape {} is too large", format_shape(header.shape)));
  }
  const std::size_t expected = static_cast<std::size_t>(count) * item_size;
  const std::size_t found = bytes.size() - header.data_offset;
  if (found < expected) {
    fail(path,
         fmt::format("file is truncated (expected {} data bytes, found {})", expected, found));
  }
  if (found > expected) {
    fail(path, fmt::format("file has {} bytes after the data (expected {} data bytes, found {})",
                           found - expected, expected, found));
  }
  return {bytes.data() + header.data_offset, expected};
}

std::string python_tuple(std::span<const std::int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

void write_raw(const std::filesystem::path& path, DataType type,
               std::span<const std::int64_t> shape, const void* data, std::size_t count) {
  const DescrInfo& info = info_of(type);
  const std::int64_t expected = element_count_of(shape);
  if (expected < 0 || static_cast<std::size_t>(expected) != count) {  // the caller's mistake
    throw UsageError(fmt::format("{}: cannot write shape {} from {} values", path.string(),
                                 format_shape(shape), count));
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   info.descr, python_tuple(shape));
  // Pad with spaces and end with a newline so the data starts on a 64-byte boundary.
  const std::size_t preamble = detail::kNpyMagic.size() + 4;
  const std::size_t unpadded = preamble + header.size() + 1;
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  header.push_back('\n');
  if (header.size() > std::numeric_limits<std::uint16_t>::max()) {
    fail(path, "header too long for .npy format 1.0");
  }
  const char version_and_length[4] = {1, 0, static_cast<char>(header.size() & 0xff),
                                      static_cast<char>(header.size() >> 8)};
  write_output_file(path, "the array", [&](std::ostream& out) {
    out.write(detail::kNpyMagic.data(), static_cast<std::streamsize>(detail::kNpyMagic.size()));
    out.write(version_and_length, 4);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(count * info.item_size));
  });
}

}  // namespace

std::int64_t NpyArray::element_count() const { return element_count_of(shape); }

std::string npy_descr(DataType dtype) { return std::string(info_of(dtype).descr); }

std::string format_shape(std::span<const std::int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

NpyArray read_npy(const std::filesystem::path& path) {
  const std::vector<char> bytes = read_file(path);
  detail::NpyHeader header = detail::parse_npy_header(path, bytes);
  const DescrInfo* info = find_descr(header.descr);
  if (info == nullptr) {
    fail(path, fmt::format("unsupported dtype {} (reads <f4, <f8, <i4, <i8, |u1)", header.descr));
  }
  const std::span<const char> data = checked_data(path, header, bytes, info->item_size);
  NpyArray array;
  array.dtype = info->type;
  array.shape = std::move(header.shape);
  array.data.resize(data.size());
  std::memcpy(array.data.data(), data.data(), data.size());
  return array;
}

template <typename T>
std::vector<T> read_npy_values(const std::filesystem::path& path,
                               std::span<const std::int64_t> expected_shape) {
  const std::vector<char> bytes = read_file(path);
  const detail::NpyHeader header = detail::parse_npy_header(path, bytes);
  const DescrInfo& want = info_of(data_type_of<T>());
  if (header.descr != want.descr) {
    fail(path, fmt::format("expected dtype {}, found {}", want.descr, header.descr));
  }
  if (header.fortran_order) fail(path, "fortran_order arrays are not supported");
  if (!std::ranges::equal(header.shape, expected_shape)) {
    fail(path, fmt::format("expected shape {}, found {}", format_shape(expected_shape),
                           format_shape(header.shape)));
  }
  const std::span<const char> data = checked_data(path, header, bytes, sizeof(T));
  std::vector<T> values(data.size() / sizeof(T));
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

template <typename Scalar>
Matrix<Scalar> read_npy_matrix(const std::filesystem::path& path,
                               std::span<const std::int64_t> expected_shape) {
  if (expected_shape.empty()) fail(path, "read_npy_matrix needs an expected shape with an axis");
  const std::vector<Scalar> values = read_npy_values<Scalar>(path, expected_shape);
  const Eigen::Index cols = expected_shape.back();
  const Eigen::Index rows = element_count_of(expected_shape.first(expected_shape.size() - 1));
  return Eigen::Map<const Matrix<Scalar>>(values.data(), rows, cols);
}

template <typename Scalar>
Vector<Scalar> read_npy_vector(const std::filesystem::path& path, std::int64_t expected_size) {
  const std::int64_t shape[] = {expected_size};
  const std::vector<Scalar> values = read_npy_values<Scalar>(path, shape);
  return Eigen::Map<const Vector<Scalar>>(values.data(), expected_size);
}

template <typename T>
void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape,
               std::span<const T> values) {
  write_raw(path, data_type_of<T>(), shape, values.data(), values.size());
}

template <typename Scalar>
void write_npy_matrix(const std::filesystem::path& path, const Matrix<Scalar>& matrix,
                      std::span<const std::int64_t> shape) {
  const std::int64_t own[] = {matrix.rows(), matrix.cols()};
  write_raw(path, data_type_of<Scalar>(),
            shape.empty() ? std::span<const std::int64_t>(own) : shape, matrix.data(),
            static_cast<std::size_t>(matrix.size()));
}

template <typename Scalar>
void write_npy_vector(const std::filesystem::path& path, const Vector<Scalar>& vector) {
  const std::int64_t shape[] = {vector.size()};
  write_raw(path, data_type_of<Scalar>(), shape, vector.data(),
            static_cast<std::size_t>(vector.size()));
}

#define RANKLAB_INSTANTIATE_NPY_VALUES(T)                                                 \
  template std::vector<T> read_npy_values<T>(const std::filesystem::path&,                \
                                             std::span<const std::int64_t>);              \
  template void write_npy<T>(const std::filesystem::path&, std::span<const std::int64_t>, \
                             std::span<const T>);
#define RANKLAB_INSTANTIATE_NPY_SCALAR(Scalar)                                                 \
  template Matrix<Scalar> read_npy_matrix<Scalar>(const std::filesystem::path&,                \
                                                  std::span<const std::int64_t>);              \
  template Vector<Scalar> read_npy_vector<Scalar>(const std::filesystem::path&, std::int64_t); \
  template void write_npy_matrix<Scalar>(const std::filesystem::path&, const Matrix<Scalar>&,  \
                                         std::span<const std::int64_t>);                       \
  template void write_npy_vector<Scalar>(const std::filesystem::path&, const Vector<Scalar>&);

RANKLAB_INSTANTIATE_NPY_VALUES(float)
RANKLAB_INSTANTIATE_NPY_VALUES(double)
RANKLAB_INSTANTIATE_NPY_VALUES(std::int32_t)
RANKLAB_INSTANTIATE_NPY_VALUES(std::int64_t)
RANKLAB_INSTANTIATE_NPY_SCALAR(float)
RANKLAB_INSTANTIATE_NPY_SCALAR(double)

#undef RANKLAB_INSTANTIATE_NPY_VALUES
#undef RANKLAB_INSTANTIATE_NPY_SCALAR

}  // namespace ranklab
