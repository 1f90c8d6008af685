// The models of the tile detail, the check panel, the code panel and the comparison view
// (app/gui/present): built from scenes and frames without a window, they hold the engine's own
// values at each step, the bug's wrong rows and its first wrong step, the backend's record only
// when asked for and recorded, and the Scene's totals; for the forward and for the backward
// (its S, P, dP, dS, L, D, dQ, dK, dV, its GradientCheck, done steps and stored-P trade).
#include "present/check_model.h"
#include "present/code_model.h"
#include "present/comparison_model.h"
#include "present/tile_model.h"
#include "session/scene.h"
#include "session/settings.h"
#include "style/format.h"

#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

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

// The backward on the toy's inputs, as each case of the data-driven tests names it: the plain run,
// shapes the tiles do not divide (n_q ≠ n_k, Br ≠ Bc), causal, float, P stored, each bug switch.
VizSettings backwardSettings(const QString& variant) {
    VizSettings s = toySettings();
    s.algorithm = Algorithm::Backward;
    BackwardOptions& bw = s.options.backward;
    if (variant == QLatin1String("ragged")) {
        s.spec.queries = 10;
        s.spec.keys = 7;
        s.options.blockRows = 4;
        s.options.blockCols = 3;
    }
    if (variant == QLatin1String("causal") || variant == QLatin1String("no-mask-recompute"))
        s.spec.causal = true;
    if (variant == QLatin1String("ragged-causal")) {
        s.spec.queries = 7;
        s.spec.keys = 10;
        s.options.blockRows = 3;
        s.options.blockCols = 4;
        s.spec.causal = true;
    }
    if (variant == QLatin1String("float")) s.spec.precision = Precision::Float;
    s.options.rescale = variant != QLatin1String("no-rescale"); // the forward's bug, read by D
    bw.storeWeights = variant == QLatin1String("store-p");
    bw.subtractRowDot = variant != QLatin1String("no-row-dot");
    bw.useLogSumExp = variant != QLatin1String("no-lse");
    bw.accumulateDq = variant != QLatin1String("overwrite-dq");
    bw.maskRecompute = variant != QLatin1String("no-mask-recompute");
    return s;
}

const char* const kBackwardVariants[] = {
    "plain",      "ragged", "causal",       "ragged-causal",     "float",     "store-p",
    "no-row-dot", "no-lse", "overwrite-dq", "no-mask-recompute", "no-rescale"};

void addBackwardVariants() {
    QTest::addColumn<QString>("variant");
    for (const char* v : kBackwardVariants)
        QTest::newRow(v) << QString::fromLatin1(v);
}

const Matrix& latestOf(const Matrix& after, const Matrix& before) {
    return after.size() ? after : before;
}

Vector rowVector(const Matrix& m, int row) {
    return m.row(row).transpose();
}

