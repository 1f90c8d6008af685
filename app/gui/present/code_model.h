#pragma once
// The code panel's model: the pseudocode of the running algorithm (standard, flash in the
// explainer's loop order, the paper's, or FlashAttention-2's backward), the line executing this
// frame's step, and the listing's title. Lines a switch removes or changes are marked removed.
#include "session/scene.h"

#include <QString>

#include <vector>

namespace flashviz::gui {

struct CodeLine {
    QString text;
    int indent = 0;
    std::vector<StepKind> kinds; // steps that execute this line
    QString comment;
    bool removed = false; // struck out by a switch
};

// The listing for a run's settings.
std::vector<CodeLine> pseudocode(const VizSettings& settings);
// The line executing a step, or -1.
int lineOf(const std::vector<CodeLine>& code, StepKind kind);

struct CodeModel {
    QString title;
    std::vector<CodeLine> lines;
    int current = -1; // the line of this frame's step
};

CodeModel codeModel(const Frame& frame);

} // namespace flashviz::gui
