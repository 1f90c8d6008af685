// The memory stage's and the matrices view's models (present/), step by step, from real scenes:
// what HBM holds (S never for FlashAttention, from its write step on for standard attention,
// tile by tile for the debug copy), the tiles in flight, the counters, and where the pieces go.
#include "core/hardware.h"
#include "present/matrices_model.h"
#include "present/stage_model.h"
#include "session/scene.h"
#include "session/settings.h"
#include "style/format.h"

#include <QtTest>

#include <algorithm>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

std::shared_ptr<const Scene> sceneOf(const QString& preset) {
    const Preset* found = findPreset(preset);
    if (!found) qFatal("no preset %s", qPrintable(preset));
    return buildScene(found->settings, nullptr);
}

// The step of the run whose kind is `kind` (standard attention takes each kind once).
int stepOfKind(const Scene& scene, StepKind kind) {
    for (int s = 0; s < scene.stepCount(); ++s)
        if (scene.engine->info(s).kind == kind) return s;
    return -1;
}

const HbmMatrix* inStage(const StageModel& m, MatrixId id) {
    const StageMatrix* found = m.matrix(id);
    return found ? &found->hbm : nullptr;
}

QRect rowsOf(Range rows, int cols) {
    return {0, rows.begin, cols, rows.size()};
}

qint64 area(const std::vector<QRect>& parts) {
    qint64 sum = 0;
    for (const QRect& r : parts)
        sum += qint64(r.width()) * r.height();
    return sum;
}

bool inside(const QRectF& outer, const QRectF& inner) {
    return inner.left() >= outer.left() - 1e-9 && inner.top() >= outer.top() - 1e-9 &&
           inner.right() <= outer.right() + 1e-9 && inner.bottom() <= outer.bottom() + 1e-9;
}

} // namespace

class TestPresentStage : public QObject {
    Q_OBJECT
  private slots:
    void flashNeverStoresS_data();
    void flashNeverStoresS();
    void standardStoresEachMatrixFromItsWriteStep();
    void debugCopyHoldsTheTilesWritten();
    void flightsCarryTheBlockTheStepNames_data();
    void flightsCarryTheBlockTheStepNames();
    void standardRunsOneKernelAtATime();
    void countersAreTheEngines_data();
    void countersAreTheEngines();
    void outputRowsAppearAsBlocksFinish();
    void paperOrderKeepsRunningStateInHbm();
    void wrongRowsAreTheChecks();
    void stageLayoutKeepsEveryPieceInItsPanel_data();
    void stageLayoutKeepsEveryPieceInItsPanel();
    void matricesLayoutIsToScale();
};

void TestPresentStage::flashNeverStoresS_data() {
    QTest::addColumn<QString>("preset");
    for (const char* id : {"toy", "paper-order", "causal", "bug-bites"})
        QTest::newRow(id) << QString::fromLatin1(id);
}

// FlashAttention's S is never in HBM, at any step; only its current tile exists, on chip, and
// the matrices view shows that tile where it would sit in S.
void TestPresentStage::flashNeverStoresS() {
    QFETCH(QString, preset);
    const auto scene = sceneOf(preset);
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const HbmMatrix* S = inStage(stage, MatrixId::S);
        QVERIFY(S);
        QVERIFY2(S->neverStored && S->held.empty() && S->heldWhileMoving.empty(),
                 qPrintable(QStringLiteral("step %1").arg(s)));
        QVERIFY(!inStage(stage, MatrixId::P));
        QVERIFY(stage.matrix(MatrixId::S)->bytes.startsWith(QStringLiteral("0 B")));
        const MatricesModel matrices = makeMatricesModel(*frame);
        QVERIFY(matrices.panel(MatrixId::S)->hbm.neverStored);
        QVERIFY(!matrices.panel(MatrixId::P));
        const StepState& st = frame->state;
        QCOMPARE(matrices.scoreTile.has_value(), st.scores.size() > 0);
        if (matrices.scoreTile)
            QCOMPARE(matrices.scoreTile->part, QRect(st.info.cols.begin, st.info.rows.begin,
                                                     st.info.cols.size(), st.info.rows.size()));
    }
}

