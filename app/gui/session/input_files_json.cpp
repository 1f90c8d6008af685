#include "session/input_files_json.h"
#include "session/settings.h"

#include "core/npy.h"

#include <QJsonObject>

namespace flashviz::gui {

namespace {

// Longer than any path a file system takes (PATH_MAX is 4096 on Linux).
constexpr qsizetype kMaxPathChars = 4096;

std::string readPath(const QJsonObject& o, const char* field) {
    const QString name = QStringLiteral("inputFiles.%1").arg(QLatin1String(field));
    const QJsonValue v = o.value(QLatin1String(field));
    if (!v.isString() || v.toString().isEmpty())
        refuseJson(QStringLiteral("%1 must be the path of an .npy file, not %2")
                       .arg(name, jsonExcerpt(v)));
    if (v.toString().size() > kMaxPathChars)
        refuseJson(QStringLiteral("%1 is %2 characters long; a path has at most %3")
                       .arg(name)
                       .arg(v.toString().size())
                       .arg(kMaxPathChars));
    return v.toString().toStdString();
}

} // namespace

std::optional<InputFiles> inputFilesFromJson(const QJsonValue& value) {
    if (value.isNull()) return std::nullopt;
    if (!value.isObject())
        refuseJson(QStringLiteral("inputFiles must be an object {\"q\": …, \"k\": …, \"v\": …} or "
                                  "null, not %1")
                       .arg(jsonExcerpt(value)));
    const QJsonObject o = value.toObject();
    static const QStringList fields{QStringLiteral("q"), QStringLiteral("k"), QStringLiteral("v"),
                                    QStringLiteral("dO"), QStringLiteral("head")};
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!fields.contains(it.key()))
            refuseJson(QStringLiteral("inputFiles: unknown field '%1' (the fields are %2)")
                           .arg(it.key().left(40), fields.join(QStringLiteral(", "))));
    InputFiles files;
    files.q = readPath(o, "q");
    files.k = readPath(o, "k");
    files.v = readPath(o, "v");
    if (o.contains(QLatin1String("dO"))) files.upstream = readPath(o, "dO");
    if (o.contains(QLatin1String("head")))
        files.head = int(jsonInteger(o.value(QLatin1String("head")),
                                     QStringLiteral("inputFiles.head"), 0, kMaxNpyHeads - 1));
    return files;
}

QJsonValue inputFilesToJson(const std::optional<InputFiles>& files) {
    if (!files) return QJsonValue::Null;
    QJsonObject o{{QStringLiteral("q"), QString::fromStdString(files->q)},
                  {QStringLiteral("k"), QString::fromStdString(files->k)},
                  {QStringLiteral("v"), QString::fromStdString(files->v)}};
    if (!files->upstream.empty())
        o.insert(QStringLiteral("dO"), QString::fromStdString(files->upstream));
    if (files->head) o.insert(QStringLiteral("head"), *files->head);
    return o;
}

} // namespace flashviz::gui
