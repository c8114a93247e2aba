// A dense matrix or vector's elements as one span, which is how the model hands its tensors
// to the communicator (Eigen's dense types are not ranges; their storage is contiguous).
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

namespace ranklab {

/// The elements of `m` (an Eigen Matrix or Vector, in its storage order): a span of const
/// scalars for a const `m`.
template <typename Dense>
auto span_of(Dense& m) {
  using Element = std::remove_pointer_t<decltype(m.data())>;
  return std::span<Element>(m.data(), static_cast<std::size_t>(m.size()));
}

}  // namespace ranklab
