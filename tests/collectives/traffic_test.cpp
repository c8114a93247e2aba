// The messages each algorithm sends, counted from the trace (MemorySink): per rank, how many
// sends and how many bytes, against each algorithm's formula (the block comment at the top of
// its file). 1024 f32 elements split unevenly for the non-power-of-two worlds.
#include <memory>
#include <numeric>

#include "collectives/tags.hpp"
#include "tests/collectives/grid.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

constexpr std::size_t kCount = 1024;
constexpr std::uint64_t kElem = sizeof(float);

// What each rank sent and received.
struct Traffic {
  std::vector<int> sends, recvs;
  std::vector<std::uint64_t> sent_bytes, received_bytes;
  std::vector<std::vector<int>> tags;  // the tag of each send, per rank
  int collective_events = 0;
};

Traffic traffic_of(const Trace& trace) {
  const std::size_t p = trace.ranks.size();
  Traffic t{std::vector<int>(p), std::vector<int>(p), std::vector<std::uint64_t>(p),
            std::vector<std::uint64_t>(p), std::vector<std::vector<int>>(p)};
  for (std::size_t r = 0; r < p; ++r) {
    for (const TraceEvent& e : trace.ranks[r]) {
      EXPECT_EQ(e.status, OpStatus::completed) << "rank " << r << " op #" << e.rank_seq;
      if (e.op == OpKind::send) {
        ++t.sends[r];
        t.sent_bytes[r] += e.bytes;
        t.tags[r].push_back(e.tag);
      } else if (e.op == OpKind::recv) {
        ++t.recvs[r];
        t.received_bytes[r] += e.bytes;
      } else {
        ++t.collective_events;
      }
    }
  }
  return t;
}

// Runs `fn` on `world` ranks with a trace sink and returns the traffic.
Traffic run_traced(int world, const std::function<void(Communicator&)>& fn) {
  auto sink = std::make_shared<MemorySink>();
  run_grid(world, fn, ClusterOptions{.trace_sink = sink});
  return traffic_of(sink->trace());
}

// Independent of the library's helpers on purpose.
std::uint64_t even_block(std::size_t n, int p, int j) {
  return n / static_cast<std::size_t>(p) +
         (static_cast<std::size_t>(j) < n % static_cast<std::size_t>(p) ? 1 : 0);
}
int log2_floor(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}
int log2_ceil(int p) { return (1 << log2_floor(p)) == p ? log2_floor(p) : log2_floor(p) + 1; }
int subtree(int vr, int p) { return std::min(vr & -vr, p - vr); }  // binomial, vr > 0

// Every byte sent was received, and every send carried a reserved tag.
void expect_balanced(const Traffic& t) {
  std::uint64_t sent = 0, received = 0;
  for (std::size_t r = 0; r < t.sends.size(); ++r) {
    sent += t.sent_bytes[r];
    received += t.received_bytes[r];
    for (int tag : t.tags[r]) EXPECT_GE(tag, kFirstReservedTag) << "rank " << r;
  }
  EXPECT_EQ(sent, received);
  EXPECT_EQ(std::accumulate(t.sends.begin(), t.sends.end(), 0),
            std::accumulate(t.recvs.begin(), t.recvs.end(), 0));
}

class TrafficTest : public ::testing::TestWithParam<int> {};

//! ring all_reduce: 2(p-1) messages per rank, 2n - |block r| - |block r+1| elements sent.
TEST_P(TrafficTest, RingAllReduce) {
  const int p = GetParam();
  const Traffic t = run_traced(p, [](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::ring});
  });
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(t.sends[r], 2 * (p - 1)) << "rank " << r;
    EXPECT_EQ(t.sent_bytes[r],
              kElem * (2 * kCount - even_block(kCount, p, r) - even_block(kCount, p, (r + 1) % p)))
        << "rank " << r;
  }
  EXPECT_EQ(t.collective_events, 0);
  expect_balanced(t);
}

