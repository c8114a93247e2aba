// The SimGrid TI importer (traces/detail/simgrid_ti_importer.hpp): an action's words as
// counts, amounts, ranks, tags and SMPI datatypes, each refused with its line when malformed.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "traces/detail/simgrid_ti_importer.hpp"
#include "traces/error.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab::detail::ti {

std::int64_t Importer::integer(std::string_view word, std::string_view what) const {
  const auto value = parse_whole<std::int64_t>(word);
  if (!value) fail(fmt::format("{} must be an integer, got {}", what, quote_input(word)));
  return *value;
}

std::uint64_t Importer::count(std::string_view word, std::string_view what) const {
  const std::int64_t value = integer(word, what);
  if (value < 0 || static_cast<std::uint64_t>(value) > kMaxTraceCount) {
    fail(fmt::format("{} {} out of range [0, 2^48]", what, value));
  }
  return static_cast<std::uint64_t>(value);
}

double Importer::amount(std::string_view word, std::string_view what) const {
  const std::optional<double> value = parse_whole<double>(word);
  if (!value || !std::isfinite(*value) || *value < 0) {
    fail(fmt::format("{} must be a finite number >= 0, got {}", what, quote_input(word)));
  }
  return *value;
}

std::uint64_t Importer::in_elements(std::uint64_t n, std::int64_t type,
                                    const ElementType& element) const {
  const std::uint64_t elements = n * element.per_element;  // <= 2^48 * 32: no overflow
  if (elements > kMaxTraceCount) {
    fail(fmt::format("count {} of SMPI datatype {} is {} x {}, over the limit of 2^48 elements", n,
                     type, elements, to_string(element.dtype)));
  }
  return elements;
}

int Importer::rank_arg(std::string_view word, std::string_view what) const {
  const std::int64_t value = integer(word, what);
  if (value < 0 || value >= builder_->world_size()) {
    fail(
        fmt::format("{} {} is outside the world of {} ranks", what, value, builder_->world_size()));
  }
  return static_cast<int>(value);
}

std::int64_t Importer::type_arg(const std::vector<std::string_view>& w, std::size_t i,
                                int rank) const {
  if (i >= w.size()) return ranks_[static_cast<std::size_t>(rank)].default_type;
  const std::int64_t id = integer(w[i], "datatype");
  if (id == kDerivedType) {
    // SMPI 3.32 writes the count in elements of the derived type (MPI_Type_contiguous(3,
    // MPI_INT) sent twice: `send 1 0 2 -1`) and nothing of its size: an opaque type,
    // counted once per action for the report's note.
    if (derived_.line != where_.line || derived_.file != where_.file || derived_actions_ == 0) {
      if (derived_actions_++ == 0) derived_first_ = where_;
      derived_ = where_;
    }
    return id;
  }
  if (id < 0) fail(fmt::format("datatype {} is not an index of SMPI's table", id));
  return id;
}

void Importer::need(const std::vector<std::string_view>& w, std::size_t args,
                    std::string_view usage) const {
  if (w.size() < 2 + args) {
    fail(fmt::format("{} needs {} (got {} argument{})", w[1], usage, w.size() - 2,
                     w.size() == 3 ? "" : "s"));
  }
}

int Importer::tag_arg(std::string_view word, bool send) const {
  std::int64_t tag = integer(word, "tag");
  if (!send && tag == kAnyTagSmpi) tag = kAnyTagInTrace;
  if ((tag < 0 && !(tag == kAnyTagInTrace && !send)) || tag > INT32_MAX) {
    fail(fmt::format("tag {} out of range", excerpt(word)));
  }
  return static_cast<int>(tag);
}

std::vector<std::uint64_t> Importer::counts_at(const std::vector<std::string_view>& w,
                                               std::size_t first) const {
  const auto p = static_cast<std::size_t>(builder_->world_size());
  if (w.size() < first + p) {
    fail(fmt::format("{} needs a count per rank ({}), got {} arguments", w[1], p, w.size() - 2));
  }
  std::vector<std::uint64_t> counts;
  for (std::size_t i = first; i < first + p; ++i) counts.push_back(count(w[i], "count"));
  return counts;
}

}  // namespace ranklab::detail::ti
