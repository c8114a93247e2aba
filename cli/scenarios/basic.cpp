// The basic scenarios: a correct ring and all_reduce, and one small program for each kind
// of failure the emulator reports.
#include "cli/scenarios/catalogue.hpp"

#include <cstdint>
#include <stdexcept>
#include <boost/container/small_vector.hpp>

#include "comm/errors.hpp"

namespace ranklab::cli {
namespace {

// ring: each rank isends its rank to the next and receives from the previous.
void ring(Communicator& world, const ScenarioParams&, ScenarioOutput&) {
  const int me = world.rank(), n = world.size();
  const std::int64_t mine = me;
  std::int64_t from_left = -1;
  Work sent = world.isend(std::span(&mine, 1), (me + 1) % n, /*tag=*/0);
  world.recv(std::span(&from_left, 1), (me + n - 1) % n, /*tag=*/0);
  sent.wait();
  if (from_left != (me + n - 1) % n) {
    throw Error(fmt::format("rank {}: received {} from the left, expected {}", me, from_left,
                            (me + n - 1) % n));
  }
}

// allreduce: x[i] = 1000 * rank + i, summed: 1000 * n(n-1)/2 + n * i, exactly (int64).
void allreduce(Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
  const int me = world.rank();
  const auto n = static_cast<std::int64_t>(world.size());
  boost::container::small_vector<std::int64_t, 16> x(params.count);  // no malloc (RESULTS §3)
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1000 * me + static_cast<std::int64_t>(i);
  world.all_reduce(std::span(x.data(), x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t expected = 1000 * n * (n - 1) / 2 + n * static_cast<std::int64_t>(i);
    if (x[i] != expected) {
      throw Error(fmt::format("rank {}: all_reduce element {} is {}, expected {}", me, i, x[i],
                              expected));
    }
  }
  world.barrier();
  if (me == 0) {
    out.say(me, fmt::format("all_reduce of {} x i64 over {} matches the closed form", x.size(),
                            plural(static_cast<std::size_t>(n), "rank")));
  }
}

// send-send: ranks 0 and 1 both send before receiving. Rendezvous: deadlock. Eager: fine.
void send_send(Communicator& world, const ScenarioParams&, ScenarioOutput&) {
  const int me = world.rank();
  if (me > 1) return;
  const std::int32_t mine = me;
  std::int32_t theirs = -1;
  world.send(std::span(&mine, 1), 1 - me, /*tag=*/0);
  world.recv(std::span(&theirs, 1), 1 - me, /*tag=*/0);
}

// missing-barrier: the last rank returns without entering the barrier.
void missing_barrier(Communicator& world, const ScenarioParams&, ScenarioOutput&) {
  if (world.rank() == world.size() - 1) return;
  world.barrier();
}

// collective-mismatch: the last rank's all_reduce has one element more.
void collective_mismatch(Communicator& world, const ScenarioParams& params, ScenarioOutput&) {
  const bool odd_one = world.rank() == world.size() - 1;
  std::vector<float> x(params.count + (odd_one ? 1 : 0), 1.0f);
  world.all_reduce(std::span(x));
}

// crash: rank 3 (or the last, in smaller worlds) throws instead of joining the all_reduce.
void crash(Communicator& world, const ScenarioParams& params, ScenarioOutput&) {
  const int victim = std::min(3, world.size() - 1);
  std::vector<float> x(params.count, 1.0f);
  if (world.rank() == victim) {
    throw std::runtime_error("simulated failure during all_reduce");
  }
  world.all_reduce(std::span(x));
}

// group-order: ranks 0 and 1 share two groups and call all_reduce on them in opposite
// orders; each blocks in its first call, so the run is reported as an order mismatch.
void group_order(Communicator& world, const ScenarioParams& params, ScenarioOutput&) {
  const int me = world.rank();
  if (me > 1) return;
  const std::vector<int> pair = {0, 1};
  Communicator first = world.new_group(pair, "a");
  Communicator second = world.new_group(pair, "b");
  std::vector<float> x(params.count, 1.0f);
  if (me == 1) std::swap(first, second);
  first.all_reduce(std::span(x));
  second.all_reduce(std::span(x));
}

// message-mismatch: rank 0 sends one element more than rank 1's receive buffer holds.
void message_mismatch(Communicator& world, const ScenarioParams& params, ScenarioOutput&) {
  const int me = world.rank();
  if (me == 0) {
    const std::vector<float> x(params.count + 1, 1.0f);
    world.send(std::span(x), 1, /*tag=*/0);
  } else if (me == 1) {
    std::vector<float> x(params.count);
    world.recv(std::span(x), 0, /*tag=*/0);
  }
}

// wildcard-race: rank 0 receives one message from every other rank from any source; which
// arrives first depends on the schedule, and rank 0 reports the order it saw.
void wildcard_race(Communicator& world, const ScenarioParams&, ScenarioOutput& out) {
  const int me = world.rank();
  if (me != 0) {
    const std::int32_t mine = me;
    world.send(std::span(&mine, 1), 0, /*tag=*/0);
    return;
  }
  std::string order;
  for (int i = 1; i < world.size(); ++i) {
    std::int32_t value = -1;
    const RecvStatus status = world.recv(std::span(&value, 1), kAnySource, /*tag=*/0);
    order += i > 1 ? " " : "";
    order += std::to_string(status.source);
  }
  out.say(0, "rank 0 matched senders in order: " + order);
}

}  // namespace

std::vector<Scenario> basic_scenarios() {
  return {
      {.name = "ring",
       .summary = "each rank isends to the next and receives from the previous: passes",
       .default_world = 4,
       .min_world = 1,
       .body = ring},
      {.name = "allreduce",
       .summary = "all_reduce of rank-dependent data, checked against its closed form: passes",
       .default_world = 8,
       .min_world = 1,
       .body = allreduce},
      {.name = "send-send",
       .summary =
           "ranks 0 and 1 both send before receiving: deadlock under rendezvous, passes under eager",
       .default_world = 2,
       .min_world = 2,
       .body = send_send,
       .expect = {RunStatus::deadlock, CulpritKind::send_cycle, {0, 1}}},
      {.name = "missing-barrier",
       .summary = "the last rank returns without entering a barrier: deadlock naming it as finished",
       .default_world = 4,
       .min_world = 2,
       .body = missing_barrier,
       .expect = {RunStatus::deadlock, CulpritKind::missing_participant, {3}}},
      {.name = "collective-mismatch",
       .summary =
           "the last rank's all_reduce has a different count: mismatch, both signatures shown",
       .default_world = 4,
       .min_world = 2,
       .body = collective_mismatch,
       .expect = {RunStatus::mismatch, CulpritKind::collective_mismatch, {3}}},
      {.name = "crash",
       .summary = "rank 3 throws instead of joining an all_reduce: rank failure, rank 3 the root cause",
       .default_world = 4,
       .min_world = 2,
       .body = crash,
       .expect = {RunStatus::rank_failed, CulpritKind::rank_failure, {3}}},
      {.name = "group-order",
       .summary =
           "ranks 0 and 1 call all_reduce on two shared groups in opposite orders: order mismatch",
       .default_world = 2,
       .min_world = 2,
       .body = group_order,
       .expect = {RunStatus::mismatch, CulpritKind::collective_order, {1}}},
      {.name = "message-mismatch",
       .summary = "rank 0 sends more elements than rank 1's receive holds: mismatch naming both sides",
       .default_world = 2,
       .min_world = 2,
       .body = message_mismatch,
       .expect = {RunStatus::mismatch, CulpritKind::message_mismatch, {}}},
      {.name = "wildcard-race",
       .summary =
           "receives from any source whose matches depend on the schedule: the trace shows which",
       .default_world = 4,
       .min_world = 2,
       .body = wildcard_race,
       .expect = {RunStatus::ok, CulpritKind::nondeterminism, {}, /*needs_exploration=*/true}},
  };
}

}  // namespace ranklab::cli
