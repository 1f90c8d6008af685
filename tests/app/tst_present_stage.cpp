// The memory stage's and the matrices view's models (present/), step by step, from real scenes:
// what HBM holds (S never for FlashAttention, from its write step on for standard attention,
// tile by tile for the debug copy; the backward's dQ running until its last key block, dK and
// dV from their store on), the tiles in flight, the counters, the wrong rows, and where the
// pieces go.
#include "core/hardware.h"
#include "present/matrices_model.h"
#include "present/stage_model.h"
#include "session/scene.h"
#include "session/settings.h"
#include "style/format.h"
#include "style/theme.h"

#include "core/units.h"

#include <QtTest>

#include <algorithm>
#include <map>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

const VizSettings& presetSettings(const QString& preset) {
    const Preset* found = findPreset(preset);
    if (!found) qFatal("no preset %s", qPrintable(preset));
    return found->settings;
}

// Built once per preset: several tests and sizes look at the same scene (n = 4096 among them).
std::shared_ptr<const Scene> sceneOf(const QString& preset) {
    static std::map<QString, std::shared_ptr<const Scene>> built;
    auto& scene = built[preset];
    if (!scene) scene = buildScene(presetSettings(preset), nullptr);
    return scene;
}

// A backward preset with the switches named (as on the command lines: "store-p",
// "overwrite-dq", ...) switched on.
std::shared_ptr<const Scene> backwardScene(const QString& preset, const QStringList& switches) {
    VizSettings settings = presetSettings(preset);
    for (const QString& name : switches) {
        const auto& all = backwardSwitches();
        const auto found = std::find_if(all.begin(), all.end(), [&](const BackwardSwitch& s) {
            return name == QLatin1String(s.name);
        });
        if (found == all.end()) qFatal("no backward switch %s", qPrintable(name));
        settings.options.backward.*(found->field) = found->onValue;
    }
    return buildScene(settings, nullptr);
}

// The backward presets and variants the data-driven tests run: the toy, a causal ragged problem
// with a bug, P stored, dQ overwritten, n_q ≠ n_k with Br ≠ Bc.
void addBackwardRows() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QStringList>("switches");
    QTest::newRow("backward") << QStringLiteral("backward") << QStringList();
    QTest::newRow("backward-causal") << QStringLiteral("backward-causal") << QStringList();
    QTest::newRow("store-p") << QStringLiteral("backward") << QStringList{"store-p"};
    QTest::newRow("overwrite-dq") << QStringLiteral("backward") << QStringList{"overwrite-dq"};
    QTest::newRow("causal store-p") << QStringLiteral("backward-causal") << QStringList{"store-p"};
}

// Per query block (or key block) the last step of `kind` in it, found by scanning the engine's
// steps: what the stage must agree with (-1 for a block without one).
std::vector<int> lastStepOfEachBlock(const Scene& scene, StepKind kind, bool byQueryBlock) {
    std::vector<int> last(
        std::size_t(byQueryBlock ? scene.engine->queryBlockCount() : scene.engine->keyBlockCount()),
        -1);
    for (int s = 0; s < scene.stepCount(); ++s) {
        const StepInfo info = scene.engine->info(s);
        if (info.kind == kind)
            last[std::size_t(byQueryBlock ? info.queryBlock : info.keyBlock)] = s;
    }
    return last;
}

