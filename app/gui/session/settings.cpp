#include "session/settings.h"
#include "session/input_design_json.h"
#include "session/input_files_json.h"
#include "session/resources.h"

#include "core/errors.h"
#include "core/hardware.h"
#include "core/setup.h"
#include "core/steps.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>

#include <cmath>

namespace flashviz::gui {

VizSettings toySettings() {
    const RunSetup toy = toySetup();
    VizSettings s;
    s.spec = toy.spec;
    s.options = toy.options;
    s.algorithm = toy.algorithm;
    s.backend = BackendKind::Cpu;
    return s;
}

bool isClassicBugOn(const VizSettings& s) {
    return s.algorithm == Algorithm::Backward ? !s.options.backward.subtractRowDot
                                              : !s.options.rescale;
}

void setClassicBug(VizSettings& s, bool on) {
    (s.algorithm == Algorithm::Backward ? s.options.backward.subtractRowDot : s.options.rescale) =
        !on;
}

namespace {

// "backend: unknown backend 'tpu'", with " (use ...)" where the choices are given.
[[noreturn]] void unknown(const char* key, const char* what, const QString& value,
                          const char* choices = nullptr) {
    QString message =
        QStringLiteral("%1: unknown %2 '%3'").arg(QLatin1String(key), QLatin1String(what), value);
    if (choices) message += QStringLiteral(" (use %1)").arg(QLatin1String(choices));
    refuseJson(message);
}

// The backward's switches as settings keys: BackwardOptions' own field names, flat beside
// "rescale".
struct BackwardKey {
    const char* name;
    bool BackwardOptions::*field;
};
const std::vector<BackwardKey>& backwardKeys() {
    static const std::vector<BackwardKey> keys{{"subtractRowDot", &BackwardOptions::subtractRowDot},
                                               {"useLogSumExp", &BackwardOptions::useLogSumExp},
                                               {"accumulateDq", &BackwardOptions::accumulateDq},
                                               {"maskRecompute", &BackwardOptions::maskRecompute},
                                               {"storeWeights", &BackwardOptions::storeWeights},
                                               {"onesUpstream", &BackwardOptions::onesUpstream}};
    return keys;
}

// The setting keys settingsFromJson() reads (settingsToJson() writes all of them).
const QStringList& settingKeys() {
    static const QStringList keys{
        QStringLiteral("queries"),   QStringLiteral("keys"),       QStringLiteral("headDim"),
        QStringLiteral("seed"),      QStringLiteral("pattern"),    QStringLiteral("precision"),
        QStringLiteral("causal"),    QStringLiteral("blockRows"),  QStringLiteral("blockCols"),
        QStringLiteral("rescale"),   QStringLiteral("runningMax"), QStringLiteral("keepFullScores"),
        QStringLiteral("loopOrder"), QStringLiteral("algorithm"),  QStringLiteral("hardware"),
        QStringLiteral("backend"),   QStringLiteral("tensorCoreCheck")};
    static const QStringList all = [] {
        QStringList out = keys;
        for (const BackwardKey& key : backwardKeys())
            out.append(QLatin1String(key.name));
        out.append(QStringLiteral("inputDesign")); // session/input_design_json.h
        out.append(QStringLiteral("inputFiles"));  // session/input_files_json.h
        return out;
    }();
    return all;
}

int readInt(const QJsonValue& v, const char* key, int lo, int hi) {
    return int(jsonInteger(v, QLatin1String(key), lo, hi));
}

bool readBool(const QJsonValue& v, const char* key) {
    if (!v.isBool())
        refuseJson(QStringLiteral("%1 must be true or false, not %2")
                       .arg(QLatin1String(key), jsonExcerpt(v)));
    return v.toBool();
}

QString readString(const QJsonValue& v, const char* key) {
    if (!v.isString())
        refuseJson(
            QStringLiteral("%1 must be text, not %2").arg(QLatin1String(key), jsonExcerpt(v)));
    const QString text = v.toString();
    if (text.size() > 64)
        refuseJson(QStringLiteral("%1 is %2 characters long; names are at most 64")
                       .arg(QLatin1String(key))
                       .arg(text.size()));
    return text;
}

bool knownHardware(const std::string& id);

} // namespace

QString jsonExcerpt(const QJsonValue& v) {
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
        const double d = v.toDouble();
        // Whole numbers as integers (2147483648, not 2.147483648e+09), the rest as written.
        if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 1e18)
            return QString::number(qint64(d));
        return QString::number(d, 'g', 17);
    }
    case QJsonValue::String: {
        const QString text = v.toString();
        return QLatin1Char('\'') +
               (text.size() > 40 ? text.left(37) + QStringLiteral("...") : text) +
               QLatin1Char('\'');
    }
    case QJsonValue::Array:
        return QStringLiteral("a list");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("nothing");
}

