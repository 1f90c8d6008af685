#pragma once
// The one place that knows whether the CUDA backend was built: the app, the CLI and the tests
// ask here which backends exist and get one by kind.
#include "core/backend.h"
#include "core/hardware.h"

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

bool cudaBackendBuilt();
std::vector<BackendAvailability> listBackends();

// Throws EngineError(Unsupported) with the reason when the kind is not available here.
std::unique_ptr<Backend> makeBackend(BackendKind kind);

// "This GPU" as a hardware profile with figures read from the device; nullopt without one.
std::optional<HardwareProfile> currentGpuProfile();

} // namespace flashviz
