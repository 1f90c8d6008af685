#include "gpu_bench/gpu_bench_results.h"

#include "core/errors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

constexpr const char* kFormat = "flashviz-gpu-benchmark";
constexpr int kVersion = 1;

[[noreturn]] void refuse(const std::string& text) {
    throw EngineError(ErrorKind::InvalidArgument, text);
}

} // namespace

QString gpuBenchResultsPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/gpu-benchmark.json");
}

QByteArray gpuBenchRecordToJson(const GpuBenchRecord& record) {
    nlohmann::json request = {{"sizes", record.request.sizes},
                              {"headDim", record.request.headDim},
                              {"causal", record.request.causal},
                              {"variants", record.request.variants},
                              {"repeats", record.request.repeats},
                              {"tokens", record.request.tokens},
                              {"headsTimesDim", record.request.headsTimesDim}};
    nlohmann::json points = nlohmann::json::array();
    for (const GpuBenchPoint& p : record.points)
        points.push_back({{"variant", p.variant},
                          {"n", p.n},
                          {"batch", p.batch},
                          {"heads", p.heads},
                          {"medianMs", p.medianMs},
                          {"tflops", p.tflops},
                          {"scratchBytes", p.scratchBytes},
                          {"note", p.note},
                          {"kernel", p.kernel}});
    const nlohmann::json doc = {
        {"format", kFormat},
        {"version", kVersion},
        {"device", record.device.toStdString()},
        {"measured", record.measured.toUTC().toString(Qt::ISODate).toStdString()},
        {"request", request},
        {"points", points}};
    return QByteArray::fromStdString(doc.dump(2) + "\n");
}

GpuBenchRecord gpuBenchRecordFromJson(const QByteArray& text) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text.toStdString());
    } catch (const nlohmann::json::parse_error& error) {
        refuse(std::string("it is not valid JSON (") + error.what() + ")");
    }
    GpuBenchRecord record;
    try {
        if (!doc.is_object() || doc.value("format", std::string()) != kFormat)
            refuse("it is not a FlashViz GPU benchmark file (no \"format\": \"" +
                   std::string(kFormat) + "\")");
        if (doc.at("version").get<int>() != kVersion)
            refuse("it was written in format version " +
                   std::to_string(doc.at("version").get<int>()) + ", and this FlashViz reads " +
                   std::to_string(kVersion));
        record.device = QString::fromStdString(doc.at("device").get<std::string>());
        record.measured = QDateTime::fromString(
            QString::fromStdString(doc.at("measured").get<std::string>()), Qt::ISODate);
        if (!record.measured.isValid()) refuse("its \"measured\" date is not an ISO 8601 date");
        const nlohmann::json& r = doc.at("request");
        record.request.sizes = r.at("sizes").get<std::vector<int>>();
        record.request.headDim = r.at("headDim").get<int>();
        record.request.causal = r.at("causal").get<bool>();
        record.request.variants = r.at("variants").get<std::vector<std::string>>();
        record.request.repeats = r.at("repeats").get<int>();
        record.request.tokens = r.at("tokens").get<long>();
        record.request.headsTimesDim = r.at("headsTimesDim").get<int>();
        try {
            validateGpuBenchRequest(record.request);
        } catch (const EngineError& error) {
            refuse(std::string("its request is not one FlashViz runs: ") + error.what());
        }
        for (const nlohmann::json& p : doc.at("points")) {
            GpuBenchPoint point;
            point.variant = p.at("variant").get<std::string>();
            point.n = p.at("n").get<int>();
            point.batch = p.at("batch").get<int>();
            point.heads = p.at("heads").get<int>();
            point.medianMs = p.at("medianMs").get<double>();
            point.tflops = p.at("tflops").get<double>();
            point.scratchBytes = p.at("scratchBytes").get<double>();
            point.note = p.value("note", std::string());
            point.kernel = p.value("kernel", std::string()); // absent in files before 2026-11-30
            const auto& variants = record.request.variants;
            if (std::find(variants.begin(), variants.end(), point.variant) == variants.end())
                refuse("a point names the method \"" + point.variant +
                       "\", which the request does not list");
            if (point.n < 1 || !std::isfinite(point.medianMs) || point.medianMs < 0 ||
                !std::isfinite(point.tflops) || point.tflops < 0 ||
                !std::isfinite(point.scratchBytes) || point.scratchBytes < 0)
                refuse("a point of " + point.variant + " at n = " + std::to_string(point.n) +
                       " has a negative or non-finite number");
            record.points.push_back(std::move(point));
        }
    } catch (const nlohmann::json::exception& error) {
        refuse(std::string("a field is missing or has the wrong type (") + error.what() + ")");
    }
    return record;
}

GpuBenchRecord loadGpuBenchRecord(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The saved GPU benchmark results in " + path.toStdString() +
                              " could not be opened: " + file.errorString().toStdString() + ".");
    try {
        return gpuBenchRecordFromJson(file.readAll());
    } catch (const EngineError& error) {
        throw EngineError(error.kind(), "The saved GPU benchmark results in " + path.toStdString() +
                                            " could not be read: " + error.what() + ".");
    }
}

void saveGpuBenchRecord(const GpuBenchRecord& record, const QString& path) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path); // written whole or not at all
    if (!file.open(QIODevice::WriteOnly) || file.write(gpuBenchRecordToJson(record)) < 0 ||
        !file.commit())
        throw EngineError(ErrorKind::InvalidArgument,
                          "The GPU benchmark results could not be saved to " + path.toStdString() +
                              ": " + file.errorString().toStdString() + ".");
}

double gpuBenchWorkingBytes(const GpuBenchRequest& request, const GpuBenchPoint& point) {
    const double elementBytes =
        point.variant == kGpuBenchFlashFp16 || point.variant == kGpuBenchFlashBf16 ? 2.0 : 4.0;
    const double tensors = 4.0 * double(request.tokens) * request.headsTimesDim * elementBytes;
    return tensors + point.scratchBytes;
}

} // namespace flashviz::gui
