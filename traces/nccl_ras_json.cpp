// The JSON form of a RAS snapshot (traces/nccl_ras.hpp), as NCCL 2.30.7's rasDumpCommsToJSON
// (src/ras/client_support.cc) writes it. nlohmann parses it; an error names the line of the
// field at fault (or of the object that lacks it), found by a second, SAX pass over the text
// that only runs when there is an error.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "traces/detail/json_fields.hpp"
#include "traces/error.hpp"
#include "traces/nccl_ras.hpp"
#include "traces/quote_input.hpp"

namespace ranklab::detail::ras {
namespace {

using json = nlohmann::json;

constexpr std::int64_t kMaxRank = 1 << 24;

/// 1 + the newlines before `offset`.
int line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// Finds the line where the value at a JSON pointer starts: its key's line in an object, its
/// opening bracket's in an array (a scalar array element: the line after it at worst).
class LineFinder : public nlohmann::json_sax<json> {
 public:
  LineFinder(std::istringstream& in, std::string_view text, std::string target)
      : in_(in), text_(text), target_(std::move(target)) {}

  int line() const { return line_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    frames_.back().key = key;
    check(element_pointer());
    return line_ == 0;
  }
  /// Where the parser gave up: a number beyond a double ("number overflow") is refused here.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    at_failure();
    return false;
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string key;
  };

  static std::string escape(const std::string& key) {
    std::string out;
    for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
  }

  /// The JSON pointer of the value being read: every open object's key, every array's index.
  std::string element_pointer() const {
    std::string out;
    for (const Frame& frame : frames_) out += "/" + (frame.array ? std::to_string(frame.index) : escape(frame.key));
    return out;
  }
  bool value() {
    if (!frames_.empty() && frames_.back().array) check(element_pointer());
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return line_ == 0;
  }
  bool open(bool array) {
    if (frames_.empty()) check("");
    if (!frames_.empty() && frames_.back().array) check(element_pointer());
    frames_.push_back({array, 0, {}});
    return line_ == 0;
  }
  bool close() {
    frames_.pop_back();
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return line_ == 0;
  }
  void check(const std::string& pointer) {
    if (line_ == 0 && pointer == target_) at_failure();
  }
  /// The line of the character the lexer read last.
  void at_failure() {
    if (line_ != 0) return;
    const std::streamoff offset = in_.rdbuf()->pubseekoff(0, std::ios_base::cur, std::ios_base::in);
    line_ = line_at(text_, offset <= 0 ? text_.size() : static_cast<std::size_t>(offset) - 1);
  }

  std::istringstream& in_;
  std::string_view text_;
  std::string target_;
  std::vector<Frame> frames_;
  int line_ = 0;
};

int line_of(std::string_view text, const std::string& pointer) {
  std::istringstream in{std::string(text)};
  LineFinder finder(in, text, pointer);
  json::sax_parse(in, &finder);
  return finder.line() == 0 ? 1 : finder.line();
}

class JsonReader {
 public:
  JsonReader(std::string_view name, std::string_view text) : text_(text) {
    out_.file = std::string(name);
    out_.form = "json";
  }

  RasSnapshot read() {
    json document;
    try {
      document = json::parse(text_);
    } catch (const json::parse_error& error) {
      // nlohmann says "[json.exception.parse_error.101] parse error at line L, column C: REASON".
      std::string_view reason = error.what();
      const std::size_t column = reason.find("column ");
      const std::size_t colon = reason.find(": ", column == std::string_view::npos ? 0 : column);
      if (colon != std::string_view::npos) reason.remove_prefix(colon + 2);
      throw TraceError(fmt::format("{}:{}: invalid JSON: {}", out_.file,
                                   line_at(text_, error.byte == 0 ? 0 : error.byte - 1), reason));
    } catch (const json::exception& error) {
      // A number too large for a double (406 "number overflow parsing '1e999'"): found again by
      // the SAX pass, whose target no pointer matches.
      std::string_view reason = error.what();
      if (const std::size_t close = reason.find("] "); close != std::string_view::npos) reason.remove_prefix(close + 2);
      throw TraceError(fmt::format("{}:{}: invalid JSON: {}", out_.file, line_of(text_, "\x01"), excerpt(reason)));
    }
    guarded("", [&] { read_document(document); });
    return std::move(out_);
  }

 private:
  /// Runs `read`, turning its LineError into "FILE:LINE: reason" at `pointer`'s line.
  template <typename Read>
  void guarded(const std::string& pointer, Read&& read) {
    try {
      read();
    } catch (const LineError& error) {
      // The innermost pointer that failed: a field's own, set by field().
      const std::string& at = failed_at_.empty() ? pointer : failed_at_;
      throw TraceError(fmt::format("{}:{}: {}", out_.file, line_of(text_, at), error.what()));
    }
  }

