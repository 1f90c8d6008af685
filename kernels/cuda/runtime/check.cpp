#include "kernels/cuda/runtime/check.h"

#include "core/errors.h"

#include <cstdio>
#include <mutex>

namespace flashviz::cuda {

namespace {

// Errors after which the CUDA context is unusable until the process ends.
bool isSticky(cudaError_t error) {
    switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

ErrorKind kindOf(cudaError_t error) {
    switch (error) {
    case cudaErrorMemoryAllocation:
        return ErrorKind::OutOfMemory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorDevicesUnavailable:
        return ErrorKind::Unsupported;
    default:
        return ErrorKind::BackendFailure;
    }
}

std::mutex lostContextMutex;
std::string lostContext; // guarded by lostContextMutex

void rememberLostContext(cudaError_t error) {
    const std::lock_guard<std::mutex> lock(lostContextMutex);
    if (lostContext.empty())
        lostContext = std::string("the GPU stopped with \"") + cudaGetErrorString(error) +
                      "\" earlier in this session and its CUDA context is lost; restart "
                      "FlashViz to use the GPU again";
}

} // namespace

std::string lostContextReason() {
    const std::lock_guard<std::mutex> lock(lostContextMutex);
    return lostContext;
}

std::string formatBytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024.0 && unit < 4) {
        bytes /= 1024.0;
        ++unit;
    }
    char text[64];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return text;
}

void throwCudaError(cudaError_t error, const std::string& what) {
    // Clear a non-sticky error so the next call starts clean; a sticky one stays regardless.
    (void)cudaGetLastError();
    std::string message = what + " failed on the GPU: " + cudaGetErrorString(error) + " (" +
                          cudaGetErrorName(error) + ").";
    if (error == cudaErrorMemoryAllocation) {
        const MemoryInfo mem = memoryInfo();
        if (mem.totalBytes > 0)
            message += " " + formatBytes(double(mem.freeBytes)) + " of " +
                       formatBytes(double(mem.totalBytes)) + " are free.";
    }
    if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorInvalidDeviceFunction)
        message += " FlashViz's kernels were built for sm_80 and sm_90; this GPU needs a build "
                   "for its own architecture.";
    if (isSticky(error)) {
        rememberLostContext(error);
        message += " The GPU context is lost: restart FlashViz to use the GPU again.";
    }
    throw EngineError(kindOf(error), message);
}

void checkLaunch(const char* kernel) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) throwCudaError(error, std::string("Launching the kernel ") + kernel);
}

void synchronize(const char* what) {
    const cudaError_t error = cudaDeviceSynchronize();
    if (error != cudaSuccess) throwCudaError(error, what);
}

MemoryInfo memoryInfo() {
    MemoryInfo info;
    if (cudaMemGetInfo(&info.freeBytes, &info.totalBytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return {};
    }
    return info;
}

} // namespace flashviz::cuda