// Where a backward step stands in its tile (0 before S; then S, P, dV, dP, dS, dQ, dK), as the
// engine's own order of steps says: the grids must appear from the step that computes them.
int tilePhase(StepKind kind) {
    switch (kind) {
    case StepKind::RecomputeScores:
        return 1;
    case StepKind::RecomputeWeights:
    case StepKind::ReadStoredWeights:
        return 2;
    case StepKind::UpdateValueGradient:
        return 3;
    case StepKind::ComputeWeightGradient:
        return 4;
    case StepKind::ComputeScoreGradient:
        return 5;
    case StepKind::UpdateQueryGradient:
        return 6;
    case StepKind::UpdateKeyGradient:
        return 7;
    default:
        return 0;
    }
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
    void backwardTileValuesAreTheEngines_data() { addBackwardVariants(); }
    void backwardTileValuesAreTheEngines();
    void backwardGridsAppearAtTheirSteps_data() { addBackwardVariants(); }
    void backwardGridsAppearAtTheirSteps();
    void backwardBackendColumnIsTheTrace();
    void backwardCodeLineExecutesTheStep_data() { addBackwardVariants(); }
    void backwardCodeLineExecutesTheStep();
    void backwardCheckIsTheGradientCheck_data() { addBackwardVariants(); }
    void backwardCheckIsTheGradientCheck();
    void backwardCheckCarriesTheFastKernels();
    void checkCarriesTheCpuVerdict();
    void backwardProgressFollowsTheDoneSteps_data() { addBackwardVariants(); }
    void backwardProgressFollowsTheDoneSteps();
    void backwardComparisonTotalsAreTheScenes_data() { addBackwardVariants(); }
    void backwardComparisonTotalsAreTheScenes();
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
        // Where the box is narrow (the lecture's) the formulas alone, not the titles shrunk.
        for (const TileGrid* grid : {&model.scores, &model.weights}) {
            QVERIFY2(grid->title.startsWith(grid->shortTitle + QStringLiteral("  (")), qPrintable(grid->title));
            QVERIFY(grid->shortTitle.startsWith(grid == &model.scores ? QStringLiteral("S = ") : QStringLiteral("P = ")));
        }
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
    // The toy's flash working set (Q, K, V tiles, S, m, ℓ) outgrows standard's 8 × 8 S: the ratio
    // says larger, as the bars show, never "1× smaller".
    QVERIFY(model.rows[1].flash > model.rows[1].standard);
    QVERIFY2(model.rows[1].note.contains(QStringLiteral("larger")), qPrintable(model.rows[1].note));

    VizSettings standardSettings = toySettings();
    standardSettings.algorithm = Algorithm::Standard;
    const auto standard = sceneOf(standardSettings);
    const ComparisonModel beside = comparisonModel(*standard);
    QCOMPARE(beside.standard, standard->totals);
    QCOMPARE(beside.flash, flash->totals);
    // The forward's footnote says its traffic is the counting model's, every tile's trip without
    // L2 (the memory view's strip splits the same trips at L2); the script's backward model is
    // the backward's alone.
    for (const ComparisonModel* m : {&model, &beside})
        QVERIFY2(m->footnote.contains(QStringLiteral("no cache")) && m->footnote.contains(QStringLiteral("L2")) &&
                     !m->footnote.contains(QStringLiteral("demo 5")),
                 qPrintable(m->footnote));
}

