// The structure-aware mutators (trace_mutator.hpp): lines in, one change, lines out.
#include "traces/fuzz/trace_mutator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>
#include <vector>

#include "traces/detail/words.hpp"

namespace ranklab::fuzz {
namespace {

using Json = nlohmann::ordered_json;  // keeps the line's key order, so mutants read like traces
using Random = std::minstd_rand;
using Lines = std::vector<std::string>;

std::size_t pick(Random& random, std::size_t n) { return n == 0 ? 0 : random() % n; }

template <typename T>
const T& pick_from(Random& random, const std::vector<T>& items) {
  return items[pick(random, items.size())];
}

Lines split_lines(std::string_view text) {
  Lines lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

std::string join_lines(const Lines& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + '\n';
  return text;
}

/// `text` through the byte mutation, with room to grow by a little.
std::string byte_mutated(std::string text, const ByteMutator& bytes) {
  const std::size_t size = text.size();
  text.resize(size + 64);
  text.resize(bytes(reinterpret_cast<std::uint8_t*>(text.data()), size, text.size()));
  return text;
}

// ---- line-level mutations (both formats) -------------------------------------------------

/// Repeats, drops or swaps lines of `lines` (not empty), or byte-mutates one.
void mutate_lines(Lines& lines, Random& random, const ByteMutator& bytes) {
  const std::size_t at = pick(random, lines.size());
  switch (pick(random, 4)) {
    case 0: {
      std::string repeated = lines[at];
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(pick(random, lines.size() + 1)),
                   std::move(repeated));
      break;
    }
    case 1:
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
      break;
    case 2:
      std::swap(lines[at], lines[pick(random, lines.size())]);
      break;
    default:
      lines[at] = byte_mutated(lines[at], bytes);
      break;
  }
}

/// What both formats do: 1 in 10 a byte mutation of the whole text, `line_level` in 10 one
/// of mutate_lines(), else `structural(lines, random)` on the format's own terms.
template <typename Structural>
std::string mutate_text(std::string_view text, std::uint32_t seed, const ByteMutator& bytes,
                        std::size_t line_level, const Structural& structural) {
  Random random(seed);
  Lines lines = split_lines(text);
  const std::size_t choice = pick(random, 10);
  if (lines.empty() || choice == 0) return byte_mutated(std::string(text), bytes);
  if (choice <= line_level) {
    mutate_lines(lines, random, bytes);
  } else {
    structural(lines, random);
  }
  return join_lines(lines);
}

// ---- JSONL ----------------------------------------------------------------------------

/// Values the reader treats specially: integer and float boundaries, every name the format
/// knows, and the shapes of its nested fields.
// clang-format off
const std::vector<Json>& interesting_values() {
  static const std::vector<Json> values = [] {
    std::vector<Json> v = {
        0, 1, 2, 7, -1, 255, 65536, INT32_MAX, std::int64_t{INT32_MAX} + 1,
        std::uint64_t{1} << 32, std::uint64_t{1} << 48, (std::uint64_t{1} << 48) + 1,
        (std::uint64_t{1} << 53) + 1, INT64_MAX, UINT64_MAX, INT64_MIN, 0.5, -0.0, 1e300,
        true, false, nullptr, Json::array(), Json::array({0}), Json::array({0, 1}),
        Json::object(), Json{{"flops", 1e9}}, Json{{"s", 0.5}}, Json{{"s", -1}}};
    for (const char* name : {
             "send", "recv", "barrier", "all_reduce", "broadcast", "reduce", "all_gather",
             "reduce_scatter", "gather", "scatter", "all_to_all", "u8", "i32", "i64", "f32",
             "f64", "sum", "prod", "min", "max", "avg", "completed", "pending", "failed",
             "world", "tp[0,1]", "", "1.0", "1.1", "2.0", "0:0", "1:0", "0123456789abcdef",
             "ranklab-trace"}) {
      v.emplace_back(name);
    }
    return v;
  }();
  return values;
}
// clang-format on

/// Every value inside `value` (not `value` itself), depth first.
void collect_nodes(Json& value, std::vector<Json*>& nodes) {
  if (!value.is_structured()) return;
  for (Json& child : value) {
    nodes.push_back(&child);
    collect_nodes(child, nodes);
  }
}

/// The line as JSON, or a discarded value. Lines nesting deeper than the reader allows are
/// left to byte mutation: copying and dumping them would recurse as deep.
Json parse_line(const std::string& line) {
  const auto open =
      std::count_if(line.begin(), line.end(), [](char c) { return c == '[' || c == '{'; });
  if (open > 256) return Json(Json::value_t::discarded);
  try {
    return Json::parse(line, nullptr, false);
  } catch (const Json::exception&) {
    return Json(Json::value_t::discarded);
  }
}

/// A member of another object line with a key this line's root also may have.
const Json* other_member(const std::vector<Json>& parsed, std::size_t self, Random& random,
                         std::string& key) {
  const std::size_t other = pick(random, parsed.size());
  if (other == self || !parsed[other].is_object() || parsed[other].empty()) return nullptr;
  auto it = parsed[other].begin();
  std::advance(it, static_cast<std::ptrdiff_t>(pick(random, parsed[other].size())));
  key = it.key();
  return &it.value();
}

/// Changes one value of `line` (an object): set, nudged, dropped, or taken from another line.
void mutate_object(Json& line, std::size_t self, const std::vector<Json>& parsed, Random& random) {
  std::vector<Json*> nodes;
  collect_nodes(line, nodes);
  if (nodes.empty()) {
    line["rank"] = 0;
    return;
  }
  Json& node = *nodes[pick(random, nodes.size())];
  switch (pick(random, 5)) {
    case 0:
      node = pick_from(random, interesting_values());
      break;
    case 1:  // an integer off by one, doubled or negated; anything else set as in case 0
      if (node.is_number_integer()) {
        // Unsigned arithmetic wraps where signed would overflow (INT64_MAX + 1).
        const auto n = node.get<std::uint64_t>();
        const std::uint64_t nudged[] = {n + 1, n - 1, n * 2, 0 - n};
        node = static_cast<std::int64_t>(nudged[pick(random, 4)]);
      } else {
        node = pick_from(random, interesting_values());
      }
      break;
    case 2: {  // drop a member: of the node if it is an object, else of the line
      Json& holder = node.is_object() && !node.empty() ? node : line;
      auto it = holder.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(random, holder.size())));
      holder.erase(it);
      break;
    }
    case 3: {  // the same field as another line has it (a header's groups into an event...)
      std::string key;
      if (const Json* value = other_member(parsed, self, random, key)) line[key] = *value;
      break;
    }
    default:  // arrays grow or shrink: a group's ranks, in_flight
      if (node.is_array() && !node.empty() && pick(random, 2) == 0) {
        node.erase(pick(random, node.size()));
      } else if (node.is_array()) {
        node.push_back(node.empty() ? Json(0) : node[pick(random, node.size())]);
      } else {
        node = Json::array({node});
      }
      break;
  }
}

