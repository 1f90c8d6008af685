// The models of the tile detail, the check panel, the code panel and the comparison view
// (app/gui/present): built from scenes and frames without a window, they hold the engine's own
// values at each step, the bug's wrong rows and its first wrong step, the backend's record only
// when asked for and recorded, and the Scene's totals.
#include "present/check_model.h"
#include "present/code_model.h"
#include "present/comparison_model.h"
#include "present/tile_model.h"
#include "session/scene.h"
#include "session/settings.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

std::shared_ptr<const Scene> sceneOf(const VizSettings& settings) {
    return buildScene(settings, nullptr);
}

VizSettings presetSettings(const char* id) {
    const Preset* preset = findPreset(QString::fromLatin1(id));
    return preset ? preset->settings : VizSettings();
}

const Vector& latest(const Vector& after, const Vector& before) {
    return after.size() ? after : before;
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
}

bool hasColumn(const TileModel& model, TileColumn column) {
    return std::any_of(model.columns.begin(), model.columns.end(),
                       [column](const TileTableColumn& c) { return c.column == column; });
}

// Whether the table shows a value of the running state (m, ℓ, acc, O) wrong, the correct run's
// beside it. (The skipped correction factor alone is not: it is harmless while nothing is summed.)
bool showsWrongState(const TileModel& model) {
    return std::any_of(model.rows.begin(), model.rows.end(), [](const TileRow& r) {
        return r.m.correct || r.l.correct || r.accumulator.correct.size() ||
               r.output.correct.size();
    });
}

// The first step the backend's record of a tile appears at.
int firstTracedStep(const std::shared_ptr<const Scene>& scene) {
    for (int step = 0; step < scene->stepCount(); ++step)
        if (makeFrame(scene, step)->trace) return step;
    return -1;
}

} // namespace

class TestPresentTile : public QObject {
    Q_OBJECT
  private slots:
    void tileValuesAreTheEngines();
    void correctionIsTheChangeOfMaximum();
    void gridsFollowTheSteps();
    void headingNamesRealBlocks();
    void bugRunShowsWrongRowsFromTheFirstRescaleStep();
    void backendColumnOnlyWhenAskedForAndRecorded();
    void checkProgressFollowsTheSteps();
    void codeLineExecutesTheStep();
    void comparisonTotalsAreTheScenes();
};

// At every step of the toy, the table lists the step engine's m, ℓ, correction, accumulator and
// O of the tile's rows, and the grids its S and P.
void TestPresentTile::tileValuesAreTheEngines() {
    const auto scene = sceneOf(toySettings());
    int rowsCompared = 0;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const StepState& st = frame->state;
        const TileModel model = tileModel(*frame, ViewOptions{});
        QCOMPARE(model.scores.values, st.scores);
        QCOMPARE(model.weights.values, st.weights);
        QCOMPARE(model.hasTable, st.info.queryBlock >= 0);
        if (!model.hasTable) continue;
        QCOMPARE(model.scores.firstRow, st.info.rows.begin);
        QCOMPARE(model.scores.firstCol, st.info.cols.begin);
        QCOMPARE(model.tileRows, st.info.rows.size());
        QCOMPARE(int(model.rows.size()), std::min(st.info.rows.size(), kTileRowsListed));
        for (int i = 0; i < int(model.rows.size()); ++i) {
            const TileRow& row = model.rows[std::size_t(i)];
            QCOMPARE(row.row, st.info.rows.begin + i);
            const Vector& m = latest(st.mNew, st.mOld);
            const Vector& l = latest(st.lNew, st.lOld);
            QCOMPARE(row.m.now.has_value(), m.size() > 0);
            if (row.m.now) QCOMPARE(*row.m.now, m(i));
            if (row.l.now) QCOMPARE(*row.l.now, l(i));
            if (st.correction.size()) QCOMPARE(*row.correction.now, st.correction(i));
            const Matrix& acc = st.accNew.size() ? st.accNew : st.accOld;
            if (acc.size()) QCOMPARE(row.accumulator.now, Vector(acc.row(i).transpose()));
            QCOMPARE(row.output.now.size(), st.output.size() ? st.output.cols() : 0);
            if (st.output.size()) QCOMPARE(row.output.now, Vector(st.output.row(i).transpose()));
            // Without a bug there is no correct run to differ from.
            QVERIFY(!row.m.correct && !row.l.correct && row.accumulator.correct.size() == 0);
            ++rowsCompared;
        }
    }
    QVERIFY(rowsCompared > 0);
}

