// The pickle writer of pickle_writer.hpp: one opcode stream, written depth first.
#include "traces/pickle_writer.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>

#include "traces/detail/pickle_common.hpp"
#include "traces/error.hpp"
#include "traces/pickle_reader.hpp"

namespace ranklab {
namespace {

using namespace detail::pickle;  // the opcodes, valid_utf8
using nlohmann::ordered_json;

/// Python's pickle writes dicts and lists in batches of 1000 items between MARKs.
constexpr std::size_t kBatch = 1000;

class PickleWriter {
 public:
  explicit PickleWriter(const PickleWriteOptions& options) : options_(options) {}

  std::string run(const ordered_json& value) {
    out_.push_back(static_cast<char>(kProto));
    out_.push_back(2);
    write(value, false, 0);
    out_.push_back(static_cast<char>(kStop));
    return std::move(out_);
  }

 private:
  void op(Op code) { out_.push_back(static_cast<char>(code)); }

  template <typename T>
  void little_endian(T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff));
    }
  }

  void integer(std::int64_t v) {
    if (v >= 0 && v <= 0xff) {
      op(kBinInt1);
      little_endian(static_cast<std::uint8_t>(v));
    } else if (v >= 0 && v <= 0xffff) {
      op(kBinInt2);
      little_endian(static_cast<std::uint16_t>(v));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op(kBinInt);
      little_endian(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
    } else {
      // LONG1: the fewest little-endian two's-complement bytes that keep the sign.
      std::uint8_t bytes[8];
      std::size_t n = 0;
      auto rest = static_cast<std::uint64_t>(v);
      for (; n < 8; ++n) bytes[n] = static_cast<std::uint8_t>(rest >> (8 * n));
      n = 8;
      while (n > 1) {
        const bool negative = v < 0;
        const std::uint8_t top = bytes[n - 1];
        const bool sign_of_next = (bytes[n - 2] & 0x80) != 0;
        if ((!negative && top == 0x00 && !sign_of_next) || (negative && top == 0xff && sign_of_next)) {
          --n;
        } else {
          break;
        }
      }
      op(kLong1);
      out_.push_back(static_cast<char>(n));
      for (std::size_t i = 0; i < n; ++i) out_.push_back(static_cast<char>(bytes[i]));
    }
  }

  void unsigned_integer(std::uint64_t v) {
    if (v <= static_cast<std::uint64_t>(INT64_MAX)) return integer(static_cast<std::int64_t>(v));
    op(kLong1);  // 2^63 and above: nine bytes, the last a zero sign byte
    out_.push_back(9);
    little_endian(v);
    out_.push_back(0);
  }

  void real(double v) {
    op(kBinFloat);  // big-endian IEEE 754 double
    const auto bits = std::bit_cast<std::uint64_t>(v);
    for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }

  void text(const std::string& s) {
    if (!valid_utf8(s)) throw TraceError(fmt::format("cannot pickle '{:.40}': not UTF-8 text", s));
    op(kBinUnicode);
    little_endian(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }

  void sequence(const ordered_json& items, bool as_tuple, std::size_t depth) {
    if (as_tuple) {
      static constexpr Op kSmall[] = {kEmptyTuple, kTuple1, kTuple2, kTuple3};
      if (items.size() > 3) op(kMark);
      for (const auto& item : items) write(item, false, depth + 1);
      op(items.size() > 3 ? kTuple : kSmall[items.size()]);
      return;
    }
    op(kEmptyList);
    for (std::size_t i = 0; i < items.size(); i += kBatch) {
      op(kMark);
      for (std::size_t j = i; j < std::min(items.size(), i + kBatch); ++j) {
        write(items[j], false, depth + 1);
      }
      op(kAppends);
    }
  }

  void dict(const ordered_json& object, std::size_t depth) {
    op(kEmptyDict);
    std::size_t in_batch = 0;
    for (const auto& [key, value] : object.items()) {
      if (in_batch == 0) op(kMark);
      text(key);
      write(value, options_.tuple_keys.count(key) != 0, depth + 1);
      if (++in_batch == kBatch) {
        op(kSetItems);
        in_batch = 0;
      }
    }
    if (in_batch != 0) op(kSetItems);
  }

  void write(const ordered_json& value, bool as_tuple, std::size_t depth) {
    if (depth >= kMaxPickleDepth) {
      throw TraceError(fmt::format("cannot pickle a value nested deeper than {}", kMaxPickleDepth));
    }
    switch (value.type()) {
      case ordered_json::value_t::null: return op(kNone);
      case ordered_json::value_t::boolean: return op(value.get<bool>() ? kNewTrue : kNewFalse);
      case ordered_json::value_t::number_integer: return integer(value.get<std::int64_t>());
      case ordered_json::value_t::number_unsigned: return unsigned_integer(value.get<std::uint64_t>());
      case ordered_json::value_t::number_float: return real(value.get<double>());
      case ordered_json::value_t::string: return text(value.get_ref<const std::string&>());
      case ordered_json::value_t::array: return sequence(value, as_tuple, depth);
      case ordered_json::value_t::object: return dict(value, depth);
      default: throw TraceError("cannot pickle a binary value");
    }
  }

  const PickleWriteOptions& options_;
  std::string out_;
};

}  // namespace

std::string write_pickle(const ordered_json& value, const PickleWriteOptions& options) {
  return PickleWriter(options).run(value);
}

}  // namespace ranklab