void refuseJson(const QString& why) {
    throw EngineError(ErrorKind::InvalidArgument, why.toStdString());
}

int readFormatVersion(const QJsonObject& json, int newest, const QString& what) {
    const QJsonValue v = json.value(QStringLiteral("version"));
    if (v.isUndefined()) refuseJson(QStringLiteral("version is missing"));
    const double d = v.toDouble();
    if (v.isDouble() && std::isfinite(d) && d == std::floor(d) && d > newest)
        refuseJson(QStringLiteral("This %1 was saved by a newer FlashViz (format version %2; this "
                                  "one reads up to %3)")
                       .arg(what, jsonExcerpt(v))
                       .arg(newest));
    return int(jsonInteger(v, QStringLiteral("version"), 1, newest));
}

qint64 jsonInteger(const QJsonValue& v, const QString& name, qint64 lo, qint64 hi) {
    if (!v.isDouble())
        refuseJson(QStringLiteral("%1 must be a whole number, not %2").arg(name, jsonExcerpt(v)));
    const double d = v.toDouble();
    const auto outOfRange = [&] {
        refuseJson(QStringLiteral("%1 must be a whole number from %2 to %3, not %4")
                       .arg(name)
                       .arg(lo)
                       .arg(hi)
                       .arg(jsonExcerpt(v)));
    };
    if (!std::isfinite(d) || d != std::floor(d))
        refuseJson(QStringLiteral("%1 must be a whole number, not %2").arg(name, jsonExcerpt(v)));
    constexpr double kTwo63 = 9223372036854775808.0;
    if (!(d >= -kTwo63 && d < kTwo63)) outOfRange();
    const qint64 i = v.toInteger(); // whole and inside qint64: exact, also past 2^53
    if (i < lo || i > hi) outOfRange();
    return i;
}

