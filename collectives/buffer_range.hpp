// What the Communicator's typed calls take: any contiguous range of a supported element
// type (std::vector, std::array, std::span, a C array, ...), viewed as a comm/ buffer.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <type_traits>

#include "comm/buffer.hpp"

namespace ranklab {

/// The element types a buffer holds (data_type_of): float, double, BFloat16, Float16,
/// std::int32_t, std::int64_t, std::uint8_t and std::byte.
template <typename T>
concept BufferElement =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, BFloat16> ||
    std::same_as<T, Float16> || std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t> ||
    std::same_as<T, std::uint8_t> || std::same_as<T, std::byte>;

/// A range whose elements can be sent: contiguous, sized, of a BufferElement.
template <typename R>
concept SendRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                    BufferElement<std::ranges::range_value_t<R>>;

/// A range whose elements can be written: a SendRange of non-const elements that outlives
/// the call (an lvalue, or a view such as std::span).
template <typename R>
concept RecvRange =
    SendRange<R> &&
    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>> &&
    (std::is_lvalue_reference_v<R> || std::ranges::borrowed_range<R>);

/// Ranges of one element type, as the collectives that read one buffer and write another need.
template <typename In, typename Out>
concept SameElements = std::same_as<std::ranges::range_value_t<In>, std::ranges::range_value_t<Out>>;

template <SendRange R>
ConstBuffer buffer_of(const R& values) {
  using T = std::ranges::range_value_t<R>;
  return as_buffer(std::span<const T>(std::ranges::data(values), std::ranges::size(values)));
}

template <typename R>
  requires RecvRange<R&>
MutableBuffer mutable_buffer_of(R& values) {
  using T = std::ranges::range_value_t<R>;
  return as_mutable_buffer(std::span<T>(std::ranges::data(values), std::ranges::size(values)));
}

}  // namespace ranklab
