// Point-to-point: send/recv/isend/irecv, wait/test/wait_for, tags, FIFO matching per
// (group, source, tag), receives from any source, send modes, and the errors of a message
// whose two sides disagree.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "comm/errors.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

using namespace std::chrono_literals;

class P2PTest : public ::testing::TestWithParam<ClusterParam> {};
// The tests of this one need a second rank.
class P2PPairTest : public ::testing::TestWithParam<ClusterParam> {};

//! Each rank's isend to its right neighbour delivers exactly its data to that neighbour.
TEST_P(P2PTest, RingExchangeDeliversNeighbourData) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const auto mine = fill<std::int64_t>(me, 5);
    std::vector<std::int64_t> from_left(5, -1);
    Work sent = world.isend(mine, (me + 1) % n, /*tag=*/4);
    const RecvStatus status = world.recv(std::span(from_left), (me + n - 1) % n, /*tag=*/4);
    sent.wait();
    EXPECT_EQ(from_left, fill<std::int64_t>((me + n - 1) % n, 5)) << "rank " << me;
    EXPECT_EQ(status.source, (me + n - 1) % n);
    EXPECT_EQ(status.tag, 4);
    EXPECT_EQ(status.count, 5u);
  })));
}

//! Every rank exchanges with every rank (itself included) through non-blocking calls
//! waited for in reverse order; each receive gets exactly its sender's data.
TEST_P(P2PTest, AllPairsNonBlockingExchange) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const auto mine = fill<double>(me, 3);
    std::vector<std::vector<double>> in(static_cast<std::size_t>(n), std::vector<double>(3, -1));
    std::vector<Work> works;
    for (int src = 0; src < n; ++src) {
      works.push_back(world.irecv(std::span(in[static_cast<std::size_t>(src)]), src, /*tag=*/src));
    }
    for (int dst = 0; dst < n; ++dst) works.push_back(world.isend(mine, dst, /*tag=*/me));
    for (auto it = works.rbegin(); it != works.rend(); ++it) it->wait();
    for (int src = 0; src < n; ++src) {
      EXPECT_EQ(in[static_cast<std::size_t>(src)], fill<double>(src, 3))
          << "rank " << me << " from " << src;
      EXPECT_TRUE(works[static_cast<std::size_t>(src)].test());
      EXPECT_EQ(works[static_cast<std::size_t>(src)].status().source, src);
    }
  })));
}

//! Messages from one source to one destination are received in the order they were sent,
//! per tag, whether the receive names the source or takes any source.
TEST_P(P2PTest, FifoPerSourceAndTag) {
  const int n = GetParam().world;
  constexpr int kPerTag = 3;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    // Every rank (rank 0 too) posts 2 * kPerTag messages to rank 0, tags alternating 0, 1.
    std::vector<std::int32_t> values(2 * kPerTag);
    std::vector<Work> sends;
    for (int k = 0; k < 2 * kPerTag; ++k) {
      values[static_cast<std::size_t>(k)] = me * 100 + k;
      sends.push_back(
          world.isend(std::span<const std::int32_t>(&values[static_cast<std::size_t>(k)], 1), 0,
                      /*tag=*/k % 2));
    }
    if (me == 0) {
      // Tag 1 first, source by source: k = 1, 3, 5 in order, though tag 0 was sent first.
      for (int src = 0; src < n; ++src) {
        for (int j = 0; j < kPerTag; ++j) {
          std::int32_t v = -1;
          world.recv(std::span(&v, 1), src, /*tag=*/1);
          EXPECT_EQ(v, src * 100 + 2 * j + 1) << "from " << src;
        }
      }
      // Tag 0 from any source: each source's messages still arrive in order.
      std::vector<int> next(static_cast<std::size_t>(n), 0);
      for (int m = 0; m < n * kPerTag; ++m) {
        std::int32_t v = -1;
        const RecvStatus status = world.recv(std::span(&v, 1), kAnySource, /*tag=*/0);
        const auto src = static_cast<std::size_t>(status.source);
        EXPECT_EQ(v, status.source * 100 + 2 * next[src]) << "from " << status.source;
        ++next[src];
      }
      for (int src = 0; src < n; ++src) EXPECT_EQ(next[static_cast<std::size_t>(src)], kPerTag);
    }
    for (auto& s : sends) s.wait();
  })));
}

