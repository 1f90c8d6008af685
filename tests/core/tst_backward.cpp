// FlashAttention-2's backward pass: its gradients against the closed form and against finite
// differences, each bug switch failing where it must (and by how much), the stored-P trade, the
// counting model, and the step engine's state at step k against the pass run to that point.
#include "core/attention.h"
#include "core/backend.h"
#include "core/backward.h"
#include "core/check.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/run.h"
#include "core/steps.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <functional>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::Precision)

namespace {

using u64 = std::uint64_t;

Problem problemOf(const TileCase& c, Precision precision = Precision::Double,
                  InputPattern pattern = InputPattern::Gaussian, std::uint64_t seed = 1) {
    return makeProblem(makeSpec(c.queries, c.keys, c.headDim, c.causal, precision, pattern, seed));
}

Gradients flashGradients(const Problem& p, const FlashOptions& options) {
    return flashBackward(p, upstreamGradient(p.spec, options.backward), options).grads;
}

GradientCheck checkOf(const Problem& p, const FlashOptions& options) {
    const Matrix dO = upstreamGradient(p.spec, options.backward);
    return compareGradients(flashBackward(p, dO, options).grads, referenceGradients(p, dO),
                            defaultTolerance(p.spec.precision));
}

// The shapes every data-driven test runs: the toy, ragged tiles, n_q != n_k both ways (with rows
// that see no key at all), Br != Bc, a single block, blocks of one.
void addShapes() {
    addTileCaseColumns();
    QTest::newRow("toy 8x8 d4 4x4") << 8 << 8 << 4 << 4 << 4 << false;
    QTest::newRow("ragged 37x29 d5 8x6") << 37 << 29 << 5 << 8 << 6 << false;
    QTest::newRow("causal 40x40 d4 8x8") << 40 << 40 << 4 << 8 << 8 << true;
    QTest::newRow("causal ragged 33x33 d3 7x5") << 33 << 33 << 3 << 7 << 5 << true;
    QTest::newRow("causal nq>nk 50x20 (rows see no key)") << 50 << 20 << 4 << 8 << 6 << true;
    QTest::newRow("causal nq<nk 30x50") << 30 << 50 << 3 << 8 << 12 << true;
    QTest::newRow("one block 12x9 d6") << 12 << 9 << 6 << 12 << 9 << false;
    QTest::newRow("blocks of one 5x4 d2") << 5 << 4 << 2 << 1 << 1 << true;
}

// sum(dO ∘ O): its gradient with respect to Q, K, V is what the backward computes.
double loss(const Problem& p, const Matrix& dO) {
    return referenceAttention(p).cwiseProduct(dO).sum();
}

// Central differences of the loss, entry by entry, through ordinary attention in double.
Matrix finiteDifference(Problem p, const Matrix& dO, Matrix Problem::*input) {
    constexpr double h = 1e-6;
    Matrix grad((p.*input).rows(), (p.*input).cols());
    for (Eigen::Index r = 0; r < grad.rows(); ++r)
        for (Eigen::Index c = 0; c < grad.cols(); ++c) {
            const double x = (p.*input)(r, c);
            (p.*input)(r, c) = x + h;
            const double up = loss(p, dO);
            (p.*input)(r, c) = x - h;
            const double down = loss(p, dO);
            (p.*input)(r, c) = x;
            grad(r, c) = (up - down) / (2 * h);
        }
    return grad;
}

FlashOptions withSwitch(FlashOptions o, const char* name) {
    for (const BackwardSwitch& flag : backwardSwitches())
        if (std::string(flag.name) == name) o.backward.*flag.field = flag.onValue;
    return o;
}

// A backend with a forward pass only: the base class refuses the backward.
class ForwardOnlyBackend final : public Backend {
  public:
    std::string name() const override { return "forward-only"; }
    FlashResult flash(const Problem& p, const FlashOptions& o) override { return flashForward(p, o); }
    Matrix standard(const Problem& p) override { return referenceAttention(p); }
    FlashTrace trace(const Problem& p, const FlashOptions& o) override { return CpuBackend().trace(p, o); }
    Precision arithmetic(const ProblemSpec& spec) const override { return spec.precision; }
};

} // namespace