VizSettings settingsFromJson(const QJsonObject& json, const VizSettings& base,
                             QStringList* problems) {
    VizSettings s = base;
    // Each field present is read on its own: a bad one throws, or with `problems` is noted
    // and keeps its value from `base`.
    const auto field = [&](const char* key, const auto& read) {
        const QJsonValue v = json.value(QLatin1String(key));
        if (v.isUndefined()) return;
        try {
            read(v);
        } catch (const EngineError& error) {
            if (!problems) throw;
            problems->append(QString::fromUtf8(error.what()));
        }
    };
    for (auto it = json.begin(); it != json.end(); ++it)
        if (!settingKeys().contains(it.key())) {
            const QString message =
                QStringLiteral("unknown setting '%1' (the settings are %2)")
                    .arg(it.key().left(40), settingKeys().join(QStringLiteral(", ")));
            if (!problems) refuseJson(message);
            problems->append(message);
        }
    field("queries", [&](const QJsonValue& v) {
        s.spec.queries = readInt(v, "queries", 1, kMaxSequenceLength);
        // keys follow queries unless given
        if (!json.contains(QLatin1String("keys"))) s.spec.keys = s.spec.queries;
    });
    field("keys",
          [&](const QJsonValue& v) { s.spec.keys = readInt(v, "keys", 1, kMaxSequenceLength); });
    field("headDim",
          [&](const QJsonValue& v) { s.spec.headDim = readInt(v, "headDim", 1, kMaxHeadDim); });
    field("seed", [&](const QJsonValue& v) {
        s.spec.seed = std::uint64_t(jsonInteger(v, QStringLiteral("seed"), 0, qint64(kMaxSeed)));
    });
    field("pattern", [&](const QJsonValue& v) {
        const QString p = readString(v, "pattern");
        const auto pattern = parseInputPattern(p.toStdString());
        if (!pattern) unknown("pattern", "input pattern", p);
        s.spec.pattern = *pattern;
    });
    field("precision", [&](const QJsonValue& v) {
        const QString p = readString(v, "precision");
        const auto precision = parsePrecision(p.toStdString());
        if (!precision) unknown("precision", "precision", p);
        s.spec.precision = *precision;
    });
    field("causal", [&](const QJsonValue& v) { s.spec.causal = readBool(v, "causal"); });
    field("blockRows", [&](const QJsonValue& v) {
        s.options.blockRows = readInt(v, "blockRows", 1, kMaxSequenceLength);
    });
    field("blockCols", [&](const QJsonValue& v) {
        s.options.blockCols = readInt(v, "blockCols", 1, kMaxSequenceLength);
    });
    field("rescale", [&](const QJsonValue& v) { s.options.rescale = readBool(v, "rescale"); });
    field("runningMax",
          [&](const QJsonValue& v) { s.options.runningMax = readBool(v, "runningMax"); });
    field("keepFullScores",
          [&](const QJsonValue& v) { s.options.keepFullScores = readBool(v, "keepFullScores"); });
    for (const BackwardKey& key : backwardKeys())
        field(key.name,
              [&](const QJsonValue& v) { s.options.backward.*key.field = readBool(v, key.name); });
    field("loopOrder", [&](const QJsonValue& v) {
        const QString o = readString(v, "loopOrder");
        const auto order = parseLoopOrder(o.toStdString());
        if (!order) unknown("loopOrder", "loop order", o);
        s.options.loopOrder = *order;
    });
    field("algorithm", [&](const QJsonValue& v) {
        const QString a = readString(v, "algorithm");
        const auto algorithm = parseAlgorithm(a.toStdString());
        if (!algorithm) unknown("algorithm", "algorithm", a);
        s.algorithm = *algorithm;
    });
    field("hardware", [&](const QJsonValue& v) {
        const QString h = readString(v, "hardware");
        if (!knownHardware(h.toStdString())) unknown("hardware", "hardware profile", h);
        s.hardwareId = h.toStdString();
    });
    field("backend", [&](const QJsonValue& v) {
        const QString b = readString(v, "backend");
        const auto kind = parseBackendKind(b.toStdString());
        if (!kind) unknown("backend", "backend", b);
        s.backend = *kind;
    });
    field("tensorCoreCheck", [&](const QJsonValue& v) {
        const QString t = readString(v, "tensorCoreCheck");
        const auto check = parseLowPrecisionCheck(t.toStdString());
        if (!check) unknown("tensorCoreCheck", "tensor-core check", t, kLowPrecisionCheckNames);
        s.tensorCoreCheck = *check;
    });
    field("inputDesign", [&](const QJsonValue& v) { s.spec.design = inputDesignFromJson(v); });
    // After the sizes: the files' shapes are the sizes. A file gone or changed keeps `base`'s
    // inputs (with `problems`), as any other field that cannot be read.
    field("inputFiles", [&](const QJsonValue& v) {
        const std::optional<InputFiles> files = inputFilesFromJson(v);
        if (!files) {
            s.spec.files.reset();
            return;
        }
        try {
            s.spec = withInputFiles(s.spec, *files);
        } catch (const EngineError& error) {
            refuseJson(QStringLiteral("inputFiles: %1").arg(QString::fromUtf8(error.what())));
        }
    });
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
    for (const BackwardKey& key : backwardKeys())
        json.insert(QLatin1String(key.name), s.options.backward.*key.field);
    json.insert(QStringLiteral("loopOrder"), QLatin1String(toString(s.options.loopOrder)));
    json.insert(QStringLiteral("algorithm"), QLatin1String(toString(s.algorithm)));
    json.insert(QStringLiteral("hardware"), QString::fromStdString(s.hardwareId));
    json.insert(QStringLiteral("backend"), QLatin1String(toString(s.backend)));
    json.insert(QStringLiteral("tensorCoreCheck"), QLatin1String(toString(s.tensorCoreCheck)));
    json.insert(QStringLiteral("inputDesign"), inputDesignToJson(s.spec.design));
    json.insert(QStringLiteral("inputFiles"), inputFilesToJson(s.spec.files));
    return json;
}

