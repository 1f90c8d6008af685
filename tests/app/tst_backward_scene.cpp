// The window's backward scene (Algorithm::Backward): the gradients checked, the bugs failing
// where they bite, every frame holding what its step computes, the settings and presets that
// name it.
#include "session/scene.h"
#include "session/settings.h"
#include "session/step_why.h"

#include "core/backward.h"
#include "core/errors.h"
#include "core/tiling.h"
#include "tests/core/test_support.h"

#include <QJsonDocument>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace flashviz;
using namespace flashviz::gui;
using flashviz::test::makeSpec;
using flashviz::test::sameValues;

namespace {

VizSettings backwardSettings(const ProblemSpec& spec, int br, int bc) {
    VizSettings s = toySettings();
    s.spec = spec;
    s.options.blockRows = br;
    s.options.blockCols = bc;
    s.algorithm = Algorithm::Backward;
    return s;
}

VizSettings toyBackward() {
    VizSettings s = toySettings();
    s.algorithm = Algorithm::Backward;
    return s;
}

// `s` read back from its JSON, from that JSON's text (as QSettings and presets hold it), and
// saved and loaded again (as the window keeps settings between runs): the same settings each time.
void expectRoundTrip(const VizSettings& s) {
    const QJsonObject json = settingsToJson(s);
    QCOMPARE(settingsFromJson(json, toySettings()), s);
    const QJsonObject reread = QJsonDocument::fromJson(QJsonDocument(json).toJson()).object();
    QCOMPARE(settingsFromJson(reread, toySettings()), s);
    QTemporaryDir dir;
    QSettings store(dir.filePath(QStringLiteral("saved.ini")), QSettings::IniFormat);
    saveSettings(store, s);
    QStringList problems;
    const auto loaded = loadSettings(store, &problems);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
    QCOMPARE(loaded, std::optional<VizSettings>(s));
}

// The problems the suites build: the toy, a ragged causal n_q != n_k one, the toy in fp32.
void addProblems() {
    QTest::addColumn<VizSettings>("settings");
    QTest::newRow("toy") << toyBackward();
    QTest::newRow("causal 13x11 ragged") << backwardSettings(makeSpec(13, 11, 3, true), 4, 3);
    QTest::newRow("non-causal 10x7, Br != Bc") << backwardSettings(makeSpec(10, 7, 5, false), 3, 4);
    QTest::newRow("toy fp32") << backwardSettings(makeSpec(8, 8, 4, false, Precision::Float), 4, 4);
}

// The backward's values at a step alike (the buggy run's and the correct run's counters may
// differ: an overwritten dQ is not read back).
bool sameBackwardValues(const StepState& a, const StepState& b) {
    return sameValues(a.scores, b.scores) && sameValues(a.weights, b.weights) &&
           sameValues(a.output, b.output) && sameValues(a.delta, b.delta) &&
           sameValues(a.dP, b.dP) && sameValues(a.dS, b.dS) && sameValues(a.dQNew, b.dQNew) &&
           sameValues(a.dQOld, b.dQOld) && sameValues(a.dKOld, b.dKOld) &&
           sameValues(a.dKNew, b.dKNew) && sameValues(a.dVOld, b.dVOld) &&
           sameValues(a.dVNew, b.dVNew);
}

double maxAbsDiff(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    return a.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

// JSON written with single quotes (a test's texts have no quotes of their own).
QByteArray quoted(const char* text) {
    return QByteArray(text).replace('\'', '"');
}

// Causal with more keys than queries: the last key blocks are seen by no query.
bool engineSeesNoQuery(const StepEngine& engine, int keyBlock) {
    for (int i = 0; i < engine.queryBlockCount(); ++i)
        if (engine.visibleKeyBlocks(i) > keyBlock) return false;
    return true;
}

} // namespace

Q_DECLARE_METATYPE(flashviz::gui::VizSettings)

class TestBackwardScene : public QObject {
    Q_OBJECT
  private slots:
    void gradientsPass_data() { addProblems(); }
    void gradientsPass();
    void blocksAreDoneWhereTheEngineSays_data() { addProblems(); }
    void blocksAreDoneWhereTheEngineSays();
    void everyFrameHoldsWhatItsStepComputes_data() { addProblems(); }
    void everyFrameHoldsWhatItsStepComputes();
    void eachBugFailsFromItsFirstWrongStep_data();
    void eachBugFailsFromItsFirstWrongStep();
    void aWrongForwardIsWrongFromThePrePass();
    void storedWeightsAreReadBack();
    void largeRunHasNoTraceAndSaysWhy();
    void windowLimitsApply();
    void framesCostWhatTheyReplay();
    void settingsKeepTheSwitches();
    void settingsRefuseBadSwitches();
    void settingsKeepTheTensorCoreCheck();
    void describedWithItsSwitches();
    void presetsRead();
    void whysFollowTheAlgorithmAndTheSwitches();
    void whysRefuseUnknownNames();
};

void TestBackwardScene::gradientsPass() {
    QFETCH(VizSettings, settings);
    const auto scene = buildScene(settings, nullptr);
    QVERIFY(scene->isBackward());
    QVERIFY(scene->backward);
    const BackwardScene& b = *scene->backward;
    QVERIFY2(b.check.passed(), b.check.summary().c_str());
    QVERIFY2(scene->check.passed(), "the forward's O, which the pre-pass reads");
    QVERIFY(!b.cpuCheck); // the CPU ran: nothing beside it
    QVERIFY(!scene->correctEngine);
    QVERIFY(!b.firstBugStep);
    const ProblemSpec& spec = settings.spec;
    QVERIFY(sameValues(b.dO, scene->engine->upstreamGradient()));
    QCOMPARE(b.grads.dq.rows(), spec.queries);
    QCOMPARE(b.grads.dk.rows(), spec.keys);
    QCOMPARE(b.grads.dv.cols(), spec.headDim);
    QCOMPARE(b.wrongQueryRow, std::vector<char>(std::size_t(spec.queries), 0));
    QCOMPARE(b.wrongKeyRow, std::vector<char>(std::size_t(spec.keys), 0));
    // The scene's figures are the engine's and core's own.
    QCOMPARE(scene->totals, scene->engine->countersThrough(scene->stepCount() - 1));
    QCOMPARE(b.storedWeightsTotals,
             backwardTrade(spec.queries, spec.keys, spec.headDim, spec.causal, settings.options)
                 .stored);
    QVERIFY(b.storedWeightsTotals.hbmBytes() > scene->totals.hbmBytes());
    QCOMPARE(b.storedElements, backwardStoredElements(spec.queries, spec.keys, spec.headDim,
                                                      settings.options.backward));
    // Images the size of their matrices, scales from the reference.
    QCOMPARE(b.dOImage.size(), QSize(spec.headDim, spec.queries));
    QCOMPARE(b.dqImage.size(), QSize(spec.headDim, spec.queries));
    QCOMPARE(b.dkImage.size(), QSize(spec.headDim, spec.keys));
    QCOMPARE(b.dvImage.size(), QSize(spec.headDim, spec.keys));
    QCOMPARE(b.dqScale, b.reference.dq.cwiseAbs().maxCoeff());
    QVERIFY(b.dOScale > 0 && b.dkScale > 0 && b.dvScale > 0);
    // Small problems keep the backend's trace: one entry per tile that sees a key.
    QVERIFY2(b.trace, qPrintable(scene->traceNote));
    QVERIFY(scene->traceNote.isEmpty());
    int tiles = 0;
    for (int i = 0; i < scene->engine->queryBlockCount(); ++i)
        tiles += scene->engine->visibleKeyBlocks(i);
    QCOMPARE(int(b.trace->tiles.size()), tiles);
    // Chapters: the pre-pass, then one per key block, at its first step.
    QCOMPARE(int(scene->chapters.size()), 1 + scene->engine->keyBlockCount());
    QCOMPARE(scene->chapters[0].title, QStringLiteral("Pre-pass: D = rowsum(dO ∘ O)"));
    QCOMPARE(scene->chapters[0].step, 0);
    for (int j = 0; j < scene->engine->keyBlockCount(); ++j) {
        const Chapter& chapter = scene->chapters[std::size_t(j) + 1];
        QVERIFY(chapter.title.startsWith(QStringLiteral("Key block %1 ").arg(j)));
        QCOMPARE(scene->engine->info(chapter.step).kind, StepKind::LoadKeyValue);
        QCOMPARE(scene->engine->info(chapter.step).keyBlock, j);
    }
    // Rows belong to their query blocks (the forward's standard path put every row in block 0).
    for (int row = 0; row < spec.queries; ++row)
        QCOMPARE(scene->queryBlockOfRow(row), row / settings.options.blockRows);
    // O is in HBM before the backward starts: every row final from step 0.
    const auto runs = finishedRowRuns(*scene, 0);
    QCOMPARE(int(runs.size()), 1);
    QCOMPARE(runs[0].begin, 0);
    QCOMPARE(runs[0].end, spec.queries);
}

void TestBackwardScene::blocksAreDoneWhereTheEngineSays() {
    QFETCH(VizSettings, settings);
    const auto scene = buildScene(settings, nullptr);
    const BackwardScene& b = *scene->backward;
    const StepEngine& engine = *scene->engine;
    // Walk every step: the last UpdateQueryGradient of a query block (lastKeyBlock) and the
    // StoreKeyValueGradient of a key block are the done steps.
    std::vector<int> queryDone(std::size_t(engine.queryBlockCount()), -1);
    std::vector<int> keyDone(std::size_t(engine.keyBlockCount()), -1);
    for (int s = 0; s < engine.stepCount(); ++s) {
        const StepInfo info = engine.info(s);
        if (info.kind == StepKind::UpdateQueryGradient && info.lastKeyBlock)
            queryDone[std::size_t(info.queryBlock)] = s;
        if (info.kind == StepKind::StoreKeyValueGradient) keyDone[std::size_t(info.keyBlock)] = s;
    }
    QCOMPARE(b.queryBlockDoneStep, queryDone);
    QCOMPARE(b.keyBlockDoneStep, keyDone);
    // At its done step, dQ_i as the step writes it is the scene's gradient's rows.
    for (int i = 0; i < engine.queryBlockCount(); ++i) {
        if (queryDone[std::size_t(i)] < 0) continue;
        const auto frame = makeFrame(scene, queryDone[std::size_t(i)]);
        const Range rows = frame->state.info.rows;
        QVERIFY(maxAbsDiff(frame->state.dQNew, b.grads.dq.middleRows(rows.begin, rows.size())) <
                1e-5);
    }
}

void TestBackwardScene::everyFrameHoldsWhatItsStepComputes() {
    QFETCH(VizSettings, settings);
    const auto scene = buildScene(settings, nullptr);
    const BackwardScene& b = *scene->backward;
    const ProblemSpec& spec = settings.spec;
    const int d = spec.headDim;
    const auto shaped = [](const auto& m, Eigen::Index rows, Eigen::Index cols) {
        return m.rows() == rows && m.cols() == cols;
    };
    std::set<StepKind> seen;
    for (int s = 0; s < scene->stepCount(); ++s) {
        const auto frame = makeFrame(scene, s);
        const StepState& st = frame->state;
        const StepInfo& info = st.info;
        const int r = info.rows.size(), c = info.cols.size();
        seen.insert(info.kind);
        QVERIFY(!frame->correct); // no bug: nothing to compare against
        QVERIFY(!frame->trace);   // the forward's trace is the forward's
        const QByteArray where =
            QByteArray("step ") + QByteArray::number(s) + ' ' + toString(info.kind);
        if (s > 0) QCOMPARE(frame->before, scene->engine->countersThrough(s - 1));
        switch (info.kind) {
        case StepKind::ComputeRowDots:
            QVERIFY2(shaped(st.dO, spec.queries, d) && shaped(st.output, spec.queries, d) &&
                         st.delta.size() == spec.queries,
                     where);
            QVERIFY(maxAbsDiff(st.output, scene->output) < 1e-6);
            break;
        case StepKind::InitialiseQueryGradient:
            break;
        case StepKind::LoadKeyValue:
            QVERIFY2(shaped(st.key, c, d) && shaped(st.value, c, d), where);
            QVERIFY2(shaped(st.dKNew, c, d) && st.dKNew.isZero() && st.dVNew.isZero(), where);
            break;
        case StepKind::StoreKeyValueGradient: {
            QVERIFY2(shaped(st.dKNew, c, d) && shaped(st.dVNew, c, d), where);
            const Range keys = info.cols;
            QVERIFY2(maxAbsDiff(st.dKNew, b.grads.dk.middleRows(keys.begin, c)) < 1e-5, where);
            QVERIFY2(maxAbsDiff(st.dVNew, b.grads.dv.middleRows(keys.begin, c)) < 1e-5, where);
            if (frame->backwardTrace) {
                QVERIFY2(sameValues(frame->backwardTrace->dK, st.dKNew) ||
                             maxAbsDiff(frame->backwardTrace->dK, st.dKNew) < 1e-12,
                         where);
            } else {
                // Only a key block no query sees (causal, more keys than queries) has no tile.
                QVERIFY2(engineSeesNoQuery(*scene->engine, info.keyBlock), where);
            }
            break;
        }
        default: {
            // A tile's step: its blocks, and what came before it on chip and in HBM.
            QVERIFY2(info.queryBlock >= 0 && info.keyBlock >= 0, where);
            QVERIFY2(shaped(st.query, r, d) && shaped(st.dO, r, d) && st.lse.size() == r &&
                         st.delta.size() == r,
                     where);
            QVERIFY2(shaped(st.dQOld, r, d) && shaped(st.dKOld, c, d) && shaped(st.dVOld, c, d),
                     where);
            const bool pastScores = info.kind != StepKind::LoadQueryGradient;
            const bool pastWeights = pastScores && info.kind != StepKind::RecomputeScores;
            QVERIFY2(!pastScores || settings.options.backward.storeWeights ||
                         shaped(st.scores, r, c),
                     where);
            QVERIFY2(!pastWeights || shaped(st.weights, r, c), where);
            const auto at = [&](StepKind k) { return int(info.kind) >= int(k); };
            QVERIFY2(!at(StepKind::UpdateValueGradient) || shaped(st.dVNew, c, d), where);
            QVERIFY2(!at(StepKind::ComputeWeightGradient) || shaped(st.dP, r, c), where);
            QVERIFY2(!at(StepKind::ComputeScoreGradient) || shaped(st.dS, r, c), where);
            QVERIFY2(!at(StepKind::UpdateQueryGradient) || shaped(st.dQNew, r, d), where);
            QVERIFY2(!at(StepKind::UpdateKeyGradient) || shaped(st.dKNew, c, d), where);
            if (info.kind == StepKind::UpdateKeyGradient) {
                // The backend's own record of the finished tile, agreeing with the engine.
                QVERIFY2(frame->backwardTrace, where);
                QCOMPARE(frame->backwardTrace->keyBlock, info.keyBlock);
                QCOMPARE(frame->backwardTrace->queryBlock, info.queryBlock);
                QVERIFY2(maxAbsDiff(frame->backwardTrace->dQ, st.dQNew) < 1e-5, where);
                QVERIFY2(maxAbsDiff(frame->backwardTrace->dK, st.dKNew) < 1e-5, where);
            } else {
                QVERIFY2(!frame->backwardTrace, where);
            }
            break;
        }
        }
    }
    for (StepKind kind : {StepKind::ComputeRowDots, StepKind::InitialiseQueryGradient,
                          StepKind::LoadKeyValue, StepKind::LoadQueryGradient,
                          StepKind::UpdateQueryGradient, StepKind::StoreKeyValueGradient})
        QVERIFY2(seen.count(kind), toString(kind));
}

void TestBackwardScene::eachBugFailsFromItsFirstWrongStep_data() {
    QTest::addColumn<VizSettings>("settings");
    for (const BackwardSwitch& flag : backwardSwitches()) {
        if (!flag.isBug) continue;
        // The forgotten mask needs a mask; the others bite on the toy.
        VizSettings s = std::string(flag.name) == "no-mask-recompute"
                            ? backwardSettings(makeSpec(13, 11, 3, true), 4, 3)
                            : toyBackward();
        s.options.backward.*flag.field = flag.onValue;
        QTest::newRow(flag.name) << s;
    }
}

void TestBackwardScene::eachBugFailsFromItsFirstWrongStep() {
    QFETCH(VizSettings, settings);
    QVERIFY(settings.hasBug());
    const auto scene = buildScene(settings, nullptr);
    const BackwardScene& b = *scene->backward;
    QVERIFY2(!b.check.passed(), b.check.summary().c_str());
    QVERIFY2(scene->check.passed(), "the forward is not broken by a backward bug");
    QVERIFY(std::count(b.wrongQueryRow.begin(), b.wrongQueryRow.end(), 1) +
                std::count(b.wrongKeyRow.begin(), b.wrongKeyRow.end(), 1) >
            0);
    QVERIFY(scene->correctEngine);
    QCOMPARE(scene->correctEngine->options().backward.storeWeights,
             settings.options.backward.storeWeights);
    QVERIFY(!scene->correctEngine->options().backward.anyBug());
    QVERIFY(b.firstBugStep);
    const int first = *b.firstBugStep;
    QVERIFY(first >= 0 && first < scene->stepCount());
    // Before it, the buggy run's values are the correct run's; at it, they differ.
    for (int s = 0; s < first; ++s) {
        const auto frame = makeFrame(scene, s);
        QVERIFY(frame->correct);
        QVERIFY2(sameBackwardValues(frame->state, *frame->correct), qPrintable(QString::number(s)));
    }
    const auto at = makeFrame(scene, first);
    QVERIFY(at->correct);
    QVERIFY(!sameBackwardValues(at->state, *at->correct));
}

void TestBackwardScene::aWrongForwardIsWrongFromThePrePass() {
    VizSettings s = toyBackward();
    s.spec.pattern = InputPattern::LateMaximum;
    s.options.rescale = false;
    const auto scene = buildScene(s, nullptr);
    QVERIFY(!scene->check.passed());
    QVERIFY(!scene->backward->check.passed());
    QCOMPARE(scene->backward->firstBugStep, std::optional<int>(0));
    QVERIFY(scene->correctEngine);
    const auto frame = makeFrame(scene, 0);
    QVERIFY(!sameBackwardValues(frame->state, *frame->correct));
}

void TestBackwardScene::storedWeightsAreReadBack() {
    VizSettings s = toyBackward();
    s.options.backward.storeWeights = true;
    QVERIFY(!s.hasBug());
    const auto scene = buildScene(s, nullptr);
    QVERIFY(scene->backward->check.passed());
    // The trade's stored side is this run, plus the forward's write of the 8 x 8 P.
    QCOMPARE(scene->backward->storedWeightsTotals.hbmReadBytes, scene->totals.hbmReadBytes);
    QCOMPARE(scene->backward->storedWeightsTotals.flops, scene->totals.flops);
    QCOMPARE(scene->backward->storedWeightsTotals.hbmWriteBytes,
             scene->totals.hbmWriteBytes + 8 * 8 * kBytesPerElement);
    bool read = false;
    for (int step = 0; step < scene->stepCount(); ++step)
        read |= scene->engine->info(step).kind == StepKind::ReadStoredWeights;
    QVERIFY(read);
}

void TestBackwardScene::largeRunHasNoTraceAndSaysWhy() {
    const auto scene = buildScene(backwardSettings(makeSpec(1100, 1100, 8), 100, 100), nullptr);
    QVERIFY(!scene->backward->trace);
    QVERIFY(scene->traceNote.contains(QString::number(kTraceMaxSequence)));
    QVERIFY(scene->backward->check.passed());
}

void TestBackwardScene::windowLimitsApply() {
    // The tile limit, as for the forward.
    VizSettings tiny = backwardSettings(makeSpec(4096, 4096, 4), 1, 1);
    try {
        (void)validateForWindow(tiny);
        QFAIL("16.8 M tiles accepted");
    } catch (const EngineError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("tiles")), e.what());
    }
    tiny.algorithm = Algorithm::Flash;
    QVERIFY_THROWS_EXCEPTION(EngineError, (void)validateForWindow(tiny));
    // Two n_q x n_k doubles for the reference's P and dS, which a flash run does not need.
    VizSettings big = backwardSettings(makeSpec(kWindowMaxSequence, kWindowMaxSequence, 4), 64, 64);
    bool refused = false;
    try {
        requireScoreMatrixMemory(big.spec.queries, big.spec.keys, int(sizeof(double)), 2);
    } catch (const EngineError&) {
        refused = true;
    }
    bool windowRefused = false;
    try {
        (void)validateForWindow(big);
    } catch (const EngineError&) {
        windowRefused = true;
    }
    QCOMPARE(windowRefused, refused);
}