  /// The field `key` of the object at `pointer`; errors about it point at it.
  const json& field(const json& object, const std::string& pointer, const char* key) {
    failed_at_ = pointer;
    const json& value = require_field(object, key);
    failed_at_ = pointer + "/" + key;
    return value;
  }

  void read_document(const json& document) {
    if (!document.is_object()) fail("a RAS snapshot is a JSON object, got {}", describe(document));
    out_.nccl_version = as_string(field(document, "", "nccl_version"), "nccl_version");
    if (const json* stamp = find_field(document, "timestamp")) out_.timestamp = as_string(*stamp, "timestamp");
    const json& comms = as_array(field(document, "", "communicators"), "communicators");
    if (const json* ras = find_field(document, "ras"); ras && ras->is_object()) {
      if (const json* timeouts = find_field(*ras, "timeouts_count")) {
        failed_at_ = "/ras/timeouts_count";
        out_.timeouts = static_cast<int>(std::min<std::uint64_t>(as_unsigned(*timeouts, "timeouts_count"), 1 << 30));
      }
    }
    for (std::size_t c = 0; c < comms.size(); ++c) {
      const std::string pointer = fmt::format("/communicators/{}", c);
      failed_at_ = pointer;
      out_.communicators.push_back(read_communicator(as_object(comms[c], "communicators[]"), pointer));
    }
  }

  RasCommunicator read_communicator(const json& object, const std::string& pointer) {
    RasCommunicator comm;
    const std::string hash(as_string(field(object, pointer, "hash"), "hash"));
    const std::optional<std::uint64_t> value =
        hash.starts_with("0x") ? parse_digits(std::string_view(hash).substr(2), 16) : std::nullopt;
    if (!value) fail("hash must be 0x and hex digits, got {}", quote_input(hash));
    comm.hash = fmt::format("{:016x}", *value);
    const std::int64_t size = as_integer(field(object, pointer, "size"), "size");
    if (size < 1 || size > kMaxRank) fail("size {} out of range [1, {}]", size, kMaxRank);
    comm.size = static_cast<int>(size);
    const json& ranks = as_array(field(object, pointer, "ranks"), "ranks");
    const json& missing = as_array(field(object, pointer, "missing_ranks"), "missing_ranks");
    std::vector<bool> seen(static_cast<std::size_t>(comm.size), false);
    std::vector<std::pair<int, std::array<std::uint64_t, kRasCollectives>>> counts;
    std::map<std::string, std::vector<int>> notes;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const std::string at = fmt::format("{}/ranks/{}", pointer, r);
      failed_at_ = at;
      const json& rank = as_object(ranks[r], "ranks[]");
      const int number = member(rank, at, comm, seen);
      RasRankProcess process;
      process.rank = number;
      read_process(rank, process);
      if (process.pid >= 0 && !process.host.empty()) comm.processes.push_back(std::move(process));
      std::array<std::uint64_t, kRasCollectives> launched{};
      const json& by_kind = as_object(field(rank, at, "collective_counts"), "collective_counts");
      for (std::size_t k = 0; k < kRasCollectives; ++k) {
        const std::string key(ras_collective_nccl_name(k));
        launched[k] = as_unsigned(field(by_kind, at + "/collective_counts", key.c_str()), key.c_str());
      }
      counts.emplace_back(number, launched);
      for (std::string& note : status_notes(as_object(field(rank, at, "status"), "status"), at + "/status")) {
        notes[note].push_back(number);
      }
    }
    for (std::size_t m = 0; m < missing.size(); ++m) {
      const std::string at = fmt::format("{}/missing_ranks/{}", pointer, m);
      failed_at_ = at;
      const json& object_m = as_object(missing[m], "missing_ranks[]");
      RasMissingRank rank;
      rank.rank = member(object_m, at, comm, seen);
      read_process(object_m, rank);
      const json& status = as_object(field(object_m, at, "status"), "status");
      rank.unresponsive = as_boolean(field(status, at + "/status", "unresponsive"), "unresponsive");
      rank.dead = as_boolean(field(status, at + "/status", "considered_dead"), "considered_dead");
      comm.missing.push_back(std::move(rank));
    }
    failed_at_ = pointer;
    std::sort(comm.missing.begin(), comm.missing.end(),
              [](const RasMissingRank& a, const RasMissingRank& b) { return a.rank < b.rank; });
    std::sort(comm.processes.begin(), comm.processes.end(),
              [](const RasRankProcess& a, const RasRankProcess& b) { return a.rank < b.rank; });
    comm.missing_count = static_cast<int>(comm.missing.size());
    split_counts(comm, counts);
    for (auto& [what, members] : notes) {
      std::sort(members.begin(), members.end());
      comm.notes.push_back({what, {static_cast<int>(members.size()), members}});
    }
    return comm;
  }

