// Device query: what device 0 is, whether the kernels can run on it, and its figures as a
// hardware profile for the memory stage.
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda_backend.h"

#include <cuda_runtime.h>


namespace flashviz {

namespace {

int attribute(cudaDeviceAttr what, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, what, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return value;
}

// FP32 lanes per SM: 64 on the A100 (8.0), 128 on later parts (8.6, 8.9, 9.0 and newer).
int fp32LanesPerSm(int major, int minor) { return (major == 8 && minor == 0) ? 64 : 128; }

// Dense fp16 tensor FLOPs per clock per SM (datasheets: A100 312 TFLOP/s at 1.41 GHz with 108
// SMs; H100 SXM 989 TFLOP/s at 1.83 GHz with 132 SMs). 0 where not known here.
int tensorFlopsPerClockPerSm(int major, int minor) {
    if (major == 8 && minor == 0) return 2048;
    if (major == 9 && minor == 0) return 4096;
    return 0;
}

} // namespace

std::optional<CudaDeviceInfo> cudaDeviceInfo(std::string* whyNot) {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        if (whyNot) {
            if (error == cudaErrorInsufficientDriver)
                *whyNot = "the NVIDIA driver is missing or older than the CUDA runtime FlashViz "
                          "was built with (" +
                          std::string(cudaGetErrorString(error)) + ")";
            else if (error != cudaSuccess)
                *whyNot = std::string("no CUDA device found (") + cudaGetErrorString(error) + ")";
            else
                *whyNot = "no CUDA device found";
        }
        return std::nullopt;
    }
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
        (void)cudaGetLastError();
        if (whyNot) *whyNot = std::string("the CUDA device could not be read (") +
                              cudaGetErrorString(e) + ")";
        return std::nullopt;
    }
    CudaDeviceInfo info;
    info.index = 0;
    info.name = prop.name;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.smCount = prop.multiProcessorCount;
    info.sharedMemoryPerSmBytes = prop.sharedMemPerMultiprocessor;
    info.sharedMemoryPerBlockBytes = prop.sharedMemPerBlockOptin;
    info.reservedSharedPerBlockBytes = prop.reservedSharedMemPerBlock;
    info.maxThreadsPerSm = prop.maxThreadsPerMultiProcessor;
    info.maxBlocksPerSm = prop.maxBlocksPerMultiProcessor;
    info.globalMemoryBytes = prop.totalGlobalMem;
    info.l2CacheBytes = std::size_t(prop.l2CacheSize);
    info.smClockHz = attribute(cudaDevAttrClockRate, 0) * 1e3;
    info.memoryClockHz = attribute(cudaDevAttrMemoryClockRate, 0) * 1e3;
    info.memoryBusWidthBits = prop.memoryBusWidth;
    (void)cudaRuntimeGetVersion(&info.runtimeVersion);
    (void)cudaDriverGetVersion(&info.driverVersion);
    return info;
}

CudaDeviceStatus assessCudaDevice(const CudaDeviceInfo& info) {
    if (info.computeMajor < kCudaMinComputeMajor)
        return {false, info.name + " has compute capability " + std::to_string(info.computeMajor) +
                           "." + std::to_string(info.computeMinor) +
                           "; FlashViz's kernels need 8.0 (A100) or newer"};
    return {true, {}};
}

CudaDeviceStatus cudaDeviceStatus() {
    if (std::string lost = cuda::lostContextReason(); !lost.empty()) return {false, std::move(lost)};
    std::string whyNot;
    const auto info = cudaDeviceInfo(&whyNot);
    if (!info) return {false, whyNot};
    return assessCudaDevice(*info);
}

HardwareProfile hardwareProfileFor(const CudaDeviceInfo& info) {
    const std::string queried = "queried from the device (cudaGetDeviceProperties)";
    HardwareProfile p;
    p.id = "cuda" + std::to_string(info.index);
    p.name = info.name + " (this GPU, compute capability " + std::to_string(info.computeMajor) +
             "." + std::to_string(info.computeMinor) + ")";
    p.smCount = {double(info.smCount), queried};
    p.sharedMemoryPerSmBytes = {double(info.sharedMemoryPerSmBytes), queried};
    p.sharedMemoryPerBlockBytes = {double(info.sharedMemoryPerBlockBytes), queried};
    p.reservedSharedPerBlockBytes = {double(info.reservedSharedPerBlockBytes), queried};
    p.maxThreadsPerSm = {double(info.maxThreadsPerSm), queried};
    p.maxBlocksPerSm = {double(info.maxBlocksPerSm), queried};
    p.hbmBytes = {double(info.globalMemoryBytes), queried};
    p.hbmBandwidthBytesPerSecond = {
        2.0 * info.memoryClockHz * info.memoryBusWidthBits / 8.0,
        "derived: 2 transfers per memory clock x bus width, from the device's peak memory clock "
        "and bus width"};
    p.sramBandwidthBytesPerSecond = {
        128.0 * info.smCount * info.smClockHz,
        "derived: 128 bytes per clock per SM x SM count x peak SM clock"};
    p.fp32FlopsPerSecond = {
        2.0 * fp32LanesPerSm(info.computeMajor, info.computeMinor) * info.smCount * info.smClockHz,
        "derived: 2 FLOPs per FMA x FP32 lanes per SM for this architecture x SMs x peak clock"};
    const int tensor = tensorFlopsPerClockPerSm(info.computeMajor, info.computeMinor);
    p.fp16TensorFlopsPerSecond = {
        double(tensor) * info.smCount * info.smClockHz,
        tensor > 0 ? "derived: dense fp16 FLOPs per clock per SM for this architecture (from the "
                     "datasheet) x SMs x peak clock"
                   : "not known for this architecture"};
    return p;
}

std::optional<HardwareProfile> cudaDeviceProfile() {
    const auto info = cudaDeviceInfo();
    if (!info) return std::nullopt;
    return hardwareProfileFor(*info);
}

} // namespace flashviz
