#include "session/session_file.h"
#include "session/save_file.h"

#include "core/errors.h"
#include "core/steps.h"
#include "kernels/backend_registry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>

#include <array>

namespace flashviz::gui {

// A new view option is a new field of the session: write and read it below, then change this.
// Fails to compile when a view option is added without its session field: the binding names
// every member (sizeof would miss a bool in the padding).
[[maybe_unused]] void everyViewOptionIsInTheSession(const ViewOptions& v) {
    [[maybe_unused]] const auto& [backendValues, warps, gridBatch, gridHeads] = v;
}

namespace {

const QString kRecentKey = QStringLiteral("session/recent");

struct TabName {
    SessionTab tab;
    const char* name;
};
constexpr std::array<TabName, 5> kTabNames{{{SessionTab::StepByStep, "step-by-step"},
                                            {SessionTab::Analysis, "analysis"},
                                            {SessionTab::GpuBenchmark, "gpu-benchmark"},
                                            {SessionTab::Versions, "flashattention-2"},
                                            {SessionTab::Hopper, "flashattention-3-hopper"}}};

QString tabName(SessionTab tab) {
    for (const TabName& t : kTabNames)
        if (t.tab == tab) return QLatin1String(t.name);
    return {};
}

QJsonValue required(const QJsonObject& object, const QString& key) {
    const QJsonValue v = object.value(key);
    if (v.isUndefined()) refuseJson(QStringLiteral("%1 is missing").arg(key));
    return v;
}

QJsonObject requiredObject(const QJsonObject& object, const QString& key) {
    const QJsonValue v = required(object, key);
    if (!v.isObject())
        refuseJson(QStringLiteral("%1 must be an object, not %2").arg(key, jsonExcerpt(v)));
    return v.toObject();
}

bool requiredBool(const QJsonObject& object, const QString& key, const QString& name) {
    const QJsonValue v = required(object, key);
    if (!v.isBool())
        refuseJson(QStringLiteral("%1 must be true or false, not %2").arg(name, jsonExcerpt(v)));
    return v.toBool();
}

// Unknown fields of an object inside the session, named with the object ("view: unknown ...").
void checkKeysOf(const QJsonObject& object, const char* name, const QStringList& known) {
    try {
        checkJsonKeys(object, known);
    } catch (const EngineError& error) {
        refuseJson(
            QStringLiteral("%1: %2").arg(QLatin1String(name), QString::fromUtf8(error.what())));
    }
}

// "format" and "version" first: a newer file may hold fields this build does not know.
void checkFormatAndVersion(const QJsonObject& json) {
    const QJsonValue format = json.value(QStringLiteral("format"));
    if (format.toString() != QLatin1String(kSessionFormat))
        refuseJson(QStringLiteral("not a FlashViz session (its \"format\" is %1, not '%2')")
                       .arg(jsonExcerpt(format), QLatin1String(kSessionFormat)));
    (void)readFormatVersion(json, kSessionVersion, QStringLiteral("session"));
}

SessionTab readTab(const QJsonObject& json) {
    const QJsonValue v = required(json, QStringLiteral("tab"));
    QStringList names;
    for (const TabName& t : kTabNames) {
        if (v.toString() == QLatin1String(t.name)) return t.tab;
        names << QLatin1String(t.name);
    }
    refuseJson(QStringLiteral("tab must be one of %1, not %2")
                   .arg(names.join(QStringLiteral(", ")), jsonExcerpt(v)));
}

ViewOptions readView(const QJsonObject& json) {
    const QJsonObject view = requiredObject(json, QStringLiteral("view"));
    checkKeysOf(view, "view",
                {QStringLiteral("showBackendValues"), QStringLiteral("warps"),
                 QStringLiteral("gridBatch"), QStringLiteral("gridHeads")});
    ViewOptions out;
    out.showBackendValues = requiredBool(view, QStringLiteral("showBackendValues"),
                                         QStringLiteral("view.showBackendValues"));
    // The FlashAttention-2 page's options came later in version 1: absent, they keep their
    // defaults.
    for (const ViewOptionRange& o : kPageOptionRanges) {
        const QJsonValue v = view.value(QLatin1String(o.key));
        out.*o.field = v.isUndefined() ? o.fallback
                                       : int(jsonInteger(v, QStringLiteral("view.%1").arg(QLatin1String(o.key)),
                                                         o.lowest, o.highest));
    }
    return out;
}

std::optional<SessionLecture> readLecture(const QJsonObject& json, const SessionLimits& limits) {
    const QJsonValue v = required(json, QStringLiteral("lecture"));
    if (v.isNull()) return std::nullopt;
    if (!v.isObject())
        refuseJson(QStringLiteral("lecture must be null (lecture mode off) or an object with its "
                                  "chapter and step, not %1")
                       .arg(jsonExcerpt(v)));
    const QJsonObject lecture = v.toObject();
    checkKeysOf(lecture, "lecture", {QStringLiteral("chapter"), QStringLiteral("step")});
    const auto chapters = qint64(limits.chapterSteps.size());
    if (chapters == 0) refuseJson(QStringLiteral("lecture: this FlashViz has no lecture chapters"));
    SessionLecture out;
    out.chapter = int(jsonInteger(required(lecture, QStringLiteral("chapter")),
                                  QStringLiteral("lecture.chapter"), 1, chapters) -
                      1);
    out.step =
        int(jsonInteger(required(lecture, QStringLiteral("step")), QStringLiteral("lecture.step"),
                        0, limits.chapterSteps[std::size_t(out.chapter)] - 1));
    return out;
}

Session readSession(const QJsonObject& json, const SessionLimits& limits) {
    checkFormatAndVersion(json);
    checkJsonKeys(json,
                  {QStringLiteral("format"), QStringLiteral("version"), QStringLiteral("settings"),
                   QStringLiteral("step"), QStringLiteral("tab"), QStringLiteral("chart"),
                   QStringLiteral("view"), QStringLiteral("lecture")});
    Session s;
    (void)requiredObject(json, QStringLiteral("settings"));
    s.settings = jsonEntrySettings(json); // "settings.<field>: ..." and the engine's own checks
    const std::int64_t steps =
        countSteps(s.settings.spec, s.settings.algorithm, s.settings.options);
    s.step = int(
        jsonInteger(required(json, QStringLiteral("step")), QStringLiteral("step"), 0, steps - 1));
    s.tab = readTab(json);
    if (limits.analysisCharts < 1) refuseJson(QStringLiteral("chart: this FlashViz has no charts"));
    s.analysisChart = int(jsonInteger(required(json, QStringLiteral("chart")),
                                      QStringLiteral("chart"), 1, limits.analysisCharts) -
                          1);
    s.view = readView(json);
    s.lecture = readLecture(json, limits);
    return s;
}

} // namespace

QByteArray sessionToJson(const Session& s) {
    QJsonObject json;
    json.insert(QStringLiteral("format"), QLatin1String(kSessionFormat));
    json.insert(QStringLiteral("version"), kSessionVersion);
    json.insert(QStringLiteral("settings"), settingsToJson(s.settings));
    json.insert(QStringLiteral("step"), s.step);
    json.insert(QStringLiteral("tab"), tabName(s.tab));
    json.insert(QStringLiteral("chart"), s.analysisChart + 1);
    json.insert(QStringLiteral("view"),
                [&] {
                    QJsonObject view{{QStringLiteral("showBackendValues"), s.view.showBackendValues}};
                    for (const ViewOptionRange& o : kPageOptionRanges)
                        view.insert(QLatin1String(o.key), s.view.*o.field);
                    return view;
                }());
    json.insert(QStringLiteral("lecture"),
                s.lecture
                    ? QJsonValue(QJsonObject{{QStringLiteral("chapter"), s.lecture->chapter + 1},
                                             {QStringLiteral("step"), s.lecture->step}})
                    : QJsonValue(QJsonValue::Null));
    return QJsonDocument(json).toJson(QJsonDocument::Indented);
}

SessionRead parseSession(const QByteArray& bytes, const QString& source,
                         const SessionLimits& limits) {
    SessionRead out;
    const auto fail = [&](const QString& why) {
        out.error = QStringLiteral("%1: %2").arg(source, why);
        return out;
    };
    if (bytes.size() > kMaxSessionBytes)
        return fail(QStringLiteral("%1 bytes, more than a session holds (at most %2)")
                        .arg(bytes.size())
                        .arg(kMaxSessionBytes));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not a FlashViz session: not valid JSON (%1 at byte %2)")
                        .arg(parseError.errorString())
                        .arg(parseError.offset));
    if (!doc.isObject()) return fail(QStringLiteral("not a FlashViz session: not a JSON object"));
    try {
        out.session = readSession(doc.object(), limits);
    } catch (const EngineError& error) {
        return fail(QString::fromUtf8(error.what()));
    }
    return out;
}

