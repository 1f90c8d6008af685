#include "session/step_why.h"

#include "session/resources.h"
#include "session/settings.h"

#include "core/errors.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

StepKind stepKindNamed(const QJsonValue& v, const QString& key) {
    static const std::vector<StepKind> kinds = [] {
        std::vector<StepKind> all;
        for (int k = int(StepKind::InitialiseOutput); k <= int(kLastStepKind); ++k)
            all.push_back(StepKind(k));
        return all;
    }();
    QStringList names;
    for (StepKind kind : kinds) {
        const QString name = QString::fromLatin1(toString(kind));
        if (v.isString() && v.toString() == name) return kind;
        names << name;
    }
    refuseJson(QStringLiteral("%1: %2 is not a step kind (the kinds are %3)")
                   .arg(key, jsonExcerpt(v), names.join(QStringLiteral(", "))));
}

std::vector<Algorithm> algorithmsNamed(const QJsonValue& v) {
    std::vector<Algorithm> out;
    if (v.isUndefined()) return out;
    if (!v.isArray() || v.toArray().isEmpty() || v.toArray().size() > 3)
        refuseJson(QStringLiteral("algorithms must be a list of 1 to 3 algorithm names, not %1")
                       .arg(jsonExcerpt(v)));
    for (const QJsonValue& name : v.toArray()) {
        const auto algorithm =
            name.isString() ? parseAlgorithm(name.toString().toStdString()) : std::nullopt;
        if (!algorithm)
            refuseJson(
                QStringLiteral("algorithms: %1 is not an algorithm (standard, flash, backward)")
                    .arg(jsonExcerpt(name)));
        out.push_back(*algorithm);
    }
    return out;
}

std::vector<std::pair<const BackwardSwitch*, QString>> switchSentences(const QJsonValue& v) {
    std::vector<std::pair<const BackwardSwitch*, QString>> out;
    if (v.isUndefined()) return out;
    if (!v.isObject())
        refuseJson(QStringLiteral("whenOn must be an object, not %1").arg(jsonExcerpt(v)));
    const QJsonObject sentences = v.toObject();
    QStringList names;
    for (const BackwardSwitch& flag : backwardSwitches())
        names << QString::fromLatin1(flag.name);
    for (auto it = sentences.begin(); it != sentences.end(); ++it)
        if (!names.contains(it.key()))
            refuseJson(QStringLiteral("whenOn: '%1' is not a backward switch (the switches are %2)")
                           .arg(it.key().left(40), names.join(QStringLiteral(", "))));
    for (const BackwardSwitch& flag : backwardSwitches()) {
        const QString key = QString::fromLatin1(flag.name);
        if (!sentences.contains(key)) continue;
        const QString text = jsonText(sentences, flag.name, true, 600);
        out.emplace_back(&flag, text);
    }
    return out;
}

StepWhy readWhy(const QJsonObject& o, const std::vector<StepWhy>& earlier) {
    static const QStringList known{QStringLiteral("id"),
                                   QStringLiteral("steps"),
                                   QStringLiteral("algorithms"),
                                   QStringLiteral("text"),
                                   QStringLiteral("withoutRescale"),
                                   QStringLiteral("withoutRunningMax"),
                                   QStringLiteral("whenOn")};
    checkJsonKeys(o, known);
    StepWhy why;
    why.id = jsonText(o, "id", true, 64);
    for (const StepWhy& other : earlier)
        if (other.id == why.id)
            refuseJson(QStringLiteral("id '%1' is taken by an earlier entry").arg(why.id));
    why.text = jsonText(o, "text", true, 600);
    why.withoutRescale = jsonText(o, "withoutRescale", false, 600);
    why.withoutRunningMax = jsonText(o, "withoutRunningMax", false, 600);
    why.algorithms = algorithmsNamed(o.value(QStringLiteral("algorithms")));
    try {
        why.whenOn = switchSentences(o.value(QStringLiteral("whenOn")));
    } catch (const EngineError& error) {
        refuseJson(QStringLiteral("whenOn.%1").arg(QString::fromUtf8(error.what())));
    }
    const QJsonValue steps = o.value(QStringLiteral("steps"));
    if (!steps.isArray() || steps.toArray().isEmpty() || steps.toArray().size() > 32)
        refuseJson(QStringLiteral("steps must be a list of 1 to 32 step kinds, not %1")
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
                refuseJson(
                    QStringLiteral("an entry must be an object, not %1").arg(jsonExcerpt(item)));
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

namespace {

// The entry explaining `kind` in `algorithm`: one naming the algorithm, else one naming none.
const StepWhy* whyEntry(const std::vector<StepWhy>& entries, StepKind kind, Algorithm algorithm) {
    const StepWhy* general = nullptr;
    for (const StepWhy& why : entries) {
        if (std::find(why.steps.begin(), why.steps.end(), kind) == why.steps.end()) continue;
        if (why.algorithms.empty()) {
            if (!general) general = &why;
        } else if (std::find(why.algorithms.begin(), why.algorithms.end(), algorithm) !=
                   why.algorithms.end()) {
            return &why;
        }
    }
    return general;
}

} // namespace

QString whyOfStep(StepKind kind, const FlashOptions& options, Algorithm algorithm) {
    return whyOfStep(stepWhys(), kind, options, algorithm);
}

QString whyOfStep(const std::vector<StepWhy>& entries, StepKind kind, const FlashOptions& options,
                  Algorithm algorithm) {
    const StepWhy* why = whyEntry(entries, kind, algorithm);
    if (!why) return {};
    if (algorithm == Algorithm::Backward) {
        for (const auto& [flag, text] : why->whenOn)
            if (isOn(options.backward, *flag)) return text;
        return why->text;
    }
    // As describe() does: without a running maximum the rescale has nothing to do.
    if (!options.runningMax && !why->withoutRunningMax.isEmpty()) return why->withoutRunningMax;
    if (options.runningMax && !options.rescale && !why->withoutRescale.isEmpty())
        return why->withoutRescale;
    return why->text;
}

} // namespace flashviz::gui
