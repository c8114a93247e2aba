// Data parallelism as the seed does it (shared/seeds/000 §3.3 and §4.3): after backward,
// every parameter gradient is all_reduced (sum) over the DP group on its own, in parameter
// order (per layer: w1, b1, w2, b2), then divided by the group size. No bucketing: the
// trace then shows exactly the reference's 4·(layers on the rank) all_reduces.
#pragma once

#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/device.hpp"
#include "model/label_cache.hpp"
#include "model/layer.hpp"

namespace ranklab {

/// Averages `grads` over `dp` in place: Σ over the group, then ÷ group size (a division,
/// which rounds as torch's grad.div_ does). A group of one sends nothing. `label_suffix`
/// ends each call's label (", step 3" in a run of many steps). `labels` (may be null): where
/// the labels are kept from one call to the next, for a caller that averages step after step
/// (its suffix must be label_suffix: LabelCache::use_suffix). Every all_reduce is recorded at
/// `where`, the caller's line (leave it out), not this helper's.
template <typename Scalar>
void average_gradients(Communicator& dp, std::vector<LayerGrads<Scalar>>& grads,
                       const ModelDevice<Scalar>& device = cpu_device<Scalar>(),
                       std::string_view label_suffix = {}, LabelCache* labels = nullptr,
                       Communicator::Where where = Communicator::Where::current());

}  // namespace ranklab