  /// A rank's host, pid and cuda_dev, where given ("unknown" and -1 where RAS did not know).
  template <typename Rank>
  static void read_process(const json& object, Rank& out) {
    if (const json* host = find_field(object, "host")) out.host = as_string(*host, "host");
    if (out.host == "unknown") out.host.clear();
    const auto small = [](std::int64_t value) { return static_cast<int>(std::clamp<std::int64_t>(value, -1, 1 << 30)); };
    if (const json* pid = find_field(object, "pid")) out.pid = small(as_integer(*pid, "pid"));
    if (const json* dev = find_field(object, "cuda_dev")) out.cuda_dev = small(as_integer(*dev, "cuda_dev"));
  }

  /// A rank's "rank" field: in the communicator, and named once across ranks and missing_ranks.
  int member(const json& object, const std::string& at, const RasCommunicator& comm, std::vector<bool>& seen) {
    const std::int64_t rank = as_integer(field(object, at, "rank"), "rank");
    if (rank < 0 || rank >= comm.size) fail("rank {} out of range [0, {})", rank, comm.size);
    if (seen[static_cast<std::size_t>(rank)]) fail("rank {} listed twice", rank);
    seen[static_cast<std::size_t>(rank)] = true;
    return static_cast<int>(rank);
  }

  static bool as_boolean(const json& value, const char* key) {
    if (!value.is_boolean()) fail("field '{}' must be true or false, got {}", key, describe(value));
    return value.get<bool>();
  }

  /// What a rank's status says beyond "running": ncclResult_t values as nccl.h numbers them.
  std::vector<std::string> status_notes(const json& status, const std::string& at) {
    std::vector<std::string> notes;
    const auto result = [&](const char* key) {
      return as_integer(field(status, at, key), key);
    };
    const std::int64_t init = result("init_state");
    const std::int64_t async = result("async_error");
    if (as_boolean(field(status, at, "abort_flag"), "abort_flag")) notes.push_back("status ABORT");
    else if (as_boolean(field(status, at, "finalize_called"), "finalize_called") ||
             as_boolean(field(status, at, "destroy_flag"), "destroy_flag")) notes.push_back("status FINALIZE");
    else if (init != 0) notes.push_back("status INIT");
    if (init != 0 && init != 7) notes.push_back(fmt::format("initialization error: {}", result_name(init)));
    if (async != 0 && async != 7) notes.push_back(fmt::format("asynchronous error: {}", result_name(async)));
    return notes;
  }

  /// ncclResult_t as RAS's text names it (ncclErrorToString in client_support.cc).
  static std::string result_name(std::int64_t value) {
    static const char* const kNames[] = {"Success", "Unhandled CUDA error", "System error",
                                         "Internal error", "Invalid argument", "Invalid usage",
                                         "Remote process error", "NCCL operation in progress"};
    if (value >= 0 && value < 8) return kNames[value];
    return fmt::format("Unexpected error ({})", value);
  }

  /// The answering ranks' counts: one value for every kind where all agree, else a split.
  static void split_counts(RasCommunicator& comm,
                           const std::vector<std::pair<int, std::array<std::uint64_t, kRasCollectives>>>& counts) {
    if (counts.empty()) return;
    std::array<std::uint64_t, kRasCollectives> shared = counts.front().second;
    for (std::size_t k = 0; k < kRasCollectives; ++k) {
      std::map<std::uint64_t, std::vector<int>, std::greater<>> groups;
      for (const auto& [rank, launched] : counts) groups[launched[k]].push_back(rank);
      if (groups.size() == 1) continue;
      RasCountSplit split{k, {}};
      for (auto& [launched, ranks] : groups) {
        std::sort(ranks.begin(), ranks.end());
        split.groups.push_back({launched, {static_cast<int>(ranks.size()), ranks}});
      }
      comm.splits.push_back(std::move(split));
      shared[k] = 0;
    }
    if (comm.splits.empty()) comm.counts = shared;
  }

  std::string_view text_;
  RasSnapshot out_;
  std::string failed_at_;
};

}  // namespace

RasSnapshot parse_json(std::string_view name, std::string_view text) {
  return JsonReader(name, text).read();
}

}  // namespace ranklab::detail::ras