// Standard attention's S, P and O appear in HBM after the step that writes each: while that
// step animates S and P fill in, and O arrives as a token.
void TestPresentStage::standardStoresEachMatrixFromItsWriteStep() {
    const auto scene = sceneOf(QStringLiteral("standard"));
    const std::pair<MatrixId, StepKind> writes[] = {{MatrixId::S, StepKind::WriteScores},
                                                    {MatrixId::P, StepKind::WriteWeights},
                                                    {MatrixId::O, StepKind::WriteOutput}};
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const MatricesModel matrices = makeMatricesModel(*frame);
        for (const auto& [id, kind] : writes) {
            const int written = stepOfKind(*scene, kind);
            QVERIFY(written > 0);
            const HbmMatrix& m = *inStage(stage, id);
            const std::vector<QRect> whole{m.whole()};
            const QString where = QStringLiteral("step %1, matrix %2").arg(s).arg(int(id));
            QVERIFY2(!m.neverStored, qPrintable(where));
            QVERIFY2(m.held == (s >= written ? whole : std::vector<QRect>{}), qPrintable(where));
            QVERIFY2(m.heldWhileMoving == (s > written ? whole : std::vector<QRect>{}),
                     qPrintable(where));
            QCOMPARE(m.fillsWhileMoving, id != MatrixId::O && s == written);
            QVERIFY2(matrices.panel(id)->hbm.held == m.held, qPrintable(where));
        }
    }
}

// The debug copy of S: written tile by tile as the scores are computed, whole at the end; the
// memory stage and the matrices view hold the same parts.
void TestPresentStage::debugCopyHoldsTheTilesWritten() {
    const auto scene = sceneOf(QStringLiteral("debug-copy"));
    qint64 before = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const HbmMatrix& S = *inStage(stage, MatrixId::S);
        QVERIFY(!S.neverStored);
        QCOMPARE(S.held, storedScoreRegions(*scene, frame->state.info));
        QCOMPARE(S.heldWhileMoving, S.held);
        QCOMPARE(makeMatricesModel(*frame).panel(MatrixId::S)->hbm.held, S.held);
        QVERIFY(area(S.held) >= before);
        before = area(S.held);
        const StepInfo& info = frame->state.info;
        if (info.kind == StepKind::ComputeScores) {
            const QRect tile(info.cols.begin, info.rows.begin, info.cols.size(), info.rows.size());
            QVERIFY(std::any_of(S.held.begin(), S.held.end(),
                                [&](const QRect& r) { return r.contains(tile); }));
            QVERIFY(std::any_of(
                stage.highlights.begin(), stage.highlights.end(),
                [&](const Highlight& h) { return h.matrix == MatrixId::S && h.part == tile; }));
        }
    }
    QCOMPARE(before, qint64(scene->settings.spec.queries) * scene->settings.spec.keys);
    QVERIFY(!makeMatricesModel(*makeFrame(scene, 0)).scoreTile);
}

void TestPresentStage::flightsCarryTheBlockTheStepNames_data() {
    QTest::addColumn<QString>("preset");
    for (const char* id : {"toy", "paper-order", "causal"})
        QTest::newRow(id) << QString::fromLatin1(id);
}

// At a load step the tile in flight is the block the step names, going to its slot on chip
// (which shows it only once it has landed); at a store step the O rows go back.
void TestPresentStage::flightsCarryTheBlockTheStepNames() {
    QFETCH(QString, preset);
    const auto scene = sceneOf(preset);
    const int d = scene->settings.spec.headDim;
    int loads = 0, stores = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const StepInfo info = scene->engine->info(s);
        const QString where = QStringLiteral("step %1").arg(s);
        switch (info.kind) {
        case StepKind::LoadQuery:
            QCOMPARE(stage.flights.size(), std::size_t(1));
            QCOMPARE(stage.flights[0].direction, HbmTraffic::Read);
            QCOMPARE(stage.flights[0].matrix, MatrixId::Q);
            QCOMPARE(stage.flights[0].hbmPart, rowsOf(info.rows, d));
            QVERIFY(stage.flights[0].chipEnd == ChipEnd(ChipSlot::Query));
            QVERIFY2(stage.arriving(ChipSlot::Query) && !stage.arriving(ChipSlot::Key),
                     qPrintable(where));
            ++loads;
            break;
        case StepKind::LoadKeyValue:
            QCOMPARE(stage.flights.size(), std::size_t(2));
            QCOMPARE(stage.flights[0].matrix, MatrixId::K);
            QCOMPARE(stage.flights[1].matrix, MatrixId::V);
            for (const Flight& f : stage.flights) {
                QCOMPARE(f.direction, HbmTraffic::Read);
                QCOMPARE(f.hbmPart, rowsOf(info.cols, d));
            }
            QVERIFY(stage.arriving(ChipSlot::Key) && stage.arriving(ChipSlot::Value));
            QVERIFY(!stage.arriving(ChipSlot::Query));
            ++loads;
            break;
        case StepKind::StoreOutput:
        case StepKind::StoreRunningState:
            QCOMPARE(stage.flights.size(), std::size_t(1));
            QCOMPARE(stage.flights[0].direction, HbmTraffic::Write);
            QCOMPARE(stage.flights[0].matrix, MatrixId::O);
            QCOMPARE(stage.flights[0].hbmPart, rowsOf(info.rows, d));
            QVERIFY(stage.flights[0].chipEnd == ChipEnd(ChipSlot::Accumulator));
            QVERIFY(!stage.arriving(ChipSlot::Accumulator));
            ++stores;
            break;
        case StepKind::ComputeScores:
        case StepKind::UpdateMax:
        case StepKind::ComputeWeights:
        case StepKind::UpdateSum:
        case StepKind::UpdateOutput:
        case StepKind::Normalise:
            QVERIFY2(stage.flights.empty(), qPrintable(where));
            break;
        default:
            break;
        }
    }
    QVERIFY(loads > 0 && stores > 0);
}

