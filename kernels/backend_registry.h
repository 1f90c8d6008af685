#pragma once
// The one place that knows whether the CUDA backend was built: the app, the CLI and the tests
// ask here which backends exist and get one by kind.
#include "core/backend.h"
#include "core/hardware.h"
#include "kernels/gpu_benchmark.h"
#include "kernels/hopper_trace.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flashviz {

enum class BackendKind { Cpu, Cuda };

struct BackendAvailability {
    BackendKind kind = BackendKind::Cpu;
    std::string name;
    bool available = false;
    std::string reason; // why not, when unavailable: "built without CUDA", "no CUDA device"
};

const char* toString(BackendKind kind);
std::optional<BackendKind> parseBackendKind(const std::string& name);
// What every front end says when parseBackendKind() does not know the name.
std::string unknownBackendMessage(const std::string& name);

bool cudaBackendBuilt();
std::vector<BackendAvailability> listBackends();

// Throws EngineError(Unsupported) with the reason when the kind is not available here.
std::unique_ptr<Backend> makeBackend(BackendKind kind);

// "This GPU" as a hardware profile with figures read from the device; nullopt without one.
std::optional<HardwareProfile> currentGpuProfile();

// Whether the GPU benchmark (kernels/gpu_benchmark.h) can run here, on which device, and why not.
struct GpuBenchAvailability {
    bool available = false;
    std::string deviceName; // device 0's name when there is one
    std::string reason;     // why not, when unavailable
};
GpuBenchAvailability gpuBenchmarkAvailability();

// Validates the request (EngineError InvalidArgument / Unsupported, before anything else), then
// throws EngineError(Unsupported) with the reason when no usable GPU is here, else measures.
// Blocks: call it from a worker thread. One benchmark at a time per process.
std::vector<GpuBenchPoint> runGpuBenchmark(const GpuBenchRequest& request,
                                           const GpuBenchProgress& progress = {});

// Whether the Hopper kernel's trace mode (kernels/hopper_trace.h) can run here: a CUDA build with
// the sm_90a kernels and a GPU of compute capability 9.0. The same three fields as the benchmark.
GpuBenchAvailability hopperTraceAvailability();
// Validates the request (validateHopperTraceRequest), then throws EngineError(Unsupported) with
// the reason when the trace cannot run here, else records one traced launch. Blocks: call it
// from a worker thread.
kernels::HopperTrace recordHopperTrace(const kernels::HopperTraceRequest& request);

} // namespace flashviz