class TstBackward : public QObject {
    Q_OBJECT

  private slots:
    void gradientsEqualTheClosedForm_data();
    void gradientsEqualTheClosedForm();
    void closedFormEqualsFiniteDifferences_data();
    void closedFormEqualsFiniteDifferences();
    void eachBugFailsWhereItMust_data();
    void eachBugFailsWhereItMust();
    void bugsHarmlessWhereNothingTriggersThem();
    void storingPIsCorrectAndCostsMemory();
    void countersEqualTheClosedForm_data();
    void countersEqualTheClosedForm();
    void stepStateEqualsThePassSoFar_data();
    void stepStateEqualsThePassSoFar();
    void statesBetweenCheckpointsAreExact();
    void stepsRunKeyBlocksOuter();
    void firstBugStepIsWhereAValueChanges_data();
    void firstBugStepIsWhereAValueChanges();
    void forwardBugIsWrongFromThePrePass();
    void bugsThatCannotBiteAreFoundWithoutAScan();
    void upstreamGradientIsTheSeeds();
    void runUseCaseChecksEveryGradient();
    void refusesAMismatchedUpstreamGradient();
    void cpuStandsInForABackendWithoutABackward();
    void stepsPastTheLayoutBudgetAreRefused();
};

void TstBackward::gradientsEqualTheClosedForm_data() {
    addShapes();
}

// The bar: double within 1e-12 of ordinary attention's gradients; float within the
// float tolerance.
void TstBackward::gradientsEqualTheClosedForm() {
    const TileCase c = fetchTileCase();
    for (const Precision precision : {Precision::Double, Precision::Float}) {
        const Problem p = problemOf(c, precision, InputPattern::LateMaximum);
        const FlashOptions o = makeOptions(c.blockRows, c.blockCols);
        const Matrix dO = upstreamGradient(p.spec, o.backward);
        const Gradients ref = referenceGradients(p, dO);
        const Gradients got = flashGradients(p, o);
        const double bar = precision == Precision::Double ? 1e-12 : 1e-4;
        for (const auto& [name, a, b] : {std::tuple{"dQ", &got.dq, &ref.dq},
                                         std::tuple{"dK", &got.dk, &ref.dk},
                                         std::tuple{"dV", &got.dv, &ref.dv}}) {
            const double diff = maxAbs(*a, *b);
            QVERIFY2(diff <= bar, qPrintable(QStringLiteral("%1 (%2): max |diff| %3 > %4")
                                                 .arg(name, toString(precision))
                                                 .arg(diff)
                                                 .arg(bar)));
        }
    }
}

void TstBackward::closedFormEqualsFiniteDifferences_data() {
    QTest::addColumn<bool>("causal");
    QTest::newRow("dense 5x4 d3") << false;
    QTest::newRow("causal 5x4 d3") << true;
}

// The closed form itself, independently: central differences of sum(dO ∘ O) agree with it, and
// so does the tiled pass.
void TstBackward::closedFormEqualsFiniteDifferences() {
    QFETCH(bool, causal);
    const Problem p = makeProblem(makeSpec(5, 4, 3, causal));
    const Matrix dO = upstreamGradient(p.spec, {});
    const Gradients ref = referenceGradients(p, dO);
    const Gradients tiled = flashGradients(p, makeOptions(2, 3));
    QVERIFY2(maxAbs(finiteDifference(p, dO, &Problem::q), ref.dq) < 1e-8, "dQ");
    QVERIFY2(maxAbs(finiteDifference(p, dO, &Problem::k), ref.dk) < 1e-8, "dK");
    QVERIFY2(maxAbs(finiteDifference(p, dO, &Problem::v), ref.dv) < 1e-8, "dV");
    QVERIFY(maxAbs(tiled.dq, ref.dq) < 1e-12);
    QVERIFY(maxAbs(tiled.dk, ref.dk) < 1e-12);
    QVERIFY(maxAbs(tiled.dv, ref.dv) < 1e-12);
}

