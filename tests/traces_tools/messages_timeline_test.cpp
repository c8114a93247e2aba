// Message pairs and the time axis the exporters share.
#include <gtest/gtest.h>

#include "tests/traces/sample_trace.hpp"
#include "traces/messages.hpp"
#include "traces/timeline.hpp"

namespace ranklab {
namespace {

using trace_samples::p2p_event;
using trace_samples::sample_trace;

//! A completed receive is joined to the send its msg names; pending ones are not.
TEST(MessagesTest, LinksReceiveToItsSend) {
  const MessageLinks links = link_messages(sample_trace());
  ASSERT_EQ(links.links.size(), 1u);
  EXPECT_EQ(links.links[0].send, (EventRef{0, 0}));
  EXPECT_EQ(links.links[0].recv, (EventRef{1, 0}));
  EXPECT_EQ(links.links[0].id, (MessageId{0, 0}));
  EXPECT_EQ(links.dangling_receives, 0u);
}

//! A msg that names a missing event, a non-send, or a send to another rank is dangling.
TEST(MessagesTest, InconsistentIdsAreDangling) {
  for (const MessageId bad : {MessageId{0, 99}, MessageId{0, 1}, MessageId{3, 0}, MessageId{}}) {
    Trace trace = sample_trace();
    trace.ranks[1][0].msg = bad;
    EXPECT_EQ(link_messages(trace).dangling_receives, 1u) << bad.sender << ":" << bad.sender_seq;
    EXPECT_TRUE(link_messages(trace).links.empty());
  }
}

//! A ring of 800 events links completely (large_trace: each send has its receive).
TEST(MessagesTest, RingLinksEveryMessage) {
  const Trace trace = trace_samples::large_trace(8, 100);
  const MessageLinks links = link_messages(trace);
  EXPECT_EQ(links.links.size(), 8u * 50u);
  EXPECT_EQ(links.dangling_receives, 0u);
}

//! Lamport axis: L occupies [L, L+1) ticks; each rank's order is by time, not rank_seq
//! (an irecv posted first completes last).
//! event_index finds an event by its rank_seq: where numbers are their indices, and where a
//! hand-edited trace has gaps (the event at index `seq` is then another one, or none).
TEST(MessagesTest, EventIndexFindsNumbersWithAndWithoutGaps) {
  std::vector<TraceEvent> events(4);
  for (std::size_t i = 0; i < events.size(); ++i) events[i].rank_seq = i;
  EXPECT_EQ(event_index(events, 0), 0u);
  EXPECT_EQ(event_index(events, 3), 3u);
  EXPECT_EQ(event_index(events, 4), 4u);  // none: events.size()
  const std::uint64_t numbers[] = {0, 2, 3, 7};
  for (std::size_t i = 0; i < events.size(); ++i) events[i].rank_seq = numbers[i];
  EXPECT_EQ(event_index(events, 2), 1u);  // events[2] is numbered 3
  EXPECT_EQ(event_index(events, 3), 2u);
  EXPECT_EQ(event_index(events, 7), 3u);
  EXPECT_EQ(event_index(events, 1), 4u);  // in a gap
  EXPECT_EQ(event_index(events, 5), 4u);
  EXPECT_EQ(event_index(events, 8), 4u);
  EXPECT_EQ(event_index({}, 0), 0u);
}

TEST(TimelineTest, LamportPlacementAndOrder) {
  Trace trace;
  trace.header.world_size = 2;
  trace.header.groups = {{"world", {0, 1}}};
  trace.ranks.resize(2);
  trace.ranks[0].push_back(p2p_event(OpKind::recv, 0, 0, 1, 0, {1, 0}, 5));
  trace.ranks[0].push_back(p2p_event(OpKind::send, 0, 1, 1, 0, {0, 1}, 1));
  trace.ranks[1].push_back(p2p_event(OpKind::send, 1, 0, 0, 0, {1, 0}, 4));
  const Timeline timeline(trace);
  EXPECT_EQ(timeline.base(), TimeBase::lamport);
  EXPECT_EQ(timeline.order(0), (std::vector<std::size_t>{1, 0}));
  EXPECT_DOUBLE_EQ(timeline.at({0, 0}).start_ns, 5 * kLamportTickNs);
  EXPECT_DOUBLE_EQ(timeline.at({0, 0}).duration_ns, kLamportTickNs);
  EXPECT_DOUBLE_EQ(timeline.end_ns(), 6 * kLamportTickNs);
  EXPECT_EQ(axis_unit(timeline.base()), "1 Lamport tick = 1 us");
}

}  // namespace
}  // namespace ranklab