void TestBackwardScene::framesCostWhatTheyReplay() {
    VizSettings s = backwardSettings(makeSpec(1024, 1024, 64), 64, 64);
    const auto scene = buildScene(s, nullptr);
    const StepEngine& engine = *scene->engine;
    QCOMPARE(frameCost(*scene, 0), 0.0);
    // A state replays from the engine's nearest checkpoint of the sums: the tiles since it in
    // its key block (4 products each) and in its query block (3), and its own tile (5).
    const int every = engine.backwardCheckpointInterval();
    const double product = 2.0 * 64 * 64 * 64;
    const int late = scene->backward->queryBlockDoneStep.back();
    const StepInfo info = engine.info(late);
    QCOMPARE(info.kind, StepKind::UpdateQueryGradient);
    QCOMPARE(frameCost(*scene, late),
             (4.0 * (info.queryBlock % every) + 3.0 * (info.keyBlock % every) + 5) * product);
    // n = 4096 keeps its sums every few tiles: the replay is bounded by that, not by n.
    const auto large = buildScene(backwardSettings(makeSpec(4096, 4096, 64), 64, 64), nullptr);
    const int largeEvery = large->engine->backwardCheckpointInterval();
    QVERIFY(largeEvery > 1);
    const int last = large->stepCount() - 2; // the last tile's UpdateKeyGradient
    QCOMPARE(large->engine->info(last).kind, StepKind::UpdateKeyGradient);
    QVERIFY(frameCost(*large, last) <= (7.0 * (largeEvery - 1) + 5) * product);
    QVERIFY(frameCost(*large, last) > kParallelFrameFlops);
    // With a bug the correct run's state is computed too.
    s.options.backward.subtractRowDot = false;
    const auto buggy = buildScene(s, nullptr);
    QCOMPARE(frameCost(*buggy, late), 2 * frameCost(*scene, late));
    QVERIFY(buildCost(s) > buildCost([&] {
                VizSettings f = s;
                f.algorithm = Algorithm::Flash;
                return f;
            }()));
}