void TstBackward::eachBugFailsWhereItMust_data() {
    QTest::addColumn<QString>("bug");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<bool>("dqWrong");
    QTest::addColumn<bool>("dkWrong");
    QTest::addColumn<bool>("dvWrong");
    // D left out: dS is wrong, so dQ and dK are; dV takes P alone and stays right.
    QTest::newRow("no-row-dot") << "no-row-dot" << false << true << true << false;
    // P without ℓ: every gradient is scaled wrongly.
    QTest::newRow("no-lse") << "no-lse" << false << true << true << true;
    // dQ overwritten: only the last key block's share survives; dK and dV are untouched.
    QTest::newRow("overwrite-dq") << "overwrite-dq" << false << true << false << false;
    // The mask forgotten in the recompute: masked keys get weight, everything moves.
    QTest::newRow("no-mask-recompute") << "no-mask-recompute" << true << true << true << true;
}

void TstBackward::eachBugFailsWhereItMust() {
    QFETCH(QString, bug);
    QFETCH(bool, causal);
    QFETCH(bool, dqWrong);
    QFETCH(bool, dkWrong);
    QFETCH(bool, dvWrong);
    const Problem p = makeProblem(makeSpec(24, 24, 4, causal));
    const FlashOptions o = withSwitch(makeOptions(8, 8), qPrintable(bug));
    QVERIFY(o.backward.anyBug());
    const GradientCheck check = checkOf(p, o);
    QVERIFY2(!check.passed(), qPrintable(bug + ": " + QString::fromStdString(check.summary())));
    // Wrong by far more than rounding: the test says by how much.
    for (const auto& [name, report, wrong] : {std::tuple{"dQ", &check.dq, dqWrong},
                                              std::tuple{"dK", &check.dk, dkWrong},
                                              std::tuple{"dV", &check.dv, dvWrong}}) {
        const QString what = QStringLiteral("%1 with %2: max |diff| %3").arg(name, bug).arg(report->maxAbsDiff);
        if (wrong)
            QVERIFY2(report->maxAbsDiff > 1e-3, qPrintable(what + ", expected wrong"));
        else
            QVERIFY2(report->passed(), qPrintable(what + ", expected right"));
    }
}

void TstBackward::bugsHarmlessWhereNothingTriggersThem() {
    // No mask, nothing to forget; one key block, nothing to overwrite.
    const Problem dense = makeProblem(makeSpec(16, 16, 4));
    QVERIFY(checkOf(dense, withSwitch(makeOptions(4, 4), "no-mask-recompute")).passed());
    QVERIFY(checkOf(dense, withSwitch(makeOptions(4, 16), "overwrite-dq")).passed());
    // ...and the step engine finds no step where they change a value.
    const StepEngine noMask(dense, Algorithm::Backward, withSwitch(makeOptions(4, 4), "no-mask-recompute"));
    QVERIFY(!noMask.firstBackwardBugStep());
    const StepEngine oneBlock(dense, Algorithm::Backward, withSwitch(makeOptions(4, 16), "overwrite-dq"));
    QVERIFY(!oneBlock.firstBackwardBugStep());
}