// One kernel of standard attention is active at each step, and whole matrices travel to it.
void TestPresentStage::standardRunsOneKernelAtATime() {
    const auto scene = sceneOf(QStringLiteral("standard"));
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const StepKind kind = scene->engine->info(s).kind;
        QVERIFY(stage.tiles.empty());
        QCOMPARE(stage.kernels.size(), std::size_t(3));
        QCOMPARE(std::count_if(stage.kernels.begin(), stage.kernels.end(),
                               [](const StageKernel& k) { return k.active; }),
                 1);
        for (const StageKernel& k : stage.kernels)
            QCOMPARE(k.active, standardKernelOf(kind) == k.kernel);
        for (const Flight& f : stage.flights) {
            QVERIFY(f.chipEnd == ChipEnd(*standardKernelOf(kind)));
            QCOMPARE(f.hbmPart, stage.matrix(f.matrix)->hbm.whole());
        }
        if (kind == StepKind::ReadInputs) QCOMPARE(stage.flights.size(), std::size_t(3));
        if (kind == StepKind::WriteOutput) {
            QCOMPARE(stage.flights.size(), std::size_t(1));
            QCOMPARE(stage.flights[0].direction, HbmTraffic::Write);
        }
    }
}

void TestPresentStage::countersAreTheEngines_data() {
    QTest::addColumn<QString>("preset");
    for (const char* id : {"toy", "standard", "debug-copy", "causal"})
        QTest::newRow(id) << QString::fromLatin1(id);
}

// The counters are the frame's engine counters, ticking from the previous step's; the bus shows
// the traffic of this step; the SRAM fill is the engine's working set against the budget.
void TestPresentStage::countersAreTheEngines() {
    QFETCH(QString, preset);
    const auto scene = sceneOf(preset);
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const Counters& now = frame->state.counters;
        QCOMPARE(stage.now, scene->engine->countersThrough(s));
        QCOMPARE(stage.before, s > 0 ? scene->engine->countersThrough(s - 1) : Counters{});
        QCOMPARE(stage.counters(1.0).read.value, formatBytes(double(now.hbmReadBytes)));
        QCOMPARE(stage.counters(1.0).written.value, formatBytes(double(now.hbmWriteBytes)));
        QCOMPARE(stage.counters(1.0).flops.value, formatFlops(double(now.flops)));
        QCOMPARE(stage.counters(0.0).read.value, formatBytes(double(frame->before.hbmReadBytes)));
        QCOMPARE(stage.bus.reading, now.hbmReadBytes > frame->before.hbmReadBytes);
        QCOMPARE(stage.bus.writing, now.hbmWriteBytes > frame->before.hbmWriteBytes);
        QCOMPARE(stage.counters(1.0).read.active, stage.bus.reading);
        QCOMPARE(stage.sram.usedBytes, double(frame->state.sramElements * kBytesPerElement));
        QVERIFY(!stage.sram.over);
        // The time cell: the run's FLOPs per HBM byte so far, against the GPU's fp32 ridge point.
        QCOMPARE(stage.ridge, ridgeFlopsPerByte(scene->hardware, Arithmetic::Fp32CudaCores));
        const double bytes = double(now.hbmBytes());
        const QString intensity = QString::number(double(now.flops) / bytes, 'g', 3);
        if (bytes > 0)
            QVERIFY2(stage.counters(1.0).time.note.startsWith(intensity + QStringLiteral(" FLOP/B")),
                     qPrintable(stage.counters(1.0).time.note));
        QVERIFY2(stage.counters(1.0).time.note.contains(QString::number(stage.ridge, 'g', 3)),
                 qPrintable(stage.counters(1.0).time.note));
    }
    QCOMPARE(makeStageModel(*makeFrame(scene, 0)).totals, scene->totals);
}

