// The call most members of a collective made, against which mismatch tables judge the
// others (shared by the native signature check and the communicator's fingerprints).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace ranklab::detail {

/// The value `project(member)` most non-null `members` share; ties go to the value seen
/// first, i.e. the lowest group rank's. Linear in the members; at least one must be non-null.
template <typename Members, typename Project>
const auto& majority(const Members& members, Project project) {
  using Value = std::remove_cvref_t<decltype(project(**members.begin()))>;
  std::vector<std::pair<const Value*, int>> votes;  // distinct values, in order of appearance
  for (const auto& m : members) {
    if (!m) continue;
    const Value& value = project(*m);
    auto it =
        std::find_if(votes.begin(), votes.end(), [&](const auto& v) { return *v.first == value; });
    if (it == votes.end()) {
      votes.emplace_back(&value, 1);
    } else {
      ++it->second;
    }
  }
  return *std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) {
            return a.second < b.second;
          })->first;
}

}  // namespace ranklab::detail
