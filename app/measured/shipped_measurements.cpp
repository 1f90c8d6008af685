#include "app/measured/shipped_measurements.h"

#include "core/errors.h"
#include "kernels/gpu_benchmark.h"
#include "kernels/kernel_shapes.h"

#include <QDir>
#include <QFile>
#include <QtGlobal>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace flashviz::measured {

namespace {

std::vector<MeasuredTrafficFile> readShipped() {
    std::vector<MeasuredTrafficFile> files;
    const QDir dir(QStringLiteral(":/flashviz/measured"));
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly)) continue;
        try {
            files.push_back(parseMeasuredTraffic(file.readAll().toStdString()));
        } catch (const EngineError& e) {
            qWarning("flashviz: the shipped measurement %s is left out: %s", qPrintable(name),
                     e.what());
        }
    }
    return files;
}

std::vector<kernels::HopperTrace> readShippedTraces() {
    std::vector<kernels::HopperTrace> traces;
    const QDir dir(QStringLiteral(":/flashviz/traces"));
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly)) continue;
        try {
            for (kernels::HopperTrace& t : kernels::parseHopperTraces(file.readAll().toStdString()))
                traces.push_back(std::move(t));
        } catch (const EngineError& e) {
            qWarning("flashviz: the shipped trace %s is left out: %s", qPrintable(name), e.what());
        }
    }
    return traces;
}

// The measured head dimension nearest to d (d itself when measured; 0 when none is).
int nearestMeasuredDim(const std::vector<int>& dims, int d) {
    int best = 0;
    for (int m : dims)
        if (best == 0 || std::abs(m - d) < std::abs(best - d)) best = m;
    return best;
}

} // namespace

const std::vector<MeasuredTrafficFile>& shippedTraffic() {
    static const std::vector<MeasuredTrafficFile> files = readShipped();
    return files;
}

const std::vector<kernels::HopperTrace>& shippedHopperTraces() {
    static const std::vector<kernels::HopperTrace> traces = readShippedTraces();
    return traces;
}

const kernels::HopperTrace* shippedHopperTrace(int configRow, bool causal) {
    for (const kernels::HopperTrace& t : shippedHopperTraces())
        if (t.configRow == configRow && t.causal == causal) return &t;
    return nullptr;
}

const MeasuredTrafficFile* shippedTrafficFor(const std::string& hardwareId) {
    for (const MeasuredTrafficFile& f : shippedTraffic())
        if (f.hardwareId == hardwareId) return &f;
    return nullptr;
}

const MeasuredTraffic* findMeasuredPoint(const MeasuredTrafficFile& file, TrafficMethod method,
                                         double elementBytes, int headDim, int n, int blockRows) {
    for (const MeasuredTraffic& p : file.points) {
        const TrafficShape& s = p.shape;
        if (s.method == method && s.elementBytes == elementBytes && s.headDim == headDim &&
            s.queries == n && (method == TrafficMethod::Standard || blockRows == 0 ||
                               s.blockRows == blockRows))
            return &p;
    }
    return nullptr;
}

ThroughL2 throughL2(const HardwareProfile& hw, int headDim, int blockRows, int blockCols,
                    const std::vector<int>& ns) {
    ThroughL2 out;
    const MeasuredTrafficFile* file = shippedTrafficFor(hw.id);
    if (file) {
        out.measuredOn = file->gpu + ", " + file->date;
        for (const MeasuredTraffic& p : file->points)
            if (std::find(out.measuredDims.begin(), out.measuredDims.end(), p.shape.headDim) ==
                out.measuredDims.end())
                out.measuredDims.push_back(p.shape.headDim);
        std::sort(out.measuredDims.begin(), out.measuredDims.end());
    }
    out.headDim = out.measuredDims.empty() ? headDim : nearestMeasuredDim(out.measuredDims, headDim);
    const KernelShape kernel =
        kernels::kernelShapeFor(out.headDim, blockRows, blockCols, hw);
    out.kernelName = kernel.name;
    out.blockRows = kernel.blockRows;
    out.blockCols = kernel.blockCols;
    const GpuBenchRequest shape; // the benchmark's batch × n tokens and heads × d width
    out.tokens = shape.tokens;
    out.width = shape.headsTimesDim;
    try {
        for (int n : ns) {
            ThroughL2Point point;
            point.n = n;
            point.batch = std::max(1, int(shape.tokens / n));
            point.heads = std::max(1, shape.headsTimesDim / out.headDim);
            point.flash = estimateTraffic(flashLaunchShape(n, n, out.headDim, point.batch,
                                                           point.heads, false, kernel, hw),
                                          hw);
            point.standard = estimateTraffic(
                standardLaunchShape(n, n, out.headDim, point.batch, point.heads, false), hw);
            if (file) {
                if (const MeasuredTraffic* m = findMeasuredPoint(
                        *file, TrafficMethod::Flash, kernel.elementBytes, out.headDim, n,
                        kernel.blockRows)) {
                    point.flashMeasured = *m;
                    point.flashCheck = checkTraffic(*m, hw);
                }
                if (const MeasuredTraffic* m = findMeasuredPoint(
                        *file, TrafficMethod::Standard, 4, out.headDim, n)) {
                    point.standardMeasured = *m;
                    point.standardCheck = checkTraffic(*m, hw);
                }
            }
            out.points.push_back(std::move(point));
        }
    } catch (const EngineError& e) {
        out.points.clear();
        out.error = e.what();
    }
    return out;
}

} // namespace flashviz::measured
