#include "settings.h"

#include "core/errors.h"
#include "core/hardware.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>

namespace flashviz::gui {

VizSettings toySettings() {
    VizSettings s;
    s.spec.queries = 8;
    s.spec.keys = 8;
    s.spec.headDim = 4;
    s.spec.seed = 1;
    s.spec.pattern = InputPattern::Gaussian;
    s.spec.precision = Precision::Double;
    s.spec.causal = false;
    s.options.blockRows = 4;
    s.options.blockCols = 4;
    s.algorithm = Algorithm::Flash;
    s.backend = BackendKind::Cpu;
    return s;
}

namespace {

[[noreturn]] void unknown(const char* field, const QString& value) {
    throw EngineError(ErrorKind::InvalidArgument,
                      std::string("Unknown ") + field + " '" + value.toStdString() + "'");
}

int readInt(const QJsonObject& json, const char* key, int fallback) {
    const QJsonValue v = json.value(QLatin1String(key));
    if (v.isUndefined()) return fallback;
    if (!v.isDouble())
        throw EngineError(ErrorKind::InvalidArgument, std::string(key) + " must be a number");
    return v.toInt();
}

bool readBool(const QJsonObject& json, const char* key, bool fallback) {
    const QJsonValue v = json.value(QLatin1String(key));
    return v.isBool() ? v.toBool() : fallback;
}

QString readString(const QJsonObject& json, const char* key) {
    return json.value(QLatin1String(key)).toString();
}

} // namespace

VizSettings settingsFromJson(const QJsonObject& json, const VizSettings& base) {
    VizSettings s = base;
    s.spec.queries = readInt(json, "queries", s.spec.queries);
    s.spec.keys = json.contains(QLatin1String("keys"))      ? readInt(json, "keys", s.spec.keys)
                  : json.contains(QLatin1String("queries")) ? s.spec.queries
                                                            : s.spec.keys;
    s.spec.headDim = readInt(json, "headDim", s.spec.headDim);
    if (json.contains(QLatin1String("seed")))
        s.spec.seed = std::uint64_t(json.value(QLatin1String("seed")).toInteger());
    if (const QString p = readString(json, "pattern"); !p.isEmpty()) {
        const auto pattern = parseInputPattern(p.toStdString());
        if (!pattern) unknown("input pattern", p);
        s.spec.pattern = *pattern;
    }
    if (const QString p = readString(json, "precision"); !p.isEmpty()) {
        const auto precision = parsePrecision(p.toStdString());
        if (!precision) unknown("precision", p);
        s.spec.precision = *precision;
    }
    s.spec.causal = readBool(json, "causal", s.spec.causal);
    s.options.blockRows = readInt(json, "blockRows", s.options.blockRows);
    s.options.blockCols = readInt(json, "blockCols", s.options.blockCols);
    s.options.rescale = readBool(json, "rescale", s.options.rescale);
    s.options.runningMax = readBool(json, "runningMax", s.options.runningMax);
    s.options.keepFullScores = readBool(json, "keepFullScores", s.options.keepFullScores);
    if (const QString o = readString(json, "loopOrder"); !o.isEmpty()) {
        const auto order = parseLoopOrder(o.toStdString());
        if (!order) unknown("loop order", o);
        s.options.loopOrder = *order;
    }
    if (const QString a = readString(json, "algorithm"); !a.isEmpty()) {
        const auto algorithm = parseAlgorithm(a.toStdString());
        if (!algorithm) unknown("algorithm", a);
        s.algorithm = *algorithm;
    }
    if (const QString h = readString(json, "hardware"); !h.isEmpty())
        s.hardwareId = h.toStdString();
    if (const QString b = readString(json, "backend"); !b.isEmpty()) {
        const auto kind = parseBackendKind(b.toStdString());
        if (!kind) unknown("backend", b);
        s.backend = *kind;
    }
    return s;
}

QJsonObject settingsToJson(const VizSettings& s) {
    QJsonObject json;
    json.insert(QStringLiteral("queries"), s.spec.queries);
    json.insert(QStringLiteral("keys"), s.spec.keys);
    json.insert(QStringLiteral("headDim"), s.spec.headDim);
    json.insert(QStringLiteral("seed"), qint64(s.spec.seed));
    json.insert(QStringLiteral("pattern"), QLatin1String(toString(s.spec.pattern)));
    json.insert(QStringLiteral("precision"), QLatin1String(toString(s.spec.precision)));
    json.insert(QStringLiteral("causal"), s.spec.causal);
    json.insert(QStringLiteral("blockRows"), s.options.blockRows);
    json.insert(QStringLiteral("blockCols"), s.options.blockCols);
    json.insert(QStringLiteral("rescale"), s.options.rescale);
    json.insert(QStringLiteral("runningMax"), s.options.runningMax);
    json.insert(QStringLiteral("keepFullScores"), s.options.keepFullScores);
    json.insert(QStringLiteral("loopOrder"), QLatin1String(toString(s.options.loopOrder)));
    json.insert(QStringLiteral("algorithm"), QLatin1String(toString(s.algorithm)));
    json.insert(QStringLiteral("hardware"), QString::fromStdString(s.hardwareId));
    json.insert(QStringLiteral("backend"), QLatin1String(toString(s.backend)));
    return json;
}

void saveSettings(QSettings& store, const VizSettings& settings) {
    store.setValue(
        QStringLiteral("run/settings"),
        QString::fromUtf8(QJsonDocument(settingsToJson(settings)).toJson(QJsonDocument::Compact)));
}

std::optional<VizSettings> loadSettings(QSettings& store) {
    const QString text = store.value(QStringLiteral("run/settings")).toString();
    if (text.isEmpty()) return std::nullopt;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    if (!doc.isObject()) return std::nullopt;
    try {
        return settingsFromJson(doc.object(), toySettings());
    } catch (const EngineError&) {
        return std::nullopt; // saved by another version: start from the toy instead
    }
}

// Asking the driver costs a device initialisation: once per run is enough.
static const std::optional<HardwareProfile>& thisGpu() {
    static const std::optional<HardwareProfile> gpu = currentGpuProfile();
    return gpu;
}

std::vector<HardwareProfile> availableHardware() {
    std::vector<HardwareProfile> all = hardwareProfiles();
    if (const auto& gpu = thisGpu()) all.push_back(*gpu);
    return all;
}

HardwareProfile hardwareFor(const VizSettings& settings) {
    for (const auto& p : hardwareProfiles())
        if (p.id == settings.hardwareId) return p;
    if (const auto& gpu = thisGpu(); gpu && gpu->id == settings.hardwareId) return *gpu;
    return findHardwareProfile(settings.hardwareId); // throws, naming the known ids
}

QString describeSettings(const VizSettings& s) {
    QString text = QString::fromLatin1(toString(s.algorithm));
    if (s.spec.queries == s.spec.keys)
        text += QStringLiteral(" · n %1").arg(s.spec.queries);
    else
        text += QStringLiteral(" · n_q %1, n_k %2").arg(s.spec.queries).arg(s.spec.keys);
    text += QStringLiteral(" · d %1").arg(s.spec.headDim);
    if (s.algorithm == Algorithm::Flash)
        text += QStringLiteral(" · %1×%2 tiles").arg(s.options.blockRows).arg(s.options.blockCols);
    text += QStringLiteral(" · %1 · seed %2")
                .arg(QLatin1String(toString(s.spec.pattern)))
                .arg(s.spec.seed);
    if (s.spec.causal) text += QStringLiteral(" · causal");
    if (s.spec.precision == Precision::Float) text += QStringLiteral(" · fp32");
    return text;
}

static std::vector<Preset> loadPresets() {
    std::vector<Preset> out;
    QFile file(QStringLiteral(":/flashviz/presets.json"));
    if (!file.open(QIODevice::ReadOnly)) {
        out.push_back(
            {QStringLiteral("toy"), QStringLiteral("Explainer toy"), {}, toySettings(), {}});
        return out;
    }
    const QJsonArray list =
        QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("presets")).toArray();
    for (const QJsonValue& item : list) {
        const QJsonObject o = item.toObject();
        Preset p;
        p.id = o.value(QStringLiteral("id")).toString();
        p.title = o.value(QStringLiteral("title")).toString();
        p.description = o.value(QStringLiteral("description")).toString();
        p.step = o.value(QStringLiteral("step")).toVariant().toString();
        p.settings =
            settingsFromJson(o.value(QStringLiteral("settings")).toObject(), toySettings());
        out.push_back(std::move(p));
    }
    return out;
}

const std::vector<Preset>& presets() {
    static const std::vector<Preset> all = loadPresets();
    return all;
}

const Preset* findPreset(const QString& id) {
    for (const Preset& p : presets())
        if (p.id == id) return &p;
    return nullptr;
}

} // namespace flashviz::gui
