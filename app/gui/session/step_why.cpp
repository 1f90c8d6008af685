#include "session/step_why.h"

#include "session/resources.h"
#include "session/settings.h"

#include "core/errors.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

[[noreturn]] void refuse(const QString& text) {
    throw EngineError(ErrorKind::InvalidArgument, text.toStdString());
}

StepKind stepKindNamed(const QJsonValue& v, const QString& key) {
    static const std::vector<StepKind> kinds = [] {
        std::vector<StepKind> all;
        for (int k = int(StepKind::InitialiseOutput); k <= int(StepKind::WriteOutput); ++k)
            all.push_back(StepKind(k));
        return all;
    }();
    QStringList names;
    for (StepKind kind : kinds) {
        const QString name = QString::fromLatin1(toString(kind));
        if (v.isString() && v.toString() == name) return kind;
        names << name;
    }
    refuse(QStringLiteral("%1: %2 is not a step kind (the kinds are %3)")
               .arg(key, jsonExcerpt(v), names.join(QStringLiteral(", "))));
}

StepWhy readWhy(const QJsonObject& o, const std::vector<StepWhy>& earlier) {
    static const QStringList known{QStringLiteral("id"), QStringLiteral("steps"),
                                   QStringLiteral("text"), QStringLiteral("withoutRescale"),
                                   QStringLiteral("withoutRunningMax")};
    checkJsonKeys(o, known);
    StepWhy why;
    why.id = jsonText(o, "id", true, 64);
    for (const StepWhy& other : earlier)
        if (other.id == why.id)
            refuse(QStringLiteral("id '%1' is taken by an earlier entry").arg(why.id));
    why.text = jsonText(o, "text", true, 600);
    why.withoutRescale = jsonText(o, "withoutRescale", false, 600);
    why.withoutRunningMax = jsonText(o, "withoutRunningMax", false, 600);
    const QJsonValue steps = o.value(QStringLiteral("steps"));
    if (!steps.isArray() || steps.toArray().isEmpty() || steps.toArray().size() > 32)
        refuse(QStringLiteral("steps must be a list of 1 to 32 step kinds, not %1")
                   .arg(jsonExcerpt(steps)));
    const QJsonArray list = steps.toArray();
    for (qsizetype i = 0; i < list.size(); ++i)
        why.steps.push_back(stepKindNamed(list.at(i), QStringLiteral("steps[%1]").arg(i)));
    return why;
}

} // namespace

StepWhyParse parseStepWhys(const QByteArray& bytes, const QString& source) {
    StepWhyParse out;
    const auto list = jsonEntries(bytes, source, "why", out.errors);
    if (!list) return out;
    for (int i = 0; i < list->size(); ++i) {
        const QJsonValue item = list->at(i);
        const QJsonObject o = item.toObject();
        try {
            if (!item.isObject())
                refuse(QStringLiteral("an entry must be an object, not %1").arg(jsonExcerpt(item)));
            out.entries.push_back(readWhy(o, out.entries));
        } catch (const EngineError& error) {
            out.errors << QStringLiteral("%1: why %2 skipped: %3")
                              .arg(source, jsonEntryName(o, i), QString::fromUtf8(error.what()));
        }
    }
    return out;
}

const std::vector<StepWhy>& stepWhys() {
    static const std::vector<StepWhy> entries =
        parseResource(QStringLiteral("lecture.json"), parseStepWhys).entries;
    return entries;
}

QString whyOfStep(StepKind kind, const FlashOptions& options) {
    for (const StepWhy& why : stepWhys())
        if (std::find(why.steps.begin(), why.steps.end(), kind) != why.steps.end())
        {
            // As describe() does: without a running maximum the rescale has nothing to do.
            if (!options.runningMax && !why.withoutRunningMax.isEmpty())
                return why.withoutRunningMax;
            if (options.runningMax && !options.rescale && !why.withoutRescale.isEmpty())
                return why.withoutRescale;
            return why.text;
        }
    return {};
}

} // namespace flashviz::gui
