// Fault plans: parsing, validation, and the injector that applies them (faults.hpp).
#include "emulator/faults.hpp"

#include <cstring>

#include <fmt/format.h>

#include "emulator/detail/fault_injector.hpp"
#include "emulator/detail/operation.hpp"
#include "emulator/detail/parse_number.hpp"
#include "traces/hash.hpp"

namespace ranklab {
namespace {

// A delay reorders a rank against the others; a million yields (a third of a second here)
// outlasts the other ranks' work in any run, and more would only end in the watchdog.
constexpr std::uint64_t kMaxDelaySteps = 1'000'000;

constexpr std::string_view kForms =
    "expected kill:RANK@OPNUM, drop:SRC->DST#N, delay:RANK@OPNUM:STEPS or corrupt:SRC->DST#N";

[[noreturn]] void bad_fault(std::string_view text) {
  throw UsageError(fmt::format("invalid fault '{}': {}", text, kForms));
}

int parse_rank(std::string_view text, std::string_view whole) {
  const std::uint64_t value = detail::parse_number(text, "rank", whole);
  if (value > 1u << 24) throw UsageError(fmt::format("invalid rank in fault '{}'", whole));
  return static_cast<int>(value);
}

// "RANK@OPNUM" (kill) or "RANK@OPNUM:STEPS" (delay).
void parse_at(std::string_view rest, std::string_view whole, bool with_steps, FaultSpec& f) {
  const auto at = rest.find('@');
  if (at == std::string_view::npos) bad_fault(whole);
  f.rank = parse_rank(rest.substr(0, at), whole);
  std::string_view op = rest.substr(at + 1);
  if (with_steps) {
    const auto colon = op.find(':');
    if (colon == std::string_view::npos) bad_fault(whole);
    f.steps = detail::parse_number(op.substr(colon + 1), "steps", whole);
    if (f.steps > kMaxDelaySteps) {
      throw UsageError(fmt::format("invalid steps in fault '{}': at most {} yields", whole,
                                   kMaxDelaySteps));
    }
    op = op.substr(0, colon);
  }
  f.index = detail::parse_number(op, "operation number", whole);
}

// "SRC->DST#N" (drop, corrupt).
void parse_message(std::string_view rest, std::string_view whole, FaultSpec& f) {
  const auto arrow = rest.find("->");
  const auto hash = rest.find('#');
  if (arrow == std::string_view::npos || hash == std::string_view::npos || hash < arrow) {
    bad_fault(whole);
  }
  f.rank = parse_rank(rest.substr(0, arrow), whole);
  f.dst = parse_rank(rest.substr(arrow + 2, hash - arrow - 2), whole);
  f.index = detail::parse_number(rest.substr(hash + 1), "message number", whole);
}

std::uint64_t pair_key(int src, int dst) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
         static_cast<std::uint32_t>(dst);
}

}  // namespace

FaultSpec FaultSpec::parse(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) bad_fault(text);
  const std::string_view name = text.substr(0, colon);
  const std::string_view rest = text.substr(colon + 1);
  FaultSpec f;
  if (name == "kill") {
    f.kind = Kind::kill;
    parse_at(rest, text, /*with_steps=*/false, f);
  } else if (name == "delay") {
    f.kind = Kind::delay;
    parse_at(rest, text, /*with_steps=*/true, f);
  } else if (name == "drop" || name == "corrupt") {
    f.kind = name == "drop" ? Kind::drop : Kind::corrupt;
    parse_message(rest, text, f);
  } else {
    bad_fault(text);
  }
  return f;
}

std::string FaultSpec::to_string() const {
  switch (kind) {
    case Kind::kill: return fmt::format("kill:{}@{}", rank, index);
    case Kind::delay: return fmt::format("delay:{}@{}:{}", rank, index, steps);
    case Kind::drop: return fmt::format("drop:{}->{}#{}", rank, dst, index);
    case Kind::corrupt: return fmt::format("corrupt:{}->{}#{}", rank, dst, index);
  }
  return "?";
}

void FaultPlan::validate(int world_size) const {
  for (const FaultSpec& f : faults) {
    const bool message = f.kind == FaultSpec::Kind::drop || f.kind == FaultSpec::Kind::corrupt;
    const int ranks[] = {f.rank, message ? f.dst : f.rank};
    for (const int r : ranks) {
      if (r >= world_size) {
        throw UsageError(fmt::format("fault {}: rank {} is outside the world of {} ranks",
                                     f.to_string(), r, world_size));
      }
    }
    if (message && f.rank == f.dst) {
      throw UsageError(fmt::format("fault {}: a message fault needs two different ranks",
                                   f.to_string()));
    }
  }
}

