#include "model/shape.hpp"

#include <fmt/format.h>

#include <utility>

#include "traces/error.hpp"

namespace ranklab {

namespace {

// 2^40 elements (4 TiB of float32): a bound that no real run reaches, checked so that the
// products below cannot overflow and a typo (an extra digit) fails early with a message.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

}  // namespace

void ModelShape::validate() const {
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"batch", batch}, {"seq", seq}, {"hidden", hidden}, {"inter", inter}, {"layers", layers}};
  for (const auto& [name, value] : sizes) {
    if (value <= 0) {
      throw UsageError(fmt::format("model shape: {} must be positive, got {}", name, value));
    }
    if (value > kMaxElements) {
      throw UsageError(fmt::format("model shape: {} = {} is too large", name, value));
    }
  }
  // Each factor is <= 2^40 here, so a quotient test avoids overflowing the product.
  const auto fits = [](std::int64_t a, std::int64_t b) { return a <= kMaxElements / b; };
  if (!fits(batch, seq) || !fits(rows(), hidden > inter ? hidden : inter) || !fits(hidden, inter)) {
    throw UsageError(fmt::format(
        "model shape: batch {} x seq {} x hidden {} x inter {} is too large (over 2^40 elements)",
        batch, seq, hidden, inter));
  }
}

}  // namespace ranklab
