#include "present/check_model.h"

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

CheckVerdict verdictOf(const Scene& scene) {
    const FlashOptions& options = scene.settings.options;
    if (scene.check.passed())
        return !options.rescale && scene.isFlash() ? CheckVerdict::PassWithoutRescale
                                                   : CheckVerdict::Pass;
    if (!options.rescale) return CheckVerdict::FailRescaleOff;
    if (!options.runningMax) return CheckVerdict::FailNoRunningMax;
    return CheckVerdict::Fail;
}

void progressAt(CheckModel& model, const Scene& scene, int step) {
    model.rowFinished.assign(std::size_t(model.rows), 0);
    for (const Range& r : finishedRowRuns(scene, step))
        for (int i = r.begin; i < r.end; ++i) {
            model.rowFinished[std::size_t(i)] = 1;
            ++model.finishedRows;
            const double v = model.rowMaxDiff(i);
            if (!std::isfinite(v))
                model.finishedNonFinite = true;
            else
                model.finishedMaxDiff = std::max(model.finishedMaxDiff, v);
        }
}

CheckModel::Gradient gradientOf(const char* name, const CheckReport& report) {
    return {QString::fromLatin1(name),     report.maxAbsDiff,
            report.nonFiniteCount,         int(report.wrongRows.size()),
            int(report.rowMaxDiff.size()), report.passed()};
}

// Per row the larger of two checks' |difference| (inf where either is not finite).
Vector worseOf(const Vector& a, const Vector& b) {
    Vector worse(a.size());
    for (Eigen::Index i = 0; i < a.size(); ++i)
        worse(i) = std::isfinite(a(i)) && std::isfinite(b(i)) ? std::max(a(i), b(i)) : INFINITY;
    return worse;
}

// Marks the rows of the blocks done by `step` finished; returns the blocks done.
int markFinished(std::vector<char>& finished, const std::vector<int>& doneStep, int blockSize,
                 int step) {
    int done = 0;
    for (std::size_t b = 0; b < doneStep.size(); ++b) {
        // A query block that sees no key keeps the dQ = 0 written at step 1: final from then.
        const int at = doneStep[b] >= 0 ? doneStep[b] : 1;
        if (step < at) continue;
        ++done;
        const int first = int(b) * blockSize;
        const int end = std::min(int(finished.size()), first + blockSize);
        for (int r = first; r < end; ++r)
            finished[std::size_t(r)] = 1;
    }
    return done;
}

// The backward: dQ in the query rows' fields, dK and dV in the key rows'.
void backwardCheck(CheckModel& model, const Frame& frame) {
    const Scene& scene = *frame.scene;
    const BackwardScene& bw = *scene.backward;
    const GradientCheck& check = bw.check;
    const int step = frame.state.info.index;
    model.backward = true;
    model.flash = false;
    model.passed = check.passed();
    model.verdict = check.passed() ? CheckVerdict::Pass : CheckVerdict::Fail;
    model.summary = QString::fromStdString(check.summary());
    model.gradients = {gradientOf("dQ", check.dq), gradientOf("dK", check.dk),
                       gradientOf("dV", check.dv)};
    model.backwardOptions = scene.settings.options.backward;
    model.causal = scene.settings.spec.causal;
    model.forwardPassed = scene.check.passed();
    model.nonFiniteCount =
        check.dq.nonFiniteCount + check.dk.nonFiniteCount + check.dv.nonFiniteCount;
    model.maxAbsDiff = std::max({check.dq.maxAbsDiff, check.dk.maxAbsDiff, check.dv.maxAbsDiff});
    model.tolerance = check.dq.tolerance;
    model.rows = int(check.dq.rowMaxDiff.size());
    model.wrongRows = check.dq.wrongRows;
    model.rowMaxDiff = check.dq.rowMaxDiff;
    model.rowWrong = bw.wrongQueryRow;
    model.rowWrong.resize(std::size_t(model.rows));
    model.keyRows = int(check.dk.rowMaxDiff.size());
    model.keyRowMaxDiff = worseOf(check.dk.rowMaxDiff, check.dv.rowMaxDiff);
    model.keyRowWrong = bw.wrongKeyRow;
    model.keyRowWrong.resize(std::size_t(model.keyRows));
    for (int r = 0; r < model.keyRows; ++r)
        if (model.keyRowWrong[std::size_t(r)]) model.wrongKeyRows.push_back(r);
    const FlashOptions& options = scene.settings.options;
    model.rowFinished.assign(std::size_t(model.rows), 0);
    model.keyRowFinished.assign(std::size_t(model.keyRows), 0);
    model.queryBlocks = int(bw.queryBlockDoneStep.size());
    model.keyBlocks = int(bw.keyBlockDoneStep.size());
    model.queryBlocksDone =
        markFinished(model.rowFinished, bw.queryBlockDoneStep, options.blockRows, step);
    model.keyBlocksDone =
        markFinished(model.keyRowFinished, bw.keyBlockDoneStep, options.blockCols, step);
    for (int r = 0; r < model.rows; ++r)
        if (model.rowFinished[std::size_t(r)]) {
            ++model.finishedRows;
            const double v = model.rowMaxDiff(r);
            if (!std::isfinite(v))
                model.finishedNonFinite = true;
            else
                model.finishedMaxDiff = std::max(model.finishedMaxDiff, v);
        }
    for (int r = 0; r < model.keyRows; ++r)
        if (model.keyRowFinished[std::size_t(r)]) {
            ++model.finishedKeyRows;
            const double v = model.keyRowMaxDiff(r);
            if (!std::isfinite(v))
                model.finishedNonFinite = true;
            else
                model.finishedMaxDiff = std::max(model.finishedMaxDiff, v);
        }
    if (bw.cpuCheck) {
        model.cpuSummary = QString::fromStdString(bw.cpuCheck->summary());
        model.cpuPassed = bw.cpuCheck->passed();
    }
    model.lowPrecision = bw.lowPrecisionCheck;
    model.lowPrecisionNote = bw.lowPrecisionNote;
    if (bw.firstBugStep) {
        model.firstBugStep = bw.firstBugStep;
        const StepInfo first = scene.engine->info(*bw.firstBugStep);
        model.firstBugKind = first.kind;
        model.firstBugQueryBlock = first.queryBlock;
        model.firstBugKeyBlock = first.keyBlock;
    }
    const StepInfo& info = frame.state.info;
    if (info.queryBlock >= 0) model.currentRows = info.rows;
    if (info.keyBlock >= 0) model.currentKeys = info.cols;
}