// The rows of a matrix `parts` covers, one flag a row.
std::vector<bool> rowsCovered(const std::vector<QRect>& parts, int rows, int cols) {
    std::vector<bool> covered(std::size_t(rows), false);
    for (const QRect& part : parts) {
        if (part.left() != 0 || part.width() != cols) qFatal("not a part of whole rows");
        for (int r = part.top(); r <= part.bottom(); ++r)
            covered[std::size_t(r)] = true;
    }
    return covered;
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

// Where a one-line text drawn by drawFittedText lies: shrunk from its font down to 6 pt to fit
// its box; null when even 6 pt does not fit (it would be elided: cut).
QRectF fittedInk(const QRectF& box, const QString& text, QFont font, Qt::Alignment align) {
    qreal width = QFontMetricsF(font).horizontalAdvance(text);
    while (font.pointSizeF() > 6.0 && width > box.width()) {
        font.setPointSizeF(font.pointSizeF() - 0.5);
        width = QFontMetricsF(font).horizontalAdvance(text);
    }
    if (width > box.width() + 0.5) return {};
    const qreal left = align & Qt::AlignHCenter ? box.center().x() - width / 2 : box.left();
    return {left, box.top(), width, std::min(box.height(), QFontMetricsF(font).height())};
}

// Whether a word-wrapped text drawn by drawFittedText is whole in its box: at its font or smaller,
// down to 6 pt (below that it is drawn on one line, elided).
bool wrappedFits(const QRectF& box, const QString& text, QFont font) {
    for (;; font.setPointSizeF(font.pointSizeF() - 0.5)) {
        const QRectF used = QFontMetricsF(font).boundingRect(box, Qt::TextWordWrap, text);
        if (used.height() <= box.height() && used.width() <= box.width() + 0.5) return true;
        if (font.pointSizeF() <= 6.0) return false;
    }
}

// What is cut or overlaps in a laid-out memory stage ("" when nothing): a matrix, tile or label
// outside its panel, a label that cannot be read whole, two pieces on top of each other.
QString stageLayoutProblems(const StageModel& m, const StageLayout& l, const Theme& theme) {
    QStringList problems;
    const auto overlap = [](const QRectF& a, const QRectF& b) {
        return a.intersected(b).width() > 0.5 && a.intersected(b).height() > 0.5;
    };
    std::vector<std::pair<QRectF, QString>> hbmPieces; // matrices and their labels' ink
    for (std::size_t i = 0; i < l.matrices.size(); ++i) {
        const MatrixPlace& p = l.matrices[i];
        const StageMatrix& matrix = m.matrices[i];
        if (!inside(l.hbmContent, p.rect)) problems << matrix.name + QStringLiteral(" outside HBM");
        hbmPieces.emplace_back(p.rect, matrix.name);
        const std::pair<QRectF, QString> labels[] = {
            {p.nameRect, matrix.name},
            {p.shapeRect, matrix.shape},
            {p.bytesRect, p.bytesShort ? matrix.bytesShort : matrix.bytes}};
        for (const auto& [box, text] : labels) {
            if (box.isNull()) continue; // the shape line, where there is no room for it
            const QRectF ink =
                fittedInk(box, text, theme.font(box == p.nameRect ? 8.5 : 8, box == p.nameRect),
                          Qt::AlignHCenter);
            if (ink.isNull() || !inside(l.hbmBox, ink))
                problems << QStringLiteral("'%1' cut").arg(text);
            else
                hbmPieces.emplace_back(ink, text);
        }
    }
    for (std::size_t a = 0; a < hbmPieces.size(); ++a)
        for (std::size_t b = a + 1; b < hbmPieces.size(); ++b)
            if (overlap(hbmPieces[a].first, hbmPieces[b].first))
                problems << QStringLiteral("'%1' over '%2'")
                                .arg(hbmPieces[a].second, hbmPieces[b].second);
    std::vector<std::pair<QRectF, QString>> chipPieces;
    for (std::size_t i = 0; i < l.tiles.size(); ++i) {
        const gui::TilePlace& t = l.tiles[i];
        const QString& name = m.tiles[i].name;
        if (!inside(l.chipContent, t.rect) || t.rect.bottom() > l.sramBar.top())
            problems << name + QStringLiteral(" outside the chip");
        const QRectF ink = fittedInk(t.labelRect, name, theme.font(7.5, true), Qt::AlignLeft);
        if (ink.isNull() || !inside(l.chipBox, ink))
            problems << QStringLiteral("'%1' cut").arg(name);
        chipPieces.emplace_back(t.rect, name);
        if (!ink.isNull()) chipPieces.emplace_back(ink, name + QStringLiteral(" label"));
    }
    for (std::size_t a = 0; a < chipPieces.size(); ++a)
        for (std::size_t b = a + 1; b < chipPieces.size(); ++b)
            if (overlap(chipPieces[a].first, chipPieces[b].first))
                problems << QStringLiteral("'%1' over '%2'")
                                .arg(chipPieces[a].second, chipPieces[b].second);
    // A step that reads and writes (dQ_i's round trip) shows both lanes' words apart.
    if (overlap(l.readLane.amountRect, l.writeLane.labelRect))
        problems << QStringLiteral("the read's amount over the write's label");
    return problems.join(QStringLiteral("; "));
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
    void backwardFlightsCarryTheBlockTheStepNames_data();
    void backwardFlightsCarryTheBlockTheStepNames();
    void queryGradientRunsUntilItsLastKeyBlock_data();
    void queryGradientRunsUntilItsLastKeyBlock();
    void keyGradientsAppearWhenStored_data();
    void keyGradientsAppearWhenStored();
    void backwardStoresSAndPOnlyWhenAsked_data();
    void backwardStoresSAndPOnlyWhenAsked();
    void backwardTilesHoldWhatTheStepMade_data();
    void backwardTilesHoldWhatTheStepMade();
    void backwardMatricesFadeWhatIsNotFinal_data();
    void backwardMatricesFadeWhatIsNotFinal();
    void backwardWrongRowsAreTheChecks();
    void l2SplitsTheStepsTraffic();
    void backwardReadsFromL2WhatThePrePassLeft();
    void l2HasItsPlaceInTheBus_data();
    void l2HasItsPlaceInTheBus();
    void measuredLaunchIsTheShippedCounters();
    void windowSizesKeepEveryPieceInItsPanel_data();
    void windowSizesKeepEveryPieceInItsPanel();
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
    for (const char* id :
         {"toy", "standard", "debug-copy", "causal", "backward", "backward-causal", "backward-bug"})
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
        // Two levels on a GPU with L2: what the chip moves to and from L2 · what reaches HBM.
        QVERIFY(stage.l2 && scene->l2);
        const DramTraffic hbm = scene->l2->through(s), hbmBefore = scene->l2->through(s - 1);
        const auto pair = [](std::uint64_t a, std::uint64_t b) {
            return formatBytes(double(a)) + QStringLiteral(" · ") + formatBytes(double(b));
        };
        QCOMPARE(stage.l2->now, hbm);
        QCOMPARE(stage.l2->before, hbmBefore);
        QCOMPARE(stage.counters(1.0).read.value, pair(now.hbmReadBytes, hbm.readBytes));
        QCOMPARE(stage.counters(1.0).written.value, pair(now.hbmWriteBytes, hbm.writeBytes));
        QCOMPARE(stage.counters(1.0).flops.value, formatFlops(double(now.flops)));
        // The counting model's FLOPs are the matmuls': a step of elementwise work (the backward's
        // row dots) adds none, and the title says whose they are.
        QCOMPARE(stage.counters(1.0).flops.label, QStringLiteral("matmul FLOPs"));
        QCOMPARE(stage.counters(0.0).read.value,
                 pair(frame->before.hbmReadBytes, hbmBefore.readBytes));
        QCOMPARE(stage.l2->bus.reading, hbm.readBytes > hbmBefore.readBytes);
        QCOMPARE(stage.l2->bus.writing, hbm.writeBytes > hbmBefore.writeBytes);
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
            QVERIFY2(
                stage.counters(1.0).time.note.startsWith(intensity + QStringLiteral(" FLOP/B")),
                qPrintable(stage.counters(1.0).time.note));
        QVERIFY2(stage.counters(1.0).time.note.contains(QString::number(stage.ridge, 'g', 3)),
                 qPrintable(stage.counters(1.0).time.note));
    }
    const StageModel first = makeStageModel(*makeFrame(scene, 0));
    QCOMPARE(first.totals, scene->totals);
    // The backward's FLOPs beside the other side of its own trade: P stored, or recomputed.
    if (scene->isBackward()) {
        const auto& spec = scene->settings.spec;
        const BackwardTrade trade = backwardTrade(spec.queries, spec.keys, spec.headDim,
                                                  spec.causal, scene->settings.options);
        const bool stored = scene->settings.options.backward.storeWeights;
        const QString note = first.counters(1.0).flops.note;
        QVERIFY2(note.contains(formatFlops(double((stored ? trade.recompute : trade.stored).flops))),
                 qPrintable(note));
        QVERIFY2(note.contains(stored ? QStringLiteral("recomputed") : QStringLiteral("P stored")),
                 qPrintable(note));
    }
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
    QCOMPARE(m.wrongRows.size(), std::size_t(1));
    QCOMPARE(m.wrongRows[0].beside, MatrixId::O);
    QVERIFY(!m.wrongRows[0].rows.empty());
    QCOMPARE(m.wrongRows[0].rows, scene->check.wrongRows);
    int runRows = 0;
    for (const Range& run : m.wrongRows[0].runs) {
        runRows += run.size();
        for (int row = run.begin; row < run.end; ++row)
            QVERIFY(scene->isRowWrong(row));
    }
    QCOMPARE(std::size_t(runRows), m.wrongRows[0].rows.size());
    QVERIFY(m.note.contains(QStringLiteral("Red marks")));
    QVERIFY(makeMatricesModel(*makeFrame(sceneOf(QStringLiteral("toy")), 0)).wrongRows.empty());
}

