#include "cli/flags_given.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "traces/rank_list.hpp"

namespace ranklab::cli {
namespace {

// A process's value of `name`, or none when its command line did not give it.
std::optional<std::string> value_of(const FlagsGiven& flags, const std::string& name) {
  for (const auto& [flag, value] : flags) {
    if (flag == name) return value;
  }
  return std::nullopt;
}

// "--trace t.jsonl", "--no-trace" (a flag), "no --trace".
std::string describe(const std::string& name, const std::optional<std::string>& value) {
  if (!value) return "no " + name;
  if (value->empty()) return name;
  return fmt::format("{} {}", name, *value);
}

}  // namespace

FlagsGiven flags_given(const CLI::App& command) {
  FlagsGiven out;
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || name == "--log-level" || name == "--help") continue;
    // A flag (no value expected) is given or not: its result is CLI11's own.
    std::string values;
    if (option->get_expected_min() > 0) {
      for (const std::string& value : option->results()) {
        values += values.empty() ? value : " " + value;
      }
    }
    out.emplace_back(name, values);
  }
  return out;
}

std::string encode_flags(const FlagsGiven& flags) { return nlohmann::json(flags).dump(); }

FlagsGiven decode_flags(const std::string& text) {
  return nlohmann::json::parse(text).get<FlagsGiven>();
}

std::string flags_disagreement(const std::vector<FlagsGiven>& by_rank) {
  // Every flag any process was given, in the order the first one that has it gives it.
  std::vector<std::string> names;
  for (const FlagsGiven& flags : by_rank) {
    for (const auto& [name, value] : flags) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    // Each value with its ranks, in the order of their first rank.
    std::vector<std::pair<std::optional<std::string>, std::vector<int>>> values;
    for (std::size_t r = 0; r < by_rank.size(); ++r) {
      const std::optional<std::string> value = value_of(by_rank[r], name);
      auto same = std::find_if(values.begin(), values.end(),
                               [&](const auto& v) { return v.first == value; });
      if (same == values.end()) {
        values.push_back({value, {}});
        same = values.end() - 1;
      }
      same->second.push_back(static_cast<int>(r));
    }
    if (values.size() == 1) continue;
    std::vector<std::string> sides;
    for (const auto& [value, ranks] : values) {
      sides.push_back(fmt::format("{} on {} {}", describe(name, value),
                                  ranks.size() == 1 ? "rank" : "ranks",
                                  detail::join_ranks(ranks, {.last = " and ", .max_listed = 16})));
    }
    return fmt::format("the MPI processes were given different flags: {} (start every process "
                       "with the same flags)",
                       fmt::join(sides, "; "));
  }
  return "";
}

}  // namespace ranklab::cli
