#pragma once
// Hardware profiles with the source of each figure, for the memory stage and the analysis.
#include <string>
#include <vector>

namespace flashviz {

struct Figure {
    double value = 0;
    std::string source; // where the number comes from: datasheet, paper, measurement
};

struct HardwareProfile {
    std::string id;   // short, for the CLI and settings: "a100-40gb"
    std::string name; // for people: "NVIDIA A100 40 GB (SXM)"
    Figure smCount;
    Figure sharedMemoryPerSmBytes;    // usable as shared memory by one SM
    Figure hbmBytes;
    Figure hbmBandwidthBytesPerSecond;
    Figure sramBandwidthBytesPerSecond; // all SMs together
    Figure fp32FlopsPerSecond;
    Figure fp16TensorFlopsPerSecond; // dense
    double totalSramBytes() const { return smCount.value * sharedMemoryPerSmBytes.value; }
};

const std::vector<HardwareProfile>& hardwareProfiles();
// Throws EngineError(InvalidArgument) naming the known ids.
const HardwareProfile& findHardwareProfile(const std::string& id);

} // namespace flashviz
