// Reading one Flight Recorder dump (fr_dump.hpp): bytes -> JSON value (pickle or JSON) ->
// checked entries. Field errors come from detail/json_fields as a bare reason; this file
// puts "FILE: " or "FILE: entry N: " before it.
#include "traces/fr_dump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <vector>

#include "traces/detail/json_fields.hpp"
#include "traces/error.hpp"
#include "traces/pickle_reader.hpp"
#include "traces/quote_input.hpp"

namespace ranklab::detail {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 48;  // as the JSONL reader
constexpr std::size_t kMaxJsonDepth = 64;
constexpr std::uint8_t kPickleProto = 0x80;

/// How torch names a dtype (c10::toString(ScalarType)) in ranklab's types: the type and how
/// many of its elements one torch element is. Half and BFloat16 are f16 and bf16; other types
/// without a ranklab type are carried as bytes, so a Short buffer still differs from an Int one.
struct DtypeInfo {
  DataType dtype;
  std::uint64_t per_element;
};
std::optional<DtypeInfo> torch_dtype(std::string_view name) {
  static const std::pair<std::string_view, DtypeInfo> kTable[] = {
      {"Float", {DataType::f32, 1}},       {"Double", {DataType::f64, 1}},
      {"Int", {DataType::i32, 1}},         {"Long", {DataType::i64, 1}},
      {"Byte", {DataType::u8, 1}},         {"Char", {DataType::u8, 1}},
      {"Bool", {DataType::u8, 1}},         {"Half", {DataType::f16, 1}},
      {"BFloat16", {DataType::bf16, 1}},   {"Short", {DataType::u8, 2}},
      {"Float8_e4m3fn", {DataType::u8, 1}}, {"Float8_e5m2", {DataType::u8, 1}},
      {"ComplexFloat", {DataType::f32, 2}}, {"ComplexDouble", {DataType::f64, 2}},
      {"UInt16", {DataType::u8, 2}},       {"UInt32", {DataType::i32, 1}},
      {"UInt64", {DataType::i64, 1}},
  };
  for (const auto& [torch_name, info] : kTable) {
    if (torch_name == name) return info;
  }
  return std::nullopt;
}

/// torch's collective names (the part after "BACKEND:") as ranklab operations.
std::optional<OpKind> torch_collective(std::string_view name) {
  static const std::pair<std::string_view, OpKind> kTable[] = {
      {"all_reduce", OpKind::all_reduce},
      {"allreduce", OpKind::all_reduce},
      {"allreduce_coalesced", OpKind::all_reduce},
      {"all_reduce_coalesced", OpKind::all_reduce},
      {"broadcast", OpKind::broadcast},
      {"reduce", OpKind::reduce},
      {"all_gather", OpKind::all_gather},
      {"allgather", OpKind::all_gather},
      {"_all_gather_base", OpKind::all_gather},
      {"_allgather_base", OpKind::all_gather},
      {"all_gather_into_tensor", OpKind::all_gather},
      {"all_gather_into_tensor_coalesced", OpKind::all_gather},
      {"allgather_into_tensor_coalesced", OpKind::all_gather},
      {"reduce_scatter", OpKind::reduce_scatter},
      {"_reduce_scatter_base", OpKind::reduce_scatter},
      {"reduce_scatter_tensor", OpKind::reduce_scatter},
      {"reduce_scatter_tensor_coalesced", OpKind::reduce_scatter},
      {"all_to_all", OpKind::all_to_all},
      {"alltoall", OpKind::all_to_all},
      {"alltoall_base", OpKind::all_to_all},
      {"all_to_all_single", OpKind::all_to_all},
      {"barrier", OpKind::barrier},
      {"all_reduce_barrier", OpKind::barrier},  // ProcessGroupNCCL::barrier: one Float all_reduced
      {"gather", OpKind::gather},
      {"scatter", OpKind::scatter},
  };
  for (const auto& [torch_name, op] : kTable) {
    if (torch_name == name) return op;
  }
  return std::nullopt;
}

/// The offset of the first bracket of `text` nested deeper than kMaxJsonDepth, if any.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// Refuses JSON nested deeper than kMaxJsonDepth before nlohmann's recursive parser sees it.
void check_json_depth(std::string_view text, std::string_view file) {
  if (const auto at = too_deep_at(text)) {
    throw TraceError(fmt::format("{}: offset {}: JSON nested deeper than {}", file, *at, kMaxJsonDepth));
  }
}

json parse_document(std::string_view bytes, std::string_view file) {
  if (!bytes.empty() && static_cast<std::uint8_t>(bytes.front()) == kPickleProto) {
    return read_pickle(bytes, file);
  }
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] != '{') {
    throw TraceError(fmt::format(
        "{}: not a Flight Recorder dump: neither a pickle (first byte 0x80) nor a JSON object",
        file));
  }
  check_json_depth(bytes, file);
  try {
    return json::parse(bytes);
  } catch (const json::parse_error& e) {
    throw TraceError(fmt::format("{}: offset {}: invalid JSON", file, e.byte));
  } catch (const json::exception& e) {  // a number out of range (out_of_range.406)
    throw TraceError(fmt::format("{}: invalid JSON: {:.120}", file, e.what()));
  }
}