// O rows reach HBM as their query block finishes (not before, and not while they are in
// flight); in the end all of them.
void TestPresentStage::outputRowsAppearAsBlocksFinish() {
    const auto scene = sceneOf(QStringLiteral("causal"));
    qint64 before = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const HbmMatrix& O = *inStage(stage, MatrixId::O);
        QVERIFY(area(O.held) >= before);
        before = area(O.held);
        QVERIFY(area(O.heldWhileMoving) <= area(O.held));
        if (frame->state.info.kind == StepKind::StoreOutput)
            QCOMPARE(area(O.held) - area(O.heldWhileMoving),
                     qint64(frame->state.info.rows.size()) * O.cols);
        QCOMPARE(makeMatricesModel(*frame).panel(MatrixId::O)->hbm.held, O.held);
    }
    QCOMPARE(before, qint64(scene->settings.spec.queries) * scene->settings.spec.headDim);
}

// The paper order writes O = 0, m = −∞, ℓ = 0 for every row at step 0 and each block's O_i, m_i,
// ℓ_i back after every key block: from step 1 on HBM holds every row of O (a running value until
// the row is final) and of m and ℓ; the explainer's order keeps them on chip (no m, ℓ in HBM).
void TestPresentStage::paperOrderKeepsRunningStateInHbm() {
    const auto scene = sceneOf(QStringLiteral("paper-order"));
    const ProblemSpec& spec = scene->settings.spec;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const HbmMatrix& O = *inStage(stage, MatrixId::O);
        QCOMPARE(area(O.held) + area(O.running), qint64(spec.queries) * spec.headDim);
        for (const MatrixId id : {MatrixId::M, MatrixId::L}) {
            const HbmMatrix* stat = inStage(stage, id);
            QVERIFY(stat);
            QCOMPARE(area(stat->running), qint64(spec.queries));
            QCOMPARE(area(stat->runningWhileMoving), s == 0 ? 0 : qint64(spec.queries));
        }
        const StepKind kind = makeFrame(scene, s)->state.info.kind;
        const bool movesState =
            kind == StepKind::LoadRunningState || kind == StepKind::StoreRunningState;
        const auto touches = [&](MatrixId id) {
            return std::any_of(stage.highlights.begin(), stage.highlights.end(),
                               [id](const Highlight& h) { return h.matrix == id; });
        };
        if (movesState) QVERIFY(touches(MatrixId::M) && touches(MatrixId::L));
    }
    const StageModel explainer = makeStageModel(*makeFrame(sceneOf(QStringLiteral("toy")), 5));
    QVERIFY(!inStage(explainer, MatrixId::M));
    QVERIFY(inStage(explainer, MatrixId::O)->running.empty());
}

void TestPresentStage::wrongRowsAreTheChecks() {
    VizSettings bug = findPreset(QStringLiteral("bug-bites"))->settings;
    const auto scene = buildScene(bug, nullptr);
    const MatricesModel m = makeMatricesModel(*makeFrame(scene, scene->stepCount() - 1));
    QVERIFY(!m.wrongRows.empty());
    QCOMPARE(m.wrongRows, scene->check.wrongRows);
    int runRows = 0;
    for (const Range& run : m.wrongRowRuns) {
        runRows += run.size();
        for (int row = run.begin; row < run.end; ++row)
            QVERIFY(scene->isRowWrong(row));
    }
    QCOMPARE(std::size_t(runRows), m.wrongRows.size());
    QVERIFY(m.note.contains(QStringLiteral("Red marks")));
    QVERIFY(makeMatricesModel(*makeFrame(sceneOf(QStringLiteral("toy")), 0)).wrongRows.empty());
}