// Storing P undoes the trade: the same gradients, bit for bit, n_q x n_k more floats kept, no
// scores recomputed (2 n_q n_k d FLOPs fewer) but P read back (4 n_q n_k bytes more).
void TstBackward::storingPIsCorrectAndCostsMemory() {
    const int nq = 20, nk = 28, d = 4;
    const Problem p = makeProblem(makeSpec(nq, nk, d, false));
    const FlashOptions recompute = makeOptions(8, 8);
    const FlashOptions stored = withSwitch(recompute, "store-p");
    // The recompute's bugs cannot touch a stored P.
    const FlashOptions storedWithBug = withSwitch(withSwitch(stored, "no-lse"), "no-mask-recompute");
    QVERIFY(checkOf(p, stored).passed());
    QVERIFY(checkOf(p, storedWithBug).passed());
    const Gradients a = flashGradients(p, recompute), b = flashGradients(p, stored);
    QVERIFY(sameValues(a.dq, b.dq) && sameValues(a.dk, b.dk) && sameValues(a.dv, b.dv));
    QCOMPARE(backwardStoredElements(nq, nk, d, stored.backward) -
                 backwardStoredElements(nq, nk, d, recompute.backward),
             u64(nq) * nk);
    // Q, K, V, O and L: FlashAttention-2's one float per row, not m and ℓ.
    QCOMPARE(backwardStoredElements(nq, nk, d, recompute.backward), u64(2 * nq * d + 2 * nk * d + nq));
    const Counters cr = flashBackwardCounts(nq, nk, d, false, recompute);
    const Counters cs = flashBackwardCounts(nq, nk, d, false, stored);
    QCOMPARE(cr.flops - cs.flops, 2 * u64(nq) * nk * d);
    // P read (4 n_q n_k bytes) and L no longer read (4 n_q bytes per key block: 4 blocks here).
    QCOMPARE(cs.hbmReadBytes - cr.hbmReadBytes, 4 * u64(nq) * nk - 4 * u64(nq) * 4);
}

void TstBackward::countersEqualTheClosedForm_data() {
    addShapes();
}

// Three ways to count, one answer: the pass as it runs, the closed form, and the step engine's
// steps summed; and dense FLOPs are the five matmuls, 10 n_q n_k d.
void TstBackward::countersEqualTheClosedForm() {
    const TileCase c = fetchTileCase();
    for (const char* variant : {"", "store-p", "overwrite-dq"}) {
        const Problem p = problemOf(c);
        FlashOptions o = makeOptions(c.blockRows, c.blockCols);
        if (*variant) o = withSwitch(o, variant);
        const Counters ran = flashBackward(p, upstreamGradient(p.spec, o.backward), o).counters;
        const Counters closed = flashBackwardCounts(c.queries, c.keys, c.headDim, c.causal, o);
        QVERIFY2(ran == closed, qPrintable(QString(variant) + ": " + show(ran) + " vs " + show(closed)));
        const StepEngine engine(p, Algorithm::Backward, o);
        QCOMPARE(engine.stepCount(), int(countSteps(p.spec, Algorithm::Backward, o)));
        Counters walked;
        u64 largestOnChip = 0;
        for (int s = 0; s < engine.stepCount(); ++s) {
            const StepState st = engine.state(s);
            largestOnChip = std::max(largestOnChip, st.sramElements);
            walked = st.counters;
        }
        // The peak scratch is the largest working set a step holds, when a whole tile exists.
        if (c.blockRows <= c.queries && c.blockCols <= c.keys)
            QCOMPARE(largestOnChip, closed.peakScratchElements);
        QVERIFY2(walked == closed, qPrintable(show(walked) + " vs " + show(closed)));
        if (!c.causal && !*variant) QCOMPARE(closed.flops, 10 * u64(c.queries) * c.keys * c.headDim);
    }
}

void TstBackward::stepStateEqualsThePassSoFar_data() {
    addShapes();
}

