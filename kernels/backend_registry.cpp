#include "kernels/backend_registry.h"

#include "core/errors.h"

#include <algorithm>

#if FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/bench/benchmark_run.h"
#include "kernels/cuda_backend.h"
#endif

namespace flashviz {

const char* toString(BackendKind kind) {
    switch (kind) {
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Cuda: return "cuda";
    }
    return "?";
}

std::optional<BackendKind> parseBackendKind(const std::string& name) {
    if (name == "cpu" || name == "CPU") return BackendKind::Cpu;
    if (name == "cuda" || name == "CUDA" || name == "gpu") return BackendKind::Cuda;
    return std::nullopt;
}

std::string unknownBackendMessage(const std::string& name) {
    return "--backend '" + name + "': use cpu or cuda";
}

bool cudaBackendBuilt() {
#if FLASHVIZ_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

static BackendAvailability cudaAvailability() {
    BackendAvailability cuda{BackendKind::Cuda, "CUDA", false, {}};
#if FLASHVIZ_HAVE_CUDA
    const CudaDeviceStatus status = cudaDeviceStatus();
    cuda.available = status.usable;
    cuda.reason = status.reason;
#else
    cuda.reason = "FlashViz was built without the CUDA toolkit";
#endif
    return cuda;
}

std::vector<BackendAvailability> listBackends() {
    return {{BackendKind::Cpu, "CPU", true, {}}, cudaAvailability()};
}

std::unique_ptr<Backend> makeBackend(BackendKind kind) {
    if (kind == BackendKind::Cpu) return std::make_unique<CpuBackend>();
    const BackendAvailability cuda = cudaAvailability();
    if (!cuda.available)
        throw EngineError(ErrorKind::Unsupported, "The CUDA backend is not available: " + cuda.reason);
#if FLASHVIZ_HAVE_CUDA
    return makeCudaBackend();
#else
    return nullptr; // unreachable: cudaAvailability() is never available without CUDA
#endif
}

std::optional<HardwareProfile> currentGpuProfile() {
#if FLASHVIZ_HAVE_CUDA
    return cudaDeviceProfile();
#else
    return std::nullopt;
#endif
}

GpuBenchAvailability gpuBenchmarkAvailability() {
    GpuBenchAvailability out;
    const BackendAvailability cuda = cudaAvailability();
    out.available = cuda.available;
    out.reason = cuda.reason;
#if FLASHVIZ_HAVE_CUDA
    if (const auto info = cudaDeviceInfo()) out.deviceName = info->name;
#endif
    return out;
}

std::vector<GpuBenchPoint> runGpuBenchmark(const GpuBenchRequest& request,
                                           const GpuBenchProgress& progress) {
    validateGpuBenchRequest(request);
    const GpuBenchAvailability here = gpuBenchmarkAvailability();
    if (!here.available)
        throw EngineError(ErrorKind::Unsupported, "The GPU benchmark cannot run here: " + here.reason);
#if FLASHVIZ_HAVE_CUDA
    return cuda::runBenchmark(request, progress);
#else
    (void)progress;
    return {}; // unreachable: never available without CUDA
#endif
}

GpuBenchAvailability hopperTraceAvailability() {
    GpuBenchAvailability out = gpuBenchmarkAvailability();
    if (!out.available) return out;
#if FLASHVIZ_HAVE_CUDA
    const std::vector<CudaTensorCoreKernel> kernels = cudaTensorCoreKernels();
    const bool built = std::any_of(kernels.begin(), kernels.end(), [](const CudaTensorCoreKernel& k) {
        return k.wgmma;
    });
    const bool runs = std::any_of(kernels.begin(), kernels.end(), [](const CudaTensorCoreKernel& k) {
        return k.wgmma && k.fitsDevice;
    });
    if (!built) {
        out.available = false;
        out.reason = "this FlashViz was built without the Hopper kernel (it needs CUDA 12.5 or later)";
    } else if (!runs) {
        out.available = false;
        out.reason = "the Hopper kernel runs on compute capability 9.0 alone (H100, H200), not on " + out.deviceName;
    }
#endif
    return out;
}

kernels::HopperTrace recordHopperTrace(const kernels::HopperTraceRequest& request) {
    kernels::validateHopperTraceRequest(request);
    const GpuBenchAvailability here = hopperTraceAvailability();
    if (!here.available)
        throw EngineError(ErrorKind::Unsupported, "The Hopper trace cannot run here: " + here.reason);
#if FLASHVIZ_HAVE_CUDA
    return cudaHopperTrace(request);
#else
    throw EngineError(ErrorKind::Unsupported, "The Hopper trace cannot run here: built without CUDA"); // unreachable
#endif
}

} // namespace flashviz