// At every step of the backward the grids are the engine's S, P, dP and dS of the tile, and each
// table line lists its query row's L, D and dQ_i and its key row's dK_j and dV_j as the engine
// has them (the pre-pass: every row's dO, O and D); with a bug on, the correct run's value beside
// a value exactly where the two runs differ.
void TestPresentTile::backwardTileValuesAreTheEngines() {
    QFETCH(QString, variant);
    const auto scene = sceneOf(backwardSettings(variant));
    QVERIFY(scene->backward.has_value());
    int lines = 0, corrected = 0, markedGrids = 0;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const StepState& st = frame->state;
        const StepInfo& info = st.info;
        const TileModel model = tileModel(*frame, ViewOptions{});
        const QString where = QStringLiteral("%1 step %2 (%3)")
                                  .arg(variant)
                                  .arg(step)
                                  .arg(QString::fromLatin1(toString(info.kind)));
        QVERIFY2(model.backward, qPrintable(where));
        QVERIFY2(!model.heading.contains(QStringLiteral("-1")), qPrintable(model.heading));
        QCOMPARE(model.scores.values, st.scores);
        QCOMPARE(model.weights.values, st.weights);
        QCOMPARE(model.dWeights.values, st.dP);
        QCOMPARE(model.dScores.values, st.dS);
        // With a bug on, a grid's cells are marked exactly where the correct run's differ.
        const std::pair<const TileGrid*, const Matrix StepState::*> grids[] = {
            {&model.scores, &StepState::scores},
            {&model.weights, &StepState::weights},
            {&model.dWeights, &StepState::dP},
            {&model.dScores, &StepState::dS}};
        for (const auto& [grid, member] : grids) {
            const Matrix& mine = st.*member;
            const Matrix* theirs = frame->correct ? &(*frame->correct.*member) : nullptr;
            const bool differs = theirs && mine.size() > 0 && *theirs != mine;
            QVERIFY2(grid->wrongCells.empty() != differs, qPrintable(where + grid->title));
            for (std::size_t c = 0; c < grid->wrongCells.size(); ++c)
                QCOMPARE(grid->wrongCells[c] != 0, mine.data()[c] != theirs->data()[c]);
            if (differs) ++markedGrids;
        }
        const bool prePass = info.kind == StepKind::ComputeRowDots;
        QCOMPARE(model.hasTable, prePass || info.keyBlock >= 0);
        const StepState* right = frame->correct ? &*frame->correct : nullptr;
        QCOMPARE(right != nullptr, scene->settings.hasBug());
        for (int i = 0; i < int(model.rows.size()); ++i) {
            const TileRow& row = model.rows[std::size_t(i)];
            const bool query = (prePass || info.queryBlock >= 0) && i < info.rows.size();
            const bool key = info.keyBlock >= 0 && i < info.cols.size();
            QCOMPARE(row.row, query ? info.rows.begin + i : -1);
            QCOMPARE(row.key, key ? info.cols.begin + i : -1);
            if (query) {
                QCOMPARE(*row.delta.now, st.delta(i));
                if (prePass) {
                    QCOMPARE(row.dO.now, rowVector(st.dO, i));
                    QCOMPARE(row.output.now, rowVector(st.output, i));
                    // A forward bug's wrong O and D beside the correct run's.
                    QCOMPARE(row.output.correct.size() > 0,
                             right && rowVector(right->output, i) != rowVector(st.output, i));
                    QCOMPARE(row.delta.correct.has_value(),
                             right && right->delta(i) != st.delta(i));
                } else {
                    QCOMPARE(*row.lse.now, st.lse(i));
                    const Matrix& dq = latestOf(st.dQNew, st.dQOld);
                    QCOMPARE(row.dq.now, rowVector(dq, i));
                    QCOMPARE(row.wrong, scene->backward->wrongQueryRow[std::size_t(row.row)] != 0);
                    QCOMPARE(row.dq.changed, info.kind == StepKind::UpdateQueryGradient &&
                                                 rowVector(st.dQNew, i) != rowVector(st.dQOld, i));
                    if (row.dq.changed) QCOMPARE(row.dq.before, rowVector(st.dQOld, i));
                    const bool differs = right && rowVector(latestOf(right->dQNew, right->dQOld),
                                                            i) != rowVector(dq, i);
                    QCOMPARE(row.dq.correct.size() > 0, differs);
                    if (differs) ++corrected;
                }
            }
            if (key) {
                QCOMPARE(row.dk.now, rowVector(latestOf(st.dKNew, st.dKOld), i));
                QCOMPARE(row.dv.now, rowVector(latestOf(st.dVNew, st.dVOld), i));
                QCOMPARE(row.keyWrong, scene->backward->wrongKeyRow[std::size_t(row.key)] != 0);
                QCOMPARE(row.dk.changed, info.kind == StepKind::UpdateKeyGradient &&
                                             rowVector(st.dKNew, i) != rowVector(st.dKOld, i));
                QCOMPARE(row.dv.changed, info.kind == StepKind::UpdateValueGradient &&
                                             rowVector(st.dVNew, i) != rowVector(st.dVOld, i));
                if (right) {
                    const Matrix& dk = latestOf(right->dKNew, right->dKOld);
                    QCOMPARE(row.dk.correct.size() > 0,
                             rowVector(dk, i) != rowVector(latestOf(st.dKNew, st.dKOld), i));
                }
            }
            ++lines;
        }
        if (model.hasTable)
            QCOMPARE(int(model.rows.size()),
                     std::min(prePass ? info.rows.size()
                                      : std::max(info.queryBlock >= 0 ? info.rows.size() : 0,
                                                 info.cols.size()),
                              kTileRowsListed));
    }
    QVERIFY(lines > 0);
    // A bug that bites shows the correct dQ beside the wrong one somewhere.
    if (!scene->backward->check.dq.passed()) QVERIFY2(corrected > 0, qPrintable(variant));
    // Every bug but the overwritten dQ changes a tile: S, P or dS (a forward bug through the L
    // and D the tile reads).
    const BackwardOptions& bw = scene->settings.options.backward;
    const bool changesTile =
        !bw.subtractRowDot || !bw.useLogSumExp || !bw.maskRecompute || !scene->check.passed();
    QCOMPARE(markedGrids > 0, changesTile && !scene->backward->check.passed());
}