void TestPresentStage::stageLayoutKeepsEveryPieceInItsPanel_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QSize>("size");
    for (const char* id : {"toy", "standard", "debug-copy", "long", "paper-order", "backward",
                           "backward-causal", "backward-long"}) {
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
        // At the view's minimum size the forward's labels shrink to their floor and may be cut;
        // from 860 x 420 on nothing is.
        const QString problems = stageLayoutProblems(m, l, theme);
        if (size.width() >= 860 || scene->isBackward())
            QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("step %1: ").arg(s) + problems));
        for (const QRectF& k : l.kernels)
            QVERIFY(inside(l.chipContent, k) && k.bottom() <= l.sramBar.top());
        QVERIFY(inside(l.chipContent, l.sramBar));
        for (const FlightPath& f : l.flights)
            QVERIFY(!f.hbm.isNull() && !f.chip.isNull());
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

void TestPresentStage::backwardFlightsCarryTheBlockTheStepNames_data() {
    addBackwardRows();
}

// Every backward step that moves data has its flights: the block the step names, between its
// matrix and its slot, in the direction the engine counts (bytes read: a flight up; bytes
// written: a flight down; dQ_i's read-add-write a round trip); the steps on chip have none.
void TestPresentStage::backwardFlightsCarryTheBlockTheStepNames() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const ProblemSpec& spec = scene->settings.spec;
    const BackwardOptions& options = scene->settings.options.backward;
    const int d = spec.headDim;
    const auto flightOf = [](const StageModel& stage, MatrixId id) -> const Flight* {
        for (const Flight& f : stage.flights)
            if (f.matrix == id) return &f;
        return nullptr;
    };
    const auto carries = [&](const StageModel& stage, MatrixId id, HbmTraffic direction,
                             const QRect& part, ChipEnd end) {
        const Flight* f = flightOf(stage, id);
        return f && f->direction == direction && f->hbmPart == part && f->chipEnd == end;
    };
    QSet<StepKind> seen;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StageModel stage = makeStageModel(*frame);
        const StepInfo& info = frame->state.info;
        const QString where = QStringLiteral("step %1 (%2)").arg(s).arg(toString(info.kind));
        seen.insert(info.kind);
        // The directions are the engine's counts of this step.
        bool up = false, down = false;
        for (const Flight& f : stage.flights) {
            up |= f.direction == HbmTraffic::Read || f.direction == HbmTraffic::ReadWrite;
            down |= f.direction == HbmTraffic::Write || f.direction == HbmTraffic::ReadWrite;
        }
        QVERIFY2(up == (stage.now.hbmReadBytes > stage.before.hbmReadBytes), qPrintable(where));
        QVERIFY2(down == (stage.now.hbmWriteBytes > stage.before.hbmWriteBytes), qPrintable(where));
        const QRect queryRows = rowsOf(info.rows, d), keyRows = rowsOf(info.cols, d);
        switch (info.kind) {
        case StepKind::ComputeRowDots: {
            QCOMPARE(stage.flights.size(), std::size_t(3));
            QVERIFY(carries(stage, MatrixId::O, HbmTraffic::Read, QRect(0, 0, d, spec.queries),
                            ChipCentre{}));
            QVERIFY(carries(stage, MatrixId::dO, HbmTraffic::Read, QRect(0, 0, d, spec.queries),
                            ChipCentre{}));
            QVERIFY(carries(stage, MatrixId::RowDot, HbmTraffic::Write,
                            QRect(0, 0, 1, spec.queries), ChipCentre{}));
            // O and dO are read before D is written.
            QVERIFY(flightOf(stage, MatrixId::O)->lands <=
                    flightOf(stage, MatrixId::RowDot)->departs);
            QVERIFY(!flightOf(stage, MatrixId::RowDot)->position(0.25));
            QVERIFY(!flightOf(stage, MatrixId::O)->position(0.75));
            break;
        }
        case StepKind::InitialiseQueryGradient:
            QCOMPARE(stage.flights.size(), std::size_t(1));
            QVERIFY(carries(stage, MatrixId::dQ, HbmTraffic::Write, QRect(0, 0, d, spec.queries),
                            ChipCentre{}));
            break;
        case StepKind::LoadKeyValue:
            QCOMPARE(stage.flights.size(), std::size_t(2));
            QVERIFY(carries(stage, MatrixId::K, HbmTraffic::Read, keyRows, ChipSlot::Key));
            QVERIFY(carries(stage, MatrixId::V, HbmTraffic::Read, keyRows, ChipSlot::Value));
            QVERIFY(stage.arriving(ChipSlot::Key) && !stage.arriving(ChipSlot::Query));
            break;
        case StepKind::LoadQueryGradient:
            QCOMPARE(stage.flights.size(), std::size_t(options.storeWeights ? 3 : 4));
            QVERIFY(carries(stage, MatrixId::Q, HbmTraffic::Read, queryRows, ChipSlot::Query));
            QVERIFY(carries(stage, MatrixId::dO, HbmTraffic::Read, queryRows,
                            ChipSlot::OutputGradient));
            QVERIFY(carries(stage, MatrixId::RowDot, HbmTraffic::Read, rowsOf(info.rows, 1),
                            ChipSlot::RowDot));
            // With P stored L is never needed.
            QCOMPARE(carries(stage, MatrixId::LogSumExp, HbmTraffic::Read, rowsOf(info.rows, 1),
                             ChipSlot::LogSumExp),
                     !options.storeWeights);
            QVERIFY(!stage.arriving(ChipSlot::Key));
            break;
        case StepKind::ReadStoredWeights:
            QCOMPARE(stage.flights.size(), std::size_t(1));
            QVERIFY(
                carries(stage, MatrixId::P, HbmTraffic::Read,
                        QRect(info.cols.begin, info.rows.begin, info.cols.size(), info.rows.size()),
                        ChipSlot::Weights));
            break;
        case StepKind::UpdateQueryGradient: {
            QCOMPARE(stage.flights.size(), std::size_t(1));
            // Read, added to and written back; overwritten (nothing read) with the bug.
            const HbmTraffic trip =
                options.accumulateDq ? hbmTrafficOf(info.kind) : HbmTraffic::Write;
            QVERIFY2(carries(stage, MatrixId::dQ, trip, queryRows, ChipSlot::QueryGradient),
                     qPrintable(where));
            const Flight& f = stage.flights[0];
            if (options.accumulateDq) {
                QCOMPARE(trip, HbmTraffic::ReadWrite);
                QCOMPARE(*f.position(0.0), 0.0);
                QCOMPARE(*f.position(0.5), 1.0);
                QCOMPARE(*f.position(1.0), 0.0);
                QVERIFY(!f.returning(0.25) && f.returning(0.75));
                QVERIFY(!f.image.isNull() && !f.returnImage.isNull());
                QVERIFY(stage.arriving(ChipSlot::QueryGradient));
            }
            break;
        }
        case StepKind::StoreKeyValueGradient:
            QCOMPARE(stage.flights.size(), std::size_t(2));
            QVERIFY(
                carries(stage, MatrixId::dK, HbmTraffic::Write, keyRows, ChipSlot::KeyGradient));
            QVERIFY(
                carries(stage, MatrixId::dV, HbmTraffic::Write, keyRows, ChipSlot::ValueGradient));
            QCOMPARE(*stage.flights[0].position(0.0), 1.0); // it starts on chip
            break;
        default:
            QVERIFY2(stage.flights.empty(), qPrintable(where));
            break;
        }
    }
    for (const StepKind kind : {StepKind::ComputeRowDots, StepKind::InitialiseQueryGradient,
                                StepKind::LoadKeyValue, StepKind::LoadQueryGradient,
                                StepKind::UpdateQueryGradient, StepKind::StoreKeyValueGradient})
        QVERIFY2(seen.contains(kind), toString(kind));
    QCOMPARE(seen.contains(StepKind::ReadStoredWeights), options.storeWeights);
}

