// NCCL's debug lines (formats in nccl_log_line.hpp), read with string_view and from_chars:
// a log holds a line per operation per rank, and most lines of a real log are neither an
// operation nor an init, so the test for those comes first and is one search.
#include "traces/detail/nccl_log_line.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstring>
#include <utility>

#include "traces/quote_input.hpp"

namespace ranklab::detail::nccl {
namespace {

constexpr std::string_view kInfo = "NCCL INFO ";
constexpr std::string_view kOpCount = ": opCount ";
constexpr std::string_view kComplete = "Init COMPLETE";

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw LineError(fmt::format(format, std::forward<Args>(args)...));
}

/// The words of a message, one at a time, with the reasons a word is not what NCCL prints.
class Words {
 public:
  explicit Words(std::string_view text) : text_(text) {}

  bool done() {
    skip_spaces();
    return pos_ >= text_.size();
  }

  std::string_view next(std::string_view what) {
    const std::string_view word = next_or_empty();
    if (word.empty()) fail("the line ends before {}", what);
    return word;
  }

  /// The word `word`, or the reason it is missing. (Compared in place: a log has a line per
  /// operation per rank, and this is most of reading one.)
  void expect(std::string_view word) {
    skip_spaces();
    const std::string_view rest = text_.substr(pos_);
    if (rest.starts_with(word) && (rest.size() == word.size() || rest[word.size()] == ' ')) {
      pos_ += word.size();
      return;
    }
    const std::string_view got = next_or_empty();
    if (got.empty()) fail("the line ends before '{}'", word);
    fail("expected '{}', got {}", word, quote_input(got));
  }

  template <typename T>
  T number(std::string_view what, int base = 10) {
    skip_spaces();
    T value{};
    const char* end = text_.data() + text_.size();
    const auto [stop, error] = std::from_chars(text_.data() + pos_, end, value, base);
    if (error == std::errc() && (stop == end || *stop == ' ')) {
      pos_ = static_cast<std::size_t>(stop - text_.data());
      return value;
    }
    const std::string_view word = next(what);
    fail("{} is not a number: {}", what, quote_input(word));
  }

  /// A %p: "0x..." or "(nil)".
  std::uint64_t pointer(std::string_view what) {
    const std::string_view word = next(what);
    if (word == "(nil)") return 0;
    std::uint64_t value = 0;
    const char* end = word.data() + word.size();
    const bool hex = word.size() > 2 && word[0] == '0' && word[1] == 'x';
    const auto [stop, error] = std::from_chars(word.data() + (hex ? 2 : 0), end, value, 16);
    if (!hex || error != std::errc() || stop != end) {
      fail("{} is not a pointer: {}", what, quote_input(word));
    }
    return value;
  }