//! A receive names the tag it wants: later-tagged messages can be taken first, and a
//! receive with kAnyTag takes the oldest unmatched message and reports its tag.
TEST_P(P2PPairTest, TagsSelectMessages) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    if (me == 0) {
      const std::int32_t a = 50, b = 70, c = 90;
      Work wa = world.isend(std::span(&a, 1), 1, /*tag=*/5);
      Work wb = world.isend(std::span(&b, 1), 1, /*tag=*/7);
      Work wc = world.isend(std::span(&c, 1), 1, /*tag=*/9);
      wc.wait();
      wb.wait();
      wa.wait();
    } else if (me == 1) {
      std::int32_t v = -1;
      world.recv(std::span(&v, 1), 0, /*tag=*/7);
      EXPECT_EQ(v, 70);
      const RecvStatus any = world.recv(std::span(&v, 1), 0, kAnyTag);
      EXPECT_EQ(v, 50);
      EXPECT_EQ(any.tag, 5);
      world.recv(std::span(&v, 1), 0, /*tag=*/9);
      EXPECT_EQ(v, 90);
    }
  })));
}

//! A receive from any source reports the sender it matched; every sender is matched once.
TEST_P(P2PTest, AnySourceReportsMatchedSender) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    if (me != 0) {
      const std::int64_t mine = me * 10;
      world.send(std::span(&mine, 1), 0, /*tag=*/3);
      return;
    }
    std::set<int> seen;
    for (int i = 1; i < n; ++i) {
      std::int64_t v = -1;
      const RecvStatus status = world.recv(std::span(&v, 1), kAnySource, /*tag=*/3);
      EXPECT_EQ(v, status.source * 10);
      EXPECT_EQ(status.count, 1u);
      EXPECT_TRUE(seen.insert(status.source).second) << "matched " << status.source << " twice";
    }
    EXPECT_EQ(static_cast<int>(seen.size()), n - 1);
  })));
}

//! A message shorter than the receive buffer fills a prefix; the status gives its length,
//! and an empty message is a valid message.
TEST_P(P2PTest, ShorterMessageFillsPrefix) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const auto mine = fill<float>(me, 3);
    const std::vector<float> none;
    Work a = world.isend(mine, (me + 1) % n, /*tag=*/1);
    Work b = world.isend(none, (me + 1) % n, /*tag=*/2);
    std::vector<float> in(8, -1.0f);
    const int left = (me + n - 1) % n;
    const RecvStatus full = world.recv(std::span(in), left, /*tag=*/1);
    EXPECT_EQ(full.count, 3u);
    const auto expected = fill<float>(left, 3);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), in.begin()));
    EXPECT_EQ(in[3], -1.0f);
    EXPECT_EQ(world.recv(std::span(in), left, /*tag=*/2).count, 0u);
    a.wait();
    b.wait();
  })));
}

INSTANTIATE_TEST_SUITE_P(Worlds, P2PTest, ::testing::ValuesIn(cluster_params()), ParamName());

//! Under rendezvous a send is not complete until a receive matches it: test() and
//! wait_for() report false while the receiver has not posted, and the send then completes.
TEST_P(P2PPairTest, RendezvousSendCompletesOnlyWhenMatched) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const std::int32_t payload = 42, go = 1;
    std::int32_t in = -1;
    if (me == 0) {
      Work send = world.isend(std::span(&payload, 1), 1, /*tag=*/0);
      EXPECT_FALSE(send.test());
      EXPECT_FALSE(send.wait_for(2ms));
      EXPECT_FALSE(send.test());
      world.send(std::span(&go, 1), 1, /*tag=*/1);  // only now does rank 1 post its receive
      send.wait();
      EXPECT_TRUE(send.test());
    } else if (me == 1) {
      world.recv(std::span(&in, 1), 0, /*tag=*/1);
      world.recv(std::span(&in, 1), 0, /*tag=*/0);
      EXPECT_EQ(in, 42);
    }
  })));
}