void TestPresentStage::queryGradientRunsUntilItsLastKeyBlock_data() {
    addBackwardRows();
}

// dQ is in HBM from dQ = 0 on; a query block's rows hold a running value (hatched) until the
// UpdateQueryGradient of the last key block it sees, final from then on (not while that step
// animates); a block that sees no key keeps dQ_i = 0, final at once.
void TestPresentStage::queryGradientRunsUntilItsLastKeyBlock() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const ProblemSpec& spec = scene->settings.spec;
    const int br = scene->settings.options.blockRows;
    const std::vector<int> lastUpdate =
        lastStepOfEachBlock(*scene, StepKind::UpdateQueryGradient, true);
    int zeroed = -1, runningSeen = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const HbmMatrix& dQ = *inStage(stage, MatrixId::dQ);
        if (scene->engine->info(s).kind == StepKind::InitialiseQueryGradient) zeroed = s;
        for (const bool moving : {false, true}) {
            const QString where = QStringLiteral("step %1%2").arg(s).arg(moving ? " moving" : "");
            const auto& held = moving ? dQ.heldWhileMoving : dQ.held;
            const auto& running = moving ? dQ.runningWhileMoving : dQ.running;
            const bool written = zeroed >= 0 && (moving ? s > zeroed : s >= zeroed);
            const std::vector<bool> final = rowsCovered(held, dQ.rows, dQ.cols);
            const std::vector<bool> runs = rowsCovered(running, dQ.rows, dQ.cols);
            for (int row = 0; row < spec.queries; ++row) {
                const int last = lastUpdate[std::size_t(row / br)];
                const bool done = last < 0 ? written : (moving ? s > last : s >= last);
                QVERIFY2(final[std::size_t(row)] == done,
                         qPrintable(where + QStringLiteral(" row %1").arg(row)));
                QVERIFY2(runs[std::size_t(row)] == (written && !done),
                         qPrintable(where + QStringLiteral(" row %1").arg(row)));
                runningSeen += runs[std::size_t(row)];
            }
        }
    }
    QVERIFY(zeroed >= 0 && runningSeen > 0);
    const StageModel end = makeStageModel(*makeFrame(scene, scene->stepCount() - 1));
    QCOMPARE(area(inStage(end, MatrixId::dQ)->held), qint64(spec.queries) * spec.headDim);
}

void TestPresentStage::keyGradientsAppearWhenStored_data() {
    addBackwardRows();
}

// dK_j and dV_j reach HBM at their key block's StoreKeyValueGradient (after it animates), never
// before; D at the pre-pass; L, dO and the forward's O are there from the start.
void TestPresentStage::keyGradientsAppearWhenStored() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const ProblemSpec& spec = scene->settings.spec;
    const int bc = scene->settings.options.blockCols;
    const std::vector<int> stored =
        lastStepOfEachBlock(*scene, StepKind::StoreKeyValueGradient, false);
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const StepKind kind = scene->engine->info(s).kind;
        for (const bool moving : {false, true}) {
            const QString where = QStringLiteral("step %1%2").arg(s).arg(moving ? " moving" : "");
            for (const MatrixId id : {MatrixId::dK, MatrixId::dV}) {
                const HbmMatrix& m = *inStage(stage, id);
                QVERIFY(m.running.empty() && m.runningWhileMoving.empty());
                const std::vector<bool> held =
                    rowsCovered(moving ? m.heldWhileMoving : m.held, m.rows, m.cols);
                for (int row = 0; row < spec.keys; ++row) {
                    const int at = stored[std::size_t(row / bc)];
                    QVERIFY2(at >= 0, qPrintable(where));
                    QVERIFY2(held[std::size_t(row)] == (moving ? s > at : s >= at),
                             qPrintable(where + QStringLiteral(" row %1").arg(row)));
                }
            }
            // D is written by the pre-pass, the first step: there once it has animated.
            const HbmMatrix& D = *inStage(stage, MatrixId::RowDot);
            const bool written = !(kind == StepKind::ComputeRowDots && moving);
            QCOMPARE(s == 0, kind == StepKind::ComputeRowDots);
            QVERIFY2((moving ? D.heldWhileMoving : D.held).empty() != written, qPrintable(where));
            for (const MatrixId id : {MatrixId::O, MatrixId::dO, MatrixId::LogSumExp}) {
                const HbmMatrix& m = *inStage(stage, id);
                QCOMPARE(m.held, std::vector<QRect>{m.whole()});
            }
        }
    }
}

