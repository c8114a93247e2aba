// What the fabric records: byte-identical trace files for one configuration, the same
// per-rank event sequences under any policy and thread count, message ids shared by a send
// and its receive, collective indices, hashes, any-source matches and pending operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/temp_dir.hpp"
#include "traces/jsonl.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

// Ring exchange, all_reduce, a broadcast, collectives on tp pairs and a barrier: every
// event of it is independent of the schedule except the Lamport clocks.
void deterministic_program(Communicator& world) {
  const int me = world.rank(), n = world.size();
  const std::vector<std::int64_t> mine = fill<std::int64_t>(me, 3);
  std::vector<std::int64_t> left(3);
  Work sent = world.isend(mine, (me + 1) % n, /*tag=*/1);
  world.recv(std::span(left), (me + n - 1) % n, /*tag=*/1);
  sent.wait();
  std::vector<float> x = fill<float>(me, 6);
  world.all_reduce(std::span(x));
  world.broadcast(std::span(x), {.root = n - 1});
  std::vector<int> pair = {me - me % 2};
  if (pair[0] + 1 < n) pair.push_back(pair[0] + 1);
  Communicator tp = world.new_group(pair, "tp");
  std::vector<double> y = fill<double>(me, 2);
  tp.all_reduce(std::span(y), {.op = ReduceOp::max});
  if (tp.size() == 2) {
    const int other = 1 - tp.rank();
    std::vector<double> z(2);
    Work s = tp.isend(y, other, /*tag=*/7);
    tp.recv(std::span(z), other, /*tag=*/7);
    s.wait();
  }
  world.barrier();
}

// Every rank but 0 sends its rank to 0; rank 0 receives them from any source.
void wildcard_program(Communicator& world) {
  const int me = world.rank();
  if (me != 0) {
    const std::int32_t v = me;
    world.send(std::span(&v, 1), 0, /*tag=*/0);
    return;
  }
  for (int i = 1; i < world.size(); ++i) {
    std::int32_t v = -1;
    world.recv(std::span(&v, 1), kAnySource, /*tag=*/0);
  }
}

