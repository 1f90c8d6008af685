#include "pages/gpu_bench/gpu_bench_results.h"

#include "core/errors.h"
#include "core/problem.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace flashviz::gui {

namespace {

constexpr const char* kFormat = "flashviz-gpu-benchmark";
// Version 2 added "request.pass": a reader of version 1 would take a backward run for a forward
// one, so it is told the file is newer instead. Version 1 files are forward runs.
constexpr int kFirstVersion = 1;
constexpr int kVersion = 2;

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
                              {"headsTimesDim", record.request.headsTimesDim},
                              {"pass", gpuBenchPassName(record.request.pass)}};
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
    nlohmann::json doc = {{"format", kFormat},
                          {"version", kVersion},
                          {"device", record.device.toStdString()},
                          {"measured", record.measured.toUTC().toString(Qt::ISODate).toStdString()},
                          {"request", request},
                          {"points", points}};
    if (!record.program.isEmpty()) doc["program"] = record.program.toStdString();
    return QByteArray::fromStdString(doc.dump(2) + "\n");
}

namespace {

// Reads one saved record's fields, each checked for its type and its range; every refusal names
// the field ("points[3].medianMs") and the value as the file has it. A member is looked up by
// the last part of its field name; the *Value forms read an entry of a list.
namespace field {

using json = nlohmann::json;

std::string quoted(const std::string& name) {
    return "\"" + name + "\"";
}

// The value as the file has it, cut short when long.
std::string excerpt(const json& v) {
    std::string text = v.is_array() ? "a list" : v.is_object() ? "an object" : v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

std::string shortNumber(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

[[noreturn]] void wrongType(const std::string& name, const char* expected, const json& v) {
    refuse("a field is missing or has the wrong type: " + quoted(name) + " must be " + expected +
           ", not " + excerpt(v));
}

const json& member(const json& object, const std::string& name) {
    const auto dot = name.find_last_of('.');
    const auto it = object.find(dot == std::string::npos ? name : name.substr(dot + 1));
    if (it == object.end())
        refuse("a field is missing or has the wrong type: " + quoted(name) + " is missing");
    return *it;
}

// A JSON number that is a whole number in [lo, hi] (2048 and 2048.0 alike). A value outside the
// range is refused before any conversion (2.048e92 made an int was undefined behaviour; 1e300
// read as -2147483648, 2^32 + 1024 as 1024).
long long integerValue(const json& v, const std::string& name, long long lo, long long hi) {
    if (v.is_number_unsigned()) {
        const auto u = v.get<json::number_unsigned_t>();
        if (u <= static_cast<json::number_unsigned_t>(std::numeric_limits<long long>::max()) &&
            static_cast<long long>(u) >= lo && static_cast<long long>(u) <= hi)
            return static_cast<long long>(u);
    } else if (v.is_number_integer()) {
        const auto i = v.get<json::number_integer_t>();
        if (i >= lo && i <= hi) return i;
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d) || d != std::floor(d))
            refuse(quoted(name) + " must be a whole number, not " + v.dump());
        if (d >= static_cast<double>(lo) && d <= static_cast<double>(hi))
            return static_cast<long long>(d);
    } else {
        wrongType(name, "a whole number", v);
    }
    refuse(quoted(name) + " must be a whole number from " + std::to_string(lo) + " to " +
           std::to_string(hi) + ", not " + v.dump());
}

int int32(const json& object, const std::string& name, int lo, int hi) {
    return static_cast<int>(integerValue(member(object, name), name, lo, hi));
}

// A finite JSON number in [lo, hi]; `unit` follows the bounds in the message.
double number(const json& object, const std::string& name, double lo, double hi, const char* unit) {
    const json& v = member(object, name);
    if (!v.is_number()) wrongType(name, "a number", v);
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= lo && d <= hi) return d;
    refuse(quoted(name) + " is " + v.dump() + (d < 0 ? ", which is negative" : "") +
           "; it must be a number from " + shortNumber(lo) + " to " + shortNumber(hi) + unit);
}

bool boolean(const json& object, const std::string& name) {
    const json& v = member(object, name);
    if (!v.is_boolean()) wrongType(name, "true or false", v);
    return v.get<bool>();
}

// Text of at most `maxChars` characters (code points; the parser has checked the UTF-8).
std::string stringValue(const json& v, const std::string& name, std::size_t maxChars) {
    if (!v.is_string()) wrongType(name, "text", v);
    const std::string& text = v.get_ref<const std::string&>();
    const auto chars = static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
    if (chars > maxChars)
        refuse(quoted(name) + " is " + std::to_string(chars) + " characters long; at most " +
               std::to_string(maxChars) + " are read");
    return text;
}

std::string string(const json& object, const std::string& name, std::size_t maxChars) {
    return stringValue(member(object, name), name, maxChars);
}

std::string optionalString(const json& object, const std::string& name, std::size_t maxChars) {
    const auto dot = name.find_last_of('.');
    return object.contains(dot == std::string::npos ? name : name.substr(dot + 1))
               ? string(object, name, maxChars)
               : std::string();
}

const json& array(const json& object, const std::string& name, std::size_t maxSize) {
    const json& v = member(object, name);
    if (!v.is_array()) wrongType(name, "a list", v);
    if (v.size() > maxSize)
        refuse(quoted(name) + " has " + std::to_string(v.size()) + " entries; at most " +
               std::to_string(maxSize) + " are read");
    return v;
}

const json& object(const json& parent, const std::string& name) {
    const json& v = member(parent, name);
    if (!v.is_object()) wrongType(name, "an object", v);
    return v;
}

} // namespace field

