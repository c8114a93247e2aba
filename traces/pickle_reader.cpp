// The pickle subset of pickle_reader.hpp. Values are built in an arena (indices, not
// copies), so the memo shares them as pickle does: a dict memoized when still empty and
// filled later is filled in the memo too. JSON is made only at the end, from the arena.
#include "traces/pickle_reader.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/detail/pickle_common.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using namespace detail::pickle;  // the opcodes, valid_utf8 (traces/detail/pickle_common.hpp)

// The arena is capped so that a small hostile input cannot make it large.
constexpr std::size_t kMaxNodes = kMaxPickleValues;

struct Node {
  enum class Kind : std::uint8_t { none, boolean, integer, real, string, list, tuple, dict, builder };
  Kind kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;                  ///< a string, or a builder's name
  std::vector<std::uint32_t> items;  ///< list/tuple elements; dict: key, value, key, value...
};


class PickleMachine {
 public:
  PickleMachine(std::string_view bytes, std::string_view name) : in_(bytes), name_(name) {}

  nlohmann::json run() {
    while (true) {
      op_at_ = pos_;
      if (pos_ >= in_.size()) fail("truncated pickle: it ends without a STOP opcode");
      const auto op = static_cast<std::uint8_t>(in_[pos_++]);
      if (op == kStop) break;
      step(op);
    }
    if (!marks_.empty()) fail("STOP with {} MARKs still open", marks_.size());
    if (stack_.size() != 1) fail("STOP with {} values on the stack (expected 1)", stack_.size());
    std::size_t budget = kMaxPickleValues;
    return to_json(stack_.back(), 0, budget);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw TraceError(fmt::format("{}: offset {}: {}", name_, op_at_,
                                 fmt::format(format, std::forward<Args>(args)...)));
  }

  std::string_view take(std::uint64_t n, const char* what) {
    if (n > in_.size() - pos_) {
      fail("truncated pickle: {} needs {} bytes, {} left", what, n, in_.size() - pos_);
    }
    const std::string_view out = in_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

  std::uint64_t little_endian(std::size_t n, const char* what) {
    const std::string_view b = take(n, what);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }

  std::uint32_t add(Node node) {
    if (nodes_.size() >= kMaxNodes) fail("more than {} values", kMaxNodes);
    nodes_.push_back(std::move(node));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  void push(Node node) { stack_.push_back(add(std::move(node))); }
  void push_integer(std::int64_t v) { push({.kind = Node::Kind::integer, .integer = v}); }

  std::uint32_t pop(const char* what) {
    const std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) fail("{} with no value on the stack", what);
    const std::uint32_t top = stack_.back();
    stack_.pop_back();
    return top;
  }

  /// The values above the last MARK, which is removed.
  std::vector<std::uint32_t> pop_mark(const char* what) {
    if (marks_.empty()) fail("{} without a MARK", what);
    const std::size_t at = marks_.back();
    marks_.pop_back();
    std::vector<std::uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(at), stack_.end());
    stack_.resize(at);
    return items;
  }

