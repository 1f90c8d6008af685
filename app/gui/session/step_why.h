#pragma once
// Why a step does what it does, in a sentence: the "why" list of resources/lecture.json. The
// lecture's narratives quote these sentences ({why:<id>}) and the step view shows the current
// step's under the playback bar, so both say it in the same words, from one file.
#include "core/options.h"
#include "core/steps.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace flashviz::gui {

struct StepWhy {
    QString id;                  // what the narratives name it by: {why:<id>}
    std::vector<StepKind> steps; // the step kinds it explains ("steps", as toString(StepKind))
    // "algorithms" (names as toString(Algorithm)): the algorithms whose steps it explains; empty
    // for every algorithm that takes its kinds. A kind two algorithms share (the backward's
    // LoadKeyValue) is explained by the entry naming the algorithm before one naming none.
    std::vector<Algorithm> algorithms;
    QString text;
    QString withoutRescale;    // with the rescale switched off, when that changes the answer
    QString withoutRunningMax; // with no running maximum (then the rescale changes nothing)
    // "whenOn": the backward's switches (by their command-line names, "no-row-dot") that change
    // the answer, each with its sentence; the first one on, in backwardSwitches() order, wins.
    std::vector<std::pair<const BackwardSwitch*, QString>> whenOn;
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
// Why a step of this kind is taken in this algorithm, with these options; empty where no
// sentence explains it.
QString whyOfStep(StepKind kind, const FlashOptions& options,
                  Algorithm algorithm = Algorithm::Flash);
// The same from the entries given (what the shipped ones are checked with).
QString whyOfStep(const std::vector<StepWhy>& entries, StepKind kind, const FlashOptions& options,
                  Algorithm algorithm);

} // namespace flashviz::gui