SessionRead readSessionFile(const QString& path, const SessionLimits& limits) {
    const QString name = QDir::toNativeSeparators(path);
    const QFileInfo info(path);
    SessionRead out;
    if (!info.exists())
        out.error = QStringLiteral("%1: no such file").arg(name);
    else if (!info.isFile())
        out.error = QStringLiteral("%1: not a file").arg(name);
    else if (info.size() > kMaxSessionBytes)
        out.error = QStringLiteral("%1: %2 bytes, more than a session holds (at most %3)")
                        .arg(name)
                        .arg(info.size())
                        .arg(kMaxSessionBytes);
    if (!out.error.isEmpty()) return out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        out.error = QStringLiteral("%1: %2").arg(name, file.errorString());
        return out;
    }
    // Read no more than the limit allows, should the file have grown since it was measured.
    return parseSession(file.read(kMaxSessionBytes + 1), name, limits);
}

QString writeSessionFile(const QString& path, const Session& session) {
    QString error;
    return writeFileSafely(path, sessionToJson(session), &error) ? QString() : error;
}

QString fallBackToAvailableBackend(VizSettings& settings) {
    for (const BackendAvailability& b : listBackends())
        if (b.kind == settings.backend && !b.available) {
            settings.backend = BackendKind::Cpu;
            return QStringLiteral("The session's %1 backend is not available here (%2); the CPU "
                                  "computes instead")
                .arg(QString::fromStdString(b.name), QString::fromStdString(b.reason));
        }
    return {};
}

QStringList recentSessions(QSettings& store) {
    QStringList out;
    // Checked as read: the list may have been edited, or written by another version.
    for (const QString& path : store.value(kRecentKey).toStringList())
        if (!path.isEmpty() && QFileInfo(path).isAbsolute() && !out.contains(path) &&
            out.size() < kMaxRecentSessions)
            out << path;
    return out;
}

void rememberRecentSession(QSettings& store, const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = recentSessions(store);
    list.removeAll(absolute);
    list.prepend(absolute);
    store.setValue(kRecentKey, list.mid(0, kMaxRecentSessions));
}

void forgetRecentSession(QSettings& store, const QString& path) {
    QStringList list = recentSessions(store);
    list.removeAll(QFileInfo(path).absoluteFilePath());
    store.setValue(kRecentKey, list);
}

void clearRecentSessions(QSettings& store) {
    store.remove(kRecentKey);
}

} // namespace flashviz::gui