void TestPresentStage::backwardStoresSAndPOnlyWhenAsked_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QStringList>("switches");
    QTest::newRow("recomputed") << QStringLiteral("backward") << QStringList();
    QTest::newRow("causal") << QStringLiteral("backward-causal") << QStringList();
    QTest::newRow("store-p") << QStringLiteral("backward") << QStringList{"store-p"};
}

// S is never in HBM; P neither, unless the forward stored it (store-p): then the whole of it, from
// the start, read and never written, with its real bytes. The never-stored box says what storing
// P would take.
void TestPresentStage::backwardStoresSAndPOnlyWhenAsked() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const ProblemSpec& spec = scene->settings.spec;
    const bool storedWeights = scene->settings.options.backward.storeWeights;
    const QString weightBytes =
        formatBytes(double(spec.queries) * spec.keys * double(kBytesPerElement));
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StageModel stage = makeStageModel(*makeFrame(scene, s));
        const QString where = QStringLiteral("step %1").arg(s);
        const HbmMatrix* S = inStage(stage, MatrixId::S);
        QVERIFY(S);
        QVERIFY2(S->neverStored && S->held.empty() && S->heldWhileMoving.empty(),
                 qPrintable(where));
        const StageMatrix* P = stage.matrix(MatrixId::P);
        QCOMPARE(P != nullptr, storedWeights);
        if (P) {
            QVERIFY(!P->hbm.neverStored);
            QCOMPARE(P->hbm.held, std::vector<QRect>{P->hbm.whole()});
            QCOMPARE(P->bytes, weightBytes);
            QCOMPARE(P->tier, 0); // with what the backward reads
            QVERIFY(stage.matrix(MatrixId::S)->bytes.startsWith(QStringLiteral("0 B")));
        } else {
            QCOMPARE(stage.matrix(MatrixId::S)->bytes,
                     QStringLiteral("0 B (stored P: %1)").arg(weightBytes));
        }
        // What the backward writes sits below what it reads.
        for (const StageMatrix& m : stage.matrices) {
            const bool writes = m.hbm.id == MatrixId::RowDot || m.hbm.id == MatrixId::dQ ||
                                m.hbm.id == MatrixId::dK || m.hbm.id == MatrixId::dV ||
                                m.hbm.neverStored;
            QCOMPARE(m.tier, writes ? 1 : 0);
        }
    }
}

void TestPresentStage::backwardTilesHoldWhatTheStepMade_data() {
    addBackwardRows();
}

// The chip's tiles are the engine's state: the key block's K_j, V_j, dK_j, dV_j resident through
// it (dK_j, dV_j zeroed when it loads), the query block's Q_i, dO_i, (L_i), D_i; one S/P buffer
// and one dP/dS buffer named for what they hold; dQ_i on chip only while it is updated; the
// pulse on what the step computes.
void TestPresentStage::backwardTilesHoldWhatTheStepMade() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const bool storedWeights = scene->settings.options.backward.storeWeights;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StepState& st = frame->state;
        const StageModel stage = makeStageModel(*frame);
        const StepKind k = st.info.kind;
        const QString where = QStringLiteral("step %1 (%2)").arg(s).arg(toString(k));
        QVERIFY(stage.tiled && stage.backward && stage.kernels.empty());
        QCOMPARE(stage.tile(ChipSlot::LogSumExp) != nullptr, !storedWeights);
        for (const ChipSlot slot :
             {ChipSlot::Key, ChipSlot::Value, ChipSlot::KeyGradient, ChipSlot::ValueGradient})
            QVERIFY2(stage.tile(slot)->resident == (st.info.keyBlock >= 0), qPrintable(where));
        for (const ChipSlot slot : {ChipSlot::Query, ChipSlot::OutputGradient, ChipSlot::RowDot})
            QVERIFY2(stage.tile(slot)->resident == (st.info.queryBlock >= 0), qPrintable(where));
        QCOMPARE(stage.tile(ChipSlot::QueryGradient)->resident, k == StepKind::UpdateQueryGradient);
        // One buffer for S then P, one for dP then dS.
        const ChipTile* weights = stage.tile(ChipSlot::Weights);
        const ChipTile* scores = stage.tile(ChipSlot::Scores);
        QVERIFY((weights == nullptr) != (scores == nullptr));
        QCOMPARE(weights != nullptr, st.weights.size() > 0);
        QCOMPARE((weights ? weights : scores)->resident,
                 st.weights.size() > 0 || st.scores.size() > 0);
        const ChipTile* dS = stage.tile(ChipSlot::ScoreGradient);
        const ChipTile* dP = stage.tile(ChipSlot::WeightGradient);
        QVERIFY((dS == nullptr) != (dP == nullptr));
        QCOMPARE(dS != nullptr, st.dS.size() > 0);
        QCOMPARE((dS ? dS : dP)->resident, st.dP.size() > 0);
        std::vector<ChipSlot> produced;
        for (const ChipTile& t : stage.tiles)
            if (t.produced) produced.push_back(t.slot);
        std::vector<ChipSlot> expected;
        switch (k) {
        case StepKind::LoadKeyValue:
            expected = {ChipSlot::KeyGradient, ChipSlot::ValueGradient};
            break;
        case StepKind::RecomputeScores:
            expected = {ChipSlot::Scores};
            break;
        case StepKind::RecomputeWeights:
            expected = {ChipSlot::Weights};
            break;
        case StepKind::UpdateValueGradient:
            expected = {ChipSlot::ValueGradient};
            break;
        case StepKind::ComputeWeightGradient:
            expected = {ChipSlot::WeightGradient};
            break;
        case StepKind::ComputeScoreGradient:
            expected = {ChipSlot::ScoreGradient};
            break;
        case StepKind::UpdateQueryGradient:
            expected = {ChipSlot::QueryGradient};
            break;
        case StepKind::UpdateKeyGradient:
            expected = {ChipSlot::KeyGradient};
            break;
        default:
            break;
        }
        QVERIFY2(produced == expected, qPrintable(where));
        // Three rows of tiles: the key block's, the query block's, what is computed.
        for (const ChipTile& t : stage.tiles) {
            const bool keyBlock = t.slot == ChipSlot::Key || t.slot == ChipSlot::Value ||
                                  t.slot == ChipSlot::KeyGradient ||
                                  t.slot == ChipSlot::ValueGradient;
            const bool computed = t.slot == ChipSlot::Scores || t.slot == ChipSlot::Weights ||
                                  t.slot == ChipSlot::WeightGradient ||
                                  t.slot == ChipSlot::ScoreGradient;
            QCOMPARE(t.tier, keyBlock ? 0 : computed ? 2 : 1);
        }
    }
}

