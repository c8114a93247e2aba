// Work, the one handle every backend completes asynchronously through: a small WorkImpl
// lives inside the handle (no allocation per call), a large one on the heap, and either way
// the handle forwards every call to it, moves without copying it, and destroys it once.
#include "collectives/work.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <utility>

namespace ranklab {
namespace {

// What an impl saw, kept outside it so that the test can read it after the impl is gone.
struct Log {
  int waits = 0;
  int tests = 0;
  int destroyed = 0;
};

// A WorkImpl whose test() succeeds from its `ready_after`-th call; `Padding` sets its size.
template <std::size_t Padding>
class CountingWork final : public detail::WorkImpl {
 public:
  CountingWork(std::shared_ptr<Log> log, int ready_after)
      : log_(std::move(log)), ready_after_(ready_after) {}
  CountingWork(CountingWork&& other) noexcept
      : log_(std::move(other.log_)), ready_after_(other.ready_after_) {}
  ~CountingWork() override {
    if (log_) ++log_->destroyed;  // a moved-from impl holds no log: it does not count
  }

  void wait() override { ++log_->waits; }
  bool wait_for(std::chrono::milliseconds) override { return test(); }
  bool test() override { return ++log_->tests >= ready_after_; }
  RecvStatus status() const override { return {.source = 3, .tag = 7, .count = Padding}; }

  // Counts heap allocations of this impl: an inline one must have none.
  static inline int allocations = 0;
  static void* operator new(std::size_t bytes) {
    ++allocations;
    return ::operator new(bytes);
  }
  static void operator delete(void* p) { ::operator delete(p); }

 private:
  std::shared_ptr<Log> log_;
  int ready_after_;
  std::array<std::byte, Padding> padding_{};
};

using SmallWork = CountingWork<1>;
using LargeWork = CountingWork<4 * Work::kInlineBytes>;
static_assert(sizeof(SmallWork) <= Work::kInlineBytes);
static_assert(sizeof(LargeWork) > Work::kInlineBytes);

//! A default Work is complete: it never blocks and reports a default status.
TEST(WorkTest, DefaultIsComplete) {
  Work work;
  work.wait();
  EXPECT_TRUE(work.test());
  EXPECT_TRUE(work.wait_for(std::chrono::milliseconds(0)));
  EXPECT_EQ(work.status().source, kNoRank);
  EXPECT_EQ(work.status().count, 0u);
}

template <typename Impl>
void expect_forwards_moves_and_destroys_once(int allocations_per_work) {
  Impl::allocations = 0;
  auto log = std::make_shared<Log>();
  {
    Work first = Work::make<Impl>(log, /*ready_after=*/2);
    EXPECT_FALSE(first.test());
    Work moved = std::move(first);  // the impl moves (or its pointer does), not copied
    EXPECT_TRUE(first.test()) << "a moved-from Work is empty, so complete";
    EXPECT_TRUE(moved.test()) << "the second test() reaches the same impl";
    Work assigned;
    assigned = std::move(moved);
    assigned.wait();
    EXPECT_EQ(assigned.status().tag, 7);
    EXPECT_EQ(log->waits, 1);
    EXPECT_EQ(log->tests, 2);
    EXPECT_EQ(log->destroyed, 0);
    // Assigning over a live Work ends its impl first.
    assigned = Work::make<Impl>(log, 1);
    EXPECT_EQ(log->destroyed, 1);
  }
  EXPECT_EQ(log->destroyed, 2) << "each impl is destroyed exactly once";
  EXPECT_EQ(Impl::allocations, 2 * allocations_per_work);
}

//! An impl that fits is held inside the Work (no allocation); calls, moves and
//! destruction behave.
TEST(WorkTest, InlineImplForwardsMovesAndIsDestroyedOnce) {
  expect_forwards_moves_and_destroys_once<SmallWork>(0);
}

//! An impl too large for the handle goes to the heap and behaves the same.
TEST(WorkTest, HeapImplForwardsMovesAndIsDestroyedOnce) {
  expect_forwards_moves_and_destroys_once<LargeWork>(1);
}

//! A backend may also hand over an impl it allocated itself.
TEST(WorkTest, OwnedImplIsTakenOver) {
  auto log = std::make_shared<Log>();
  {
    Work work(std::make_unique<SmallWork>(log, 1));
    EXPECT_TRUE(work.test());
  }
  EXPECT_EQ(log->destroyed, 1);
}

}  // namespace
}  // namespace ranklab