// ---- SimGrid TI --------------------------------------------------------------------------

std::string join_words(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

// clang-format off
const std::vector<std::string>& ti_numbers() {
  static const std::vector<std::string> numbers = {
      "0", "1", "2", "3", "-1", "-333", "-444", "-555", "6", "7", "14", "60", "2147483647",
      "2147483648", "65535", "65536", "281474976710656", "281474976710657",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "0.5", "1e308",
      "1e400", "nan", "inf", "-0"};
  return numbers;
}
// clang-format on

const std::vector<std::string>& ti_actions() {
  static const std::vector<std::string> actions = {
      "init",       "finalize",  "comm_size", "compute", "sleep",         "send",
      "isend",      "ssend",     "recv",      "irecv",   "wait",          "waitall",
      "test",       "sendRecv",  "barrier",   "bcast",   "reduce",        "allreduce",
      "alltoall",   "allgather", "gather",    "scatter", "reducescatter", "gatherv",
      "allgatherv", "scatterv",  "alltoallv", "waitany", "INIT"};
  return actions;
}

bool is_number(const std::string& word) {
  return !word.empty() && (std::isdigit(static_cast<unsigned char>(word[0])) || word[0] == '-');
}

/// Changes one word of `line`: a number, the action, the rank, or the argument count.
std::string mutate_action(const std::string& line, Random& random) {
  std::vector<std::string> words;
  for (const std::string_view word : detail::split_words(line)) words.emplace_back(word);
  if (words.empty()) return "0 init";
  const std::size_t at = pick(random, words.size());
  switch (pick(random, 5)) {
    case 0:
      words[at] = pick_from(random, ti_numbers());
      break;
    case 1:
      if (is_number(words[at]) && words[at].size() < 18) {
        const long long n = std::atoll(words[at].c_str());
        words[at] = std::to_string(pick(random, 2) == 0 ? n + 1 : n - 1);
      } else {
        words[at] = pick_from(random, ti_numbers());
      }
      break;
    case 2:
      if (words.size() > 1) words[1] = pick_from(random, ti_actions());
      break;
    case 3:
      if (words.size() > 2 && pick(random, 2) == 0) {
        words.pop_back();
      } else {
        words.push_back(pick_from(random, ti_numbers()));
      }
      break;
    default:
      words[0] = std::to_string(pick(random, 9));
      break;  // another rank (or a new one)
  }
  return join_words(words);
}

}  // namespace

std::string mutate_jsonl(std::string_view text, std::uint32_t seed, const ByteMutator& bytes) {
  return mutate_text(text, seed, bytes, 2, [&bytes](Lines& lines, Random& random) {
    std::vector<Json> parsed;
    parsed.reserve(lines.size());
    for (const std::string& line : lines) parsed.push_back(parse_line(line));
    const std::size_t at = pick(random, lines.size());
    if (!parsed[at].is_object()) {
      lines[at] = byte_mutated(lines[at], bytes);
      return;
    }
    mutate_object(parsed[at], at, parsed, random);
    lines[at] = parsed[at].dump(-1, ' ', false, Json::error_handler_t::replace);
  });
}

std::string mutate_ti(std::string_view text, std::uint32_t seed, const ByteMutator& bytes) {
  return mutate_text(text, seed, bytes, 3, [](Lines& lines, Random& random) {
    std::string& line = lines[pick(random, lines.size())];
    line = mutate_action(line, random);
  });
}

std::string cross_lines(std::string_view a, std::string_view b, std::uint32_t seed) {
  Random random(seed);
  const Lines first = split_lines(a);
  const Lines second = split_lines(b);
  Lines lines(first.begin(),
              first.begin() + static_cast<std::ptrdiff_t>(pick(random, first.size() + 1)));
  lines.insert(lines.end(),
               second.begin() + static_cast<std::ptrdiff_t>(pick(random, second.size() + 1)),
               second.end());
  return join_lines(lines);
}

}  // namespace ranklab::fuzz