void TestBackwardScene::settingsKeepTheSwitches() {
    for (const BackwardSwitch& flag : backwardSwitches()) {
        VizSettings s = toyBackward();
        s.options.backward.*flag.field = flag.onValue;
        expectRoundTrip(s);
        if (QTest::currentTestFailed()) return;
    }
    const QJsonObject json = settingsToJson(toyBackward());
    for (const char* key : {"subtractRowDot", "useLogSumExp", "accumulateDq", "maskRecompute",
                            "storeWeights", "onesUpstream"})
        QVERIFY2(json.value(QLatin1String(key)).isBool(), key);
    QCOMPARE(json.value(QStringLiteral("algorithm")).toString(), QStringLiteral("backward"));
    // Only a backward run's bugs are bugs.
    VizSettings forward = toySettings();
    forward.options.backward.subtractRowDot = false;
    QVERIFY(!forward.hasBug());
    forward.algorithm = Algorithm::Backward;
    QVERIFY(forward.hasBug());
}

// The backward's tensor-core check: saved and read back by its name (core's), the scene's run
// asking for it and its stage named for it; off asks for none and names no stage. A name it does
// not know is refused naming the ones it knows; settings saved without it take core's default.
void TestBackwardScene::settingsKeepTheTensorCoreCheck() {
    QVERIFY(toySettings().tensorCoreCheck == LowPrecisionCheck(kDefaultLowPrecision));
    for (const LowPrecisionCheck check : {LowPrecisionCheck(HalfType::Fp16),
                                          LowPrecisionCheck(HalfType::Bf16), LowPrecisionCheck()}) {
        VizSettings s = toyBackward();
        s.tensorCoreCheck = check;
        QCOMPARE(settingsToJson(s).value(QStringLiteral("tensorCoreCheck")).toString(),
                 QLatin1String(toString(check)));
        expectRoundTrip(s);
        if (QTest::currentTestFailed()) return;
        // The scene's run asks for it, and its progress names the stage for it.
        QVERIFY(sceneRunRequest(s, Algorithm::Backward).lowPrecision == check);
        const QString label = tensorCoreStageLabel(s);
        if (check)
            QCOMPARE(label, QStringLiteral("The %1 tensor-core kernels, judged against plain %1")
                                .arg(QLatin1String(toString(*check))));
        else
            QVERIFY2(label.isEmpty(), qPrintable(label));
        // Built on the CPU: kept in the scene, and nothing run (the CPU has no such kernels).
        const auto scene = buildScene(s, nullptr);
        QVERIFY(scene->settings.tensorCoreCheck == check);
        QVERIFY(!scene->backward->lowPrecisionCheck);
        QVERIFY(scene->backward->lowPrecisionNote.isEmpty());
    }
    // Saved before it could be chosen: the base's choice (core's default in a fresh one).
    VizSettings fp16 = toyBackward();
    fp16.tensorCoreCheck = HalfType::Fp16;
    QJsonObject old = settingsToJson(toyBackward());
    old.remove(QStringLiteral("tensorCoreCheck"));
    QVERIFY(settingsFromJson(old, toySettings()).tensorCoreCheck ==
            LowPrecisionCheck(kDefaultLowPrecision));
    QVERIFY(settingsFromJson(old, fp16).tensorCoreCheck == LowPrecisionCheck(HalfType::Fp16));
    // Refused by name, naming the names; in saved settings the rest loads and the default stays.
    for (const auto& [value, shown] :
         {std::pair{QJsonValue(QStringLiteral("fp32")),
                    QStringLiteral("unknown tensor-core check 'fp32' "
                                   "(use fp16, bf16 or off)")},
          std::pair{QJsonValue(true), QStringLiteral("must be text")}}) {
        const QJsonObject bad{{QStringLiteral("tensorCoreCheck"), value}};
        try {
            (void)settingsFromJson(bad, toyBackward());
            QFAIL("a bad tensor-core check read");
        } catch (const EngineError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.startsWith(QStringLiteral("tensorCoreCheck")) &&
                         message.contains(shown),
                     qPrintable(message));
        }
    }
    QTemporaryDir dir;
    QSettings store(dir.filePath(QStringLiteral("saved.ini")), QSettings::IniFormat);
    store.setValue(QStringLiteral("run/settings"),
                   QStringLiteral("{\"algorithm\": \"backward\", \"tensorCoreCheck\": \"fp8\"}"));
    QStringList problems;
    const auto loaded = loadSettings(store, &problems);
    QVERIFY(loaded);
    QCOMPARE(loaded->algorithm, Algorithm::Backward);
    QVERIFY(loaded->tensorCoreCheck == LowPrecisionCheck(kDefaultLowPrecision));
    QVERIFY2(problems.size() == 1 && problems.front().contains(QStringLiteral("'fp8'")),
             qPrintable(problems.join(QStringLiteral("; "))));
}