void saveSettings(QSettings& store, const VizSettings& settings) {
    store.setValue(
        QStringLiteral("run/settings"),
        QString::fromUtf8(QJsonDocument(settingsToJson(settings)).toJson(QJsonDocument::Compact)));
}

std::optional<VizSettings> loadSettings(QSettings& store, QStringList* problems) {
    const QString key = QStringLiteral("run/settings");
    const QString text = store.value(key).toString();
    if (text.isEmpty()) return std::nullopt;
    QStringList found;
    const auto report = [&](const QString& message) {
        found.append(QStringLiteral("%1: %2").arg(key, message));
    };
    std::optional<VizSettings> out;
    QJsonParseError parseError;
    const QJsonDocument doc = text.size() > 64 * 1024
                                  ? QJsonDocument()
                                  : QJsonDocument::fromJson(text.toUtf8(), &parseError);
    if (text.size() > 64 * 1024)
        report(QStringLiteral("%1 characters, too long for saved settings").arg(text.size()));
    else if (parseError.error != QJsonParseError::NoError)
        report(QStringLiteral("not valid JSON (%1)").arg(parseError.errorString()));
    else if (!doc.isObject())
        report(QStringLiteral("not a JSON object"));
    else {
        // Saved by another version or edited: a bad field keeps the toy's value, the rest load.
        QStringList fields;
        out = settingsFromJson(doc.object(), toySettings(), &fields);
        for (const QString& f : fields)
            report(f + QStringLiteral("; the default is kept"));
    }
    for (const QString& message : found)
        qWarning("flashviz: saved settings: %s", qPrintable(message));
    if (problems) *problems += found;
    return out;
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

namespace {
bool knownHardware(const std::string& id) {
    for (const auto& p : hardwareProfiles())
        if (p.id == id) return true;
    const auto& gpu = thisGpu();
    return gpu && gpu->id == id;
}
} // namespace

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
    if (s.algorithm != Algorithm::Standard)
        text += QStringLiteral(" · %1×%2 tiles").arg(s.options.blockRows).arg(s.options.blockCols);
    // Where the inputs come from, as flashviz-cli run says it (the files by their names).
    text += QStringLiteral(" · %1").arg(
        QString::fromStdString(describeInputs(s.spec, InputPaths::FileNames)));
    if (s.spec.causal) text += QStringLiteral(" · causal");
    if (s.spec.precision == Precision::Float) text += QStringLiteral(" · fp32");
    // The backward's switches by the names the command lines take ("no-row-dot", "store-p").
    if (s.algorithm == Algorithm::Backward)
        for (const BackwardSwitch& flag : backwardSwitches())
            if (isOn(s.options.backward, flag))
                text += QStringLiteral(" · %1").arg(QLatin1String(flag.name));
    return text;
}

QString jsonEntryName(const QJsonObject& entry, int index) {
    const QJsonValue id = entry.value(QStringLiteral("id"));
    return id.isString() && !id.toString().isEmpty()
               ? QStringLiteral("entry %1 ('%2')").arg(index + 1).arg(id.toString().left(40))
               : QStringLiteral("entry %1").arg(index + 1);
}

QString jsonText(const QJsonObject& entry, const char* key, bool required, qsizetype maxChars) {
    const QJsonValue v = entry.value(QLatin1String(key));
    if (v.isUndefined()) {
        if (required) refuseJson(QStringLiteral("%1 is missing").arg(QLatin1String(key)));
        return {};
    }
    if (!v.isString())
        refuseJson(
            QStringLiteral("%1 must be text, not %2").arg(QLatin1String(key), jsonExcerpt(v)));
    const QString text = v.toString();
    if (required && text.trimmed().isEmpty())
        refuseJson(QStringLiteral("%1 is empty").arg(QLatin1String(key)));
    if (text.size() > maxChars)
        refuseJson(QStringLiteral("%1 is %2 characters long; at most %3 are read")
                       .arg(QLatin1String(key))
                       .arg(text.size())
                       .arg(maxChars));
    return text;
}

