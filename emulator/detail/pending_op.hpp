// An operation of the fabric as its post-mortem sees it (emulator/diagnosis/snapshot.hpp).
#pragma once

#include "emulator/detail/operation.hpp"
#include "emulator/diagnosis/snapshot.hpp"

namespace ranklab::detail {

/// What the post-mortem reads of `op` (its call slot, PendingOp::call, is the caller's to set).
diagnosis::PendingOp pending_op(const Operation& op);

}  // namespace ranklab::detail
