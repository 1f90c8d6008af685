// Saved GPU benchmark results (app/gui/pages/gpu_bench/gpu_bench_results.cpp): any bytes are read or
// refused with an EngineError, never a crash, an uncaught exception or undefined behaviour.
#include "pages/gpu_bench/gpu_bench_results.h"

#include "core/errors.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    try {
        using namespace flashviz::gui;
        const GpuBenchRecord record = gpuBenchRecordFromJson(bytes);
        // What was read writes back, reads again, and writes the same bytes: nothing is lost or
        // changed on the way through a saved file.
        const QByteArray written = gpuBenchRecordToJson(record);
        if (gpuBenchRecordToJson(gpuBenchRecordFromJson(written)) != written) __builtin_trap();
    } catch (const flashviz::EngineError&) {
    }
    return 0;
}