std::optional<QJsonArray> jsonEntries(const QByteArray& bytes, const QString& source,
                                      const char* listKey, QStringList& errors) {
    constexpr qsizetype kMaxBytes = 1024 * 1024;
    if (bytes.size() > kMaxBytes) {
        errors << QStringLiteral("%1: %2 bytes, more than the %3 read")
                      .arg(source)
                      .arg(bytes.size())
                      .arg(kMaxBytes);
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        errors << QStringLiteral("%1: not valid JSON (%2 at byte %3)")
                      .arg(source, error.errorString())
                      .arg(error.offset);
        return std::nullopt;
    }
    const QJsonValue list = doc.object().value(QLatin1String(listKey));
    if (!doc.isObject() || !list.isArray()) {
        errors << QStringLiteral("%1: no list \"%2\" in a JSON object")
                      .arg(source, QLatin1String(listKey));
        return std::nullopt;
    }
    return list.toArray();
}

VizSettings jsonEntrySettings(const QJsonObject& entry) {
    const QJsonValue v = entry.value(QStringLiteral("settings"));
    if (v.isUndefined()) return toySettings();
    if (!v.isObject())
        refuseJson(QStringLiteral("settings must be an object, not %1").arg(jsonExcerpt(v)));
    VizSettings s;
    try {
        s = settingsFromJson(v.toObject(), toySettings());
    } catch (const EngineError& error) {
        refuseJson(QStringLiteral("settings.%1").arg(QString::fromUtf8(error.what())));
    }
    // What the engine would refuse on applying (a block past n, too many steps) fails here.
    try {
        validate(s.spec);
        validate(s.spec, s.options);
        validateSteps(s.spec, s.algorithm, s.options);
    } catch (const EngineError& error) {
        refuseJson(QStringLiteral("settings: %1").arg(QString::fromUtf8(error.what())));
    }
    return s;
}

void checkJsonKeys(const QJsonObject& entry, const QStringList& known) {
    for (auto it = entry.begin(); it != entry.end(); ++it)
        if (!known.contains(it.key()))
            refuseJson(QStringLiteral("unknown field '%1' (the fields are %2)")
                           .arg(it.key().left(40), known.join(QStringLiteral(", "))));
}

void checkStepExpression(const QString& text, const char* key) {
    try {
        (void)parseStepExpression(text.toStdString());
    } catch (const EngineError& error) {
        refuseJson(
            QStringLiteral("%1: %2").arg(QLatin1String(key), QString::fromUtf8(error.what())));
    }
}

PresetsParse parsePresets(const QByteArray& bytes, const QString& source) {
    PresetsParse out;
    const auto list = jsonEntries(bytes, source, "presets", out.errors);
    if (!list) return out;
    static const QStringList known{QStringLiteral("id"), QStringLiteral("title"),
                                   QStringLiteral("description"), QStringLiteral("settings"),
                                   QStringLiteral("step")};
    for (int i = 0; i < list->size(); ++i) {
        const QJsonValue item = list->at(i);
        const QJsonObject o = item.toObject();
        try {
            if (!item.isObject())
                refuseJson(
                    QStringLiteral("a preset must be an object, not %1").arg(jsonExcerpt(item)));
            checkJsonKeys(o, known);
            Preset p;
            p.id = jsonText(o, "id", true, 64);
            for (const Preset& other : out.presets)
                if (other.id == p.id)
                    refuseJson(QStringLiteral("id '%1' is taken by an earlier preset").arg(p.id));
            p.title = jsonText(o, "title", true, 200);
            p.description = jsonText(o, "description", false, 2000);
            const QJsonValue step = o.value(QStringLiteral("step"));
            if (step.isDouble())
                p.step =
                    QString::number(jsonInteger(step, QStringLiteral("step"), 0, kMaxStepCount));
            else if (!step.isUndefined())
                p.step = jsonText(o, "step", false, 64);
            if (!p.step.isEmpty()) checkStepExpression(p.step, "step");
            p.settings = jsonEntrySettings(o);
            out.presets.push_back(std::move(p));
        } catch (const EngineError& error) {
            out.errors << QStringLiteral("%1: preset %2 skipped: %3")
                              .arg(source, jsonEntryName(o, i), QString::fromUtf8(error.what()));
        }
    }
    return out;
}

static std::vector<Preset> loadPresets() {
    PresetsParse parsed = parseResource(QStringLiteral("presets.json"), parsePresets);
    if (parsed.presets.empty())
        parsed.presets.push_back(
            {QStringLiteral("toy"), QStringLiteral("Explainer toy"), {}, toySettings(), {}});
    return std::move(parsed.presets);
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