void TestBackwardScene::settingsRefuseBadSwitches() {
    const VizSettings base = toyBackward();
    QJsonObject bad{{QStringLiteral("subtractRowDot"), 1}};
    try {
        (void)settingsFromJson(bad, base);
        QFAIL("a number read as a switch");
    } catch (const EngineError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("subtractRowDot")), e.what());
    }
    QStringList problems;
    bad.insert(QStringLiteral("storeWeights"), true);
    const VizSettings kept = settingsFromJson(bad, base, &problems);
    QCOMPARE(problems.size(), 1);
    QVERIFY(kept.options.backward.subtractRowDot);
    QVERIFY(kept.options.backward.storeWeights);
}

void TestBackwardScene::describedWithItsSwitches() {
    VizSettings s = toyBackward();
    QVERIFY(describeSettings(s).startsWith(QStringLiteral("backward · n 8 · d 4 · 4×4 tiles")));
    s.options.backward.subtractRowDot = false;
    s.options.backward.storeWeights = true;
    QVERIFY(describeSettings(s).contains(QStringLiteral("no-row-dot")));
    QVERIFY(describeSettings(s).contains(QStringLiteral("store-p")));
}

void TestBackwardScene::presetsRead() {
    for (const char* id : {"backward", "backward-bug", "backward-causal", "backward-long"}) {
        const Preset* p = findPreset(QLatin1String(id));
        QVERIFY2(p, id);
        QCOMPARE(p->settings.algorithm, Algorithm::Backward);
    }
    const Preset& toy = *findPreset(QStringLiteral("backward"));
    QCOMPARE(toy.settings.spec.queries, 8);
    QCOMPARE(toy.settings.spec.headDim, 4);
    QVERIFY(!toy.settings.hasBug());
    // The bug preset opens at the step where its bug first changes a value.
    const Preset& bug = *findPreset(QStringLiteral("backward-bug"));
    QVERIFY(!bug.settings.options.backward.subtractRowDot);
    const auto scene = buildScene(bug.settings, nullptr);
    QVERIFY(!scene->backward->check.passed());
    QCOMPARE(bug.step, QString::number(*scene->backward->firstBugStep));
    const Preset& causal = *findPreset(QStringLiteral("backward-causal"));
    QVERIFY(causal.settings.spec.causal);
    QVERIFY(!causal.settings.options.backward.maskRecompute);
    QVERIFY(causal.settings.spec.queries % causal.settings.options.blockRows != 0 ||
            causal.settings.spec.keys % causal.settings.options.blockCols != 0);
    const Preset& longRun = *findPreset(QStringLiteral("backward-long"));
    QCOMPARE(longRun.settings.spec.queries, 4096);
    QCOMPARE(longRun.settings.spec.headDim, 64);
    QCOMPARE(longRun.settings.options.blockRows, 64);
    // The presets before them are kept, in their order.
    QCOMPARE(presets().front().id, QStringLiteral("toy"));
}