// Each grid is empty before the step that computes it within its tile and holds values from that
// step to the tile's end; it is highlighted on its own step only. S is never computed with P
// stored. The focus pair turns to dP and dS once dP exists.
void TestPresentTile::backwardGridsAppearAtTheirSteps() {
    QFETCH(QString, variant);
    const auto scene = sceneOf(backwardSettings(variant));
    const bool stored = scene->settings.options.backward.storeWeights;
    std::array<int, 4> seen{};
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const StepKind kind = frame->state.info.kind;
        const int phase = tilePhase(kind);
        const TileModel model = tileModel(*frame, ViewOptions{});
        // A step without a tile draws no grid; a tile's steps draw all four (or a pair of them).
        const bool tile = frame->state.info.queryBlock >= 0 && frame->state.info.keyBlock >= 0;
        QCOMPARE(int(model.grids().size()), tile ? 4 : 0);
        const std::array<const TileGrid*, 4> grids = {&model.scores, &model.weights,
                                                      &model.dWeights, &model.dScores};
        const std::array<int, 4> from = {stored ? 99 : 1, 2, 4, 5};
        const std::array<bool, 4> own = {
            kind == StepKind::RecomputeScores,
            kind == StepKind::RecomputeWeights || kind == StepKind::ReadStoredWeights,
            kind == StepKind::ComputeWeightGradient, kind == StepKind::ComputeScoreGradient};
        for (std::size_t g = 0; g < 4; ++g) {
            const QString where =
                QStringLiteral("%1 step %2 grid %3").arg(variant).arg(step).arg(grids[g]->title);
            QVERIFY2(grids[g]->computed == (phase >= from[g]), qPrintable(where));
            QVERIFY2(grids[g]->active == own[g], qPrintable(where));
            if (grids[g]->computed) {
                QCOMPARE(grids[g]->firstRow, frame->state.info.rows.begin);
                QCOMPARE(grids[g]->firstCol, frame->state.info.cols.begin);
                ++seen[g];
            }
        }
        QCOMPARE(model.focusPair, phase >= 4 ? 1 : 0);
    }
    QCOMPARE(seen[0] > 0, !stored);
    QVERIFY(seen[1] > 0 && seen[2] > 0 && seen[3] > 0);
}

// With the view option on, the backend's column lists the dQ_i it recorded (the trace's), and at
// the tile's last step its largest difference from the CPU's dQ_i, dK_j, dV_j: none on the CPU.
void TestPresentTile::backwardBackendColumnIsTheTrace() {
    const auto scene = sceneOf(backwardSettings(QStringLiteral("ragged")));
    QVERIFY(scene->backward->trace);
    int compared = 0;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const TileModel hidden = tileModel(*frame, ViewOptions{false});
        QVERIFY(!hasColumn(hidden, TileColumn::Backend));
        const TileModel shown = tileModel(*frame, ViewOptions{true});
        if (!shown.hasTable || frame->state.info.keyBlock < 0) continue;
        QVERIFY(hasColumn(shown, TileColumn::Backend));
        const BackwardTileTrace* trace = frame->backwardTrace;
        for (int i = 0; i < int(shown.rows.size()); ++i) {
            const TileRow& row = shown.rows[std::size_t(i)];
            QCOMPARE(row.backwardBackend.has_value(), trace != nullptr);
            if (!trace) continue;
            if (row.row >= 0) QCOMPARE(row.backwardBackend->dq, rowVector(trace->dQ, i));
            QVERIFY(row.backwardBackend->difference);
            QVERIFY(*row.backwardBackend->difference < 1e-12);
            ++compared;
        }
    }
    QVERIFY(compared > 0);
}