//! ring all_gather and reduce_scatter: p-1 messages of one block per rank.
TEST_P(TrafficTest, RingAllGatherAndReduceScatter) {
  const int p = GetParam();
  for (const bool gather : {true, false}) {
    const Traffic t = run_traced(p, [&](Communicator& comm) {
      std::vector<float> block(kCount, 1.0f), all(kCount * static_cast<std::size_t>(p), 1.0f);
      if (gather) {
        comm.all_gather(std::span<const float>(block), std::span<float>(all),
                        {.algorithm = Algorithm::ring});
      } else {
        comm.reduce_scatter(std::span<const float>(all), std::span<float>(block),
                            {.algorithm = Algorithm::ring});
      }
    });
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(t.sends[r], p - 1) << "rank " << r;
      EXPECT_EQ(t.sent_bytes[r], kElem * kCount * static_cast<std::uint64_t>(p - 1))
          << "rank " << r;
    }
    expect_balanced(t);
  }
}

//! recursive doubling: log2(pof2) whole-buffer messages, plus the fold for p != 2^k.
TEST_P(TrafficTest, RecursiveDoublingAllReduce) {
  const int p = GetParam(), steps = log2_floor(p), rem = p - (1 << steps);
  const Traffic t = run_traced(p, [](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::recursive_doubling});
  });
  for (int r = 0; r < p; ++r) {
    const int want = r < 2 * rem ? (r % 2 == 0 ? 1 : steps + 1) : steps;
    EXPECT_EQ(t.sends[r], want) << "rank " << r;
    EXPECT_EQ(t.sent_bytes[r], kElem * kCount * static_cast<std::uint64_t>(want)) << "rank " << r;
  }
  expect_balanced(t);
}

//! halving-doubling: 2 log2(pof2) messages halving then doubling, 2(n - n/pof2) elements,
//! plus the fold's whole-buffer messages for p != 2^k.
TEST_P(TrafficTest, HalvingDoublingAllReduce) {
  const int p = GetParam(), steps = log2_floor(p), pof2 = 1 << steps, rem = p - pof2;
  const Traffic t = run_traced(p, [](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::halving_doubling});
  });
  const std::uint64_t core = 2 * (kCount - kCount / static_cast<std::size_t>(pof2));
  for (int r = 0; r < p; ++r) {
    const bool sits_out = r < 2 * rem && r % 2 == 0;
    const bool folds = r < 2 * rem && r % 2 == 1;
    EXPECT_EQ(t.sends[r], sits_out ? 1 : 2 * steps + (folds ? 1 : 0)) << "rank " << r;
    EXPECT_EQ(t.sent_bytes[r], kElem * (sits_out ? kCount : core + (folds ? kCount : 0)))
        << "rank " << r;
  }
  expect_balanced(t);
}

//! binomial broadcast and reduce: p-1 whole-buffer messages; the broadcast root sends
//! ceil(log2 p), every reduce non-root sends exactly one.
TEST_P(TrafficTest, TreeBroadcastAndReduce) {
  const int p = GetParam(), root = p / 2;
  const Traffic b = run_traced(p, [&](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.broadcast(std::span<float>(data), {.root = root, .algorithm = Algorithm::tree});
  });
  const Traffic r = run_traced(p, [&](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.reduce(as_mutable_buffer(std::span<float>(data)),
                {.root = root, .algorithm = Algorithm::tree});
  });
  EXPECT_EQ(b.sends[static_cast<std::size_t>(root)], log2_ceil(p));
  for (int k = 0; k < p; ++k) {
    EXPECT_EQ(b.recvs[k], k == root ? 0 : 1) << "rank " << k;
    EXPECT_EQ(b.received_bytes[k], k == root ? 0 : kElem * kCount) << "rank " << k;
    EXPECT_EQ(r.sends[k], k == root ? 0 : 1) << "rank " << k;
    EXPECT_EQ(r.sent_bytes[k], k == root ? 0 : kElem * kCount) << "rank " << k;
  }
  expect_balanced(b);
  expect_balanced(r);
}

