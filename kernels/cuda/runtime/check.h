#pragma once
// Every CUDA and cuBLAS call goes through these: a failure becomes an EngineError whose text
// says what was being done and what the runtime answered. Internal to kernels/cuda.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace flashviz::cuda {

[[noreturn]] void throwCudaError(cudaError_t error, const std::string& what);

inline void check(cudaError_t error, const char* what) {
    if (error != cudaSuccess) throwCudaError(error, what);
}

// After every launch: a refused launch (bad configuration, too much shared memory, no kernel
// image for this GPU) shows up here, before the kernel would run.
void checkLaunch(const char* kernel);

// Waits for the device and reports a failure that happened while a kernel ran.
void synchronize(const char* what);

// Empty until a kernel fault (an illegal address, a trap, ...) has made this process's CUDA
// context unusable; then the sentence that says so. Every later CUDA call would fail, so the
// backend reports itself unavailable with this reason instead of trying.
std::string lostContextReason();

// Free and total device memory, for messages and the benchmark's peak-memory figures.
struct MemoryInfo {
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
};
MemoryInfo memoryInfo();

std::string formatBytes(double bytes);

} // namespace flashviz::cuda
