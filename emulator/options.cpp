#include "emulator/options.hpp"

#include <algorithm>
#include <cstdlib>

#include "comm/errors.hpp"
#include "emulator/detail/parse_number.hpp"
#include "emulator/schedule_policies.hpp"
#include "traces/enum_names.hpp"
#include "traces/text.hpp"

namespace ranklab {
std::uint64_t detail::parse_number(std::string_view text, std::string_view what,
                                   std::string_view whole) {
  const std::optional<std::uint64_t> value = parse_whole<std::uint64_t>(text);
  if (!value) {
    throw UsageError(fmt::format("invalid {} '{}' in '{}': expected a non-negative integer", what,
                                 text, whole));
  }
  return *value;
}

using detail::parse_number;

namespace {

// "STEP=RANK,STEP=RANK,..." with increasing steps; empty is rank order itself.
std::vector<Preemption> parse_preemptions(std::string_view list, std::string_view whole) {
  std::vector<Preemption> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw UsageError(fmt::format("invalid preemption '{}' in '{}': expected STEP=RANK", item,
                                   whole));
    }
    const Preemption p{.step = parse_number(item.substr(0, eq), "step", whole),
                       .rank = static_cast<int>(
                           std::min<std::uint64_t>(parse_number(item.substr(eq + 1), "rank", whole),
                                                   std::uint64_t{1} << 30))};
    if (!out.empty() && p.step <= out.back().step) {
      throw UsageError(fmt::format("invalid '{}': preemption steps must increase", whole));
    }
    out.push_back(p);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

bool parse_random(std::string_view rest, std::string_view whole, SchedulePolicy& policy) {
  if (rest.empty()) return false;
  policy.seed = parse_number(rest, "seed", whole);
  return true;
}

bool parse_pct(std::string_view rest, std::string_view whole, SchedulePolicy& policy) {
  if (rest.empty()) return false;
  const auto second = rest.find(':');
  policy.seed = parse_number(rest.substr(0, second), "seed", whole);
  if (second != std::string_view::npos) {
    const auto depth = parse_number(rest.substr(second + 1), "depth", whole);
    if (depth < 1 || depth > 1000) {
      throw UsageError(fmt::format("invalid depth in '{}': expected 1..1000", whole));
    }
    policy.depth = static_cast<int>(depth);
  }
  return true;
}

bool parse_preempt(std::string_view rest, std::string_view whole, SchedulePolicy& policy) {
  policy.preemptions = parse_preemptions(rest, whole);
  return true;
}

std::string print_preemptions(const SchedulePolicy& policy) {
  std::string text;
  for (std::size_t i = 0; i < policy.preemptions.size(); ++i) {
    text += fmt::format("{}{}={}", i ? "," : "", policy.preemptions[i].step,
                        policy.preemptions[i].rank);
  }
  return text;
}

using Kind = SchedulePolicy::Kind;

constexpr SchedulePolicyRow kPolicies[] = {
    {Kind::rank_order, "rank-order", "rank-order", "", nullptr, nullptr},
    {Kind::random, "random", "random:SEED", "", parse_random,
     [](const SchedulePolicy& p) { return fmt::format("{}", p.seed); }},
    {Kind::pct, "pct", "pct:SEED[:DEPTH]", "", parse_pct,
     [](const SchedulePolicy& p) { return fmt::format("{}:{}", p.seed, p.depth); }},
    {Kind::preempt, "preempt", "preempt:STEP=RANK,...",
     "preempt (what explore's shrunk: lines print) runs rank order but for the listed ranks at "
     "the listed scheduling steps",
     parse_preempt, print_preemptions},
};

// "rank-order, random:SEED, ... or preempt:STEP=RANK,...": what an unknown policy is told.
std::string policy_syntaxes() {
  std::vector<std::string_view> syntaxes;
  for (const SchedulePolicyRow& row : kPolicies) syntaxes.push_back(row.syntax);
  return alternatives_text(syntaxes);
}

}  // namespace

std::span<const SchedulePolicyRow> schedule_policies() { return kPolicies; }

SchedulePolicy SchedulePolicy::parse(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  for (const SchedulePolicyRow& row : kPolicies) {
    SchedulePolicy policy;
    policy.kind = row.kind;
    if (row.parse == nullptr ? text == row.name
                             : name == row.name && colon != std::string_view::npos &&
                                   row.parse(rest, text, policy)) {
      return policy;
    }
  }
  throw UsageError(
      fmt::format("unknown scheduling policy '{}': expected {}", text, policy_syntaxes()));
}

std::string SchedulePolicy::to_string() const {
  for (const SchedulePolicyRow& row : kPolicies) {
    if (row.kind != kind) continue;
    return row.print == nullptr ? std::string(row.name)
                                : fmt::format("{}:{}", row.name, row.print(*this));
  }
  return "rank-order";
}

SendMode SendMode::parse(std::string_view text) {
  SendMode mode;
  if (text == "rendezvous") return mode;
  if (text == "eager") {
    mode.kind = Kind::eager;
    return mode;
  }
  constexpr std::string_view kPrefix = "eager<=";
  if (text.starts_with(kPrefix)) {
    mode.kind = Kind::eager_upto;
    mode.eager_limit = parse_number(text.substr(kPrefix.size()), "byte limit", text);
    return mode;
  }
  throw UsageError(fmt::format(
      "unknown send mode '{}': expected rendezvous, eager or eager<=BYTES", text));
}

std::string SendMode::to_string() const {
  switch (kind) {
    case Kind::rendezvous: return "rendezvous";
    case Kind::eager: return "eager";
    case Kind::eager_upto: return fmt::format("eager<={}", eager_limit);
  }
  return "rendezvous";
}

ClusterOptions ClusterOptions::from_env() {
  ClusterOptions options;
  if (const char* v = std::getenv("RANKLAB_THREADS")) {
    options.threads = static_cast<int>(parse_number(v, "RANKLAB_THREADS", v));
  }
  if (const char* v = std::getenv("RANKLAB_TIMEOUT_MS")) {
    options.timeout = std::chrono::milliseconds(parse_number(v, "RANKLAB_TIMEOUT_MS", v));
  }
  if (const char* v = std::getenv("RANKLAB_POLICY")) options.policy = SchedulePolicy::parse(v);
  if (const char* v = std::getenv("RANKLAB_SEND_MODE")) options.send_mode = SendMode::parse(v);
  return options;
}

}  // namespace ranklab