void TestPresentStage::backwardMatricesFadeWhatIsNotFinal_data() {
    addBackwardRows();
}

// The matrices view shows Q, K, V, O, dO and the final dQ, dK, dV, faded exactly where HBM does
// not hold them final at this step; the active tiles are the step's blocks; the note says S and
// P are recomputed (or read back with store-p).
void TestPresentStage::backwardMatricesFadeWhatIsNotFinal() {
    QFETCH(QString, preset);
    QFETCH(QStringList, switches);
    const auto scene = backwardScene(preset, switches);
    const int d = scene->settings.spec.headDim;
    const std::vector<MatrixId> order = {MatrixId::Q,  MatrixId::K,  MatrixId::V,  MatrixId::O,
                                         MatrixId::dO, MatrixId::dQ, MatrixId::dK, MatrixId::dV};
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const MatricesModel m = makeMatricesModel(*frame);
        const StageModel stage = makeStageModel(*frame);
        const StepInfo& info = frame->state.info;
        const QString where = QStringLiteral("step %1").arg(s);
        QCOMPARE(m.panels.size(), order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            const MatrixPanel& panel = m.panels[i];
            QCOMPARE(panel.hbm.id, order[i]);
            QVERIFY(!panel.image.isNull() && panel.values);
            const bool gradient = i >= 5;
            if (!gradient) {
                QVERIFY(panel.faded.empty());
                continue;
            }
            // Faded and final cover the matrix once, and final is what HBM holds final.
            QCOMPARE(area(panel.faded) + area(panel.hbm.held),
                     qint64(panel.hbm.rows) * panel.hbm.cols);
            const HbmMatrix& inHbm = *inStage(stage, panel.hbm.id);
            QVERIFY2(panel.hbm.held == inHbm.held, qPrintable(where));
            const std::vector<bool> faded =
                rowsCovered(panel.faded, panel.hbm.rows, panel.hbm.cols);
            const std::vector<bool> final = rowsCovered(inHbm.held, inHbm.rows, inHbm.cols);
            for (int row = 0; row < panel.hbm.rows; ++row)
                QVERIFY2(faded[std::size_t(row)] != final[std::size_t(row)], qPrintable(where));
        }
        const auto outlined = [&](MatrixId id, Range rows) {
            const QRect part(0, rows.begin, d, rows.size());
            return std::any_of(m.highlights.begin(), m.highlights.end(), [&](const Highlight& h) {
                return h.matrix == id && h.part == part;
            });
        };
        if (info.keyBlock >= 0)
            for (const MatrixId id : {MatrixId::K, MatrixId::V, MatrixId::dK, MatrixId::dV})
                QVERIFY2(outlined(id, info.cols), qPrintable(where));
        if (info.queryBlock >= 0)
            for (const MatrixId id : {MatrixId::Q, MatrixId::dO, MatrixId::dQ})
                QVERIFY2(outlined(id, info.rows), qPrintable(where));
        if (info.keyBlock < 0 && info.queryBlock < 0) QVERIFY(!m.highlights.empty());
        QVERIFY(!m.scoreTile);
    }
    const MatricesModel first = makeMatricesModel(*makeFrame(scene, 0));
    const MatricesModel last = makeMatricesModel(*makeFrame(scene, scene->stepCount() - 1));
    for (std::size_t i = 5; i < order.size(); ++i) {
        QCOMPARE(area(first.panels[i].faded),
                 qint64(first.panels[i].hbm.rows) * first.panels[i].hbm.cols);
        QVERIFY(last.panels[i].faded.empty());
    }
    const bool storedWeights = scene->settings.options.backward.storeWeights;
    QVERIFY2(first.note.contains(storedWeights ? QStringLiteral("read back")
                                               : QStringLiteral("recomputed")),
             qPrintable(first.note));
    QVERIFY2(first.note.contains(QStringLiteral("never stored")), qPrintable(first.note));
}

// With a backward bug the marks beside dQ, dK and dV are the check's wrong rows of each, laid out
// beside their own panel, one a row; a correct run has none.
void TestPresentStage::backwardWrongRowsAreTheChecks() {
    for (const char* preset : {"backward-bug", "backward-causal"}) {
        const auto scene = sceneOf(QString::fromLatin1(preset));
        const BackwardScene& bw = *scene->backward;
        QVERIFY2(!bw.check.passed(), preset);
        const MatricesModel m = makeMatricesModel(*makeFrame(scene, scene->stepCount() - 1));
        const std::pair<MatrixId, const CheckReport*> checks[] = {{MatrixId::dQ, &bw.check.dq},
                                                                  {MatrixId::dK, &bw.check.dk},
                                                                  {MatrixId::dV, &bw.check.dv}};
        std::size_t marks = 0;
        for (const auto& [matrix, check] : checks) {
            const MatrixId id = matrix; // a lambda may not capture a structured binding (C++17)
            const auto found = std::find_if(m.wrongRows.begin(), m.wrongRows.end(),
                                            [&](const WrongRows& w) { return w.beside == id; });
            QCOMPARE(found != m.wrongRows.end(), !check->wrongRows.empty());
            if (found == m.wrongRows.end()) continue;
            std::vector<int> rows = check->wrongRows;
            std::sort(rows.begin(), rows.end());
            QCOMPARE(found->rows, rows);
            int inRuns = 0;
            for (const Range& run : found->runs)
                inRuns += run.size();
            QCOMPARE(std::size_t(inRuns), rows.size());
            marks += rows.size();
        }
        QVERIFY(marks > 0);
        QVERIFY(std::none_of(m.wrongRows.begin(), m.wrongRows.end(),
                             [](const WrongRows& w) { return w.beside == MatrixId::O; }));
        QVERIFY(m.note.contains(QStringLiteral("Red marks")));
        // Toy rows are tall enough for one mark each, left of the panel it belongs to.
        const MatricesLayout l = layOutMatrices(m, QRectF(0, 0, 900, 420), Theme::desktop());
        QCOMPARE(l.wrongRowMarks.size(), marks);
        for (const QPolygonF& mark : l.wrongRowMarks) {
            const QRectF box = mark.boundingRect();
            const auto panel =
                std::find_if(l.panels.begin(), l.panels.end(), [&](const PanelPlace& p) {
                    return box.right() <= p.rect.left() + 1e-9 &&
                           box.right() >= p.rect.left() - 6 && box.center().y() >= p.rect.top() &&
                           box.center().y() <= p.rect.bottom();
                });
            QVERIFY(panel != l.panels.end());
            const MatrixId beside = m.panels[std::size_t(panel - l.panels.begin())].hbm.id;
            QVERIFY(beside == MatrixId::dQ || beside == MatrixId::dK || beside == MatrixId::dV);
        }
    }
    const MatricesModel fine =
        makeMatricesModel(*makeFrame(sceneOf(QStringLiteral("backward")), 5));
    QVERIFY(fine.wrongRows.empty());
    QVERIFY(!fine.note.contains(QStringLiteral("Red marks")));
}

