#pragma once
// A finished GPU benchmark as the view keeps it: the request, the points, the device and when
// it ran; saved as JSON so that a machine without a GPU can still show the last measurement.
#include "kernels/gpu_benchmark.h"

#include <QDateTime>
#include <QString>

#include <vector>

namespace flashviz::gui {

struct GpuBenchRecord {
    QString device;     // "NVIDIA H200"
    QDateTime measured; // UTC
    QString program;    // what measured it, "FlashViz 0.1.0"; empty in files before 2026-12-01
    GpuBenchRequest request;
    std::vector<GpuBenchPoint> points;
};

// <AppDataLocation>/gpu-benchmark.json (…/FlashViz/flashviz/gpu-benchmark.json for the app).
QString gpuBenchResultsPath();

// The largest saved file read (a real one is a few kilobytes).
inline constexpr qint64 kGpuBenchMaxFileBytes = 4 * 1024 * 1024;

QByteArray gpuBenchRecordToJson(const GpuBenchRecord& record);
// Throws EngineError(InvalidArgument) with a readable sentence for text that is not a saved
// benchmark (not JSON, longer than kGpuBenchMaxFileBytes, fields missing or of the wrong type,
// unknown methods or passes, numbers that are not whole where they must be or out of their range, text
// too long); the sentence names the field and its value. Nothing else escapes it. A file without
// "request.pass" (written before the backward could be measured) reads as the forward.
GpuBenchRecord gpuBenchRecordFromJson(const QByteArray& text);

// Reading and writing files; EngineError naming the file when it cannot be read or written.
GpuBenchRecord loadGpuBenchRecord(const QString& path);
void saveGpuBenchRecord(const GpuBenchRecord& record, const QString& path);

// The H200 measurement FlashViz ships (resources/gpu-benchmark-h200.json, a copy of
// kernels/bench/latest/gpu-benchmark-h200.json), shown until the user's own run is saved.
// Throws EngineError if the compiled-in file cannot be read.
GpuBenchRecord shippedGpuBenchRecord();

// "FlashViz 0.1.0": the program field of a record this build measures.
QString gpuBenchProgramName();

// Device memory a point's method works in: Q, K, V, O in the method's element type plus its
// scratch (the n x n scores for standard attention, m and l for the fp32 flash kernel); a pass
// with the backward adds dO, dQ, dK and dV (its scratch: the log-sum-exp and dQ's fp32 sums).
double gpuBenchWorkingBytes(const GpuBenchRequest& request, const GpuBenchPoint& point);

} // namespace flashviz::gui
