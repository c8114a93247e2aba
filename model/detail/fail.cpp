#include "model/detail/fail.hpp"

#include <fmt/format.h>

#include "traces/error.hpp"

namespace ranklab::detail {

void fail(const std::filesystem::path& path, std::string_view reason) {
  throw TraceError(fmt::format("{}: {}", path.string(), reason));
}

}  // namespace ranklab::detail