/// "2.MINOR"; anything else is refused.
void check_version(const json& doc, std::string_view file, std::string& version) {
  const json* value = find_field(doc, "version");
  if (value == nullptr) throw TraceError(fmt::format("{}: missing required field 'version'", file));
  if (!value->is_string()) {
    throw TraceError(fmt::format("{}: field 'version' must be a string, got {}", file, describe(*value)));
  }
  version = value->get<std::string>();
  const std::size_t dot = version.find('.');
  const bool well_formed = dot != std::string::npos &&
                           parse_digits(version.substr(0, dot), 10).has_value() &&
                           parse_digits(version.substr(dot + 1), 10).has_value();
  if (!well_formed || version.substr(0, dot) != "2") {
    throw TraceError(fmt::format(
        "{}: unsupported Flight Recorder version {} (this reader supports 2.x)", file,
        quote_input(version)));
  }
}

/// A dump's own rank: its `rank` field, else the digits that end its file name.
int dump_rank(const json& doc, std::string_view file) {
  if (const json* rank = find_field(doc, "rank")) {
    const std::uint64_t r = as_unsigned(*rank, "rank");
    if (r >= (1u << 20)) fail("field 'rank' is out of range, got {}", r);
    return static_cast<int>(r);
  }
  const std::filesystem::path path{std::string(file)};
  const std::string names[] = {path.stem().string(), path.filename().string()};
  for (const std::string& name : names) {
    std::size_t start = name.size();
    while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
    const std::string digits = name.substr(start);
    if (!digits.empty() && digits.size() <= 7) return std::stoi(digits);
  }
  fail("no rank: the dump has no 'rank' field and its file name does not end in the rank "
       "(as torch names them: nccl_trace_rank_3)");
}

/// pg_config's ranks: a list of integers, or the string torch writes ("[0, 1, 2]").
std::vector<int> parse_ranks(const json& value) {
  json list = value;
  if (value.is_string()) {
    // The string is JSON again, parsed here outside the document's depth check: a deep one
    // would overflow the stack when its elements are read or shown.
    const std::string& text = value.get_ref<const std::string&>();
    if (const auto at = too_deep_at(text)) {
      fail("ranks {}: offset {}: nested deeper than {}", describe(value), *at, kMaxJsonDepth);
    }
    try {
      list = json::parse(text);
    } catch (const json::exception&) {
      fail("ranks {} is not a list of ranks", describe(value));
    }
  }
  std::vector<int> ranks;
  for (const json& r : as_array(list, "ranks")) {
    const std::uint64_t rank = as_unsigned(r, "ranks");
    if (rank >= (1u << 20)) fail("rank {} is out of range", rank);
    ranks.push_back(static_cast<int>(rank));
  }
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
    fail("ranks {} names a rank twice", describe(value));
  }
  if (ranks.empty()) fail("a process group without ranks");
  return ranks;
}