// The backward's LoadKeyValue is explained by the entry naming the backward; its dS by the
// sentence for the switch that is on.
void TestBackwardScene::whysFollowTheAlgorithmAndTheSwitches() {
    const QByteArray bytes = quoted(
        "{'why': ["
        "        {'id': 'stream', 'steps': ['load-key-value'], 'text': 'K and V stream past Q_i.'},"
        "        {'id': 'kv-stays', 'steps': ['load-key-value'], 'algorithms': ['backward'],"
        "         'text': 'K_j and V_j stay while every query block passes.'},"
        "        {'id': 'row-dot', 'steps': ['compute-score-gradient'], 'text': 'D takes back the "
        "sum.',"
        "         'whenOn': {'no-row-dot': 'Without D the constraint is lost.',"
        "                    'no-lse': 'P is not the softmax.'}}]}");
    const StepWhyParse parsed = parseStepWhys(bytes, QStringLiteral("test"));
    QVERIFY2(parsed.errors.isEmpty(), qPrintable(parsed.errors.join(QStringLiteral("; "))));
    QCOMPARE(int(parsed.entries.size()), 3);
    const auto& e = parsed.entries;
    const FlashOptions plain;
    QCOMPARE(whyOfStep(e, StepKind::LoadKeyValue, plain, Algorithm::Flash), e[0].text);
    QCOMPARE(whyOfStep(e, StepKind::LoadKeyValue, plain, Algorithm::Backward), e[1].text);
    QCOMPARE(whyOfStep(e, StepKind::ComputeScoreGradient, plain, Algorithm::Backward), e[2].text);
    FlashOptions bug;
    bug.backward.subtractRowDot = false;
    bug.backward.useLogSumExp = false;
    // The first switch on, in core's order: no-row-dot before no-lse.
    QCOMPARE(whyOfStep(e, StepKind::ComputeScoreGradient, bug, Algorithm::Backward),
             QStringLiteral("Without D the constraint is lost."));
    bug.backward.subtractRowDot = true;
    QCOMPARE(whyOfStep(e, StepKind::ComputeScoreGradient, bug, Algorithm::Backward),
             QStringLiteral("P is not the softmax."));
    // The backward's kinds are step kinds the list may name.
    for (StepKind kind : {StepKind::ComputeRowDots, StepKind::StoreKeyValueGradient})
        QVERIFY(parseStepWhys(QByteArray(quoted("{'why': [{'id': 'x', 'steps': ['")) +
                                  toString(kind) + quoted("'], 'text': 't'}]}"),
                              QStringLiteral("test"))
                    .errors.isEmpty());
}

void TestBackwardScene::whysRefuseUnknownNames() {
    const StepWhyParse badAlgorithm =
        parseStepWhys(quoted("{'why': [{'id': 'x', 'steps': ['load-key-value'], 'algorithms': "
                             "['backwards'], 'text': 't'}]}"),
                      QStringLiteral("test"));
    QCOMPARE(badAlgorithm.errors.size(), 1);
    QVERIFY2(badAlgorithm.errors[0].contains(QStringLiteral("backwards")),
             qPrintable(badAlgorithm.errors[0]));
    const StepWhyParse badSwitch =
        parseStepWhys(quoted("{'why': [{'id': 'x', 'steps': ['compute-score-gradient'], 'text': "
                             "'t', 'whenOn': {'no-rowdot': 't'}}]}"),
                      QStringLiteral("test"));
    QCOMPARE(badSwitch.errors.size(), 1);
    QVERIFY2(badSwitch.errors[0].contains(QStringLiteral("no-rowdot")) &&
                 badSwitch.errors[0].contains(QStringLiteral("no-row-dot")),
             qPrintable(badSwitch.errors[0]));
}

QTEST_GUILESS_MAIN(TestBackwardScene)
#include "tst_backward_scene.moc"