// On the steps that rescale, the correction is e^(m_old − m_new), highlighted where the maximum
// rose after the first block; m rises (and is marked) on update-max.
void TestPresentTile::correctionIsTheChangeOfMaximum() {
    VizSettings settings = toySettings();
    settings.spec.pattern = InputPattern::LateMaximum;
    const auto scene = sceneOf(settings);
    int rescaled = 0, rose = 0;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const StepState& st = frame->state;
        const TileModel model = tileModel(*frame, ViewOptions{});
        for (int i = 0; i < int(model.rows.size()); ++i) {
            const TileRow& row = model.rows[std::size_t(i)];
            if (st.info.kind == StepKind::UpdateMax && row.m.changed) {
                QVERIFY(st.mNew(i) > st.mOld(i));
                QCOMPARE(*row.m.before, st.mOld(i));
                ++rose;
            }
            if (!row.correction.now || !std::isfinite(st.mOld(i))) continue;
            QVERIFY2(close(*row.correction.now, std::exp(st.mOld(i) - st.mNew(i))),
                     qPrintable(QStringLiteral("step %1 row %2").arg(step).arg(row.row)));
            const bool updating =
                st.info.kind == StepKind::UpdateSum || st.info.kind == StepKind::UpdateOutput;
            QCOMPARE(row.correction.changed, updating && *row.correction.now < 1.0);
            QCOMPARE(row.correctionNote, *row.correction.now < 1.0 ? CorrectionNote::Rescaled
                                                                   : CorrectionNote::Unchanged);
            if (row.correction.changed) ++rescaled;
        }
    }
    QVERIFY(rescaled > 0);
    QVERIFY(rose > 0);
}

// The grids: S's row maxima marked on update-max only; standard attention's whole S and P once
// written, as numbers when small and as the stored images when large.
void TestPresentTile::gridsFollowTheSteps() {
    const auto toy = sceneOf(toySettings());
    int marked = 0;
    for (int step = 0; step < toy->stepCount(); ++step) {
        const auto frame = makeFrame(toy, step);
        const TileModel model = tileModel(*frame, ViewOptions{});
        QCOMPARE(model.scores.active, frame->state.info.kind == StepKind::ComputeScores);
        if (frame->state.info.kind != StepKind::UpdateMax) {
            QVERIFY(model.scores.rowMaxColumn.empty());
            continue;
        }
        const Matrix& s = frame->state.scores;
        QCOMPARE(int(model.scores.rowMaxColumn.size()), int(s.rows()));
        for (int r = 0; r < s.rows(); ++r) {
            Eigen::Index column = 0;
            s.row(r).maxCoeff(&column);
            QCOMPARE(model.scores.rowMaxColumn[std::size_t(r)], int(column));
            ++marked;
        }
    }
    QVERIFY(marked > 0);

    const auto standard = sceneOf(presetSettings("standard"));
    QVERIFY(standard->smallScores.size() > 0);
    bool seenBefore = false, seenAfter = false;
    for (int step = 0; step < standard->stepCount(); ++step) {
        const TileModel model = tileModel(*makeFrame(standard, step), ViewOptions{});
        QVERIFY(!model.scores.wholeMatrix && !model.hasTable);
        if (step < standard->writeScoresStep - 1) {
            QVERIFY(!model.scores.computed);
            seenBefore = true;
        } else if (step >= standard->writeScoresStep) {
            QCOMPARE(model.scores.values, standard->smallScores);
            seenAfter = true;
        }
    }
    QVERIFY(seenBefore && seenAfter);

    const auto large = sceneOf(presetSettings("standard-256"));
    const TileModel last = tileModel(*makeFrame(large, large->stepCount() - 1), ViewOptions{});
    QVERIFY(last.scores.wholeMatrix && last.scores.computed && last.weights.computed);
    QCOMPARE(last.scores.image, large->scoresImage);
    QCOMPARE(last.weights.image, large->weightsImage);
}

// With the rescale switched off the table shows wrong values of m, ℓ, acc or O from
// The heading names the blocks a step concerns in either loop order: never "block -1" or an
// empty range ("keys 0–-1"), also at the paper order's first step (O, m, ℓ set up for all rows).
void TestPresentTile::headingNamesRealBlocks() {
    for (const LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        VizSettings settings = toySettings();
        settings.options.loopOrder = order;
        const auto scene = sceneOf(settings);
        for (int step = 0; step < scene->stepCount(); ++step) {
            const TileModel model = tileModel(*makeFrame(scene, step), ViewOptions{});
            QVERIFY2(!model.heading.contains(QStringLiteral("-1")), qPrintable(model.heading));
        }
    }
}

