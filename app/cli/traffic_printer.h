#pragma once
// `flashviz-cli traffic`: the memory traffic of one problem through the GPU's three levels
// (core/l2_traffic.h), for FlashAttention in the kernel FlashViz would launch and for standard
// attention; then, where FlashViz ships a hardware-counter measurement of that GPU (or one is
// given), the model against every measured point.
#include "core/l2_traffic.h"

#include <ostream>
#include <string>

namespace flashviz::cli {

void printTrafficModel(std::ostream& out, const HardwareProfile& hardware, const TrafficShape& flash,
                       const std::string& kernelName, const TrafficShape& standard);
// Returns how many points miss the 10 % on DRAM bytes.
int printTrafficMeasured(std::ostream& out, const HardwareProfile& hardware,
                         const MeasuredTrafficFile& measured);

} // namespace flashviz::cli