// The toy on an H100: query block 0 brings K_j, V_j from HBM through L2; query block 1 finds them
// in L2, and its tiles travel from L2 only, with HBM's arrows idle. Q_1 is new: from HBM.
void TestPresentStage::l2SplitsTheStepsTraffic() {
    VizSettings settings = presetSettings(QStringLiteral("toy"));
    settings.hardwareId = "h100-sxm";
    const auto scene = buildScene(settings, nullptr);
    QVERIFY(scene->l2 && scene->l2->fits());
    int fromHbm = 0, fromL2 = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StepInfo info = scene->engine->info(s);
        if (info.kind != StepKind::LoadKeyValue && info.kind != StepKind::LoadQuery) continue;
        const StageModel m = makeStageModel(*makeFrame(scene, s));
        const bool again = info.kind == StepKind::LoadKeyValue && info.queryBlock > 0;
        QVERIFY(!m.flights.empty());
        for (const Flight& f : m.flights) QCOMPARE(f.viaL2Only, again);
        QVERIFY(m.bus.reading);               // the chip always reads
        QCOMPARE(m.l2->bus.reading, !again);  // HBM only the first time
        (again ? fromL2 : fromHbm) += 1;
        const StageLayout l = layOutStage(m, QRectF(0, 0, 1200, 500), Theme::desktop());
        for (const FlightPath& path : l.flights)
            QCOMPARE(inside(l.l2Box, path.hbm), again);
    }
    QCOMPARE(fromL2, scene->engine->keyBlockCount() * (scene->engine->queryBlockCount() - 1));
    QVERIFY(fromHbm > 0);
    // The whole run: HBM sent Q, K and V once, the chip read K and V once per query block.
    const StageModel last = makeStageModel(*makeFrame(scene, scene->stepCount() - 1));
    const auto& spec = settings.spec;
    QCOMPARE(last.l2->total.readBytes,
             std::uint64_t(spec.queries + 2 * spec.keys) * spec.headDim * kBytesPerElement);
    QVERIFY(last.totals.hbmReadBytes > last.l2->total.readBytes);
    QCOMPARE(last.l2->fillText, QStringLiteral("fits"));
}

// The backward's first read of a query block brings Q_i and L_i from HBM; dO_i and D_i the
// pre-pass read and wrote, so they come from L2, as does dQ_i's round trip.
void TestPresentStage::backwardReadsFromL2WhatThePrePassLeft() {
    VizSettings settings = presetSettings(QStringLiteral("backward"));
    settings.hardwareId = "h100-sxm";
    const auto scene = buildScene(settings, nullptr);
    QVERIFY(scene->l2 && scene->l2->fits());
    int checked = 0;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const StepInfo info = scene->engine->info(s);
        const StageModel m = makeStageModel(*makeFrame(scene, s));
        if (info.kind == StepKind::LoadQueryGradient) {
            for (const Flight& f : m.flights) {
                const bool left = f.matrix == MatrixId::dO || f.matrix == MatrixId::RowDot;
                QCOMPARE(f.viaL2Only, info.keyBlock > 0 || left);
            }
            ++checked;
        }
        if (info.kind == StepKind::UpdateQueryGradient)
            for (const Flight& f : m.flights) QVERIFY(f.viaL2Only);
        if (info.kind == StepKind::StoreKeyValueGradient)
            for (const Flight& f : m.flights) QVERIFY(!f.viaL2Only); // new bytes: HBM's
    }
    QVERIFY(checked > 0);
}

void TestPresentStage::l2HasItsPlaceInTheBus_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QSize>("size");
    for (const char* id : {"toy", "long-standard", "backward"})
        for (const QSize size : {QSize(860, 420), QSize(660, 300), QSize(1170, 330)})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2x%3").arg(id).arg(size.width()).arg(size.height())))
                << QString::fromLatin1(id) << size;
}

// L2 stands between the arrows to HBM and those to the chip, inside the bus; its name, size and
// word are whole; each arrow keeps to its side.
void TestPresentStage::l2HasItsPlaceInTheBus() {
    QFETCH(QString, preset);
    QFETCH(QSize, size);
    const auto scene = sceneOf(preset); // the A100: every GPU profile has its L2
    const Theme theme = Theme::desktop();
    const StageModel m = makeStageModel(*makeFrame(scene, std::min(5, scene->stepCount() - 1)));
    QVERIFY(m.l2);
    const StageLayout l = layOutStage(m, QRectF(QPointF(0, 0), QSizeF(size)), theme);
    QVERIFY(inside(l.bus, l.l2Box));
    QVERIFY(inside(l.l2Box, l.l2Track) && inside(l.l2Box, l.l2Text));
    QVERIFY(l.l2ReadLane.x0 >= l.bus.left() && l.l2ReadLane.x1 <= l.l2Box.left());
    QVERIFY(l.readLane.x0 >= l.l2Box.right() && l.readLane.x1 <= l.bus.right());
    QVERIFY(l.l2WriteLane.x1 <= l.l2Box.left() && l.writeLane.x0 >= l.l2Box.right());
    QVERIFY(!fittedInk(l.l2Text, m.l2->fillText, theme.font(7.5, true), Qt::AlignHCenter).isNull());
    QVERIFY(!fittedInk(l.l2Box, m.l2->size, theme.font(8), Qt::AlignHCenter).isNull());
    QCOMPARE(m.l2->size, formatMemorySize(scene->hardware.l2Bytes.value));
    QCOMPARE(m.l2->rate, formatRate(scene->hardware.l2BandwidthBytesPerSecond.value));
    // The rate under the size where it fits whole (from 860 px on it does); else only its tooltip.
    QVERIFY(size.width() < 860 || !l.l2Rate.isNull());
    if (!l.l2Rate.isNull()) {
        QVERIFY(inside(l.l2Box, l.l2Rate) && l.l2Rate.bottom() <= l.l2Track.top());
        QVERIFY(!fittedInk(l.l2Rate, m.l2->rate, theme.font(8), Qt::AlignHCenter).isNull());
    }
}

