#include "core/hardware.h"

#include "core/errors.h"

namespace flashviz {

namespace {

constexpr double KB = 1024.0;
constexpr double TB = 1e12;
constexpr double MiB = 1024.0 * 1024.0;
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

const char* kA100Paper = "NVIDIA A100 datasheet; FlashAttention paper (Dao et al. 2022), section 2.1";
const char* kA100Arch = "NVIDIA Ampere architecture whitepaper: 192 KB L1/shared per SM, up to 164 KB shared";
const char* kSramDerived = "derived: SMs x 128 bytes per clock x boost clock";
const char* kH100Sheet = "NVIDIA H100 SXM datasheet";
const char* kHopperArch = "NVIDIA Hopper architecture whitepaper: 256 KB L1/shared per SM, up to 228 KB shared";
const char* kCc80 = "CUDA C++ Programming Guide, compute capability 8.0 (cudaDevAttrMaxSharedMemoryPerBlockOptin: 163 KiB)";
const char* kCc90 = "CUDA C++ Programming Guide, compute capability 9.0 (cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KiB)";

// NVIDIA publishes no L2 rate for Hopper. kernels/bench/l2_bandwidth.cu measured our H100's:
// reads of a buffer of 3/4 of L2 run at 7.48 TB/s, against 3.09 TB/s from DRAM (the shipped
// file's run). The H200 has the same chip and clocks with more L2; its rate is taken to be the
// H100's until measured.
constexpr double kHopperL2Read = 7481e9;
const char* kH100L2Source =
    "measured: flashviz-l2-bandwidth on our H100 SXM (2026-12-06), reads of a 39 MB buffer "
    "(resources/measured/h100-traffic.json)";
const char* kH200L2Source =
    "assumed: the H100's measured 7.48 TB/s (same GH100 chip and clocks; not yet measured on an "
    "H200)";

// The per-SM limits of a compute capability: 2048 threads and 32 blocks on both; the shared
// memory one block may opt in to, 1 KiB of each block's kept by the driver.
void setSmLimits(HardwareProfile& profile, double sharedPerBlockKib, const char* source) {
    profile.maxThreadsPerSm = {2048, source};
    profile.maxBlocksPerSm = {32, source};
    profile.sharedMemoryPerBlockBytes = {sharedPerBlockKib * KB, source};
    profile.reservedSharedPerBlockBytes = {1 * KB, source};
}

// Sizes as the CUDA runtime reports them (cudaDeviceProp::l2CacheSize: NVIDIA's "MB" of L2 are
// 2^20 bytes, an H100's 50 MB is 52,428,800). Read rates: the A100's from its whitepaper's bytes
// per clock; Hopper's measured on an H100 (kHopperL2Read).
void setL2(HardwareProfile& profile) {
    if (profile.id.rfind("a100", 0) == 0) {
        profile.l2Bytes = {40 * MiB, "NVIDIA Ampere architecture whitepaper: 40 MB L2 (both A100 models)"};
        profile.l2BandwidthBytesPerSecond = {
            5120 * 1.41e9, "derived: the whitepaper's 5120 bytes per clock of L2 read bandwidth "
                           "x 1.41 GHz boost clock"};
    } else if (profile.id == "h100-sxm") {
        profile.l2Bytes = {50 * MiB, "NVIDIA Hopper architecture whitepaper: 50 MB L2; PyTorch "
                                    "reports 50 MB on our H100 (2026-11-13)"};
        profile.l2BandwidthBytesPerSecond = {kHopperL2Read, kH100L2Source};
    } else {
        profile.l2Bytes = {60 * MiB, "measured: PyTorch reports 60 MB of L2 on our H200 (2026-10-28)"};
        profile.l2BandwidthBytesPerSecond = {kHopperL2Read, kH200L2Source};
    }
}

HardwareProfile a100(const char* id, const char* name, double memoryGb, double bandwidthTbs) {
    return {id,
            name,
            {108, kA100Arch},
            {164 * KB, kA100Arch},
            {memoryGb * GiB, kA100Paper},
            {bandwidthTbs * TB, kA100Paper},
            {108 * 128 * 1.41e9, std::string(kSramDerived) + " (1.41 GHz); the paper quotes 19 TB/s"},
            {19.5 * TB, kA100Paper},
            {312 * TB, kA100Paper}};
}

std::vector<HardwareProfile> makeProfiles() {
    std::vector<HardwareProfile> profiles = {
        a100("a100-40gb", "NVIDIA A100 40 GB (SXM)", 40, 1.555),
        a100("a100-80gb", "NVIDIA A100 80 GB (SXM)", 80, 2.039),
        {"h100-sxm",
         "NVIDIA H100 80 GB (SXM)",
         {132, kH100Sheet},
         {228 * KB, kHopperArch},
         {80 * GiB, kH100Sheet},
         {3.35 * TB, kH100Sheet},
         {132 * 128 * 1.98e9, std::string(kSramDerived) + " (1.98 GHz)"},
         {67 * TB, kH100Sheet},
         {989 * TB, std::string(kH100Sheet) + ", dense"}},
        {"h200",
         "NVIDIA H200 141 GB (SXM)",
         {132, "measured: PyTorch reports 132 multiprocessors (2026-10-28)"},
         {228 * KB, kHopperArch},
         {141 * GiB, "NVIDIA H200 datasheet: 141 GB, read as binary units as NVIDIA's memory "
                     "sizes are (the A100's 40 GB is 40 GiB); of it CUDA lets a program allocate "
                     "139.8 GiB on our H200 (kernels/bench/latest/fp32-causal.log)"},
         {4.8 * TB, "NVIDIA H200 datasheet; a device-to-device copy measured 4.2-4.3 TB/s"},
         {132 * 128 * 1.98e9, std::string(kSramDerived) + " (1.98 GHz, measured under load)"},
         {67 * TB, "NVIDIA H200 datasheet (same chip as H100); fp32 matmul measured 50.7 TFLOP/s"},
         {989 * TB, "NVIDIA H200 datasheet, dense; bf16 matmul measured 693-790 TFLOP/s"}},
    };
    for (HardwareProfile& p : profiles) {
        const bool ampere = p.id.rfind("a100", 0) == 0;
        setSmLimits(p, ampere ? 163 : 227, ampere ? kCc80 : kCc90);
        setL2(p);
    }
    return profiles;
}

} // namespace

std::string arithmeticName(Arithmetic arithmetic) {
    return arithmetic == Arithmetic::Fp32CudaCores ? "fp32 CUDA cores" : "fp16/bf16 tensor cores";
}

double valueBytes(Arithmetic arithmetic) {
    return arithmetic == Arithmetic::Fp32CudaCores ? 4.0 : 2.0;
}

double peakFlopsPerSecond(const HardwareProfile& hardware, Arithmetic arithmetic) {
    return arithmetic == Arithmetic::Fp32CudaCores ? hardware.fp32FlopsPerSecond.value
                                                   : hardware.fp16TensorFlopsPerSecond.value;
}

double ridgeFlopsPerByte(const HardwareProfile& hardware, Arithmetic arithmetic) {
    return peakFlopsPerSecond(hardware, arithmetic) / hardware.hbmBandwidthBytesPerSecond.value;
}

const std::vector<HardwareProfile>& hardwareProfiles() {
    static const std::vector<HardwareProfile> profiles = makeProfiles();
    return profiles;
}

const HardwareProfile& findHardwareProfile(const std::string& id) {
    std::string known;
    for (const auto& p : hardwareProfiles()) {
        if (p.id == id) return p;
        known += (known.empty() ? "" : ", ") + p.id;
    }
    throw EngineError(ErrorKind::InvalidArgument,
                      "Unknown hardware profile '" + id + "'; known profiles: " + known);
}

} // namespace flashviz
