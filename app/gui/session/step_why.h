#pragma once
// Why a step does what it does, in a sentence: the "why" list of resources/lecture.json. The
// lecture's narratives quote these sentences ({why:<id>}) and the step view shows the current
// step's under the playback bar, so both say it in the same words, from one file.
#include "core/options.h"
#include "core/steps.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <vector>

namespace flashviz::gui {

struct StepWhy {
    QString id;                  // what the narratives name it by: {why:<id>}
    std::vector<StepKind> steps; // the step kinds it explains ("steps", as toString(StepKind))
    QString text;
    QString withoutRescale; // with the rescale switched off, when that changes the answer
    QString withoutRunningMax; // with no running maximum (then the rescale changes nothing)
};

// Each entry of `bytes`' "why" list that reads (id, steps, text, optional withoutRescale), and one
// message for each entry skipped, naming `source`, the entry and the field. Any bytes at all;
// never throws.
struct StepWhyParse {
    std::vector<StepWhy> entries;
    QStringList errors;
};
StepWhyParse parseStepWhys(const QByteArray& bytes, const QString& source);

// The sentences shipped in resources/lecture.json (a bad entry is skipped with a qWarning).
const std::vector<StepWhy>& stepWhys();
// Why a step of this kind is taken, with these options; empty where no sentence explains it.
QString whyOfStep(StepKind kind, const FlashOptions& options);

} // namespace flashviz::gui