// Scene::firstRescaleStep on and not before; its rows are marked wrong as the check finds them,
// and the check names that step, its tile and the wrong rows.
void TestPresentTile::bugRunShowsWrongRowsFromTheFirstRescaleStep() {
    const auto scene = sceneOf(presetSettings("bug-bites"));
    QVERIFY(scene->firstRescaleStep.has_value());
    const int first = *scene->firstRescaleStep;
    QVERIFY(!scene->check.wrongRows.empty());
    std::optional<int> firstShown;
    for (int step = 0; step < scene->stepCount() && !firstShown; ++step) {
        const TileModel model = tileModel(*makeFrame(scene, step), ViewOptions{});
        QCOMPARE(model.bug, true);
        if (showsWrongState(model)) firstShown = step;
        for (const TileRow& row : model.rows)
            QCOMPARE(row.wrong, std::count(scene->check.wrongRows.begin(),
                                           scene->check.wrongRows.end(), row.row) > 0);
    }
    QCOMPARE(firstShown, std::optional<int>(first));
    const TileModel atFirst = tileModel(*makeFrame(scene, first), ViewOptions{});
    QVERIFY(std::any_of(atFirst.rows.begin(), atFirst.rows.end(),
                        [](const TileRow& r) { return r.l.correct.has_value(); }));

    const CheckModel check = checkModel(*makeFrame(scene, 0));
    QVERIFY(!check.passed);
    QCOMPARE(check.verdict, CheckVerdict::FailRescaleOff);
    QCOMPARE(check.wrongRows, scene->check.wrongRows);
    QCOMPARE(check.firstRescaleStep, scene->firstRescaleStep);
    const StepInfo info = scene->engine->info(first);
    QCOMPARE(check.firstRescaleQueryBlock, info.queryBlock);
    QCOMPARE(check.firstRescaleKeyBlock, info.keyBlock);
    QCOMPARE(check.summary, QString::fromStdString(scene->check.summary()));

    // The same switch where the maximum sits in the first block: the check passes, no step to
    // go to is named wrong.
    const auto hides = sceneOf(presetSettings("bug-hides"));
    const CheckModel passing = checkModel(*makeFrame(hides, 0));
    QVERIFY(passing.passed);
    QCOMPARE(passing.verdict, CheckVerdict::PassWithoutRescale);
    QVERIFY(!passing.firstRescaleStep);
}

// The backend's column: only with the view option on and a trace recorded; its values are the
// trace's, and beside the CPU's own they differ by nothing.
void TestPresentTile::backendColumnOnlyWhenAskedForAndRecorded() {
    const auto scene = sceneOf(toySettings());
    QVERIFY(scene->trace);
    const int step = firstTracedStep(scene);
    QVERIFY(step >= 0);
    const auto frame = makeFrame(scene, step);
    const TileModel hidden = tileModel(*frame, ViewOptions{false});
    QVERIFY(!hidden.backendShown && !hasColumn(hidden, TileColumn::Backend));
    QVERIFY(std::none_of(hidden.rows.begin(), hidden.rows.end(),
                         [](const TileRow& r) { return r.backend.has_value(); }));
    QVERIFY(hidden.notes.isEmpty());

    const TileModel shown = tileModel(*frame, ViewOptions{true});
    QVERIFY(shown.backendShown);
    QCOMPARE(shown.columns.back().column, TileColumn::Backend);
    QCOMPARE(shown.backendName, scene->backendName);
    QCOMPARE(shown.notes.size(), 1);
    for (int i = 0; i < int(shown.rows.size()); ++i) {
        const TileRow& row = shown.rows[std::size_t(i)];
        QVERIFY(row.backend);
        QCOMPARE(row.backend->m, frame->trace->mNew(i));
        QCOMPARE(row.backend->l, frame->trace->lNew(i));
        QVERIFY(row.backend->difference && *row.backend->difference < 1e-12);
    }
    // Before the tile is updated the column is there, its values not yet.
    const TileModel early = tileModel(*makeFrame(scene, 1), ViewOptions{true});
    QVERIFY(hasColumn(early, TileColumn::Backend));
    QVERIFY(!early.rows.empty() && !early.rows.front().backend);

    // Past n = 1024 no trace is recorded: no column, a note that says why.
    VizSettings large = toySettings();
    large.spec.queries = large.spec.keys = kTraceMaxSequence + 32;
    large.options.blockRows = large.options.blockCols = 64;
    const auto untraced = sceneOf(large);
    QVERIFY(!untraced->trace && !untraced->traceNote.isEmpty());
    const TileModel none = tileModel(*makeFrame(untraced, 4), ViewOptions{true});
    QVERIFY(none.hasTable && !none.backendShown && !hasColumn(none, TileColumn::Backend));
    QCOMPARE(none.notes.size(), 1);
    QVERIFY(none.notes.front().contains(untraced->traceNote));
}