// The state at every step, computed from (problem, options, k) alone, holds exactly the values
// the whole pass holds at that point (its trace), in both precisions and with a bug on.
void TstBackward::stepStateEqualsThePassSoFar() {
    const TileCase c = fetchTileCase();
    for (const Precision precision : {Precision::Double, Precision::Float}) {
        for (const char* variant : {"", "overwrite-dq"}) {
            const Problem p = problemOf(c, precision, InputPattern::LateMaximum);
            FlashOptions o = makeOptions(c.blockRows, c.blockCols);
            if (*variant) o = withSwitch(o, variant);
            BackwardTrace trace;
            const BackwardResult pass = flashBackward(p, upstreamGradient(p.spec, o.backward), o, &trace);
            const StepEngine engine(p, Algorithm::Backward, o);
            int tiles = 0;
            for (int s = 0; s < engine.stepCount(); ++s) {
                const StepState st = engine.state(s);
                const StepInfo& info = st.info;
                if (info.kind == StepKind::ComputeRowDots) QVERIFY(sameValues(st.delta, pass.delta));
                if (info.kind == StepKind::StoreKeyValueGradient) {
                    QVERIFY(sameValues(st.dKNew, pass.grads.dk.middleRows(info.cols.begin, info.cols.size())));
                    QVERIFY(sameValues(st.dVNew, pass.grads.dv.middleRows(info.cols.begin, info.cols.size())));
                }
                if (info.kind != StepKind::UpdateKeyGradient) continue;
                const BackwardTileTrace* t = trace.find(info.keyBlock, info.queryBlock);
                QVERIFY2(t, qPrintable(QStringLiteral("no trace for tile (%1, %2)").arg(info.keyBlock).arg(info.queryBlock)));
                ++tiles;
                QVERIFY2(sameValues(st.dQNew, t->dQ), qPrintable(QStringLiteral("dQ at step %1").arg(s)));
                QVERIFY2(sameValues(st.dKNew, t->dK), qPrintable(QStringLiteral("dK at step %1").arg(s)));
                QVERIFY2(sameValues(st.dVNew, t->dV), qPrintable(QStringLiteral("dV at step %1").arg(s)));
                if (info.lastKeyBlock)
                    QVERIFY(sameValues(st.dQNew, pass.grads.dq.middleRows(info.rows.begin, info.rows.size())));
            }
            QCOMPARE(tiles, int(trace.tiles.size()));
            // Stepping back costs nothing extra and gives the same state: no history is kept.
            const int middle = engine.stepCount() / 2;
            const StepState forward = engine.state(middle);
            (void)engine.state(engine.stepCount() - 1);
            QVERIFY(sameState(engine.state(middle), forward));
        }
    }
}

// A problem large enough that the engine keeps its sums only every few tiles: states between two
// checkpoints replay from the nearer one and must still hold the pass's exact sums, which a plain
// loop over the tiles (the oracle) computes here.
void TstBackward::statesBetweenCheckpointsAreExact() {
    const Problem p = makeProblem(makeSpec(128, 128, 1024, true));
    const FlashOptions o = withSwitch(makeOptions(1, 1), "overwrite-dq");
    const StepEngine engine(p, Algorithm::Backward, o);
    QVERIFY2(engine.backwardCheckpointInterval() >= 3,
             qPrintable(QString::number(engine.backwardCheckpointInterval())));
    const Matrix& dO = engine.upstreamGradient();
    const auto f = flashForward<double>(p.q, p.k, p.v, p.scale(), true, o);
    const ForwardSavedT<double> saved = forwardSaved<double>(f.o, f.m, f.l);
    const Vector delta = rowDots<double>(dO, saved.o);
    const auto tileAt = [&](int i, int j, BackwardTile<double>& tile) {
        computeBackwardTile<double>(p.q.middleRows(i, 1), p.k.middleRows(j, 1), p.v.middleRows(j, 1),
                                    dO.middleRows(i, 1), saved.lse.segment(i, 1),
                                    saved.offset(o.backward).segment(i, 1), delta.segment(i, 1),
                                    p.scale(), {{i, i + 1}, {j, j + 1}, 128, 128, true}, o.backward, tile);
    };
    int checked = 0;
    for (int s = 2; s < engine.stepCount(); s += 37) {
        const StepState st = engine.state(s);
        if (st.info.queryBlock < 0) continue;
        const int i = st.info.queryBlock, j = st.info.keyBlock;
        Matrix dk = Matrix::Zero(1, 1024), dv = dk, dq = dk;
        BackwardTile<double> tile;
        for (int earlier = j; earlier < i; ++earlier) { // causal, blocks of one: rows j.. see key j
            tileAt(earlier, j, tile);
            addValueGradient<double>(dv, tile, dO.middleRows(earlier, 1));
            addKeyGradient<double>(dk, tile, p.q.middleRows(earlier, 1), p.scale());
        }
        for (int earlier = 0; earlier < j; ++earlier) {
            tileAt(i, earlier, tile);
            applyQueryGradient<double>(dq, tile, p.k.middleRows(earlier, 1), p.scale(), o.backward);
        }
        QVERIFY2(sameValues(st.dKOld, dk) && sameValues(st.dVOld, dv) && sameValues(st.dQOld, dq),
                 qPrintable(QStringLiteral("step %1, tile (%2, %3)").arg(s).arg(j).arg(i)));
        ++checked;
    }
    QVERIFY(checked > 1000);
}