//! A receive's wait_for gives up after its timeout without failing the run (a rank in
//! wait_for is not blocked for the deadlock check), and the receive still completes later.
TEST_P(P2PPairTest, WaitForTimesOutThenCompletes) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    std::int32_t in = -1;
    const std::int32_t go = 1, payload = 7;
    if (me == 1) {
      Work recv = world.irecv(std::span(&in, 1), 0, /*tag=*/0);
      EXPECT_FALSE(recv.wait_for(5ms));  // rank 0 is blocked waiting for `go`
      EXPECT_FALSE(recv.test());
      world.send(std::span(&go, 1), 0, /*tag=*/1);
      EXPECT_TRUE(recv.wait_for(10'000ms));
      EXPECT_EQ(in, 7);
      EXPECT_EQ(recv.status().source, 0);
    } else if (me == 0) {
      world.recv(std::span(&in, 1), 1, /*tag=*/1);
      world.send(std::span(&payload, 1), 1, /*tag=*/0);
    }
  })));
}

//! Under eager a send completes at once, before any receive is posted, so two ranks that
//! both send before receiving pass (the exchange is a potential deadlock, which
//! latent_deadlock_test.cpp checks: off here, this is about completion alone).
TEST_P(P2PPairTest, EagerSendCompletesWithoutReceiver) {
  ClusterOptions options = GetParam().options();
  options.send_mode = SendMode::parse("eager");
  options.find_latent_deadlocks = false;
  EXPECT_TRUE(run_ok(run_ranks(options, [&](Communicator& world) {
    const int me = world.rank();
    if (me > 1) return;
    const auto mine = fill<double>(me, 1024);
    Work probe = world.isend(mine, 1 - me, /*tag=*/9);
    EXPECT_TRUE(probe.test()) << "an eager send completes when posted";
    world.send(mine, 1 - me, /*tag=*/0);
    std::vector<double> theirs(1024), probed(1024);
    world.recv(std::span(theirs), 1 - me, /*tag=*/0);
    world.recv(std::span(probed), 1 - me, /*tag=*/9);
    EXPECT_EQ(theirs, fill<double>(1 - me, 1024));
    EXPECT_EQ(probed, fill<double>(1 - me, 1024));
  })));
}

//! Under eager<=16, a 16-byte message is buffered (complete at once) and a 20-byte one
//! waits for its receive.
TEST_P(P2PPairTest, EagerUpToLimitBuffersSmallMessagesOnly) {
  ClusterOptions options = GetParam().options();
  options.send_mode = SendMode::parse("eager<=16");
  EXPECT_TRUE(run_ok(run_ranks(options, [&](Communicator& world) {
    const int me = world.rank();
    const std::int32_t go = 1;
    if (me == 0) {
      const auto small = fill<float>(0, 4), large = fill<float>(0, 5);
      Work s = world.isend(small, 1, /*tag=*/0);
      Work l = world.isend(large, 1, /*tag=*/0);
      EXPECT_TRUE(s.test()) << "16 bytes <= 16: eager";
      EXPECT_FALSE(l.test()) << "20 bytes > 16: rendezvous";
      world.send(std::span(&go, 1), 1, /*tag=*/1);
      l.wait();
    } else if (me == 1) {
      std::int32_t g = 0;
      world.recv(std::span(&g, 1), 0, /*tag=*/1);
      std::vector<float> in(5);
      EXPECT_EQ(world.recv(std::span(in), 0, /*tag=*/0).count, 4u);
      EXPECT_EQ(world.recv(std::span(in), 0, /*tag=*/0).count, 5u);
      EXPECT_EQ(in, fill<float>(0, 5));
    }
  })));
}

//! A receive buffer smaller than the matched message fails both sides with a
//! MismatchError naming the sender, the receiver, both sizes and the tag (exit code 4).
TEST_P(P2PPairTest, ReceiveBufferTooSmallNamesBothSides) {
  RankErrors errors(GetParam().world);
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      if (world.rank() == 0) {
        const auto mine = fill<float>(0, 8);
        world.send(mine, 1, /*tag=*/3);
      } else if (world.rank() == 1) {
        std::vector<float> in(4);
        world.recv(std::span(in), 0, /*tag=*/3);
      }
    });
  });
  const std::string expected =
      "message mismatch in world: rank 0 (op #0) sends 8 x f32 to rank 1 tag 3; rank 1 (op #0) "
      "receives into 4 x f32 from rank 0 tag 3: the receive buffer is smaller than the message";
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary;
  EXPECT_EQ(exit_code(report.status), 4);
  EXPECT_TRUE(contains(report.summary, expected));
  EXPECT_TRUE(contains(report.details, expected));
  EXPECT_EQ(errors.kind(1), "MismatchError");
  EXPECT_TRUE(contains(errors.message(1), expected));
  EXPECT_EQ(errors.kind(0), "MismatchError") << "the sender learns of it too";
  EXPECT_TRUE(contains(errors.message(0), expected));
}

