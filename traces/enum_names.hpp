// An enum's names as one table, indexed by the enumerator, so a name and its parse stay in
// sync (traces/types.cpp, the model's modes, orders, group kinds, schedules and TP collectives,
// the timeline's bases).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ranklab {

/// "tp, pp, dp or hybrid": names as the alternatives an error about an unknown one expects.
inline std::string alternatives_text(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

template <typename Enum, std::size_t N>
class EnumNames {
 public:
  /// `names[i]` names the enumerator of value i (enumerators 0, 1, ... N - 1).
  constexpr explicit EnumNames(std::array<std::string_view, N> names) : names_(names) {}

  constexpr std::string_view operator[](Enum value) const {
    return names_[static_cast<std::size_t>(value)];
  }

  /// The enumerator named `name`, or nothing.
  constexpr std::optional<Enum> parse(std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (names_[i] == name) return static_cast<Enum>(i);
    }
    return std::nullopt;
  }

  /// "tp, pp, dp or hybrid": what an error about an unknown name expects.
  std::string alternatives() const { return alternatives_text(names_); }

  /// Every name, in the enumerators' order (a CLI's choices).
  constexpr std::span<const std::string_view> names() const { return names_; }

 private:
  std::array<std::string_view, N> names_;
};

}  // namespace ranklab