namespace detail {

FaultInjector::FaultInjector(const FaultPlan& plan, int world_size)
    : post_faults_(static_cast<std::size_t>(world_size)) {
  plan.validate(world_size);
  entries_.reserve(plan.faults.size());  // at_* hand out pointers into it
  for (const FaultSpec& f : plan.faults) {
    entries_.push_back(Entry{f, {}});
    if (f.kind == FaultSpec::Kind::kill || f.kind == FaultSpec::Kind::delay) {
      post_faults_[static_cast<std::size_t>(f.rank)].push_back(entries_.size() - 1);
    } else {
      sent_.emplace(pair_key(f.rank, f.dst), 0);
    }
  }
}

FaultInjector::Entry& FaultInjector::entry_of(const FaultSpec& fault) {
  for (Entry& e : entries_) {
    if (&e.spec == &fault) return e;
  }
  return entries_.front();  // unreachable: every spec handed out is one of ours
}

const FaultSpec* FaultInjector::at_post(int rank, std::uint64_t op) {
  for (const std::size_t i : post_faults_[static_cast<std::size_t>(rank)]) {
    const Entry& e = entries_[i];
    if (e.spec.index == op && e.what.empty()) return &e.spec;
  }
  return nullptr;
}

void FaultInjector::note_post(const FaultSpec& fault, std::string what) {
  entry_of(fault).what = std::move(what);
}

const FaultSpec* FaultInjector::at_send(int src, int dst) {
  const auto it = sent_.find(pair_key(src, dst));
  if (it == sent_.end()) return nullptr;  // no fault names this pair: not even counted
  const std::uint64_t index = it->second++;
  for (const Entry& e : entries_) {
    const bool message = e.spec.kind == FaultSpec::Kind::drop || e.spec.kind == FaultSpec::Kind::corrupt;
    if (message && e.spec.rank == src && e.spec.dst == dst && e.spec.index == index) {
      return &e.spec;
    }
  }
  return nullptr;
}

void FaultInjector::note_drop(const FaultSpec& fault, const Operation& send, int dst) {
  dropped_.push_back(DroppedMessage{.group = send.group,
                                    .src = send.rank,
                                    .dst = dst,
                                    .tag = send.tag,
                                    .count = send.send_data.count,
                                    .dtype = send.send_data.dtype,
                                    .send_seq = send.rank_seq,
                                    .fault = fault.to_string()});
  entry_of(fault).what = fmt::format(
      "rank {}'s send op #{} to rank {} tag {} in {} ({} x {}) was lost", send.rank,
      send.rank_seq, dst, send.tag, send.group->name(), send.send_data.count,
      ranklab::to_string(send.send_data.dtype));
}

std::uint64_t FaultInjector::corrupt(const FaultSpec& fault, const Operation& send,
                                     const Operation& recv) {
  const std::size_t element = size_of(send.send_data.dtype);
  const std::size_t count = send.send_data.count;
  auto* bytes = static_cast<unsigned char*>(recv.recv_data.data);
  const std::uint64_t sent_hash = payload_hash(send.send_data.as_bytes());
  if (count > 0) {
    // Little-endian: the element's last byte holds the sign and the exponent's top bits.
    bytes[(count / 2) * element + element - 1] ^= 0x40;
  }
  const std::uint64_t received_hash = payload_hash(
      std::span<const std::byte>(static_cast<const std::byte*>(recv.recv_data.data), count * element));
  entry_of(fault).what = fmt::format(
      "rank {}'s send op #{} to rank {} tag {} in {} ({} x {}) arrived at rank {}'s op #{} with "
      "element {} corrupted (payload hash sent {}, received {})",
      send.rank, send.rank_seq, recv.rank, send.tag, send.group->name(), count,
      ranklab::to_string(send.send_data.dtype), recv.rank, recv.rank_seq, count / 2,
      format_hash(sent_hash), format_hash(received_hash));
  return received_hash;
}

std::vector<std::string> FaultInjector::notes(const std::vector<std::uint64_t>& posted) const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) {
    if (!e.what.empty()) {
      out.push_back(fmt::format("{} fired: {}", e.spec.to_string(), e.what));
      continue;
    }
    const bool message =
        e.spec.kind == FaultSpec::Kind::drop || e.spec.kind == FaultSpec::Kind::corrupt;
    if (message) {
      const auto it = sent_.find(pair_key(e.spec.rank, e.spec.dst));
      out.push_back(fmt::format("{} never fired: rank {} sent {} message{} to rank {}",
                                e.spec.to_string(), e.spec.rank, it->second,
                                it->second == 1 ? "" : "s", e.spec.dst));
    } else {
      const std::uint64_t n = posted[static_cast<std::size_t>(e.spec.rank)];
      out.push_back(fmt::format("{} never fired: rank {} posted {} operation{}",
                                e.spec.to_string(), e.spec.rank, n, n == 1 ? "" : "s"));
    }
  }
  return out;
}

}  // namespace detail
}  // namespace ranklab