Trace run_traced(ClusterOptions options, const std::function<void(Communicator&)>& program,
                 RunStatus expected = RunStatus::ok) {
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  const RunReport report = run_ranks(options, program);
  EXPECT_EQ(report.status, expected) << report.summary << "\n" << report.details;
  return sink->trace();
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Each rank's events as trace lines with the Lamport clock zeroed and groups by name.
std::vector<std::vector<std::string>> sequences_without_lamport(const Trace& trace) {
  std::vector<std::vector<std::string>> out;
  for (const auto& events : trace.ranks) {
    out.emplace_back();
    for (TraceEvent e : events) {
      e.lamport = 0;
      out.back().push_back(format_event(e, trace.header));
    }
  }
  return out;
}

// Each rank's events as complete trace lines, Lamport clocks included.
std::vector<std::vector<std::string>> sequences(const Trace& trace) {
  std::vector<std::vector<std::string>> out;
  for (const auto& events : trace.ranks) {
    out.emplace_back();
    for (const TraceEvent& e : events) out.back().push_back(format_event(e, trace.header));
  }
  return out;
}

const TraceEvent* find_event(const Trace& trace, int rank, std::uint64_t rank_seq) {
  for (const auto& e : trace.ranks[static_cast<std::size_t>(rank)]) {
    if (e.rank_seq == rank_seq) return &e;
  }
  return nullptr;
}

class TraceTest : public ::testing::TestWithParam<ClusterParam> {};

//! Any policy and any thread count give each rank the same event sequence (all fields but
//! lamport) as rank-order on one thread, and the same groups.
TEST_P(TraceTest, SameEventSequencesAcrossPoliciesAndThreads) {
  ClusterOptions reference_options = GetParam().options();
  reference_options.policy = SchedulePolicy{};
  reference_options.threads = 1;
  const Trace reference = run_traced(reference_options, deterministic_program);
  const Trace trace = run_traced(GetParam().options(), deterministic_program);
  EXPECT_EQ(trace.header.world_size, GetParam().world);
  EXPECT_EQ(sequences_without_lamport(trace), sequences_without_lamport(reference));
  auto names = [](const Trace& t) {
    std::multiset<std::string> out;
    for (const auto& g : t.header.groups) out.insert(g.name);
    return out;
  };
  EXPECT_EQ(names(trace), names(reference));
  EXPECT_EQ(trace.header.groups.front().name, "world");
}

//! Lamport clocks advance only in the owner's fiber (at posting, and when it observes a
//! completion), so they too are the same under every policy and thread count.
TEST_P(TraceTest, SameLamportClocksAcrossPoliciesAndThreads) {
  ClusterOptions reference_options = GetParam().options();
  reference_options.policy = SchedulePolicy{};
  reference_options.threads = 1;
  const Trace reference = run_traced(reference_options, deterministic_program);
  const Trace trace = run_traced(GetParam().options(), deterministic_program);
  EXPECT_EQ(sequences(trace), sequences(reference));
}

//! Every completed receive carries the id of the send it matched, and that send names the
//! receiver, the tag, the count and the payload hash the receive recorded; every send is
//! received once.
TEST_P(TraceTest, MessageIdsLinkSendsAndReceives) {
  const Trace trace = run_traced(GetParam().options(), deterministic_program);
  std::map<std::pair<int, std::uint64_t>, int> received;
  for (const auto& events : trace.ranks) {
    for (const auto& e : events) {
      EXPECT_EQ(e.status, OpStatus::completed);
      if (e.op != OpKind::recv) continue;
      ASSERT_TRUE(e.msg.valid());
      EXPECT_EQ(e.msg.sender, e.peer);
      const TraceEvent* send = find_event(trace, e.msg.sender, e.msg.sender_seq);
      ASSERT_NE(send, nullptr) << "recv " << e.rank << "#" << e.rank_seq;
      EXPECT_EQ(send->op, OpKind::send);
      EXPECT_EQ(send->msg, e.msg);
      EXPECT_EQ(send->peer, e.rank);
      EXPECT_EQ(send->tag, e.tag);
      EXPECT_EQ(send->group, e.group);
      EXPECT_EQ(send->count, e.count);
      EXPECT_EQ(send->bytes, e.bytes);
      EXPECT_TRUE(send->has_hash && e.has_hash);
      EXPECT_EQ(send->hash, e.hash);
      EXPECT_LT(send->lamport, e.lamport) << "a receive happens after its send";
      ++received[{e.msg.sender, e.msg.sender_seq}];
    }
  }
  for (const auto& events : trace.ranks) {
    for (const auto& e : events) {
      if (e.op != OpKind::send) continue;
      EXPECT_EQ(e.msg.sender, e.rank);
      EXPECT_EQ(e.msg.sender_seq, e.rank_seq);
      EXPECT_EQ((received[{e.rank, e.rank_seq}]), 1) << "send " << e.rank << "#" << e.rank_seq;
    }
  }
}

//! Each rank's collectives on a group are numbered 0, 1, 2, ...; the k-th collective of a
//! group is the same call with the same Lamport clock on every member; hashes are recorded
//! for data-carrying operations and not for barriers.
TEST_P(TraceTest, CollectiveIndicesAndHashes) {
  const Trace trace = run_traced(GetParam().options(), deterministic_program);
  std::map<std::pair<std::uint32_t, std::int64_t>, TraceEvent> first_of;  // (group, coll_seq)
  for (const auto& events : trace.ranks) {
    std::map<std::uint32_t, std::int64_t> next;
    std::uint64_t last_seq = 0;
    bool first = true;
    for (const auto& e : events) {
      EXPECT_TRUE(first || e.rank_seq > last_seq) << "rank_seq ascends";
      first = false;
      last_seq = e.rank_seq;
      EXPECT_EQ(e.has_hash, e.op != OpKind::barrier) << to_string(e.op);
      EXPECT_EQ(e.bytes, e.count * size_of(e.dtype));
      if (is_point_to_point(e.op)) {
        EXPECT_EQ(e.coll_seq, kNoCollective);
        continue;
      }
      EXPECT_EQ(e.coll_seq, next[e.group]++) << "rank " << e.rank << " " << to_string(e.op);
      auto [it, inserted] = first_of.try_emplace({e.group, e.coll_seq}, e);
      if (!inserted) {
        EXPECT_EQ(it->second.op, e.op);
        EXPECT_EQ(it->second.count, e.count);
        EXPECT_EQ(it->second.dtype, e.dtype);
        EXPECT_EQ(it->second.root, e.root);
        EXPECT_EQ(it->second.lamport, e.lamport) << "members of one collective share a clock";
      }
    }
  }
  // all_reduce #0 of world: every rank's input hash differs (x = rank*1000 + i).
  const int n = GetParam().world;
  if (n >= 2) {
    const TraceEvent* a = find_event(trace, 0, 2);
    const TraceEvent* b = find_event(trace, 1, 2);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->op, OpKind::all_reduce);
    EXPECT_NE(a->hash, b->hash);
  }
}