// The toy's first steps, in FlashAttention-2's order: the pre-pass, dQ = 0, then K_0 V_0 and
// every query block's tile under it, then dK_0 dV_0 stored.
void TstBackward::stepsRunKeyBlocksOuter() {
    const Problem p = makeProblem(makeSpec(8, 8, 4));
    const StepEngine engine(p, Algorithm::Backward, makeOptions(4, 4));
    const std::vector<StepKind> tile = {StepKind::LoadQueryGradient, StepKind::RecomputeScores,
                                        StepKind::RecomputeWeights, StepKind::UpdateValueGradient,
                                        StepKind::ComputeWeightGradient, StepKind::ComputeScoreGradient,
                                        StepKind::UpdateQueryGradient, StepKind::UpdateKeyGradient};
    std::vector<StepKind> expected = {StepKind::ComputeRowDots, StepKind::InitialiseQueryGradient};
    for (int j = 0; j < 2; ++j) {
        expected.push_back(StepKind::LoadKeyValue);
        for (int i = 0; i < 2; ++i) expected.insert(expected.end(), tile.begin(), tile.end());
        expected.push_back(StepKind::StoreKeyValueGradient);
    }
    QCOMPARE(engine.stepCount(), int(expected.size()));
    for (int s = 0; s < engine.stepCount(); ++s) {
        const StepInfo info = engine.info(s);
        QCOMPARE(toString(info.kind), toString(expected[std::size_t(s)]));
        if (s >= 2) QCOMPARE(info.keyBlock, (s - 2) / 18);
    }
    QCOMPARE(engine.outerBlockCount(), 2);
    QCOMPARE(engine.firstStepOfOuterBlock(1), 2 + 18);
    // Causal: key block 1 of the toy is seen by query block 1 alone.
    const StepEngine causal(makeProblem(makeSpec(8, 8, 4, true)), Algorithm::Backward, makeOptions(4, 4));
    QCOMPARE(causal.stepCount(), 2 + 2 * 2 + 8 * 3);
    QCOMPARE(causal.info(causal.firstStepOfOuterBlock(1) + 1).queryBlock, 1);
}

void TstBackward::firstBugStepIsWhereAValueChanges_data() {
    QTest::addColumn<QString>("bug");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<bool>("storeP");
    QTest::addColumn<QString>("kind");
    QTest::newRow("no-row-dot") << "no-row-dot" << false << false << "compute-score-gradient";
    QTest::newRow("no-lse") << "no-lse" << false << false << "recompute-weights";
    QTest::newRow("overwrite-dq") << "overwrite-dq" << false << false << "update-query-gradient";
    QTest::newRow("no-mask-recompute") << "no-mask-recompute" << true << false << "recompute-scores";
    // A tile has one step fewer with P stored: the step named must still be the bug's own.
    QTest::newRow("store-p, no-row-dot") << "no-row-dot" << true << true << "compute-score-gradient";
    QTest::newRow("store-p, overwrite-dq") << "overwrite-dq" << false << true << "update-query-gradient";
}