void TestPresentStage::stageLayoutKeepsEveryPieceInItsPanel_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QSize>("size");
    for (const char* id : {"toy", "standard", "debug-copy", "long", "paper-order"}) {
        QTest::newRow(qPrintable(QStringLiteral("%1 860x420").arg(id)))
            << QString::fromLatin1(id) << QSize(860, 420);
        // The view's minimum size: the matrices stay in their panel, off the bus's arrows.
        QTest::newRow(qPrintable(QStringLiteral("%1 480x240").arg(id)))
            << QString::fromLatin1(id) << QSize(480, 240);
        QTest::newRow(qPrintable(QStringLiteral("%1 1366x500").arg(id)))
            << QString::fromLatin1(id) << QSize(1366, 500);
    }
}

void TestPresentStage::stageLayoutKeepsEveryPieceInItsPanel() {
    QFETCH(QString, preset);
    QFETCH(QSize, size);
    const auto scene = sceneOf(preset);
    const Theme theme = Theme::desktop();
    for (int s = 0; s < std::min(scene->stepCount(), 40); ++s) {
        const StageModel m = makeStageModel(*makeFrame(scene, s));
        const StageLayout l = layOutStage(m, QRectF(QPointF(0, 0), QSizeF(size)), theme);
        QCOMPARE(l.matrices.size(), m.matrices.size());
        QCOMPARE(l.tiles.size(), m.tiles.size());
        QCOMPARE(l.kernels.size(), m.kernels.size());
        QCOMPARE(l.highlights.size(), m.highlights.size());
        QCOMPARE(l.flights.size(), m.flights.size());
        QVERIFY(inside(l.hbmBox, l.hbmContent) && inside(l.chipBox, l.chipContent));
        QVERIFY(l.hbmBox.right() <= l.bus.left() + 1e-9 &&
                l.bus.right() <= l.chipBox.left() + 1e-9);
        QVERIFY(l.hbmBox.bottom() < l.counterStrip.top());
        const QFontMetricsF small(theme.font(8));
        for (std::size_t i = 0; i < l.matrices.size(); ++i) {
            const MatrixPlace& p = l.matrices[i];
            QVERIFY(inside(l.hbmContent, p.rect));
            for (const ImagePart& part : p.held)
                QVERIFY(inside(p.rect, part.target));
            // The bytes line is whole: "0 B (std: 512 B)" where it fits, else "0 B" (it read
            // "0 B (std…" under the paper order's narrow S, P box).
            const QString& bytes = p.bytesShort ? m.matrices[i].bytesShort : m.matrices[i].bytes;
            QVERIFY2(small.horizontalAdvance(bytes) <= p.bytesRect.width() ||
                         small.horizontalAdvance(m.matrices[i].bytesShort) > p.bytesRect.width(),
                     qPrintable(bytes));
        }
        for (const gui::TilePlace& t : l.tiles)
            QVERIFY(t.rect.top() >= l.chipContent.top() && t.rect.left() >= l.chipContent.left());
        for (const QRectF& k : l.kernels)
            QVERIFY(inside(l.chipContent, k) && k.bottom() <= l.sramBar.top());
        QVERIFY(inside(l.chipContent, l.sramBar));
        for (const FlightPath& f : l.flights)
            QVERIFY(!f.from.isNull() && !f.to.isNull());
        for (const CounterPlace* c :
             {&l.counters.read, &l.counters.written, &l.counters.flops, &l.counters.time})
            QVERIFY(inside(l.counterStrip, c->value));
        QVERIFY(l.counters.read.value.right() <= l.counters.written.value.left());
    }
}

// Matrices of one problem are drawn to one scale: K is as tall as Q when n_k = n_q, and S as wide
// as the keys are many.
void TestPresentStage::matricesLayoutIsToScale() {
    const auto scene = sceneOf(QStringLiteral("standard-256"));
    const MatricesModel m = makeMatricesModel(*makeFrame(scene, 0));
    const MatricesLayout l = layOutMatrices(m, QRectF(0, 0, 1200, 500), Theme::desktop());
    QCOMPARE(l.panels.size(), m.panels.size());
    const QRectF q = l.panels[0].rect, s = l.panels[4].rect;
    QCOMPARE(m.panels[4].hbm.id, MatrixId::S);
    QVERIFY(qAbs(q.height() - s.height()) < 1e-6);
    QVERIFY(s.width() > 4 * q.width());
    for (std::size_t i = 1; i < l.panels.size(); ++i)
        QVERIFY(l.panels[i - 1].rect.right() < l.panels[i].rect.left());
    QVERIFY(l.note.top() >= s.bottom());
}

QTEST_MAIN(TestPresentStage)
#include "tst_present_stage.moc"