//! Events of one call site share one CallSite (emulator/detail/recorded_sites.hpp): every
//! rank's all_reduce names the same object, so a million ranks' events hold a reference
//! each instead of four strings. Any policy and thread count.
TEST_P(TraceTest, EventsOfOneCallSiteShareOneCopy) {
  const Trace trace = run_traced(GetParam().options(), deterministic_program);
  std::set<const CallSite*> copies;
  std::vector<CallSite> distinct;
  for (const auto& events : trace.ranks) {
    for (const auto& e : events) {
      ASSERT_FALSE(e.site.empty()) << "rank " << e.rank << " op " << e.rank_seq;
      copies.insert(&*e.site);
      if (std::find(distinct.begin(), distinct.end(), *e.site) == distinct.end()) {
        distinct.push_back(*e.site);
      }
    }
  }
  EXPECT_GE(distinct.size(), 5u);  // isend, recv, all_reduce, broadcast, ..., barrier
  EXPECT_EQ(copies.size(), distinct.size());
}

//! A rank that leaves a non-blocking collective unfinished while the run aborts (here: it
//! throws, and the handle's destructor waits for the collective the others never join)
//! still has that collective in the trace, pending and blocked: the fabric keeps the
//! operation its call slot lists after its owner lets go. Any policy and thread count.
// Needs a rank that waits for another: worlds of two ranks and more.
class TraceOfWaitingRanksTest : public TraceTest {};

TEST_P(TraceOfWaitingRanksTest, AbandonedCollectiveStaysPendingInTheTrace) {
  const int n = GetParam().world;
  const int quitter = n - 1;
  const Trace trace = run_traced(
      GetParam().options(),
      [&](Communicator& world) {
        std::vector<float> x(3, 1.0f);
        if (world.rank() == quitter) {
          const Work pending = world.iall_reduce(as_mutable_buffer(std::span(x)));
          throw std::runtime_error("gives up with an all_reduce in flight");
        }
        world.recv(std::span(x), quitter, /*tag=*/0);  // never sent
      },
      RunStatus::deadlock);
  const auto& events = trace.ranks[static_cast<std::size_t>(quitter)];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].op, OpKind::all_reduce);
  EXPECT_EQ(events[0].status, OpStatus::pending);
  EXPECT_EQ(events[0].count, 3u);
  EXPECT_TRUE(events[0].blocked);
  for (int r = 0; r < quitter; ++r) {
    ASSERT_EQ(trace.ranks[static_cast<std::size_t>(r)].size(), 1u) << "rank " << r;
    EXPECT_EQ(trace.ranks[static_cast<std::size_t>(r)][0].op, OpKind::recv);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, TraceTest, ::testing::ValuesIn(cluster_params()), ParamName());
INSTANTIATE_TEST_SUITE_P(Worlds, TraceOfWaitingRanksTest,
                         ::testing::ValuesIn(cluster_params(worlds_from(2))), ParamName());

class TraceFileTest : public ::testing::TestWithParam<ClusterParam> {};

//! The same configuration, policy and seed write byte-identical trace files, which the
//! reader accepts, and whose header records the world, the groups and the configuration.
TEST_P(TraceFileTest, SameConfigurationGivesByteIdenticalFiles) {
  TempDir dir("ranklab_trace");
  std::vector<std::string> files;
  for (const auto* name : {"a.jsonl", "b.jsonl"}) {
    ClusterOptions options = GetParam().options();
    options.trace_config = {{"program", "trace_test"}};
    auto sink = std::make_shared<JsonlFileSink>(dir / name);
    options.trace_sink = sink;
    EXPECT_TRUE(run_ok(run_ranks(options, [](Communicator& world) {
      deterministic_program(world);
      wildcard_program(world);
    })));
    files.push_back(read_bytes(dir / name));
  }
  ASSERT_FALSE(files[0].empty());
  EXPECT_TRUE(files[0] == files[1]) << "the two files differ";
  const Trace trace = read_trace_file(dir / "a.jsonl");
  const int n = GetParam().world;
  EXPECT_EQ(trace.header.world_size, n);
  EXPECT_EQ(trace.header.config.at("policy"), GetParam().options().policy.to_string());
  EXPECT_EQ(trace.header.config.at("threads"), 1);
  EXPECT_EQ(trace.header.config.at("send_mode"), "rendezvous");
  EXPECT_EQ(trace.header.config.at("program"), "trace_test");
  bool has_tp01 = false;
  for (const auto& g : trace.header.groups) {
    if (g.name == "tp[0,1]") has_tp01 = g.ranks == std::vector<int>{0, 1};
  }
  EXPECT_EQ(has_tp01, n >= 2);
  EXPECT_EQ(static_cast<int>(trace.ranks.size()), n);
}

