// How the post-mortem names an operation, in text and as report data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "emulator/diagnosis/snapshot.hpp"
#include "comm/run_report.hpp"

namespace ranklab::diagnosis {

/// Lists in reports stop here: a 65,536-rank run's report stays readable.
constexpr std::size_t kMaxListed = 32;

/// "send to rank 1 tag 0 in world (4 x f32), op #3".
std::string describe_operation(const PendingOp& op);
/// The operation and where it was called: "recv from rank 1 tag 0 in pp[0,2] (4 x f32), op
/// #3 at model/pipeline_step.cpp:42 (backward)".
std::string describe_pending(const PendingOp& op);
/// The operation as reports give it, text and data.
ReportedOperation report_operation(const PendingOp& op);
/// `culprit` naming `ops` (null ones skipped) and their groups.
Culprit naming(Culprit culprit, const std::vector<const PendingOp*>& ops);

}  // namespace ranklab::diagnosis
