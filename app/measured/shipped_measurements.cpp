#include "app/measured/shipped_measurements.h"

#include "core/errors.h"

#include <QDir>
#include <QFile>
#include <QtGlobal>

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

} // namespace

const std::vector<MeasuredTrafficFile>& shippedTraffic() {
    static const std::vector<MeasuredTrafficFile> files = readShipped();
    return files;
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

} // namespace flashviz::measured