// The highlighted line executes the step for every backward step, with each switch; each bug
// switch changes exactly the line of the step it breaks, store-p strikes S's recompute out and
// reads P instead, and without a switch nothing is marked.
void TestPresentTile::backwardCodeLineExecutesTheStep() {
    QFETCH(QString, variant);
    const VizSettings settings = backwardSettings(variant);
    const auto scene = sceneOf(settings);
    std::set<StepKind> kinds;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const CodeModel model = codeModel(*frame);
        QVERIFY2(model.current >= 0,
                 qPrintable(QStringLiteral("%1 step %2").arg(variant).arg(step)));
        const std::vector<StepKind>& lineKinds = model.lines[std::size_t(model.current)].kinds;
        QVERIFY(std::find(lineKinds.begin(), lineKinds.end(), frame->state.info.kind) !=
                lineKinds.end());
        kinds.insert(frame->state.info.kind);
    }
    QCOMPARE(int(kinds.size()), settings.options.backward.storeWeights ? 11 : 12);
    // The lines a switch marks: a bug's changed line runs the step it breaks; store-p's struck
    // out recompute of S runs at no step at all.
    const std::vector<CodeLine> code = pseudocode(settings);
    std::vector<QString> marked;
    for (const CodeLine& line : code)
        if (line.removed)
            marked.push_back(
                line.kinds.empty() ? line.text : QString::fromLatin1(toString(line.kinds.front())));
    std::vector<QString> expected;
    if (variant == QLatin1String("no-row-dot")) expected = {"compute-score-gradient"};
    if (variant == QLatin1String("no-lse")) expected = {"recompute-weights"};
    if (variant == QLatin1String("overwrite-dq")) expected = {"update-query-gradient"};
    if (variant == QLatin1String("no-mask-recompute")) expected = {"recompute-scores"};
    if (variant == QLatin1String("store-p")) expected = {"S = scale · Q_i K_jᵀ"};
    QCOMPARE(marked, expected);
}

// The check model's verdict, errors and wrong rows are the scene's GradientCheck: dQ's rows are
// query rows, the key rows those where dK or dV is wrong; the step to go to is firstBugStep.
void TestPresentTile::backwardCheckIsTheGradientCheck() {
    QFETCH(QString, variant);
    const auto scene = sceneOf(backwardSettings(variant));
    const GradientCheck& check = scene->backward->check;
    const CheckModel model = checkModel(*makeFrame(scene, 0));
    QVERIFY(model.backward);
    QCOMPARE(model.passed, check.passed());
    QCOMPARE(model.summary, QString::fromStdString(check.summary()));
    QCOMPARE(int(model.gradients.size()), 3);
    const CheckReport* reports[] = {&check.dq, &check.dk, &check.dv};
    for (int g = 0; g < 3; ++g) {
        QCOMPARE(model.gradients[std::size_t(g)].maxAbsDiff, reports[g]->maxAbsDiff);
        QCOMPARE(model.gradients[std::size_t(g)].wrongRows, int(reports[g]->wrongRows.size()));
        QCOMPARE(model.gradients[std::size_t(g)].passed, reports[g]->passed());
    }
    QCOMPARE(model.tolerance, check.dq.tolerance);
    QCOMPARE(model.wrongRows, check.dq.wrongRows);
    std::set<int> keys(check.dk.wrongRows.begin(), check.dk.wrongRows.end());
    keys.insert(check.dv.wrongRows.begin(), check.dv.wrongRows.end());
    QCOMPARE(model.wrongKeyRows, std::vector<int>(keys.begin(), keys.end()));
    QCOMPARE(model.rows, scene->settings.spec.queries);
    QCOMPARE(model.keyRows, scene->settings.spec.keys);
    for (int r = 0; r < model.keyRows; ++r)
        QCOMPARE(model.keyRowMaxDiff(r), std::max(check.dk.rowMaxDiff(r), check.dv.rowMaxDiff(r)));
    QCOMPARE(model.divergenceStep(), scene->backward->firstBugStep);
    // A bug that bites fails loudly and names its first wrong step; none on, nothing named.
    const bool bug = scene->settings.hasBug();
    if (!bug) QVERIFY(model.passed && !model.divergenceStep());
    if (!model.passed) QVERIFY(model.divergenceStep());
    if (variant == QLatin1String("no-row-dot") || variant == QLatin1String("overwrite-dq") ||
        variant == QLatin1String("no-mask-recompute"))
        QVERIFY2(!model.passed, qPrintable(variant));
    if (model.firstBugStep) {
        const StepInfo info = scene->engine->info(*model.firstBugStep);
        QCOMPARE(model.firstBugKind, info.kind);
        QCOMPARE(model.firstBugQueryBlock, info.queryBlock);
        QCOMPARE(model.firstBugKeyBlock, info.keyBlock);
    }
}

