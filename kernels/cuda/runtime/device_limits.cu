// What the device allows a kernel (shared memory per block and per SM, the driver's reserve per
// block), read once per call from the CUDA runtime, and a fill kernel for device buffers.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/runtime/device_attributes.h"

#include <algorithm>

namespace flashviz::cuda {

namespace {

__global__ void fillKernel(float* data, std::size_t count, float value) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        data[i] = value;
}

} // namespace

std::size_t deviceAttribute(cudaDeviceAttr attribute, const char* what) {
    int device = 0;
    check(cudaGetDevice(&device), "Selecting the GPU");
    int value = 0;
    check(cudaDeviceGetAttribute(&value, attribute, device), what);
    return std::size_t(value);
}

std::size_t maxSharedBytesPerBlock() {
    return deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                           "Reading the GPU's shared-memory limit");
}

std::size_t sharedBytesPerSm() {
    return deviceAttribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                           "Reading the GPU's shared memory per SM");
}

std::size_t reservedSharedBytesPerBlock() {
    return deviceAttribute(cudaDevAttrReservedSharedMemoryPerBlock,
                           "Reading the GPU's reserved shared memory per block");
}

void fillDevice(float* data, std::size_t count, float value) {
    if (count == 0) return;
    const std::size_t blocks = std::min<std::size_t>((count + 255) / 256, 65536);
    fillKernel<<<unsigned(blocks), 256>>>(data, count, value);
    checkLaunch("fill");
}

} // namespace flashviz::cuda
