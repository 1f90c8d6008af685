#pragma once
// `flashviz-cli hopper-trace`: a trace of the Hopper kernel (kernels/hopper_trace.h) as text: the
// launch and where it was recorded, what one block's timeline says (summarize), and that
// timeline drawn in characters, one row per warpgroup and unit.
#include "kernels/hopper_trace.h"

#include <ostream>

namespace flashviz::cli {

// `block` indexes trace.blocks (-1: the longest, as the window shows first).
void printHopperTrace(std::ostream& out, const kernels::HopperTrace& trace, int block = -1);

} // namespace flashviz::cli
