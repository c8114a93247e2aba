// The arithmetic the algorithms share: blocks, binomial trees, the power-of-two fold.
#include "collectives/algorithms/chunks.hpp"

#include <gtest/gtest.h>

#include <set>

#include "collectives/algorithms/fold.hpp"

namespace ranklab {
namespace {

//! even_block tiles [0, total) in order, sizes differing by at most one, larger ones first.
TEST(Chunks, EvenBlocksTileTheBuffer) {
  for (std::size_t total : {0u, 1u, 7u, 1024u, 100'003u}) {
    for (int parts : {1, 2, 3, 7, 13, 16}) {
      std::size_t next = 0;
      for (int j = 0; j < parts; ++j) {
        const Block b = even_block(total, parts, j);
        EXPECT_EQ(b.offset, next) << total << "/" << parts << " block " << j;
        EXPECT_LE(b.count, total / static_cast<std::size_t>(parts) + 1);
        EXPECT_GE(b.count, total / static_cast<std::size_t>(parts));
        if (j > 0) {
          EXPECT_LE(b.count, even_block(total, parts, j - 1).count);
        }
        next += b.count;
      }
      EXPECT_EQ(next, total);
      const Block all = block_span(total, parts, 0, parts);
      EXPECT_EQ(all.offset, 0u);
      EXPECT_EQ(all.count, total);
    }
  }
  EXPECT_EQ(block_span(10, 4, 1, 3).offset, 3u);  // blocks 3,3,2,2
  EXPECT_EQ(block_span(10, 4, 1, 3).count, 5u);
}

//! Binomial trees: every non-root has one parent, subtrees partition the ranks, and the
//! root's children cover everyone.
TEST(Chunks, BinomialSubtreesPartitionTheRanks) {
  for (int p = 1; p <= 17; ++p) {
    EXPECT_EQ(subtree_size(0, p), p);
    for (int vr = 1; vr < p; ++vr) {
      const int parent = vr - subtree_span(vr, p);
      EXPECT_GE(parent, 0);
      EXPECT_LT(vr - parent, subtree_span(parent, p)) << "p " << p << " vr " << vr;
      // vr's subtree is its own block plus its children's subtrees.
      int covered = 1;
      for (int m = 1; m < subtree_span(vr, p) && vr + m < p; m *= 2)
        covered += subtree_size(vr + m, p);
      EXPECT_EQ(covered, subtree_size(vr, p)) << "p " << p << " vr " << vr;
    }
  }
  EXPECT_EQ(floor_pow2(13), 8);
  EXPECT_EQ(ceil_pow2(13), 16);
  EXPECT_EQ(wrap(-3, 7), 4);
}

//! The fold keeps pof2 ranks, numbered 0..pof2-1 once each, and maps them back.
TEST(Chunks, PowerOfTwoFoldNumbersTheSurvivors) {
  for (int p = 1; p <= 17; ++p) {
    std::set<int> newranks;
    int sitting_out = 0;
    for (int r = 0; r < p; ++r) {
      const PowerOfTwoFold fold(r, p);
      if (fold.newrank() < 0) {
        ++sitting_out;
        continue;
      }
      EXPECT_TRUE(newranks.insert(fold.newrank()).second);
      EXPECT_EQ(fold.rank_of(fold.newrank()), r);
    }
    EXPECT_EQ(static_cast<int>(newranks.size()), floor_pow2(p));
    EXPECT_EQ(sitting_out, p - floor_pow2(p));
  }
}

}  // namespace
}  // namespace ranklab
