#include "comm/mismatch_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/rank_list.hpp"
#include "traces/event_text.hpp"

namespace ranklab::detail {
namespace {

/// One distinct call and the members (group ranks, ascending) that made it.
struct Side {
  const CollectiveFingerprint* call = nullptr;
  std::vector<int> members;
};

std::vector<int> global_ranks(const Group& group, const std::vector<int>& members) {
  std::vector<int> out;
  out.reserve(members.size());
  for (const int m : members) out.push_back(group.global_rank(m));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

MismatchVerdict judge_mismatch(const Group& group, std::uint64_t seq,
                               std::span<const std::optional<MemberCall>> members) {
  // The distinct calls in order of the lowest group rank that made each: linear in the
  // members times the distinct calls, which are few.
  std::vector<Side> sides;
  MismatchVerdict out;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int member = static_cast<int>(i);
    if (!members[i]) {
      out.missing.push_back(group.global_rank(member));
      continue;
    }
    const CollectiveFingerprint& call = members[i]->fingerprint;
    auto it = std::find_if(sides.begin(), sides.end(), [&](const Side& s) { return *s.call == call; });
    if (it == sides.end()) it = sides.insert(sides.end(), Side{&call, {}});
    it->members.push_back(member);
  }
  std::sort(out.missing.begin(), out.missing.end());
  // The algorithm is named only where it is what differs (`direct` against `ring`).
  const bool algorithms_differ = std::any_of(sides.begin(), sides.end(), [&](const Side& s) {
    return s.call->algorithm != sides.front().call->algorithm;
  });
  const auto call_text = [&](const CollectiveFingerprint& call) {
    return describe(call, algorithms_differ);
  };
  std::size_t most = 0;
  for (const Side& s : sides) most = std::max(most, s.members.size());
  const auto with_most =
      std::count_if(sides.begin(), sides.end(), [&](const Side& s) { return s.members.size() == most; });
  // The plurality's call, or null where two calls share the most members.
  const Side* plurality = nullptr;
  if (with_most == 1) {
    plurality = &*std::find_if(sides.begin(), sides.end(),
                               [&](const Side& s) { return s.members.size() == most; });
  }
  const std::string where = fmt::format("{} collective #{}", group.name(), seq);

  out.table = fmt::format(
      "collective mismatch in {}: the members' calls differ\n"
      "  {:>10}  {:>11}  {:<8}  {}\n",
      where, "group rank", "global rank", "op #", "call");
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int member = static_cast<int>(i);
    const int global = group.global_rank(member);
    const auto& m = members[i];
    if (!m) {
      out.table += fmt::format("  {:>10}  {:>11}  {:<8}  (never called: missing participant)\n",
                               member, global, "-");
      continue;
    }
    const bool differs = plurality != nullptr && !(m->fingerprint == *plurality->call);
    out.table += fmt::format("  {:>10}  {:>11}  {:<8}  {}{}{}\n", member, global, m->rank_seq,
                             call_text(m->fingerprint), describe_site(to_call_site(m->site)),
                             differs ? "   <-- differs" : "");
  }

  std::string calls;  // "ranks 0, 1 called X; rank 2 called Y"
  const auto add_call = [&](const Side& s, std::string_view between) {
    calls += fmt::format("{}{} called {}", calls.empty() ? "" : between,
                         ranks_text(global_ranks(group, s.members)), call_text(*s.call));
  };
  if (plurality != nullptr) {
    std::vector<int> odd;
    std::string counts;  // "1" or "1 + 2": the odd members, one count per distinct call
    for (const Side& s : sides) {
      if (&s == plurality) continue;
      add_call(s, "; ");
      odd.insert(odd.end(), s.members.begin(), s.members.end());
      counts += fmt::format("{}{}", counts.empty() ? "" : " + ", s.members.size());
    }
    out.blamed = global_ranks(group, odd);
    const bool one = out.blamed.size() == 1;
    out.verdict = fmt::format("{} {}: {} rank{} vs {}", ranks_text(out.blamed),
                              one ? "is the odd one" : "are the odd ones", counts, one ? "" : "s",
                              plurality->members.size());
    out.sentence = fmt::format("{} where {} called {} ({}): {}", calls,
                               ranks_text(global_ranks(group, plurality->members)),
                               call_text(*plurality->call), where, out.verdict);
  } else {
    std::string each_side;  // "ranks 0, 1 vs ranks 2, 3"
    for (const Side& s : sides) {
      add_call(s, "; ");
      each_side += fmt::format("{}{}", each_side.empty() ? "" : " vs ",
                               ranks_text(global_ranks(group, s.members)));
      out.blamed.insert(out.blamed.end(), s.members.begin(), s.members.end());
    }
    out.blamed = global_ranks(group, out.blamed);
    out.verdict = fmt::format("no call has a plurality: {}", each_side);
    out.sentence = fmt::format("no call has a plurality in {}: {}", where, calls);
  }
  out.table += out.verdict;
  out.summary = fmt::format("collective mismatch in {}: the members' calls differ ({})", where,
                            out.verdict);
  if (!out.missing.empty()) {
    const std::string missing = fmt::format("{} never called {}", ranks_text(out.missing), where);
    out.table += fmt::format("\nmissing participant{}: {}", out.missing.size() == 1 ? "" : "s",
                             missing);
    out.sentence += "; " + missing;
  }
  return out;
}

}  // namespace ranklab::detail