// A GPU backend's fast kernels beside the backward (BackwardScene::lowPrecisionCheck): the
// check model hands their judgement and their note on unchanged; a CPU scene has neither.
void TestPresentTile::backwardCheckCarriesTheFastKernels() {
    const auto cpuScene = sceneOf(backwardSettings(QStringLiteral("plain")));
    const CheckModel cpu = checkModel(*makeFrame(cpuScene, 0));
    QVERIFY(!cpu.lowPrecision && cpu.lowPrecisionNote.isEmpty());

    auto scene = std::make_shared<Scene>(*cpuScene);
    BackwardScene& b = *scene->backward;
    Gradients kernel = b.grads;
    kernel.dk(0, 0) += 0.5;
    const Problem problem = makeProblem(scene->settings.spec);
    b.lowPrecisionCheck =
        checkLowPrecisionGradients(problem, b.dO, kernel, HalfType::Fp16, "fwd + bwd");
    const CheckModel model = checkModel(*makeFrame(scene, scene->stepCount() - 1));
    QVERIFY(model.lowPrecision);
    QCOMPARE(model.lowPrecision->kernel, std::string("fwd + bwd"));
    QCOMPARE(model.lowPrecision->dk.kernel, b.lowPrecisionCheck->dk.kernel);
    QVERIFY(!model.lowPrecision->passed());
    QVERIFY(model.passed); // the run shown is still the mirror's, and right

    b.lowPrecisionCheck.reset();
    b.lowPrecisionNote = QStringLiteral("The kernels take head dimensions 64 and 128, not 4.");
    QCOMPARE(checkModel(*makeFrame(scene, 0)).lowPrecisionNote, b.lowPrecisionNote);
}

// The CPU engine's check beside another backend's run: its words and its verdict as a value
// (CheckModel::cpuPassed), which the panel's brief line reads; a CPU run has neither.
void TestPresentTile::checkCarriesTheCpuVerdict() {
    const auto cpuForward = sceneOf(toySettings());
    QVERIFY(checkModel(*makeFrame(cpuForward, 0)).cpuSummary.isEmpty());
    auto forward = std::make_shared<Scene>(*cpuForward);
    forward->cpuCheck = forward->check;
    QVERIFY(forward->cpuCheck->passed());
    QVERIFY(checkModel(*makeFrame(forward, 0)).cpuPassed);
    forward->cpuCheck->wrongRows = {0};
    CheckModel model = checkModel(*makeFrame(forward, 0));
    QCOMPARE(model.cpuSummary, QString::fromStdString(forward->cpuCheck->summary()));
    QVERIFY(!model.cpuPassed);
    QVERIFY(model.passed); // the run shown is still right

    const auto cpuBackward = sceneOf(backwardSettings(QStringLiteral("plain")));
    QVERIFY(checkModel(*makeFrame(cpuBackward, 0)).cpuSummary.isEmpty());
    auto backward = std::make_shared<Scene>(*cpuBackward);
    BackwardScene& b = *backward->backward;
    b.cpuCheck = b.check;
    QVERIFY(checkModel(*makeFrame(backward, 0)).cpuPassed);
    b.cpuCheck->dv.nonFiniteCount = 2;
    model = checkModel(*makeFrame(backward, 0));
    QCOMPARE(model.cpuSummary, QString::fromStdString(b.cpuCheck->summary()));
    QVERIFY(!model.cpuPassed);
    QVERIFY(model.passed);
}

