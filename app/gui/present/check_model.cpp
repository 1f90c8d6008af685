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

} // namespace

CheckModel checkModel(const Frame& frame) {
    const Scene& scene = *frame.scene;
    const CheckReport& check = scene.check;
    CheckModel model;
    model.passed = check.passed();
    model.verdict = verdictOf(scene);
    model.summary = QString::fromStdString(check.summary());
    model.flash = scene.isFlash();
    model.backendName = scene.backendName;
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
    if (scene.cpuCheck) model.cpuSummary = QString::fromStdString(scene.cpuCheck->summary());
    model.backendNote = scene.backendNote;
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
    std::vector<CheckBar> bars;
    const int rows = model.rows;
    columns = std::min(rows, columns);
    for (int c = 0; c < columns; ++c) {
        const int r0 = int(qint64(c) * rows / columns), r1 = int(qint64(c + 1) * rows / columns);
        CheckBar bar;
        for (int r = r0; r < std::max(r1, r0 + 1); ++r) {
            const double x = model.rowMaxDiff(r);
            bar.maxDiff = std::isfinite(x) ? std::max(bar.maxDiff, x) : INFINITY;
            bar.wrong = bar.wrong || model.rowWrong[std::size_t(r)];
            bar.finished = bar.finished && model.rowFinished[std::size_t(r)];
            bar.current =
                bar.current || (r >= model.currentRows.begin && r < model.currentRows.end);
        }
        bars.push_back(bar);
    }
    return bars;
}

} // namespace flashviz::gui