std::map<std::string, FrProcessGroup> parse_groups(const json& doc) {
  std::map<std::string, FrProcessGroup> groups;
  for (const auto& [key, value] : as_object(require_field(doc, "pg_config"), "pg_config").items()) {
    try {
      const json& pg = as_object(value, "pg_config");
      FrProcessGroup group;
      group.name = key;
      if (const json* desc = find_field(pg, "desc")) group.desc = as_string(*desc, "desc");
      group.ranks = parse_ranks(require_field(pg, "ranks"));
      groups.emplace(key, std::move(group));
    } catch (const LineError& e) {
      fail("pg_config {}: {}", quote_input(key), e.what());
    }
  }
  return groups;
}

/// Product of a shape's dimensions; a scalar (no dimensions) is one element.
std::uint64_t numel(const json& shape, const char* key) {
  std::uint64_t n = 1;
  for (const json& dim : as_array(shape, key)) {
    const std::uint64_t d = as_unsigned(dim, key);
    if (d != 0 && n > kMaxCount / d) fail("{} has more than 2^48 elements", key);
    n *= d;
  }
  return n;
}

/// Elements of every tensor in `sizes` together, and their one dtype (all must agree).
struct Buffers {
  std::uint64_t count = 0;  ///< in ranklab elements of `dtype`
  DataType dtype = DataType::u8;
  bool any = false;
};
Buffers buffers(const json& entry, const char* sizes_key, const char* dtypes_key) {
  const json& sizes = as_array(require_field(entry, sizes_key), sizes_key);
  const json& dtypes = as_array(require_field(entry, dtypes_key), dtypes_key);
  if (sizes.size() != dtypes.size()) {
    fail("{} has {} tensors but {} has {}", sizes_key, sizes.size(), dtypes_key, dtypes.size());
  }
  Buffers out;
  std::optional<std::string> first;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string& name = as_string(dtypes[i], dtypes_key);
    const std::optional<DtypeInfo> info = torch_dtype(name);
    if (!info) fail("unknown dtype {} in {}", quote_input(name), dtypes_key);
    if (first && *first != name) fail("{} mixes dtypes {} and {}", dtypes_key, *first, name);
    first = name;
    const std::uint64_t n = numel(sizes[i], sizes_key) * info->per_element;
    if (out.count + n > kMaxCount) fail("{} has more than 2^48 elements", sizes_key);
    out.count += n;
    out.dtype = info->dtype;
    out.any = true;
  }
  return out;
}

/// Torch's own files (the collective's wrappers) are not where the user called it.
bool is_torch_frame(std::string_view filename) {
  return filename.empty() || filename.front() == '<' ||
         filename.find("/torch/") != std::string_view::npos || filename.starts_with("torch/");
}

CallSite call_site(const json& entry) {
  const json* frames = find_field(entry, "frames");
  if (frames == nullptr) return {};
  const json* chosen = nullptr;
  for (const json& frame : as_array(*frames, "frames")) {
    as_object(frame, "frames");
    const json* filename = find_field(frame, "filename");
    if (chosen == nullptr) chosen = &frame;  // all torch's: the innermost
    if (filename != nullptr && !is_torch_frame(as_string(*filename, "frames.filename"))) {
      chosen = &frame;
      break;
    }
  }
  if (chosen == nullptr) return {};
  CallSite site;
  if (const json* f = find_field(*chosen, "filename")) site.file = as_string(*f, "frames.filename");
  if (const json* f = find_field(*chosen, "name")) site.function = as_string(*f, "frames.name");
  if (const json* f = find_field(*chosen, "line")) {
    site.line = static_cast<std::uint32_t>(std::min<std::uint64_t>(as_unsigned(*f, "frames.line"), UINT32_MAX));
  }
  return site;
}