// A key row's dK and dV are final from its key block's store on, a query row's dQ from its
// block's last update; the blocks counted done are those; at the last step everything is final.
void TestPresentTile::backwardProgressFollowsTheDoneSteps() {
    QFETCH(QString, variant);
    const auto scene = sceneOf(backwardSettings(variant));
    const BackwardScene& bw = *scene->backward;
    const FlashOptions& options = scene->settings.options;
    bool sawPartial = false;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        const CheckModel model = checkModel(*frame);
        int keysDone = 0, queriesDone = 0;
        for (int r = 0; r < model.keyRows; ++r) {
            const int done = bw.keyBlockDoneStep[std::size_t(r / options.blockCols)];
            QCOMPARE(model.keyRowFinished[std::size_t(r)] != 0, step >= done);
        }
        for (const int done : bw.keyBlockDoneStep)
            keysDone += step >= done;
        for (int r = 0; r < model.rows; ++r) {
            const int done = bw.queryBlockDoneStep[std::size_t(r / options.blockRows)];
            QCOMPARE(model.rowFinished[std::size_t(r)] != 0, step >= (done >= 0 ? done : 1));
        }
        for (const int done : bw.queryBlockDoneStep)
            queriesDone += step >= (done >= 0 ? done : 1);
        QCOMPARE(model.keyBlocksDone, keysDone);
        QCOMPARE(model.queryBlocksDone, queriesDone);
        const StepInfo& info = frame->state.info;
        const std::vector<CheckBar> keyBars = keyCheckBars(model, model.keyRows);
        for (int r = 0; r < model.keyRows; ++r)
            QCOMPARE(keyBars[std::size_t(r)].current,
                     info.keyBlock >= 0 && r >= info.cols.begin && r < info.cols.end);
        sawPartial = sawPartial || (keysDone > 0 && keysDone < model.keyBlocks);
        if (step == 0) QCOMPARE(model.finishedKeyRows, 0);
        if (step == scene->stepCount() - 1) {
            QCOMPARE(model.finishedKeyRows, model.keyRows);
            QCOMPARE(model.finishedRows, model.rows);
        }
    }
    QVERIFY(sawPartial);
}

// The backward's comparison: the same backward with P stored (BackwardScene::storedWeightsTotals)
// against recomputing it (this run's totals), and the floats the forward leaves in HBM for each.
void TestPresentTile::backwardComparisonTotalsAreTheScenes() {
    QFETCH(QString, variant);
    const auto scene = sceneOf(backwardSettings(variant));
    const ComparisonModel model = comparisonModel(*scene);
    const BackwardScene& bw = *scene->backward;
    const bool stored = scene->settings.options.backward.storeWeights;
    QCOMPARE(model.standard, bw.storedWeightsTotals);
    if (stored) // this run, plus the forward's write of P
        QCOMPARE(model.standard.hbmReadBytes, scene->totals.hbmReadBytes);
    else
        QCOMPARE(model.flash, scene->totals);
    QCOMPARE(model.rows[0].standard, double(model.standard.hbmBytes()));
    QCOMPARE(model.rows[0].flash, double(model.flash.hbmBytes()));
    QCOMPARE(model.rows[2].standard, double(model.standard.flops));
    QCOMPARE(model.rows[2].flash, double(model.flash.flops));
    // This run's stored floats are the scene's; P adds n_q × n_k.
    const auto& spec = scene->settings.spec;
    QCOMPARE(model.rows[1].unit, ComparisonUnit::Floats);
    QCOMPARE(stored ? model.rows[1].standard : model.rows[1].flash, double(bw.storedElements));
    QCOMPARE(model.rows[1].standard - model.rows[1].flash, double(spec.queries) * spec.keys);
    QVERIFY(model.flash.hbmBytes() < model.standard.hbmBytes() || spec.queries * spec.keys < 64);
    QVERIFY(model.flash.flops > model.standard.flops);
    // Beside them, the script's demo-5 model of the same trade, from core's closed form.
    const BackwardComparison script = backwardCosts(spec.queries, spec.headDim);
    QVERIFY2(model.footnote.contains(formatCount(script.standard.storedElements)) &&
                 model.footnote.contains(formatCount(script.flash.storedElements)),
             qPrintable(model.footnote));
}

QTEST_GUILESS_MAIN(TestPresentTile)
#include "tst_present_tile.moc"
