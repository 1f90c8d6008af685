// Saved GPU benchmark results (app/gui/gpu_bench/gpu_bench_results.cpp): any bytes are read or
// refused with an EngineError, never a crash, an uncaught exception or undefined behaviour.
#include "pages/gpu_bench/gpu_bench_results.h"

#include "core/errors.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    try {
        const flashviz::gui::GpuBenchRecord record = flashviz::gui::gpuBenchRecordFromJson(bytes);
        // What was read writes back and reads again.
        (void)flashviz::gui::gpuBenchRecordFromJson(flashviz::gui::gpuBenchRecordToJson(record));
    } catch (const flashviz::EngineError&) {
    }
    return 0;
}