//! A message whose element type differs from the receive buffer's fails with a
//! MismatchError naming both types.
TEST_P(P2PPairTest, ElementTypeMismatchNamesBothTypes) {
  RankErrors errors(GetParam().world);
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      if (world.rank() == 0) {
        const auto mine = fill<float>(0, 4);
        world.send(mine, 1, /*tag=*/2);
      } else if (world.rank() == 1) {
        std::vector<std::int32_t> in(4);
        world.recv(std::span(in), 0, /*tag=*/2);
      }
    });
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary;
  EXPECT_TRUE(contains(report.details, "sends 4 x f32 to rank 1 tag 2"));
  EXPECT_TRUE(contains(report.details, "receives into 4 x i32 from rank 0 tag 2"));
  EXPECT_TRUE(contains(report.details, "the element types differ"));
  EXPECT_EQ(errors.kind(1), "MismatchError");
}

//! Bad point-to-point arguments throw UsageError in the calling rank, naming the rank,
//! peer, group or tag, and leave the run intact. (The communicator's user-tag range is
//! the collectives suite's business.)
TEST_P(P2PPairTest, BadArgumentsAreUsageErrors) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    std::int32_t v = me;
    EXPECT_THROW_MSG(
        world.send(std::span<const std::int32_t>(&v, 1), n, 0), UsageError,
        fmt::format("rank {}: send to rank {} of group world, which has {} ranks", me, n, n));
    EXPECT_THROW_MSG(world.recv(std::span(&v, 1), -5, 0), UsageError,
                     fmt::format("rank {}: recv from rank -5 of group world", me));
    RankContext& ctx = this_rank::context();
    EXPECT_THROW_MSG(ctx.send(ctx.world(), as_buffer(std::span(&v, 1)), 0, -3), UsageError,
                     fmt::format("rank {}: send with negative tag -3", me));
    EXPECT_THROW_MSG(ctx.recv(ctx.world(), as_mutable_buffer(std::span(&v, 1)), 0, -3), UsageError,
                     fmt::format("rank {}: recv with negative tag -3", me));
    // The run goes on: a barrier still completes.
    world.barrier();
  })));
}

//! Dropping the handle of an unfinished send keeps its payload (the caller's buffer may go
//! away); dropping the handle of an unfinished receive cancels it, so the message goes to
//! the next matching receive and the dropped buffer is never written.
TEST_P(P2PPairTest, DroppedHandlesBufferSendsAndCancelReceives) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const std::int32_t go = 1;
    std::int32_t g = 0;
    if (me == 0) {
      {
        auto payload = std::make_unique<std::vector<std::int32_t>>(fill<std::int32_t>(0, 3));
        Work dropped = world.isend(*payload, 1, /*tag=*/0);
        EXPECT_FALSE(dropped.test());
      }  // the handle, then the buffer, go away before rank 1 receives
      std::vector<std::int32_t> scribble(3, -7);  // likely reuses the freed memory
      world.recv(std::span(&g, 1), 1, /*tag=*/1);
      world.send(scribble, 1, /*tag=*/2);
    } else if (me == 1) {
      std::vector<std::int32_t> dropped_buffer(3, -1);
      {
        Work dropped = world.irecv(std::span(dropped_buffer), 0, /*tag=*/2);
        EXPECT_FALSE(dropped.test());
        EXPECT_THROW_MSG(dropped.status(), UsageError,
                         "status() of a Request that has not completed");
      }
      world.send(std::span(&go, 1), 0, /*tag=*/1);
      std::vector<std::int32_t> in(3, -1), second(3, -1);
      world.recv(std::span(in), 0, /*tag=*/0);
      EXPECT_EQ(in, fill<std::int32_t>(0, 3)) << "the dropped send's payload was kept";
      world.recv(std::span(second), 0, /*tag=*/2);
      EXPECT_EQ(second, std::vector<std::int32_t>(3, -7));
      EXPECT_EQ(dropped_buffer, std::vector<std::int32_t>(3, -1)) << "cancelled: never written";
    }
  })));
}