/// "A->B" (send) or "A<-B" (recv): this rank's and the peer's group ranks.
void parse_peers(FrEntry& e, std::string_view meta, std::string_view arrow) {
  const std::size_t at = meta.find(arrow);
  const auto a = at == std::string_view::npos ? std::nullopt : parse_digits(meta.substr(0, at), 10);
  const auto b = at == std::string_view::npos ? std::nullopt : parse_digits(meta.substr(at + 2), 10);
  if (!a || !b || *a >= (1u << 20) || *b >= (1u << 20)) {
    fail("profiling name {} does not name its peer ('{}' after the op, group ranks)",
         quote_input(e.profiling_name), e.kind == FrOpKind::send ? "SELF->PEER" : "SELF<-PEER");
  }
  e.self_group_rank = static_cast<int>(*a);
  e.peer_group_rank = static_cast<int>(*b);
}

void parse_operation(const json& entry, FrEntry& e) {
  const std::string_view name = e.profiling_name;
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    fail("profiling name {} is not BACKEND:OP", quote_input(name));
  }
  std::string_view op = name.substr(colon + 1);
  std::string_view meta;
  if (const std::size_t space = op.find(' '); space != std::string_view::npos) {
    meta = op.substr(space + 1);
    op = op.substr(0, space);
  }
  if (op == "coalesced" || op == "_coalesced") {
    e.kind = FrOpKind::coalesced;
    return;
  }
  if (op == "send" || op == "recv") {
    e.kind = op == "send" ? FrOpKind::send : FrOpKind::recv;
    e.op = op == "send" ? OpKind::send : OpKind::recv;
    parse_peers(e, meta, op == "send" ? "->" : "<-");
    const Buffers b = op == "send" ? buffers(entry, "input_sizes", "input_dtypes")
                                   : buffers(entry, "output_sizes", "output_dtypes");
    e.count = b.count;
    e.dtype = b.dtype;
    return;
  }
  const std::optional<OpKind> kind = torch_collective(op);
  if (!kind) {
    fail("unsupported operation {} (ranklab replays all_reduce, broadcast, reduce, "
         "all_gather, reduce_scatter, all_to_all, barrier, gather, scatter, send, recv and "
         "coalesced groups of them)", quote_input(name));
  }
  e.op = *kind;
  const Buffers in = buffers(entry, "input_sizes", "input_dtypes");
  const Buffers out = buffers(entry, "output_sizes", "output_dtypes");
  // The per-rank unit of FORMAT.md: reduce_scatter and scatter by what each rank gets.
  const Buffers& unit = *kind == OpKind::reduce_scatter || *kind == OpKind::scatter ? out : in;
  e.dtype = unit.any ? unit.dtype : (out.any ? out.dtype : in.dtype);
  e.count = unit.count;
  if (*kind == OpKind::barrier) {  // torch's one-Float all_reduce_barrier: a barrier moves no data
    e.dtype = DataType::u8;
    e.count = 0;
  }
}

/// A timestamp in ns; None (pickle) or, for the discovered times, 0 (dump_json's "never") for
/// one never taken. time_created_ns is always taken, so its 0 is a time (an export's origin).
std::int64_t timestamp(const json& entry, const char* key, bool zero_is_never) {
  const json* value = find_field(entry, key);
  if (value == nullptr || value->is_null()) return kNoTime;
  const std::uint64_t ns = as_unsigned(*value, key);
  if (ns > static_cast<std::uint64_t>(INT64_MAX)) fail("{} is out of range, got {}", key, ns);
  return ns == 0 && zero_is_never ? kNoTime : static_cast<std::int64_t>(ns);
}

/// An optional text field (thread_id, thread_name).
std::string optional_text(const json& entry, const char* key) {
  const json* value = find_field(entry, key);
  return value == nullptr || value->is_null() ? std::string() : std::string(as_string(*value, key));
}