// These sizes as one launch on the H100, whose counters FlashViz ships: the line under the panels
// gives the measured bytes beside the model's; on the A100, none is measured and there is none.
void TestPresentStage::measuredLaunchIsTheShippedCounters() {
    VizSettings settings = presetSettings(QStringLiteral("long"));
    QVERIFY(makeStageModel(*makeFrame(sceneOf(QStringLiteral("long")), 0)).measuredLine.isEmpty());
    settings.hardwareId = "h100-sxm";
    const auto scene = buildScene(settings, nullptr);
    QVERIFY(scene->measuredLaunch);
    const measured::ThroughL2Point& p = scene->measuredLaunch->points.front();
    QVERIFY(p.flashMeasured && p.flashCheck);
    const StageModel m = makeStageModel(*makeFrame(scene, 0));
    const auto bytes = [](double b) { return QString::fromStdString(formatByteAmount(b)); };
    for (const QString& figure :
         {bytes(p.flashMeasured->dramReadBytes + p.flashMeasured->dramWriteBytes),
          bytes(p.flash.dram.total()), bytes(p.flashMeasured->l2Bytes),
          bytes(p.flash.counting.total())})
        QVERIFY2(m.measuredLine.contains(figure), qPrintable(m.measuredLine + " / " + figure));
    QVERIFY(m.measuredLine.contains(QStringLiteral("NVIDIA H100 80GB HBM3")));
    QVERIFY(m.measuredLine.contains(QStringLiteral("fp16 (Br %1)").arg(scene->measuredLaunch->blockRows)));
    QCOMPARE(m.measuredOn, QStringLiteral("NVIDIA H100 80GB HBM3, 2026-12-06"));
    QCOMPARE(m.measuredKernel, QString::fromStdString(scene->measuredLaunch->kernelName));
    const StageLayout l = layOutStage(m, QRectF(0, 0, 1170, 330), Theme::desktop());
    QVERIFY(l.measuredLine.bottom() <= l.counterStrip.top() && l.measuredLine.top() >= l.hbmBox.bottom());
}

void TestPresentStage::windowSizesKeepEveryPieceInItsPanel_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QSize>("window");
    QTest::addColumn<QSize>("stage");
    QTest::addColumn<QSize>("matrices");
    QTest::addColumn<bool>("lecture");
    // The memory stage's and the matrices view's sizes at 1920 x 1080, 1600 x 1000, 1366 x 768
    // and 1280 x 800, as the window lays them out by default: in the step view, and in lecture
    // mode (wider and shorter, in the projector's theme).
    const struct {
        QSize window, stage, matrices;
        bool lecture;
    } sizes[] = {{{1920, 1080}, {1182, 378}, {664, 442}, false},
                 {{1600, 1000}, {912, 341}, {522, 399}, false},
                 {{1366, 768}, {678, 239}, {418, 269}, false},
                 {{1280, 800}, {592, 249}, {380, 291}, false},
                 {{1920, 1080}, {1331, 375}, {1331, 374}, true},
                 {{1600, 1000}, {1109, 362}, {1109, 362}, true},
                 {{1366, 768}, {944, 267}, {944, 267}, true},
                 {{1280, 800}, {888, 289}, {888, 289}, true}};
    for (const char* preset : {"toy", "backward", "backward-causal", "backward-long"})
        for (const auto& size : sizes)
            QTest::addRow("%s %dx%d%s", preset, size.window.width(), size.window.height(),
                          size.lecture ? " lecture" : "")
                << QString::fromLatin1(preset) << size.window << size.stage << size.matrices
                << size.lecture;
}

// At each window size a lecturer meets, in both themes, nothing on the memory stage is cut or
// lies on another piece, and the matrices' panels, titles and note do not overlap, at the
// backward's pre-pass, a tile, an update of dQ and a store of dK, dV.
void TestPresentStage::windowSizesKeepEveryPieceInItsPanel() {
    QFETCH(QString, preset);
    QFETCH(QSize, window);
    QFETCH(QSize, stage);
    QFETCH(QSize, matrices);
    QFETCH(bool, lecture);
    const auto scene = sceneOf(preset);
    const Theme theme = lecture ? Theme::presentation(window) : Theme::desktop();
    std::vector<int> steps;
    for (int s = 0; s < std::min(scene->stepCount(), 40); ++s)
        steps.push_back(s);
    steps.push_back(scene->stepCount() - 1);
    for (const int s : steps) {
        const auto frame = makeFrame(scene, s);
        const StageModel m = makeStageModel(*frame);
        const StageLayout l = layOutStage(m, QRectF(QPointF(0, 0), QSizeF(stage)), theme);
        const QString problems = stageLayoutProblems(m, l, theme);
        QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("step %1: ").arg(s) + problems));
        const MatricesModel mm = makeMatricesModel(*frame);
        const MatricesLayout ml =
            layOutMatrices(mm, QRectF(QPointF(0, 0), QSizeF(matrices)), theme);
        for (std::size_t i = 0; i < ml.panels.size(); ++i) {
            const PanelPlace& p = ml.panels[i];
            QVERIFY2(p.rect.right() <= matrices.width() && p.rect.bottom() <= ml.note.top() + 1e-9,
                     qPrintable(mm.panels[i].title));
            if (i > 0) QVERIFY(ml.panels[i - 1].rect.right() < p.rect.left());
            const QRectF ink = fittedInk(
                p.titleRect, p.titleFits ? mm.panels[i].titleWithShape : mm.panels[i].title,
                theme.font(9.5, true), Qt::AlignLeft);
            QVERIFY2(!ink.isNull() && ink.bottom() <= p.rect.top() + 1e-9,
                     qPrintable(mm.panels[i].title));
            if (i + 1 < ml.panels.size())
                QVERIFY2(ink.right() <= ml.panels[i + 1].rect.left(),
                         qPrintable(mm.panels[i].title));
        }
        QVERIFY2(wrappedFits(ml.note, mm.note, theme.font(8)), qPrintable(mm.note));
    }
}

QTEST_MAIN(TestPresentStage)
#include "tst_present_stage.moc"