//! A receive from any source records the sender it matched as its peer and that sender's
//! message id and hash; the matches together cover every sender once.
TEST_P(TraceFileTest, AnySourceRecordsWhoMatched) {
  const Trace trace = run_traced(GetParam().options(), wildcard_program);
  const int n = GetParam().world;
  std::set<int> senders;
  for (const auto& e : trace.ranks[0]) {
    ASSERT_EQ(e.op, OpKind::recv);
    EXPECT_EQ(e.msg.sender, e.peer);
    const TraceEvent* send = find_event(trace, e.peer, e.msg.sender_seq);
    ASSERT_NE(send, nullptr);
    EXPECT_EQ(send->hash, e.hash);
    senders.insert(e.peer);
  }
  EXPECT_EQ(static_cast<int>(senders.size()), n - 1);
  EXPECT_EQ(static_cast<int>(trace.ranks[0].size()), n - 1);
}

INSTANTIATE_TEST_SUITE_P(Worlds, TraceFileTest, ::testing::ValuesIn([] {
                           std::vector<ClusterParam> out;
                           for (const auto& p : cluster_params()) {
                             if (p.threads == 1) out.push_back(p);
                           }
                           return out;
                         }()),
                         ParamName());

//! A deadlocked run's trace keeps the operations that never completed, marked pending,
//! and the file it writes is still valid.
TEST(TracePendingTest, DeadlockedOperationsArePending) {
  TempDir dir("ranklab_trace");
  ClusterOptions options;
  options.world_size = 3;
  options.trace_sink = std::make_shared<JsonlFileSink>(dir / "t.jsonl");
  const RunReport report = run_ranks(options, [](Communicator& world) {
    const int me = world.rank();
    if (me > 1) return;
    const std::int32_t v = me;
    std::int32_t in = -1;
    world.send(std::span(&v, 1), 1 - me, /*tag=*/4);
    world.recv(std::span(&in, 1), 1 - me, /*tag=*/4);
  });
  ASSERT_EQ(report.status, RunStatus::deadlock);
  const Trace trace = read_trace_file(dir / "t.jsonl");
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(trace.ranks[static_cast<std::size_t>(r)].size(), 1u) << "rank " << r;
    const TraceEvent& e = trace.ranks[static_cast<std::size_t>(r)][0];
    EXPECT_EQ(e.op, OpKind::send);
    EXPECT_EQ(e.status, OpStatus::pending);
    EXPECT_EQ(e.peer, 1 - r);
    EXPECT_EQ(e.tag, 4);
    EXPECT_EQ(e.msg.sender, r);
  }
  EXPECT_TRUE(trace.ranks[2].empty());
  const std::string text = read_bytes(dir / "t.jsonl");
  EXPECT_NE(text.find(R"("status":"pending")"), std::string::npos);
}


//! A rank with more open operations and more groups than its slot keeps inline (two each,
//! RankSlot's small vectors): every event's `in_flight` lists all its open predecessors, and
//! each group numbers its own collectives from 0.
TEST(TraceInFlightTest, ManyOpenOperationsAndGroups) {
  auto sink = std::make_shared<MemorySink>();
  ClusterOptions options;
  options.world_size = 2;
  options.trace_sink = sink;
  constexpr int kOpen = 5;
  const RunReport report = run_ranks(options, [](Communicator& world) {
    const int other = 1 - world.rank();
    std::vector<std::int32_t> out(kOpen, world.rank()), in(kOpen, -1);
    std::vector<Work> sends;
    for (int i = 0; i < kOpen; ++i) sends.push_back(world.isend(std::span(&out[i], 1), other, i));
    for (int i = 0; i < kOpen; ++i) world.recv(std::span(&in[i], 1), other, i);
    for (Work& w : sends) w.wait();
    const std::vector<int> both = {0, 1};
    std::vector<Communicator> groups;
    for (const char* kind : {"a", "b", "c", "d"}) groups.push_back(world.new_group(both, kind));
    for (int round = 0; round < 2; ++round) {
      for (Communicator& g : groups) g.barrier();
    }
  });
  ASSERT_TRUE(run_ok(report)) << report.details;
  const Trace& trace = sink->trace();
  for (const auto& events : trace.ranks) {
    ASSERT_EQ(events.size(), 2u * kOpen + 8u);
    for (std::size_t i = 0; i < 2u * kOpen; ++i) {
      // Sends 0..k-1 are open at send k and at every receive; receives close at once.
      std::vector<std::uint64_t> open;
      for (std::uint64_t k = 0; k < std::min<std::uint64_t>(i, kOpen); ++k) open.push_back(k);
      EXPECT_EQ(events[i].in_flight, open) << "rank " << events[i].rank << " event " << i;
    }
    std::map<std::uint32_t, std::int64_t> next;
    for (std::size_t i = 2u * kOpen; i < events.size(); ++i) {
      EXPECT_EQ(events[i].coll_seq, next[events[i].group]++) << "event " << i;
      EXPECT_TRUE(events[i].in_flight.empty());
    }
    EXPECT_EQ(next.size(), 4u);
  }
}

}  // namespace
}  // namespace ranklab::testing