FrEntry parse_entry(const json& entry, std::size_t index) {
  as_object(entry, "entries");
  FrEntry e;
  e.index = index;
  const json& pg = as_array(require_field(entry, "process_group"), "process_group");
  if (pg.size() != 2) fail("field 'process_group' must be [NAME, DESC], got {}", describe(pg));
  e.pg = as_string(pg[0], "process_group");
  e.collective_seq = as_unsigned(require_field(entry, "collective_seq_id"), "collective_seq_id");
  e.p2p_seq = as_unsigned(require_field(entry, "p2p_seq_id"), "p2p_seq_id");
  e.profiling_name = as_string(require_field(entry, "profiling_name"), "profiling_name");
  const std::string& state = as_string(require_field(entry, "state"), "state");
  if (state != "completed" && state != "started" && state != "scheduled") {
    fail("unknown state {} (scheduled, started or completed)", quote_input(state));
  }
  e.completed = state == "completed";
  parse_operation(entry, e);
  if (const json* is_p2p = find_field(entry, "is_p2p"); is_p2p != nullptr && is_p2p->is_boolean()) {
    const bool p2p = e.kind == FrOpKind::send || e.kind == FrOpKind::recv;
    if (e.kind != FrOpKind::coalesced && is_p2p->get<bool>() != p2p) {
      fail("is_p2p is {} but {} is {}", is_p2p->get<bool>(), quote_input(e.profiling_name),
           p2p ? "point-to-point" : "a collective");
    }
  }
  e.site = call_site(entry);
  e.created_ns = timestamp(entry, "time_created_ns", false);
  e.started_ns = timestamp(entry, "time_discovered_started_ns", true);
  e.completed_ns = timestamp(entry, "time_discovered_completed_ns", true);
  e.thread_id = optional_text(entry, "thread_id");
  e.thread_name = optional_text(entry, "thread_name");
  return e;
}

/// Whether `a` and `b` are at most `max` single-byte edits apart (insert, delete, replace).
bool within_edits(std::string_view a, std::string_view b, std::size_t max) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > max) return false;
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()] <= max;
}

/// A key other than `entries` that stands where it should: named like it ("entires",
/// "Entries") or holding what it holds (a list of objects with a profiling_name).
const std::string* damaged_entries_key(const json& doc) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const json& value = it.value();
    const bool holds_entries = value.is_array() && !value.empty() && value.front().is_object() &&
                               value.front().contains("profiling_name");
    if (holds_entries || within_edits(it.key(), "entries", 2)) return &it.key();
  }
  return nullptr;
}

}  // namespace

FrDump read_fr_dump(std::string_view bytes, std::string_view file) {
  const json doc = parse_document(bytes, file);
  if (!doc.is_object()) throw TraceError(fmt::format("{}: a dump must be a dict, got {}", file, describe(doc)));
  FrDump dump;
  dump.file = std::string(file);
  check_version(doc, file, dump.version);
  try {
    dump.rank = dump_rank(doc, file);
    dump.groups = parse_groups(doc);
    if (const json* lib = find_field(doc, "comm_lib_version"); lib != nullptr && !lib->is_null()) {
      dump.comm_lib_version = as_string(*lib, "comm_lib_version");
    }
  } catch (const LineError& e) {
    throw TraceError(fmt::format("{}: {}", file, e.what()));
  }
  // Absent when the dump has none (torch leaves the key out); a damaged key is not that.
  const json* entries = find_field(doc, "entries");
  if (entries == nullptr) {
    if (const std::string* key = damaged_entries_key(doc)) {
      throw TraceError(fmt::format("{}: no field 'entries', but a field {} stands in its place "
                                   "(a damaged dump? one without entries has neither)",
                                   file, quote_input(*key)));
    }
    return dump;
  }
  if (!entries->is_array()) {
    throw TraceError(fmt::format("{}: field 'entries' must be a list, got {}", file, describe(*entries)));
  }
  for (std::size_t i = 0; i < entries->size(); ++i) {
    try {
      dump.entries.push_back(parse_entry((*entries)[i], i));
    } catch (const LineError& e) {
      throw TraceError(fmt::format("{}: entry {}: {}", file, i, e.what()));
    }
  }
  return dump;
}

}  // namespace ranklab::detail
