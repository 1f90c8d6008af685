#pragma once
// `flashviz-cli versions`: what FlashAttention-2 changed (core/flash_versions.h) for one problem
// on one GPU, printed from the same report the window's FlashAttention-2 page draws.
#include "core/flash_versions.h"
#include "core/problem.h"

#include <ostream>

namespace flashviz::cli {

// `comparison` is both versions run on the problem and checked (compareVersions); `report` the
// closed forms, warp split and grid for the same sizes; `bugSwitchesGiven`: say that the
// comparison ran without them.
void printVersions(std::ostream& out, const ProblemSpec& spec, const VersionsRequest& request,
                   const HardwareProfile& hardware, const VersionComparison& comparison,
                   const VersionsReport& report, bool bugSwitchesGiven);

} // namespace flashviz::cli