// Bounds of what a saved record may hold: far beyond what a run measures, small enough that
// nothing drawn from them overflows or takes long to lay out.
constexpr std::size_t kMaxDeviceChars = 200;
constexpr std::size_t kMaxNameChars = 64; // variant names, dates, the program
constexpr std::size_t kMaxKernelChars = 200;
constexpr std::size_t kMaxNoteChars = 1000;
constexpr std::size_t kMaxSizes = 64;
constexpr std::size_t kMaxVariants = 16;
constexpr std::size_t kMaxPoints = 4096;
constexpr long long kMaxTokens = kGpuBenchMaxTokens;
constexpr double kMinMs = 1e-6;           // 1 ns: no kernel launch is faster
constexpr double kMaxMs = 1e7;            // 2.8 hours
constexpr double kMaxTflops = 1e5;        // 100 PFLOP/s, far past any GPU
constexpr double kMaxScratchBytes = 1e15; // 1 PB
constexpr int kMaxNesting = 16;

// The request's pass; absent in files written before the backward was measured: the forward.
GpuBenchPass readPass(const nlohmann::json& request) {
    const std::string name = field::optionalString(request, "request.pass", kMaxNameChars);
    if (name.empty() && !request.contains("pass")) return GpuBenchPass::Forward;
    if (const std::optional<GpuBenchPass> pass = parseGpuBenchPass(name)) return *pass;
    std::string known;
    for (const GpuBenchPass pass : kGpuBenchPasses)
        known += (known.empty() ? "" : ", ") + field::quoted(gpuBenchPassName(pass));
    refuse("\"request.pass\" is " + field::quoted(name) + ", not a pass FlashViz measures (" +
           known + ")");
}

GpuBenchRecord readRecord(const nlohmann::json& doc) {
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat)
        refuse("it is not a FlashViz GPU benchmark file (no \"format\": \"" + std::string(kFormat) +
               "\")");
    const int version = field::int32(doc, "version", 1, std::numeric_limits<int>::max());
    if (version < kFirstVersion || version > kVersion)
        refuse("it was written in format version " + std::to_string(version) +
               ", and this FlashViz reads versions " + std::to_string(kFirstVersion) + " to " +
               std::to_string(kVersion));
    GpuBenchRecord record;
    record.device = QString::fromStdString(field::string(doc, "device", kMaxDeviceChars));
    record.measured = QDateTime::fromString(
        QString::fromStdString(field::string(doc, "measured", kMaxNameChars)), Qt::ISODate);
    if (!record.measured.isValid()) refuse("its \"measured\" date is not an ISO 8601 date");
    record.program = QString::fromStdString(field::optionalString(doc, "program", kMaxNameChars));

    const nlohmann::json& r = field::object(doc, "request");
    const nlohmann::json& sizes = field::array(r, "request.sizes", kMaxSizes);
    record.request.sizes.clear();
    for (std::size_t i = 0; i < sizes.size(); ++i)
        record.request.sizes.push_back(static_cast<int>(field::integerValue(
            sizes[i], "request.sizes[" + std::to_string(i) + "]", 1, kMaxTokens)));
    record.request.headDim = field::int32(r, "request.headDim", 1, kMaxHeadDim);
    record.request.causal = field::boolean(r, "request.causal");
    const nlohmann::json& variants = field::array(r, "request.variants", kMaxVariants);
    record.request.variants.clear();
    for (std::size_t i = 0; i < variants.size(); ++i)
        record.request.variants.push_back(field::stringValue(
            variants[i], "request.variants[" + std::to_string(i) + "]", kMaxNameChars));
    record.request.repeats = field::int32(r, "request.repeats", 1, kGpuBenchMaxRepeats);
    record.request.tokens = long(
        field::integerValue(field::member(r, "request.tokens"), "request.tokens", 1, kMaxTokens));
    record.request.headsTimesDim = field::int32(r, "request.headsTimesDim", 1, kGpuBenchMaxHeadsTimesDim);
    record.request.pass = readPass(r);
    try {
        validateGpuBenchRequest(record.request);
    } catch (const EngineError& error) {
        refuse(std::string("its request is not one FlashViz runs: ") + error.what());
    }

    const nlohmann::json& points = field::array(doc, "points", kMaxPoints);
    for (std::size_t i = 0; i < points.size(); ++i) {
        const nlohmann::json& p = points[i];
        const std::string at = "points[" + std::to_string(i) + "].";
        if (!p.is_object())
            refuse("a field is missing or has the wrong type: \"points[" + std::to_string(i) +
                   "]\" must be an object");
        GpuBenchPoint point;
        point.variant = field::string(p, at + "variant", kMaxNameChars);
        point.n = field::int32(p, at + "n", 1, int(kMaxTokens));
        point.batch = field::int32(p, at + "batch", 1, int(kMaxTokens));
        point.heads = field::int32(p, at + "heads", 1, kGpuBenchMaxHeadsTimesDim);
        point.medianMs = field::number(p, at + "medianMs", 0, kMaxMs, " ms");
        if (point.medianMs > 0 && point.medianMs < kMinMs)
            refuse("\"" + at + "medianMs\" is " + p["medianMs"].dump() +
                   " ms, shorter than any kernel runs (0 marks a point not measured)");
        point.tflops = field::number(p, at + "tflops", 0, kMaxTflops, " TFLOP/s");
        point.scratchBytes = field::number(p, at + "scratchBytes", 0, kMaxScratchBytes, " bytes");
        point.note = field::optionalString(p, at + "note", kMaxNoteChars);
        // "kernel" is absent in files before 2026-11-30.
        point.kernel = field::optionalString(p, at + "kernel", kMaxKernelChars);
        const auto& known = record.request.variants;
        if (std::find(known.begin(), known.end(), point.variant) == known.end())
            refuse("a point names the method \"" + point.variant +
                   "\", which the request does not list");
        const auto& sizesRun = record.request.sizes;
        if (std::find(sizesRun.begin(), sizesRun.end(), point.n) == sizesRun.end())
            refuse("a point of " + point.variant + " is at n = " + std::to_string(point.n) +
                   ", which the request does not list");
        record.points.push_back(std::move(point));
    }
    return record;
}

} // namespace