std::vector<CheckBar> barsOf(const Vector& maxDiff, const std::vector<char>& wrong,
                             const std::vector<char>& finished, Range current, int columns) {
    std::vector<CheckBar> bars;
    const int rows = int(maxDiff.size());
    columns = std::min(rows, columns);
    for (int c = 0; c < columns; ++c) {
        const int r0 = int(qint64(c) * rows / columns), r1 = int(qint64(c + 1) * rows / columns);
        CheckBar bar;
        for (int r = r0; r < std::max(r1, r0 + 1); ++r) {
            const double x = maxDiff(r);
            bar.maxDiff = std::isfinite(x) ? std::max(bar.maxDiff, x) : INFINITY;
            bar.wrong = bar.wrong || wrong[std::size_t(r)];
            bar.finished = bar.finished && finished[std::size_t(r)];
            bar.current = bar.current || (r >= current.begin && r < current.end);
        }
        bars.push_back(bar);
    }
    return bars;
}

} // namespace

CheckModel checkModel(const Frame& frame) {
    const Scene& scene = *frame.scene;
    CheckModel model;
    model.backendName = scene.backendName;
    model.backendNote = scene.backendNote;
    if (scene.backward) {
        backwardCheck(model, frame);
        return model;
    }
    const CheckReport& check = scene.check;
    model.passed = check.passed();
    model.verdict = verdictOf(scene);
    model.summary = QString::fromStdString(check.summary());
    model.flash = scene.isFlash();
    model.nonFiniteCount = check.nonFiniteCount;
    model.maxAbsDiff = check.maxAbsDiff;
    model.tolerance = check.tolerance;
    model.rows = int(check.rowMaxDiff.size());
    model.wrongRows = check.wrongRows;
    model.rowMaxDiff = check.rowMaxDiff;
    model.rowWrong.resize(std::size_t(model.rows));
    for (int r = 0; r < model.rows; ++r)
        model.rowWrong[std::size_t(r)] = scene.isRowWrong(r);
    progressAt(model, scene, frame.state.info.index);
    if (scene.cpuCheck) {
        model.cpuSummary = QString::fromStdString(scene.cpuCheck->summary());
        model.cpuPassed = scene.cpuCheck->passed();
    }
    if (scene.firstRescaleStep && !scene.settings.options.rescale) {
        model.firstRescaleStep = scene.firstRescaleStep;
        const StepInfo first = scene.engine->info(*scene.firstRescaleStep);
        model.firstRescaleQueryBlock = first.queryBlock;
        model.firstRescaleKeyBlock = first.keyBlock;
    }
    if (frame.state.info.queryBlock >= 0) model.currentRows = frame.state.info.rows;
    return model;
}

std::vector<CheckBar> checkBars(const CheckModel& model, int columns) {
    return barsOf(model.rowMaxDiff, model.rowWrong, model.rowFinished, model.currentRows, columns);
}

std::vector<CheckBar> keyCheckBars(const CheckModel& model, int columns) {
    return barsOf(model.keyRowMaxDiff, model.keyRowWrong, model.keyRowFinished, model.currentKeys,
                  columns);
}

} // namespace flashviz::gui
