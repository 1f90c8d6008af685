#include "session/input_design_json.h"
#include "session/settings.h"

#include "core/input_design.h"

#include <QJsonArray>
#include <QJsonObject>

#include <cmath>

namespace flashviz::gui {

namespace {

// The sharpness of the run `run` ("inputDesign.rows[1]"); its range is the engine's.
double readSharpness(const QJsonValue& v, const QString& run) {
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        refuseJson(
            QStringLiteral("%1 sharpness must be a number, not %2").arg(run, jsonExcerpt(v)));
    if (const std::optional<std::string> why = sharpnessRefusal(v.toDouble()))
        refuseJson(QStringLiteral("%1: %2").arg(run, QString::fromStdString(*why)));
    return v.toDouble();
}

} // namespace

std::optional<InputDesign> inputDesignFromJson(const QJsonValue& value) {
    const QString key = QStringLiteral("inputDesign");
    if (value.isNull()) return std::nullopt;
    if (!value.isObject())
        refuseJson(QStringLiteral("%1 must be an object {\"blockSize\": …, \"rows\": […]} or null, "
                                  "not %2")
                       .arg(key, jsonExcerpt(value)));
    const QJsonObject o = value.toObject();
    for (auto it = o.begin(); it != o.end(); ++it)
        if (it.key() != QLatin1String("blockSize") && it.key() != QLatin1String("rows"))
            refuseJson(QStringLiteral("%1: unknown field '%2' (the fields are blockSize, rows)")
                           .arg(key, it.key().left(40)));
    if (!o.contains(QLatin1String("blockSize")) || !o.contains(QLatin1String("rows")))
        refuseJson(QStringLiteral("%1 needs both blockSize and rows").arg(key));
    InputDesign design;
    design.blockSize = int(jsonInteger(o.value(QLatin1String("blockSize")),
                                       key + QStringLiteral(".blockSize"), 1, kMaxSequenceLength));
    const QJsonValue rows = o.value(QLatin1String("rows"));
    if (!rows.isArray())
        refuseJson(QStringLiteral("%1.rows must be a list of [keyBlock, sharpness] or [keyBlock, "
                                  "sharpness, repeat], not %2")
                       .arg(key, jsonExcerpt(rows)));
    const QJsonArray runs = rows.toArray();
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const QString name = QStringLiteral("%1.rows[%2]").arg(key).arg(i);
        const QJsonArray run = runs.at(i).toArray();
        if (!runs.at(i).isArray() || run.size() < 2 || run.size() > 3)
            refuseJson(QStringLiteral("%1 must be [keyBlock, sharpness] or [keyBlock, sharpness, "
                                      "repeat], not %2")
                           .arg(name, runs.at(i).isArray()
                                          ? QStringLiteral("a list of %1").arg(run.size())
                                          : jsonExcerpt(runs.at(i))));
        const int block = int(
            jsonInteger(run.at(0), name + QStringLiteral(" keyBlock"), 0, kMaxSequenceLength - 1));
        const double sharpness = readSharpness(run.at(1), name);
        const qint64 room = kMaxSequenceLength - qint64(design.rows.size());
        const qint64 repeat =
            run.size() == 3
                ? jsonInteger(run.at(2), name + QStringLiteral(" repeat"), 1, kMaxSequenceLength)
                : 1;
        if (repeat > room)
            refuseJson(
                QStringLiteral("%1: more than %2 rows in all").arg(name).arg(kMaxSequenceLength));
        design.rows.insert(design.rows.end(), std::size_t(repeat), RowMaximum{block, sharpness});
    }
    return design;
}

QJsonValue inputDesignToJson(const std::optional<InputDesign>& design) {
    if (!design) return QJsonValue(QJsonValue::Null);
    QJsonArray runs;
    const auto& rows = design->rows;
    for (std::size_t i = 0; i < rows.size();) {
        std::size_t end = i + 1;
        while (end < rows.size() && rows[end] == rows[i])
            ++end;
        QJsonArray run{rows[i].keyBlock, rows[i].sharpness};
        if (end - i > 1) run.append(qint64(end - i));
        runs.append(run);
        i = end;
    }
    return QJsonObject{{QStringLiteral("blockSize"), design->blockSize},
                       {QStringLiteral("rows"), runs}};
}

} // namespace flashviz::gui
