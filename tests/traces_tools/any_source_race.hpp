// A trace whose outcome depends on timing, shared by the stuck-or-slow tests: rank 0
// receives from any source, then from rank 2; rank 1 computes 1 ms and sends to rank 0,
// rank 2 computes 2 ms and sends to rank 0. Recorded, the first receive took rank 1's
// message. Slow rank 1 past 2 ms and the first receive takes rank 2's: the second waits for
// a message rank 2 never sends, and rank 1's send finds no receive.
#pragma once

#include <utility>

#include "traces/trace_builder.hpp"

namespace ranklab::testing_race {

inline Trace any_source_race() {
  TraceBuilder b(3);
  b.recv(0, kNoRank, DataType::f32, 4, 0);
  b.recv(0, 2, DataType::f32, 4, 0);
  b.compute(1, {.seconds = 1e-3});
  b.send(1, 0, DataType::f32, 4, 0);
  b.compute(2, {.seconds = 2e-3});
  b.send(2, 0, DataType::f32, 4, 0);
  return b.build().trace;
}

}  // namespace ranklab::testing_race