 private:
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  std::string_view next_or_empty() {
    skip_spaces();
    const std::size_t start = pos_;
    // memchr: the words skipped unread (buffers, stream) are 14 characters and more.
    const void* space = std::memchr(text_.data() + pos_, ' ', text_.size() - pos_);
    pos_ = space == nullptr ? text_.size() : static_cast<std::size_t>(static_cast<const char*>(space) - text_.data());
    return text_.substr(start, pos_ - start);
  }
  std::string_view text_;
  std::size_t pos_ = 0;
};

/// "HOST:PID:TID [DEV] " before "NCCL INFO ": the "HOST:PID" that printed the line.
std::string_view process_of(std::string_view before) {
  // before = "...HOST:PID:TID [DEV] "
  if (before.size() < 4 || before.back() != ' ' || before[before.size() - 2] != ']') {
    fail("no '[DEV] ' before 'NCCL INFO' (NCCL prints HOST:PID:TID [DEV] NCCL INFO)");
  }
  const std::size_t open = before.rfind('[', before.size() - 2);
  if (open == std::string_view::npos || open < 2 || before[open - 1] != ' ') {
    fail("no 'HOST:PID:TID [DEV]' before 'NCCL INFO'");
  }
  std::string_view who = before.substr(0, open - 1);
  if (const std::size_t space = who.rfind(' '); space != std::string_view::npos) {
    who = who.substr(space + 1);
  }
  const std::size_t tid = who.rfind(':');
  const std::size_t pid = tid == std::string_view::npos || tid == 0 ? tid : who.rfind(':', tid - 1);
  if (pid == std::string_view::npos || pid == 0 || tid == pid + 1 || tid + 1 == who.size()) {
    fail("expected HOST:PID:TID before '[DEV] NCCL INFO', got {}", quote_input(who));
  }
  return who.substr(0, tid);
}

OpLine parse_op(std::string_view message, std::size_t colon) {
  OpLine op;
  op.name = message.substr(0, colon);
  Words words(message.substr(colon + kOpCount.size()));
  op.op_count = words.number<std::uint64_t>("opCount", 16);
  // The buffers and the stream say nothing ranklab replays: present, not read.
  words.expect("sendbuff");
  (void)words.next("sendbuff's value");
  words.expect("recvbuff");
  (void)words.next("recvbuff's value");
  words.expect("count");
  op.count = words.number<std::uint64_t>("count");
  words.expect("datatype");
  op.datatype = words.number<std::int64_t>("datatype");
  words.expect("op");
  op.op = words.number<std::int64_t>("op");
  words.expect("root");
  op.root = words.number<std::int64_t>("root");
  words.expect("comm");
  op.comm = words.pointer("comm");
  const std::string_view nranks = words.next("[nranks=N]");
  constexpr std::string_view kOpen = "[nranks=";
  if (!nranks.starts_with(kOpen) || !nranks.ends_with("]")) {
    fail("expected [nranks=N], got {}", quote_input(nranks));
  }
  const std::string_view digits = nranks.substr(kOpen.size(), nranks.size() - kOpen.size() - 1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), op.nranks);
  if (error != std::errc() || end != digits.data() + digits.size() || op.nranks < 1) {
    fail("expected [nranks=N], got {}", quote_input(nranks));
  }
  words.expect("stream");
  (void)words.next("stream's value");
  if (op.comm == 0) fail("comm is (nil)");
  return op;
}

InitLine parse_init(std::string_view message) {
  // Drop "- Init COMPLETE" (2.30's split line has "key %d - Init", its START line "key %d-").
  message.remove_suffix(kComplete.size());
  while (!message.empty() && (message.back() == ' ' || message.back() == '-')) message.remove_suffix(1);
  Words words(message);
  std::string_view word = words.next("'comm'");
  if (word != "comm") word = words.next("'comm'");  // the function: "ncclCommInitRank comm ..."
  if (word != "comm") fail("expected 'comm %p' in an Init COMPLETE line, got {}", quote_input(word));
  InitLine init;
  init.comm = words.pointer("comm");
  bool rank = false, nranks = false, dev = false;
  while (!words.done()) {
    const std::string_view key = words.next("a field");
    if (key == "rank") {
      init.rank = words.number<int>("rank");
      rank = true;
    } else if (key == "nranks" || key == "nRanks") {
      init.nranks = words.number<int>("nranks");
      nranks = true;
    } else if (key == "cudaDev") {
      init.cuda_dev = words.number<int>("cudaDev");
      dev = true;
    } else if (key == "commId") {
      const std::string_view id = words.next("commId");
      std::uint64_t value = 0;
      const bool hex = id.starts_with("0x");
      const char* end = id.data() + id.size();
      const auto [stop, error] = std::from_chars(id.data() + (hex ? 2 : 0), end, value, 16);
      if (!hex || error != std::errc() || stop != end) {
        fail("commId is not 0x followed by hex digits: {}", quote_input(id));
      }
      if (value != 0) init.comm_id = value;
    } else if (key == "parent") {
      init.parent = words.pointer("parent");
    } else if (key == "childCount" || key == "splitCount") {
      init.split_count = words.number<std::int64_t>(key);
    } else if (key == "color") {
      init.color = words.number<std::int64_t>("color");
    } else {
      (void)words.next(key);  // nvmlDev, busId, key: not needed
    }
  }
  if (!rank || !nranks || !dev) fail("an Init COMPLETE line without rank, nranks and cudaDev");
  if (init.comm == 0) fail("comm is (nil)");
  if (init.nranks < 1 || init.rank < 0 || init.rank >= init.nranks) {
    fail("rank {} is not in [0, nranks {})", init.rank, init.nranks);
  }
  return init;
}

