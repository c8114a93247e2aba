// Untyped views of message buffers: a backend moves bytes and needs only the element
// type and count. Typed spans convert with as_buffer / as_mutable_buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "comm/float16.hpp"
#include "traces/types.hpp"

namespace ranklab {

class DeviceMemory;  // comm/device.hpp

/// The DataType of a C++ element type.
template <typename T>
constexpr DataType data_type_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return DataType::f32;
  else if constexpr (std::is_same_v<U, double>) return DataType::f64;
  else if constexpr (std::is_same_v<U, std::int32_t>) return DataType::i32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return DataType::i64;
  else if constexpr (std::is_same_v<U, std::uint8_t> || std::is_same_v<U, std::byte>)
    return DataType::u8;
  else if constexpr (std::is_same_v<U, BFloat16>) return DataType::bf16;
  else if constexpr (std::is_same_v<U, Float16>) return DataType::f16;
  else static_assert(sizeof(T) == 0, "ranklab: unsupported element type");
}

/// Read-only elements of one type.
struct ConstBuffer {
  const void* data = nullptr;
  std::size_t count = 0;
  DataType dtype = DataType::u8;
  /// The device memory the elements are in; null: host memory. The Communicator stages a
  /// device buffer through host memory (collectives/staging.hpp); a backend sees host only.
  const DeviceMemory* device = nullptr;

  std::size_t bytes() const { return count * size_of(dtype); }
  std::span<const std::byte> as_bytes() const {
    return {static_cast<const std::byte*>(data), bytes()};
  }
};

/// Writable elements of one type.
struct MutableBuffer {
  void* data = nullptr;
  std::size_t count = 0;
  DataType dtype = DataType::u8;
  const DeviceMemory* device = nullptr;  ///< as ConstBuffer's

  std::size_t bytes() const { return count * size_of(dtype); }
  std::span<std::byte> as_bytes() const { return {static_cast<std::byte*>(data), bytes()}; }
  operator ConstBuffer() const { return {data, count, dtype, device}; }
};

template <typename T>
ConstBuffer as_buffer(std::span<const T> values) {
  return {values.data(), values.size(), data_type_of<T>()};
}
template <typename T>
ConstBuffer as_buffer(std::span<T> values) {
  return {values.data(), values.size(), data_type_of<T>()};
}
template <typename T>
MutableBuffer as_mutable_buffer(std::span<T> values) {
  return {values.data(), values.size(), data_type_of<T>()};
}

}  // namespace ranklab
