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
    // What one SM holds at once (the occupancy of a kernel): threads, thread blocks, the shared
    // memory one block may opt in to, and what the driver keeps of it for each resident block.
    Figure maxThreadsPerSm{};
    Figure maxBlocksPerSm{};
    Figure sharedMemoryPerBlockBytes{};
    Figure reservedSharedPerBlockBytes{};
    // The L2 cache between HBM and the SMs (core/l2_traffic.h): its size, and how fast it delivers
    // reads to all SMs together.
    Figure l2Bytes{};
    Figure l2BandwidthBytesPerSecond{};
    double totalSramBytes() const { return smCount.value * sharedMemoryPerSmBytes.value; }
};

// Which units do the multiplications: each has its own peak rate, and so its own ridge point.
enum class Arithmetic { Fp32CudaCores, Fp16TensorCores };
inline constexpr Arithmetic kArithmetics[] = {Arithmetic::Fp32CudaCores,
                                              Arithmetic::Fp16TensorCores};
std::string arithmeticName(Arithmetic arithmetic); // "fp32 CUDA cores", "fp16/bf16 tensor cores"
// Bytes of one value moved to and from HBM in that arithmetic: fp32 4, fp16 and bf16 2.
double valueBytes(Arithmetic arithmetic);
double peakFlopsPerSecond(const HardwareProfile& hardware, Arithmetic arithmetic);
// The roofline's ridge point in FLOPs per HBM byte: a kernel doing fewer FLOPs per byte than this
// waits on memory (memory-bound); one doing more waits on arithmetic (compute-bound).
double ridgeFlopsPerByte(const HardwareProfile& hardware, Arithmetic arithmetic);

const std::vector<HardwareProfile>& hardwareProfiles();
// Throws EngineError(InvalidArgument) naming the known ids.
const HardwareProfile& findHardwareProfile(const std::string& id);

} // namespace flashviz