  Node& top_of_kind(Node::Kind kind, const char* what) {
    const std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) fail("{} with no container on the stack", what);
    Node& node = nodes_[stack_.back()];
    if (node.kind != kind) fail("{} on a value that is not a {}", what, kind == Node::Kind::list ? "list" : "dict");
    return node;
  }

  /// The container below the values just popped (APPENDS, SETITEMS).
  Node& container_below(Node::Kind kind, const char* what) {
    if (stack_.empty()) fail("{} with no container below the MARK", what);
    Node& node = nodes_[stack_.back()];
    if (node.kind != kind) fail("{} on a value that is not a {}", what, kind == Node::Kind::list ? "list" : "dict");
    return node;
  }

  void push_string(std::uint64_t length) {
    const std::string_view text = take(length, "a string");
    if (!valid_utf8(text)) fail("a string that is not valid UTF-8");
    push({.kind = Node::Kind::string, .text = std::string(text)});
  }

  void push_tuple(std::vector<std::uint32_t> items) {
    push({.kind = Node::Kind::tuple, .items = std::move(items)});
  }

  void memo_put(std::uint64_t index) {
    if (stack_.empty()) fail("memo PUT with an empty stack");
    memo_[index] = stack_.back();
  }
  void memo_get(std::uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail("memo GET of index {}, never PUT", index);
    stack_.push_back(it->second);
  }

  void global() {
    const std::string module = line("GLOBAL's module");
    const std::string name = line("GLOBAL's name");
    static constexpr std::string_view kBuilders[] = {"build_intlist", "build_doublelist",
                                                     "build_boollist", "build_stringlist",
                                                     "restore_type_tag"};
    bool known = false;
    for (const std::string_view b : kBuilders) known = known || name == b;
    if (module != "torch.jit._pickle" || !known) {
      fail("unsupported pickle opcode 0x{:02x} (GLOBAL {}.{}: only torch.jit._pickle's list "
           "builders are read)", static_cast<unsigned>(kGlobal), module, name);
    }
    push({.kind = Node::Kind::builder, .text = name});
  }

  std::string line(const char* what) {
    const std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos || end - pos_ > 256) fail("truncated pickle: {} has no end of line", what);
    std::string out(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  /// A builder called on its arguments: the first argument, as it is.
  void reduce() {
    const std::uint32_t args = pop("REDUCE");
    const std::uint32_t callable = pop("REDUCE");
    if (nodes_[callable].kind != Node::Kind::builder) fail("unsupported pickle opcode 0x52 (REDUCE of a value that is not a list builder)");
    const Node& a = nodes_[args];
    if (a.kind != Node::Kind::tuple || a.items.empty()) fail("REDUCE of {} without arguments", nodes_[callable].text);
    stack_.push_back(a.items.front());
  }

  void step(std::uint8_t op) {
    switch (op) {
      case kProto: {
        const auto version = little_endian(1, "PROTO");
        if (version > 5) fail("pickle protocol {} (this reader knows 2 to 5)", version);
        return;
      }
      case kFrame: (void)little_endian(8, "FRAME"); return;  // a size hint only
      case kMark: marks_.push_back(stack_.size()); return;
      case kPop: (void)pop("POP"); return;
      case kPopMark: (void)pop_mark("POP_MARK"); return;
      case kNone: push({}); return;
      case kNewTrue: push({.kind = Node::Kind::boolean, .boolean = true}); return;
      case kNewFalse: push({.kind = Node::Kind::boolean, .boolean = false}); return;
      case kBinInt1: push_integer(static_cast<std::int64_t>(little_endian(1, "BININT1"))); return;
      case kBinInt2: push_integer(static_cast<std::int64_t>(little_endian(2, "BININT2"))); return;
      case kBinInt:
        push_integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(little_endian(4, "BININT"))));
        return;
      case kLong1: {
        const auto n = static_cast<std::size_t>(little_endian(1, "LONG1"));
        if (n > 8) fail("an integer of {} bytes (over 64 bits)", n);
        std::uint64_t v = little_endian(n, "LONG1");
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);  // sign
        push_integer(static_cast<std::int64_t>(v));
        return;
      }
      case kBinFloat: {
        const std::string_view b = take(8, "BINFLOAT");
        std::uint64_t bits = 0;
        for (const char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);  // big-endian
        push({.kind = Node::Kind::real, .real = std::bit_cast<double>(bits)});
        return;
      }
      case kShortBinUnicode: push_string(little_endian(1, "SHORT_BINUNICODE")); return;
      case kBinUnicode: push_string(little_endian(4, "BINUNICODE")); return;
      case kBinUnicode8: push_string(little_endian(8, "BINUNICODE8")); return;
      case kEmptyTuple: push_tuple({}); return;
      case kTuple: push_tuple(pop_mark("TUPLE")); return;
      case kTuple1: case kTuple2: case kTuple3: {
        std::vector<std::uint32_t> items(op - kTuple1 + 1);
        for (std::size_t i = items.size(); i-- > 0;) items[i] = pop("TUPLEn");
        push_tuple(std::move(items));
        return;
      }
      case kEmptyList: push({.kind = Node::Kind::list}); return;
      case kList: push({.kind = Node::Kind::list, .items = pop_mark("LIST")}); return;
      case kAppend: {
        const std::uint32_t value = pop("APPEND");
        top_of_kind(Node::Kind::list, "APPEND").items.push_back(value);
        return;
      }
      case kAppends: {
        const std::vector<std::uint32_t> values = pop_mark("APPENDS");
        auto& items = container_below(Node::Kind::list, "APPENDS").items;
        items.insert(items.end(), values.begin(), values.end());
        return;
      }
      case kEmptyDict: push({.kind = Node::Kind::dict}); return;
      case kDict: {
        std::vector<std::uint32_t> items = pop_mark("DICT");
        if (items.size() % 2 != 0) fail("DICT with an odd number of values");
        push({.kind = Node::Kind::dict, .items = std::move(items)});
        return;
      }
      case kSetItem: {
        const std::uint32_t value = pop("SETITEM");
        const std::uint32_t key = pop("SETITEM");
        auto& items = top_of_kind(Node::Kind::dict, "SETITEM").items;
        items.push_back(key);
        items.push_back(value);
        return;
      }
      case kSetItems: {
        const std::vector<std::uint32_t> values = pop_mark("SETITEMS");
        if (values.size() % 2 != 0) fail("SETITEMS with an odd number of values");
        auto& items = container_below(Node::Kind::dict, "SETITEMS").items;
        items.insert(items.end(), values.begin(), values.end());
        return;
      }
      case kBinPut: memo_put(little_endian(1, "BINPUT")); return;
      case kLongBinPut: memo_put(little_endian(4, "LONG_BINPUT")); return;
      case kMemoize: memo_put(memo_.size()); return;
      case kBinGet: memo_get(little_endian(1, "BINGET")); return;
      case kLongBinGet: memo_get(little_endian(4, "LONG_BINGET")); return;
      case kGlobal: global(); return;
      case kReduce: reduce(); return;
      default: fail("unsupported pickle opcode 0x{:02x}", static_cast<unsigned>(op));
    }
  }

  std::string key_text(std::uint32_t index) const {
    const Node& key = nodes_[index];
    if (key.kind == Node::Kind::string) return key.text;
    if (key.kind == Node::Kind::integer) return std::to_string(key.integer);
    throw TraceError(fmt::format("{}: a dict key that is neither a str nor an int", name_));
  }

  nlohmann::json to_json(std::uint32_t index, std::size_t depth, std::size_t& budget) const {
    if (depth > kMaxPickleDepth) {
      throw TraceError(fmt::format("{}: values nested deeper than {} (or a value that contains itself)",
                                   name_, kMaxPickleDepth));
    }
    if (budget-- == 0) {
      throw TraceError(fmt::format("{}: the memo repeats values into more than {} in all", name_,
                                   kMaxPickleValues));
    }
    const Node& node = nodes_[index];
    switch (node.kind) {
      case Node::Kind::none: return nullptr;
      case Node::Kind::boolean: return node.boolean;
      case Node::Kind::integer:  // as nlohmann's parser types them: unsigned when >= 0
        if (node.integer >= 0) return static_cast<std::uint64_t>(node.integer);
        return node.integer;
      case Node::Kind::real: return node.real;
      case Node::Kind::string: return node.text;
      case Node::Kind::list:
      case Node::Kind::tuple: {
        nlohmann::json out = nlohmann::json::array();
        for (const std::uint32_t item : node.items) out.push_back(to_json(item, depth + 1, budget));
        return out;
      }
      case Node::Kind::dict: {
        nlohmann::json out = nlohmann::json::object();
        for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
          out[key_text(node.items[i])] = to_json(node.items[i + 1], depth + 1, budget);
        }
        return out;
      }
      case Node::Kind::builder: break;
    }
    throw TraceError(fmt::format("{}: a list builder ({}) that was never called", name_, node.text));
  }

  std::string_view in_;
  std::string_view name_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;  ///< offset of the opcode being run, for errors
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;  ///< stack sizes at each open MARK
  std::unordered_map<std::uint64_t, std::uint32_t> memo_;
};

}  // namespace

nlohmann::json read_pickle(std::string_view bytes, std::string_view name) {
  return PickleMachine(bytes, name).run();
}

}  // namespace ranklab
