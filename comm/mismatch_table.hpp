// The side-by-side table of a collective whose members disagree, shared by the emulator's
// native signature check and fingerprints and the MPI backend's --check-collectives exchange
// (comm/, so that collectives/mpi needs nothing from emulator/).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "comm/call_site.hpp"
#include "comm/group.hpp"
#include "traces/event_text.hpp"

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

/// Every member's call (`project(member)`, printed with `describe`) beside its group and
/// global rank, marking those that differ from the majority; members not arrived yet show
/// as such. `culprit` gets the global rank of the first member that differs, and `sentence`
/// one line naming it, its call, and the call of the members it differs from.
template <typename Members, typename Project>
std::string mismatch_table(const Group& group, std::uint64_t seq, const Members& members,
                           Project project, int& culprit, std::string& sentence) {
  const auto& reference = majority(members, project);
  std::string table = fmt::format(
      "collective mismatch in {} collective #{}: the members' calls differ\n"
      "  {:>10}  {:>11}  {:<8}  {}\n",
      group.name(), seq, "group rank", "global rank", "op #", "call");
  culprit = -1;
  for (int i = 0; i < group.size(); ++i) {
    const auto& m = members[static_cast<std::size_t>(i)];
    const int global = group.global_rank(i);
    if (!m) {
      table += fmt::format("  {:>10}  {:>11}  {:<8}  (not called yet)\n", i, global, "-");
      continue;
    }
    const bool differs = !(project(*m) == reference);
    if (differs && culprit < 0) culprit = global;
    table += fmt::format("  {:>10}  {:>11}  {:<8}  {}{}{}\n", i, global, m->rank_seq,
                         describe(project(*m)), describe_site(to_call_site(m->site)),
                         differs ? "   <-- differs" : "");
  }
  std::string agreeing;
  int agree_count = 0;
  for (int i = 0; i < group.size(); ++i) {
    const auto& m = members[static_cast<std::size_t>(i)];
    if (!m || !(project(*m) == reference)) continue;
    agreeing += fmt::format("{}{}", agree_count++ ? ", " : "", group.global_rank(i));
  }
  for (int i = 0; i < group.size(); ++i) {
    const auto& m = members[static_cast<std::size_t>(i)];
    if (!m || group.global_rank(i) != culprit) continue;
    sentence = fmt::format("rank {} called {} where rank{} {} called {} ({} collective #{})",
                           culprit, describe(project(*m)), agree_count == 1 ? "" : "s", agreeing,
                           describe(reference), group.name(), seq);
  }
  return table + fmt::format("first rank that differs: {}", culprit);
}

}  // namespace ranklab::detail
