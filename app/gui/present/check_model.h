#pragma once
// The check panel's model: the run's output against ordinary attention (the verdict, the error,
// the wrong rows), how far the check has got at this step (the rows of O already final), and
// with the rescale switched off the first step at which the buggy run departs from the correct
// one. The backward's: dQ, dK and dV against their closed form (GradientCheck), per query row
// (dQ) and per key row (the worse of dK and dV), the rows whose gradient is final at this step,
// and the first step a backward bug changes a value. Plain values: the view words and paints them.
#include "session/scene.h"

#include <QString>

#include <optional>
#include <vector>

namespace flashviz::gui {

// What the verdict says after its count of rows.
enum class CheckVerdict {
    Pass,               // equals ordinary attention in every row
    PassWithoutRescale, // flash with the rescale off, yet no row's maximum rose after its first
                        // block
    FailRescaleOff,     // wrong: the rescale e^(m_old − m_new) is switched off
    FailNoRunningMax,   // wrong: no running max, exp() of large scores overflows
    Fail,               // wrong for another reason
};

struct CheckModel {
    bool passed = true;
    CheckVerdict verdict = CheckVerdict::Pass;
    QString summary; // the check's verdict in words (CheckReport::summary)
    bool flash = true;
    QString backendName;
    int nonFiniteCount = 0; // values of O that are inf or NaN
    double maxAbsDiff = 0, tolerance = 0;
    int rows = 0;
    std::vector<int> wrongRows;

    // At this step: the rows of O already final, and the largest |difference| among them.
    int finishedRows = 0;
    double finishedMaxDiff = 0;
    bool finishedNonFinite = false;
    QString cpuSummary;  // the CPU engine's check, when another backend ran
    bool cpuPassed = true; // its verdict, as a value: the panel's brief line says PASS or FAIL
    QString backendNote; // why the CPU stood in, when the chosen backend refused

    // With the rescale switched off: where the bug first changes a value
    // (Scene::firstRescaleStep), and that step's tile.
    std::optional<int> firstRescaleStep;
    int firstRescaleQueryBlock = -1, firstRescaleKeyBlock = -1;

    // Per query row: its largest |difference|, whether the check finds it wrong, whether its O is
    // final at this step; and the rows of this step's query block (empty when none).
    Vector rowMaxDiff;
    std::vector<char> rowWrong, rowFinished;
    Range currentRows;

    // The backward: the query rows above are dQ's; these are the key rows of dK and dV.
    bool backward = false;
    struct Gradient {
        QString name; // "dQ", "dK", "dV"
        double maxAbsDiff = 0;
        int nonFiniteCount = 0;
        int wrongRows = 0, rows = 0;
        bool passed = true;
    };
    std::vector<Gradient> gradients; // dQ, dK, dV
    BackwardOptions backwardOptions; // the switches, to name the bug that failed it
    bool causal = false;
    bool forwardPassed = true; // the forward's O, which the pre-pass reads, is right
    int keyRows = 0;
    std::vector<int> wrongKeyRows;
    Vector keyRowMaxDiff; // per key row: the larger of dK's and dV's |difference|
    std::vector<char> keyRowWrong, keyRowFinished;
    Range currentKeys;
    int finishedKeyRows = 0;
    // A GPU backend's fast fp16 / bf16 backward on the same inputs, judged; or why it did not
    // run (BackwardScene::lowPrecisionCheck, lowPrecisionNote).
    std::optional<LowPrecisionGradientCheck> lowPrecision;
    QString lowPrecisionNote;
    // Blocks whose gradient is final at this step (dK_j, dV_j stored; dQ_i's last update done).
    int keyBlocksDone = 0, keyBlocks = 0, queryBlocksDone = 0, queryBlocks = 0;
    // Where a backward bug first changes a value (BackwardScene::firstBugStep), its step's kind
    // and tile.
    std::optional<int> firstBugStep;
    StepKind firstBugKind = StepKind::RecomputeScores;
    int firstBugQueryBlock = -1, firstBugKeyBlock = -1;

    // The step the "go to" button takes the view to: the first wrong value, either pass's.
    std::optional<int> divergenceStep() const { return backward ? firstBugStep : firstRescaleStep; }
};

CheckModel checkModel(const Frame& frame);

// The per-row bars in `columns` columns (at most one per row), each the worst of its rows: the
// largest |difference| (inf where one is not finite), wrong if one is, finished if all are,
// current if one is in this step's block.
struct CheckBar {
    double maxDiff = 0;
    bool wrong = false, finished = true, current = false;
};
std::vector<CheckBar> checkBars(const CheckModel& model, int columns);
// The same for the backward's key rows (dK and dV).
std::vector<CheckBar> keyCheckBars(const CheckModel& model, int columns);

} // namespace flashviz::gui