// The check's progress: no row final at the start, every row at the end, in between the rows
// of the finished blocks; the bars are the rows' own figures, or the worst of their rows.
void TestPresentTile::checkProgressFollowsTheSteps() {
    const auto scene = sceneOf(toySettings());
    const int last = scene->stepCount() - 1;
    const CheckModel start = checkModel(*makeFrame(scene, 0));
    QVERIFY(start.passed);
    QCOMPARE(start.verdict, CheckVerdict::Pass);
    QCOMPARE(start.rows, scene->settings.spec.queries);
    QCOMPARE(start.finishedRows, 0);
    const CheckModel end = checkModel(*makeFrame(scene, last));
    QCOMPARE(end.finishedRows, end.rows);
    QCOMPARE(end.finishedMaxDiff, scene->check.rowMaxDiff.maxCoeff());

    const int middle = scene->blockDoneStep.front();
    QVERIFY(middle < last);
    const CheckModel half = checkModel(*makeFrame(scene, middle));
    QCOMPARE(half.finishedRows, scene->settings.options.blockRows);
    const std::vector<CheckBar> perRow = checkBars(half, half.rows);
    QCOMPARE(int(perRow.size()), half.rows);
    const StepInfo info = scene->engine->info(middle);
    for (int r = 0; r < half.rows; ++r) {
        const CheckBar& bar = perRow[std::size_t(r)];
        QCOMPARE(bar.maxDiff, scene->check.rowMaxDiff(r));
        QCOMPARE(bar.wrong, scene->isRowWrong(r));
        QCOMPARE(bar.finished, scene->rowFinished(r, middle));
        QCOMPARE(bar.current, info.queryBlock >= 0 && r >= info.rows.begin && r < info.rows.end);
    }
    const std::vector<CheckBar> one = checkBars(half, 1);
    QCOMPARE(int(one.size()), 1);
    QCOMPARE(one.front().maxDiff, scene->check.rowMaxDiff.maxCoeff());
    QVERIFY(!one.front().finished);
    // More columns than rows: one per row.
    QCOMPARE(int(checkBars(half, 10 * half.rows).size()), half.rows);
}

// The highlighted line of the listing is one that executes the step, in every loop order.
void TestPresentTile::codeLineExecutesTheStep() {
    for (const char* id : {"toy", "paper-order", "standard"}) {
        const auto scene = sceneOf(presetSettings(id));
        for (int step = 0; step < scene->stepCount(); ++step) {
            const auto frame = makeFrame(scene, step);
            const CodeModel model = codeModel(*frame);
            QVERIFY2(model.current >= 0,
                     qPrintable(QStringLiteral("%1 step %2").arg(id).arg(step)));
            const std::vector<StepKind>& kinds = model.lines[std::size_t(model.current)].kinds;
            QVERIFY(std::find(kinds.begin(), kinds.end(), frame->state.info.kind) != kinds.end());
        }
    }
}

// The comparison's totals are the Scene's: standard attention's beside the flash run's own, and
// beside a standard run what the flash run of the same settings counts.
void TestPresentTile::comparisonTotalsAreTheScenes() {
    const auto flash = sceneOf(toySettings());
    const ComparisonModel model = comparisonModel(*flash);
    QCOMPARE(model.standard, flash->standardTotals);
    QCOMPARE(model.flash, flash->totals);
    QCOMPARE(model.rows[0].standard, double(flash->standardTotals.hbmBytes()));
    QCOMPARE(model.rows[0].flash, double(flash->totals.hbmBytes()));
    QCOMPARE(model.rows[1].flash, double(flash->totals.peakScratchBytes()));
    QCOMPARE(model.rows[2].standard, double(flash->standardTotals.flops));
    QVERIFY(model.flash.hbmBytes() < model.standard.hbmBytes());

    VizSettings standardSettings = toySettings();
    standardSettings.algorithm = Algorithm::Standard;
    const auto standard = sceneOf(standardSettings);
    const ComparisonModel beside = comparisonModel(*standard);
    QCOMPARE(beside.standard, standard->totals);
    QCOMPARE(beside.flash, flash->totals);
}

QTEST_GUILESS_MAIN(TestPresentTile)
#include "tst_present_tile.moc"
