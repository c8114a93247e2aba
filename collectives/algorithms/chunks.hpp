// The arithmetic the algorithms share: how a buffer splits into per-rank blocks, and the
// shape of binomial trees and power-of-two schedules. Vocabulary used in every algorithm
// file: a *block* is the part of a buffer one rank owns or sends in one step; `count` is in
// elements; `vr` is a rank relative to a tree's root.
#pragma once

#include <cstddef>

namespace ranklab {

/// A contiguous range of elements.
struct Block {
  std::size_t offset = 0;
  std::size_t count = 0;
};

/// Block `index` of `total` elements split into `parts` near-equal blocks: the first
/// total % parts blocks hold one element more (MPI's and NCCL's convention). When total is
/// a multiple of parts every block holds total / parts, which is how all_gather and
/// reduce_scatter see their per-rank blocks.
constexpr Block even_block(std::size_t total, int parts, int index) {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = total / p;
  const std::size_t extra = total % p;
  return Block{i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

/// Blocks [first, last) of the same split, as one range.
constexpr Block block_span(std::size_t total, int parts, int first, int last) {
  const Block a = even_block(total, parts, first);
  const std::size_t end = last == parts ? total : even_block(total, parts, last).offset;
  return Block{a.offset, end - a.offset};
}

/// (a mod n) for a possibly negative a.
constexpr int wrap(int a, int n) { return ((a % n) + n) % n; }

/// The largest power of two <= n (n >= 1).
constexpr int floor_pow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

/// The smallest power of two >= n (n >= 1).
constexpr int ceil_pow2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

/// Binomial trees (MPICH's numbering): relative rank vr's parent is vr minus its lowest set
/// bit, and its subtree is [vr, vr + span) with span = that bit (ceil_pow2(size) for the
/// root), cut at size. Children are vr + m for the powers of two m < span with vr + m < size.
constexpr int subtree_span(int vr, int size) { return vr == 0 ? ceil_pow2(size) : (vr & -vr); }

/// How many ranks vr's subtree holds.
constexpr int subtree_size(int vr, int size) {
  const int span = subtree_span(vr, size);
  return span < size - vr ? span : size - vr;
}

}  // namespace ranklab