GpuBenchRecord gpuBenchRecordFromJson(const QByteArray& text) {
    if (text.size() > kGpuBenchMaxFileBytes)
        refuse("it is " + std::to_string(text.size()) + " bytes long, more than the " +
               std::to_string(kGpuBenchMaxFileBytes) + " bytes a saved benchmark can be");
    nlohmann::json doc;
    try {
        // Saved results nest three levels deep; deeper text is not one of them.
        const nlohmann::json::parser_callback_t depthLimit =
            [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                if (depth > kMaxNesting)
                    throw EngineError(ErrorKind::InvalidArgument,
                                      "it is not a FlashViz GPU benchmark file (nested " +
                                          std::to_string(depth) + " levels deep)");
                return true;
            };
        doc = nlohmann::json::parse(text.begin(), text.end(), depthLimit);
    } catch (const EngineError&) {
        throw;
    } catch (const std::exception& error) {
        // parse_error, but also out_of_range for a number past a double (1e999), bad_alloc...
        refuse(std::string("it is not valid JSON (") + error.what() + ")");
    } catch (...) {
        refuse("it is not valid JSON");
    }
    try {
        return readRecord(doc);
    } catch (const EngineError&) {
        throw;
    } catch (const std::exception& error) {
        refuse(std::string("a field is missing or has the wrong type (") + error.what() + ")");
    } catch (...) {
        refuse("it could not be read");
    }
}

GpuBenchRecord loadGpuBenchRecord(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The saved GPU benchmark results in " + path.toStdString() +
                              " could not be opened: " + file.errorString().toStdString() + ".");
    try {
        // Read no more than the limit (and one byte to tell): a huge file is refused unread.
        if (file.size() > kGpuBenchMaxFileBytes)
            refuse("it is " + std::to_string(file.size()) + " bytes long, more than the " +
                   std::to_string(kGpuBenchMaxFileBytes) + " bytes a saved benchmark can be");
        return gpuBenchRecordFromJson(file.read(kGpuBenchMaxFileBytes + 1));
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

GpuBenchRecord shippedGpuBenchRecord() {
    const QString path = QStringLiteral(":/flashviz/gpu-benchmark-h200.json");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The GPU benchmark results compiled into FlashViz (" +
                              path.toStdString() + ") could not be opened.");
    return gpuBenchRecordFromJson(file.read(kGpuBenchMaxFileBytes + 1));
}

QString gpuBenchProgramName() {
    const QString version = QCoreApplication::applicationVersion();
    return version.isEmpty() ? QStringLiteral("FlashViz")
                             : QStringLiteral("FlashViz %1").arg(version);
}

double gpuBenchWorkingBytes(const GpuBenchRequest& request, const GpuBenchPoint& point) {
    const double elementBytes =
        point.variant == kGpuBenchFlashFp16 || point.variant == kGpuBenchFlashBf16 ? 2.0 : 4.0;
    const double count = request.pass == GpuBenchPass::Forward ? 4.0 : 8.0;
    const double tensors = count * double(request.tokens) * request.headsTimesDim * elementBytes;
    return tensors + point.scratchBytes;
}

} // namespace flashviz::gui