//! A completed request stays completed: wait() and test() may be called again, and
//! status() keeps telling what it matched.
TEST_P(P2PPairTest, CompletedRequestsCanBeAskedAgain) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    if (me > 1) return;
    std::int64_t in = -1;
    const std::int64_t mine = me + 10;
    Work r = world.irecv(std::span(&in, 1), 1 - me, /*tag=*/3);
    Work s = world.isend(std::span(&mine, 1), 1 - me, /*tag=*/3);
    r.wait();
    s.wait();
    r.wait();
    s.wait();
    EXPECT_TRUE(r.test());
    EXPECT_TRUE(s.test());
    EXPECT_TRUE(r.wait_for(std::chrono::milliseconds(0)));
    EXPECT_EQ(r.status().source, 1 - me);
    EXPECT_EQ(r.status().tag, 3);
    EXPECT_EQ(in, 1 - me + 10);
  })));
}

INSTANTIATE_TEST_SUITE_P(Worlds, P2PPairTest, ::testing::ValuesIn(cluster_params(worlds_from(2))),
                         ParamName());

//! The emulator-level API (RankContext) sends and receives in a group's ranks, and the
//! same tag on two groups never matches across them.
TEST(RankContextP2PTest, GroupsSeparateTraffic) {
  ClusterOptions options;
  options.world_size = 4;
  Engine engine(options);
  const RunReport report = engine.run([](RankContext& ctx) {
    const std::vector<int> members = {3, 1};  // group rank 0 is global 3
    const Group& pair = ctx.new_group("pair", members);
    const int me = ctx.rank();
    std::int32_t v = -1;
    if (me == 3) {
      const std::int32_t on_world = 30, on_pair = 31;
      Request a = ctx.isend(ctx.world(), as_buffer(std::span(&on_world, 1)), 1, /*tag=*/0);
      Request b = ctx.isend(pair, as_buffer(std::span(&on_pair, 1)), 1, /*tag=*/0);
      b.wait();
      a.wait();
    } else if (me == 1) {
      // Group rank 0 of `pair` is global rank 3; the world's message is not taken.
      const RecvStatus st = ctx.recv(pair, as_mutable_buffer(std::span(&v, 1)), 0, /*tag=*/0);
      EXPECT_EQ(v, 31);
      EXPECT_EQ(st.source, 0);
      const RecvStatus sw = ctx.recv(ctx.world(), as_mutable_buffer(std::span(&v, 1)), 3, 0);
      EXPECT_EQ(v, 30);
      EXPECT_EQ(sw.source, 3);
    }
  });
  EXPECT_TRUE(run_ok(report));
}

//! A wildcard-tag receive takes user messages only: a message on a tag reserved for the
//! collective algorithms, posted first, is left for the receive that names its tag.
TEST(RankContextP2PTest, AnyTagNeverTakesReservedTags) {
  ClusterOptions options;
  options.world_size = 2;
  Engine engine(options);
  const RunReport report = engine.run([](RankContext& ctx) {
    std::int32_t v = -1;
    if (ctx.rank() == 0) {
      const std::int32_t internal = 1, user = 2;
      Request a = ctx.isend(ctx.world(), as_buffer(std::span(&internal, 1)), 1, kFirstReservedTag);
      Request b = ctx.isend(ctx.world(), as_buffer(std::span(&user, 1)), 1, /*tag=*/3);
      b.wait();
      a.wait();
    } else {
      const RecvStatus any = ctx.recv(ctx.world(), as_mutable_buffer(std::span(&v, 1)), 0, kAnyTag);
      EXPECT_EQ(v, 2);
      EXPECT_EQ(any.tag, 3);
      ctx.recv(ctx.world(), as_mutable_buffer(std::span(&v, 1)), 0, kFirstReservedTag);
      EXPECT_EQ(v, 1);
    }
  });
  EXPECT_TRUE(run_ok(report));
}

}  // namespace
}  // namespace ranklab::testing