/// Where "NCCL INFO " starts in `line`, or npos. NCCL puts it right after "[DEV] ", so the
/// search goes from one ']' to the next (memchr) instead of testing every byte.
std::size_t find_info(std::string_view line) {
  const char* at = line.data();
  const char* end = line.data() + line.size();
  while (at < end) {
    const void* bracket = std::memchr(at, ']', static_cast<std::size_t>(end - at));
    if (bracket == nullptr) break;
    at = static_cast<const char*>(bracket) + 1;
    const auto rest = std::string_view(at, static_cast<std::size_t>(end - at));
    if (rest.size() > kInfo.size() && rest[0] == ' ' && rest.substr(1).starts_with(kInfo)) {
      return static_cast<std::size_t>(at + 1 - line.data());
    }
  }
  // Not after "] ": a line that still says NCCL INFO is read, for process_of to refuse.
  const void* info = memmem(line.data(), line.size(), kInfo.data(), kInfo.size());
  return info == nullptr ? std::string_view::npos
                         : static_cast<std::size_t>(static_cast<const char*>(info) - line.data());
}

/// Where ": opCount " follows the operation's name, the message's first word; or npos.
std::size_t find_op_count(std::string_view message) {
  const std::size_t space = message.find(' ');
  if (space == std::string_view::npos || space < 2 || message[space - 1] != ':') return std::string_view::npos;
  return message.substr(space - 1).starts_with(kOpCount) ? space - 1 : std::string_view::npos;
}

}  // namespace

ParsedLine parse_line(std::string_view line) {
  ParsedLine out;
  const std::size_t info = find_info(line);
  if (info == std::string_view::npos) return out;
  std::string_view message = line.substr(info + kInfo.size());
  while (!message.empty() && (message.back() == '\r' || message.back() == ' ')) message.remove_suffix(1);
  const std::size_t colon = find_op_count(message);
  if (colon != std::string_view::npos) {
    out.process = process_of(line.substr(0, info));
    out.op = parse_op(message, colon);
    out.kind = LineKind::op;
  } else if (message.ends_with(kComplete)) {
    out.process = process_of(line.substr(0, info));
    out.init = parse_init(message);
    out.kind = LineKind::init;
  }
  return out;
}

std::optional<ElementType> element_type(std::int64_t value) {
  static constexpr std::array<ElementType, 12> kTypes{{
      {DataType::u8, 1, "ncclInt8"},       {DataType::u8, 1, "ncclUint8"},
      {DataType::i32, 1, "ncclInt32"},     {DataType::u8, 4, "ncclUint32"},
      {DataType::i64, 1, "ncclInt64"},     {DataType::u8, 8, "ncclUint64"},
      {DataType::f16, 1, "ncclFloat16"},   {DataType::f32, 1, "ncclFloat32"},
      {DataType::f64, 1, "ncclFloat64"},   {DataType::bf16, 1, "ncclBfloat16"},
      {DataType::u8, 1, "ncclFloat8e4m3"}, {DataType::u8, 1, "ncclFloat8e5m2"},
  }};
  if (value < 0 || value >= static_cast<std::int64_t>(kTypes.size())) return std::nullopt;
  return kTypes[static_cast<std::size_t>(value)];
}

std::optional<ReduceOp> reduce_op(std::int64_t value) {
  static constexpr std::array<ReduceOp, 5> kOps{ReduceOp::sum, ReduceOp::prod, ReduceOp::max,
                                                ReduceOp::min, ReduceOp::avg};
  if (value < 0 || value > INT32_MAX) return std::nullopt;
  return value < 5 ? kOps[static_cast<std::size_t>(value)] : ReduceOp::sum;
}

std::optional<OpKind> op_kind(std::string_view name) {
  static constexpr std::pair<std::string_view, OpKind> kNames[] = {
      {"AllReduce", OpKind::all_reduce}, {"AllGather", OpKind::all_gather},
      {"ReduceScatter", OpKind::reduce_scatter}, {"Broadcast", OpKind::broadcast},
      {"Reduce", OpKind::reduce}, {"Send", OpKind::send}, {"Recv", OpKind::recv},
      {"AlltoAll", OpKind::all_to_all}, {"Gather", OpKind::gather}, {"Scatter", OpKind::scatter},
  };
  for (const auto& [known, kind] : kNames) {
    if (known == name) return kind;
  }
  return std::nullopt;
}

}  // namespace ranklab::detail::nccl