//! binomial gather and scatter: one message per non-root rank, carrying its subtree's
//! blocks; the root receives (gather) or sends (scatter) (p-1) blocks in all.
TEST_P(TrafficTest, TreeGatherAndScatter) {
  const int p = GetParam(), root = p / 2;
  const Traffic g = run_traced(p, [&](Communicator& comm) {
    std::vector<float> block(kCount, 1.0f),
        all(comm.rank() == root ? kCount * static_cast<std::size_t>(p) : 0);
    comm.gather(as_buffer(std::span<const float>(block)), as_mutable_buffer(std::span<float>(all)),
                {.root = root, .algorithm = Algorithm::tree});
  });
  const Traffic s = run_traced(p, [&](Communicator& comm) {
    std::vector<float> block(kCount),
        all(comm.rank() == root ? kCount * static_cast<std::size_t>(p) : 0);
    comm.scatter(as_buffer(std::span<const float>(all)), as_mutable_buffer(std::span<float>(block)),
                 {.root = root, .algorithm = Algorithm::tree});
  });
  const auto p64 = static_cast<std::uint64_t>(p);
  EXPECT_EQ(g.received_bytes[static_cast<std::size_t>(root)], kElem * kCount * (p64 - 1));
  EXPECT_EQ(s.sent_bytes[static_cast<std::size_t>(root)], kElem * kCount * (p64 - 1));
  for (int k = 0; k < p; ++k) {
    if (k == root) continue;
    const auto blocks = static_cast<std::uint64_t>(subtree((k - root + p) % p, p));
    EXPECT_EQ(g.sends[k], 1) << "rank " << k;
    EXPECT_EQ(g.sent_bytes[k], kElem * kCount * blocks) << "rank " << k;
    EXPECT_EQ(s.recvs[k], 1) << "rank " << k;
    EXPECT_EQ(s.received_bytes[k], kElem * kCount * blocks) << "rank " << k;
  }
  expect_balanced(g);
  expect_balanced(s);
}

//! dissemination barrier: ceil(log2 p) empty messages per rank.
TEST_P(TrafficTest, DisseminationBarrier) {
  const int p = GetParam();
  const Traffic t = run_traced(
      p, [](Communicator& comm) { comm.barrier({.algorithm = Algorithm::dissemination}); });
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(t.sends[r], log2_ceil(p)) << "rank " << r;
    EXPECT_EQ(t.sent_bytes[r], 0u) << "rank " << r;
  }
  expect_balanced(t);
}

//! pairwise all_to_all: p-1 messages of one block per rank.
TEST_P(TrafficTest, PairwiseAllToAll) {
  const int p = GetParam();
  const Traffic t = run_traced(p, [&](Communicator& comm) {
    std::vector<float> in(kCount * static_cast<std::size_t>(p), 1.0f), out(in.size());
    comm.all_to_all(as_buffer(std::span<const float>(in)), as_mutable_buffer(std::span<float>(out)),
                    {.algorithm = Algorithm::pairwise});
  });
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(t.sends[r], p - 1) << "rank " << r;
    EXPECT_EQ(t.sent_bytes[r], kElem * kCount * static_cast<std::uint64_t>(p - 1)) << "rank " << r;
  }
  expect_balanced(t);
}

//! direct sends no messages: one collective event per rank; and count 0 sends nothing.
TEST_P(TrafficTest, DirectAndEmptyCallsSendNothing) {
  const int p = GetParam();
  const Traffic t = run_traced(p, [](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f), empty;
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::direct});
    comm.all_reduce(std::span<float>(empty), {.algorithm = Algorithm::ring});
  });
  EXPECT_EQ(t.collective_events, p);
  EXPECT_EQ(std::accumulate(t.sends.begin(), t.sends.end(), 0), 0);
}

//! Consecutive collectives use consecutive reserved tags (the group's sequence mixed in).
TEST_P(TrafficTest, TagsCarryTheCollectiveSequence) {
  const int p = GetParam();
  const Traffic t = run_traced(p, [](Communicator& comm) {
    std::vector<float> data(kCount, 1.0f);
    comm.barrier();  // direct: sequence 0, no messages
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::ring});  // sequence 1
    comm.barrier({.algorithm = Algorithm::dissemination});                    // sequence 2
  });
  for (int r = 0; r < p; ++r) {
    const std::size_t ring = 2 * static_cast<std::size_t>(p - 1);
    ASSERT_EQ(t.tags[r].size(), ring + static_cast<std::size_t>(log2_ceil(p))) << "rank " << r;
    for (std::size_t i = 0; i < t.tags[r].size(); ++i) {
      EXPECT_EQ(t.tags[r][i], collective_tag(i < ring ? 1 : 2)) << "rank " << r << " send " << i;
    }
  }
}

std::string world_name(const ::testing::TestParamInfo<int>& world) {
  return fmt::format("w{}", world.param);
}

INSTANTIATE_TEST_SUITE_P(Worlds, TrafficTest, ::testing::Values(2, 3, 4, 5, 7, 8, 13, 16),
                         world_name);

}  // namespace
}  // namespace ranklab::testing