// The step named is the first at which the buggy run shows a different value than the correct
// one, and no earlier step differs.
void TstBackward::firstBugStepIsWhereAValueChanges() {
    QFETCH(QString, bug);
    QFETCH(bool, causal);
    QFETCH(bool, storeP);
    QFETCH(QString, kind);
    const Problem p = makeProblem(makeSpec(16, 16, 4, causal));
    const FlashOptions correct = storeP ? withSwitch(makeOptions(4, 4), "store-p") : makeOptions(4, 4);
    const StepEngine right(p, Algorithm::Backward, correct);
    const StepEngine wrong(p, Algorithm::Backward, withSwitch(correct, qPrintable(bug)));
    const auto first = wrong.firstBackwardBugStep();
    QVERIFY(first);
    QCOMPARE(QString(toString(wrong.info(*first).kind)), kind);
    QVERIFY(!right.firstBackwardBugStep());
    const auto differs = [&](int s) {
        StepState a = right.state(s), b = wrong.state(s);
        a.counters = b.counters = {}; // overwrite-dq reads less: traffic differs, values do not
        return !sameState(a, b);
    };
    for (int s = 0; s < *first; ++s) QVERIFY2(!differs(s), qPrintable(QStringLiteral("step %1 differs").arg(s)));
    QVERIFY(differs(*first));
}

// The pre-pass reads the forward's O: a forward switch that changes O makes the backward wrong
// from step 0; one that changes nothing here (no rescale where every maximum comes first) does not.
void TstBackward::forwardBugIsWrongFromThePrePass() {
    FlashOptions noRescale = makeOptions(4, 4);
    noRescale.rescale = false;
    const StepEngine late(makeProblem(makeSpec(16, 16, 4, false, Precision::Double,
                                               InputPattern::LateMaximum)),
                          Algorithm::Backward, noRescale);
    QCOMPARE(late.firstBackwardBugStep(), std::optional<int>(0));
    const StepEngine early(makeProblem(makeSpec(16, 16, 4, false, Precision::Double,
                                                InputPattern::EarlyMaximum)),
                           Algorithm::Backward, noRescale);
    QVERIFY(!early.firstBackwardBugStep());
}

// With P stored, the recompute's bugs change nothing, and the answer needs no pass.
void TstBackward::bugsThatCannotBiteAreFoundWithoutAScan() {
    const Problem p = makeProblem(makeSpec(16, 16, 4, true));
    const FlashOptions stored = withSwitch(withSwitch(withSwitch(makeOptions(4, 4), "store-p"), "no-lse"),
                                           "no-mask-recompute");
    QVERIFY(!StepEngine(p, Algorithm::Backward, stored).firstBackwardBugStep());
    QVERIFY(checkOf(p, stored).passed());
}

void TstBackward::upstreamGradientIsTheSeeds() {
    const ProblemSpec spec = makeSpec(6, 6, 3, false, Precision::Double, InputPattern::Gaussian, 7);
    const Matrix a = upstreamGradient(spec, {});
    QVERIFY(sameValues(a, upstreamGradient(spec, {})));
    ProblemSpec other = spec;
    other.seed = 8;
    QVERIFY(!sameValues(a, upstreamGradient(other, {})));
    QVERIFY(!sameValues(a, makeProblem(spec).q)); // a stream of its own
    BackwardOptions ones;
    ones.onesUpstream = true;
    QVERIFY(sameValues(upstreamGradient(spec, ones), Matrix::Ones(6, 3)));
    // With dO all ones and no mask, D = rowsum(O): the pre-pass's value is visible to a student.
    const Problem p = makeProblem(spec);
    FlashOptions o = makeOptions(3, 3);
    o.backward.onesUpstream = true;
    const StepEngine engine(p, Algorithm::Backward, o);
    QVERIFY(maxAbs(Matrix(engine.state(0).delta.transpose()),
                   Matrix(referenceAttention(p).rowwise().sum().transpose())) < 1e-12);
}

void TstBackward::runUseCaseChecksEveryGradient() {
    const Problem p = makeProblem(makeSpec(12, 10, 4, true));
    CpuBackend cpu;
    RunRequest request;
    request.algorithm = Algorithm::Backward;
    request.options = makeOptions(4, 5);
    std::vector<RunStage> stages;
    request.onStage = [&](RunStage s) { stages.push_back(s); };
    const BackwardRunResult ok = runBackwardAndCheck(p, cpu, request);
    QVERIFY2(ok.check.passed(), ok.check.summary().c_str());
    QCOMPARE(ok.backendName, std::string("CPU"));
    QCOMPARE(int(stages.size()), 2);
    QVERIFY(ok.counters == flashBackwardCounts(12, 10, 4, true, request.options));
    QCOMPARE(ok.storedElements, backwardStoredElements(12, 10, 4, request.options.backward));
    request.options.backward.subtractRowDot = false;
    const BackwardRunResult bad = runBackwardAndCheck(p, cpu, request);
    QVERIFY(!bad.check.passed());
    QVERIFY(bad.check.summary().rfind("FAIL", 0) == 0);
    QVERIFY(bad.check.dv.passed()); // dV never sees D
}

void TstBackward::refusesAMismatchedUpstreamGradient() {
    const Problem p = makeProblem(makeSpec(6, 6, 3));
    try {
        flashBackward(p, Matrix::Zero(6, 4), makeOptions(3, 3));
        QFAIL("a 6x4 dO for a 6x3 O was taken");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(std::string(e.what()).find("6x4") != std::string::npos, e.what());
    }
}

void TstBackward::cpuStandsInForABackendWithoutABackward() {
    const Problem p = makeProblem(makeSpec(8, 8, 4));
    ForwardOnlyBackend backend;
    RunRequest request;
    request.options = makeOptions(4, 4);
    try {
        runBackwardAndCheck(p, backend, request);
        QFAIL("a backend without a backward ran one");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QCOMPARE(std::string(e.what()), std::string("forward-only has no backward pass"));
    }
    request.cpuAlongside = true;
    const BackwardRunResult r = runBackwardAndCheck(p, backend, request);
    QCOMPARE(r.backendName, std::string("CPU"));
    QCOMPARE(r.cpuStoodIn, std::string("forward-only has no backward pass"));
    QVERIFY(r.check.passed());
    QVERIFY(!r.cpuCheck); // the CPU ran it: nothing to run beside it
}

// The backward's steps run a forward and a backward pass when laid out: n = 65536 (3.8e12
// FLOPs) is refused from the sizes alone, with the figure; the window's largest, 16384, is not.
void TstBackward::stepsPastTheLayoutBudgetAreRefused() {
    const FlashOptions o = makeOptions(64, 64);
    validateSteps(makeSpec(16384, 16384, 64), Algorithm::Backward, o);
    validateSteps(makeSpec(65536, 65536, 64), Algorithm::Flash, o); // the forward's are cheap
    try {
        validateSteps(makeSpec(65536, 65536, 64), Algorithm::Backward, o);
        QFAIL("a backward of 3.8e12 FLOPs was laid out");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::LimitExceeded);
        QVERIFY2(std::string(e.what()).find("3.8e+12 FLOPs") != std::string::npos, e.what());
    }
}

QTEST_APPLESS_MAIN(TstBackward)
#include "tst_backward.moc"
