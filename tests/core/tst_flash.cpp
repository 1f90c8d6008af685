// The tiled forward pass against ordinary attention on many shapes, the two bug switches, the
// debug copy of S, and the single tile update underneath it all.
#include "core/attention.h"
#include "core/check.h"
#include "core/flash.h"
#include "core/problem.h"
#include "core/tile_update.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::LoopOrder)
Q_DECLARE_METATYPE(flashviz::Precision)
Q_DECLARE_METATYPE(flashviz::InputPattern)

namespace {

// The rescale bug switched on: exp(m_old - m_new) is never applied.
FlashOptions withoutRescale(FlashOptions o) {
    o.rescale = false;
    return o;
}

// The tolerances the issue sets: a correct run is within 1e-10 in double and 1e-4 in float
// (LargeScores included: its softmax is close to one-hot, which keeps float's error small).
double toleranceFor(const Problem& p) {
    return p.spec.precision == Precision::Double ? 1e-10 : 1e-4;
}

const char* orderName(LoopOrder o) {
    return o == LoopOrder::QueryOuter ? "q-outer" : "kv-outer";
}

} // namespace

class TstFlash : public QObject {
    Q_OBJECT

  private slots:
    void matchesReference_data();
    void matchesReference();
    void templatedPass_data();
    void templatedPass();
    void floatRunsInFloat();
    void loopOrdersAgree_data();
    void loopOrdersAgree();
    void rescaleBugShows_data();
    void rescaleBugShows();
    void rescaleBugHarmlessWhenMaximumComesFirst_data();
    void rescaleBugHarmlessWhenMaximumComesFirst();
    void rescaleBugHarmlessWithOneKeyBlock();
    void runningMaxOff_data();
    void runningMaxOff();
    void keepFullScores_data();
    void keepFullScores();
    void tilePlaceMasks();
    void tileUpdateIsOrderFree();
    void tileUpdateDetail();
    void normaliseEmptyRows();
};

void TstFlash::matchesReference_data() {
    addTileCaseColumns();
    QTest::addColumn<LoopOrder>("order");
    QTest::addColumn<Precision>("precision");
    QTest::addColumn<InputPattern>("pattern");
    for (const FlashShape& s : kFlashShapes)
        for (bool causal : {false, true})
            for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
                for (Precision precision : {Precision::Double, Precision::Float})
                    for (InputPattern pattern : allInputPatterns())
                        QTest::addRow("%s %s %s %s %s", s.name, causal ? "causal" : "full",
                                      orderName(order), toString(precision), toString(pattern))
                            << s.queries << s.keys << s.headDim << s.blockRows << s.blockCols
                            << causal << order << precision << pattern;
    // The explainer's size at d = 64, fewer combinations to keep the run short.
    for (bool causal : {false, true})
        for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
            for (Precision precision : {Precision::Double, Precision::Float})
                QTest::addRow("512x512 d64 Br64 Bc64 %s %s %s", causal ? "causal" : "full",
                              orderName(order), toString(precision))
                    << 512 << 512 << 64 << 64 << 64 << causal << order << precision
                    << InputPattern::Gaussian;
    QTest::addRow("300x500 d64 Br48 Bc80 late-max")
        << 300 << 500 << 64 << 48 << 80 << false << LoopOrder::QueryOuter << Precision::Double
        << InputPattern::LateMaximum;
}

void TstFlash::matchesReference() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    QFETCH(LoopOrder, order);
    QFETCH(Precision, precision);
    QFETCH(InputPattern, pattern);

    const Problem p = makeProblem(makeSpec(queries, keys, headDim, causal, precision, pattern));
    const FlashResult r = flashForward(p, makeOptions(blockRows, blockCols, order));
    const Matrix reference = referenceAttention(p);
    QCOMPARE(r.o.rows(), Eigen::Index(queries));
    QCOMPARE(r.o.cols(), Eigen::Index(headDim));
    QVERIFY2(r.o.allFinite(), "flash output holds inf or NaN");
    const double tolerance = toleranceFor(p);
    const double diff = maxAbs(r.o, reference);
    QVERIFY2(
        diff <= tolerance,
        qPrintable(QStringLiteral("max |flash - reference| = %1 > %2").arg(diff).arg(tolerance)));
    QCOMPARE(r.fullScores.size(), Eigen::Index(0)); // no n x n copy unless asked for

    // Rows that see no key (causal, n_q > n_k) are exactly 0; m and l hold what they should.
    QCOMPARE(r.m.size(), Eigen::Index(queries));
    QCOMPARE(r.l.size(), Eigen::Index(queries));
    const double rel = precision == Precision::Double ? 1e-12 : 1e-5;
    for (int i = 0; i < queries; ++i) {
        const int last = causal ? std::min(keys - 1, i + keys - queries) : keys - 1;
        if (last < 0) {
            QVERIFY2(r.o.row(i).cwiseAbs().maxCoeff() == 0.0,
                     "a row with no visible key must be 0");
            QCOMPARE(r.l(i), 0.0);
            continue;
        }
        const Vector s = p.scale() * (p.k.topRows(last + 1) * p.q.row(i).transpose());
        const double m = s.maxCoeff();
        const double l = (s.array() - m).exp().sum();
        QVERIFY2(std::abs(r.m(i) - m) <= rel * std::max(1.0, std::abs(m)),
                 qPrintable(QStringLiteral("row %1: m %2, expected %3").arg(i).arg(r.m(i)).arg(m)));
        QVERIFY2(std::abs(r.l(i) - l) <= 10 * rel * std::max(1.0, std::abs(m)) * l,
                 qPrintable(QStringLiteral("row %1: l %2, expected %3").arg(i).arg(r.l(i)).arg(l)));
    }
}

void TstFlash::templatedPass_data() {
    addTileCaseColumns();
    QTest::newRow("33x47 d5 Br8 Bc6") << 33 << 47 << 5 << 8 << 6 << false;
    QTest::newRow("47x33 d5 Br8 Bc6 causal") << 47 << 33 << 5 << 8 << 6 << true;
    QTest::newRow("64x64 d32 Br16 Bc32 causal") << 64 << 64 << 32 << 16 << 32 << true;
}

void TstFlash::templatedPass() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    const Problem p = makeProblem(
        makeSpec(queries, keys, headDim, causal, Precision::Double, InputPattern::Gaussian, 12));
    for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        const FlashOptions options = makeOptions(blockRows, blockCols, order);
        const FlashOutputT<double> d =
            flashForward<double>(p.q, p.k, p.v, p.scale(), causal, options);
        const Matrix refD = referenceAttention<double>(p.q, p.k, p.v, p.scale(), causal);
        QVERIFY(maxAbs(d.o, refD) <= 1e-12);

        const MatrixF qf = p.q.cast<float>(), kf = p.k.cast<float>(), vf = p.v.cast<float>();
        const FlashOutputT<float> f = flashForward<float>(qf, kf, vf, p.scale(), causal, options);
        const MatrixF refF = referenceAttention<float>(qf, kf, vf, p.scale(), causal);
        QVERIFY(f.o.allFinite());
        QVERIFY(maxAbs(f.o.cast<double>(), refF.cast<double>()) <= 1e-5);
        QVERIFY(maxAbs(f.o.cast<double>(), refD) <= 1e-4);
        QVERIFY(f.counters == d.counters); // the counting model is in elements, not bytes of Scalar
    }
}

void TstFlash::floatRunsInFloat() {
    const Problem pd =
        makeProblem(makeSpec(64, 64, 16, false, Precision::Double, InputPattern::Gaussian, 3));
    const Problem pf =
        makeProblem(makeSpec(64, 64, 16, false, Precision::Float, InputPattern::Gaussian, 3));
    QVERIFY(pd.q == pf.q); // precision changes the arithmetic, not the inputs
    const FlashOptions options = makeOptions(16, 16, LoopOrder::QueryOuter);
    const double diff = maxAbs(flashForward(pd, options).o, flashForward(pf, options).o);
    QVERIFY2(diff > 0, "a float problem gave bit-identical results to double: not run in float");
    QVERIFY2(diff < 1e-5, qPrintable(QStringLiteral("float vs double %1").arg(diff)));
}

void TstFlash::loopOrdersAgree_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<bool>("causal");
    QTest::newRow("50x50 Br8 Bc8") << 50 << 50 << 8 << 8 << false;
    QTest::newRow("50x50 Br8 Bc8 causal") << 50 << 50 << 8 << 8 << true;
    QTest::newRow("30x77 Br7 Bc10 causal") << 30 << 77 << 7 << 10 << true;
    QTest::newRow("77x30 Br10 Bc7 causal") << 77 << 30 << 10 << 7 << true;
}

void TstFlash::loopOrdersAgree() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    QFETCH(bool, causal);
    const Problem p = makeProblem(
        makeSpec(queries, keys, 6, causal, Precision::Double, InputPattern::LateMaximum, 4));
    const FlashResult a = flashForward(p, makeOptions(blockRows, blockCols, LoopOrder::QueryOuter));
    const FlashResult b =
        flashForward(p, makeOptions(blockRows, blockCols, LoopOrder::KeyValueOuter));
    QVERIFY(maxAbs(a.o, b.o) <= 1e-13);
    for (int i = 0; i < queries; ++i)
        QVERIFY(a.m(i) == b.m(i) || std::abs(a.m(i) - b.m(i)) <= 1e-13);
    // Same arithmetic, different traffic: the paper order moves O, m, l on every inner step.
    QCOMPARE(a.counters.flops, b.counters.flops);
    QVERIFY(b.counters.hbmBytes() > a.counters.hbmBytes());
}

void TstFlash::rescaleBugShows_data() {
    addTileCaseColumns();
    QTest::addColumn<LoopOrder>("order");
    QTest::addColumn<Precision>("precision");
    const FlashShape shapes[] = {
        {"toy 8x8 d4 Br4 Bc4", 8, 8, 4, 4, 4},
        {"64x64 d16 Br16 Bc16", 64, 64, 16, 16, 16},
        {"40x90 d5 Br8 Bc12", 40, 90, 5, 8, 12},
        {"90x40 d7 Br12 Bc8", 90, 40, 7, 12, 8},
        {"256x256 d64 Br64 Bc64", 256, 256, 64, 64, 64},
    };
    for (const FlashShape& s : shapes)
        for (bool causal : {false, true})
            for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
                for (Precision precision : {Precision::Double, Precision::Float})
                    QTest::addRow("%s %s %s %s", s.name, causal ? "causal" : "full",
                                  orderName(order), toString(precision))
                        << s.queries << s.keys << s.headDim << s.blockRows << s.blockCols << causal
                        << order << precision;
}

void TstFlash::rescaleBugShows() {
    const auto [queries, keys, headDim, blockRows, blockCols, causal] = fetchTileCase();
    QFETCH(LoopOrder, order);
    QFETCH(Precision, precision);
    const Problem p = makeProblem(
        makeSpec(queries, keys, headDim, causal, precision, InputPattern::LateMaximum, 7));
    const Matrix reference = referenceAttention(p);
    const FlashResult good = flashForward(p, makeOptions(blockRows, blockCols, order));
    const FlashResult bad =
        flashForward(p, withoutRescale(makeOptions(blockRows, blockCols, order)));
    const CheckReport goodReport = compareOutputs(good.o, reference, toleranceFor(p));
    const CheckReport badReport = compareOutputs(bad.o, reference, toleranceFor(p));
    QVERIFY2(goodReport.passed(), goodReport.summary().c_str());

    qInfo("rescale off, late maximum: max |diff| = %.3e, %d of %d rows wrong", badReport.maxAbsDiff,
          int(badReport.wrongRows.size()), queries);
    QVERIFY2(!badReport.passed(),
             qPrintable(QStringLiteral("the rescale bug went unnoticed: max |diff| only %1")
                            .arg(badReport.maxAbsDiff)));
    QVERIFY2(badReport.maxAbsDiff > 1e-2,
             qPrintable(QStringLiteral("the rescale bug should be large here; max |diff| = %1")
                            .arg(badReport.maxAbsDiff)));
    QVERIFY(bad.o.allFinite()); // wrong, but silently so: no NaN
    // The bug overweights early keys: a row that sees more than one key block must be wrong.
    const int wrongLastRow = badReport.wrongRows.empty() ? -1 : badReport.wrongRows.back();
    QCOMPARE(wrongLastRow, queries - 1);
    // Rows whose visible keys all sit in the first key block stay right.
    for (int row : badReport.wrongRows) {
        const int last = causal ? std::min(keys - 1, row + keys - queries) : keys - 1;
        QVERIFY2(
            last >= blockCols,
            qPrintable(QStringLiteral("row %1 sees one key block only, yet is wrong").arg(row)));
    }
}

void TstFlash::rescaleBugHarmlessWhenMaximumComesFirst_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<LoopOrder>("order");
    for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        QTest::addRow("48x48 Bc8 %s", orderName(order)) << 48 << 48 << 8 << false << order;
        QTest::addRow("48x48 Bc8 causal %s", orderName(order)) << 48 << 48 << 8 << true << order;
        QTest::addRow("30x101 Bc1 %s", orderName(order)) << 30 << 101 << 1 << false << order;
        QTest::addRow("101x30 Bc7 causal %s", orderName(order)) << 101 << 30 << 7 << true << order;
    }
}

void TstFlash::rescaleBugHarmlessWhenMaximumComesFirst() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, blockCols);
    QFETCH(bool, causal);
    QFETCH(LoopOrder, order);
    const Problem p = makeProblem(
        makeSpec(queries, keys, 8, causal, Precision::Double, InputPattern::EarlyMaximum, 2));
    const FlashResult good = flashForward(p, makeOptions(8, blockCols, order));
    const FlashResult bad = flashForward(p, withoutRescale(makeOptions(8, blockCols, order)));
    // Key 0 holds every row's maximum, so m never rises and exp(m_old - m_new) is always 1.
    const double diff = maxAbs(bad.o, referenceAttention(p));
    QVERIFY2(diff <= 1e-10, qPrintable(QStringLiteral("max |diff| = %1").arg(diff)));
    QVERIFY(maxAbs(bad.o, good.o) <= 1e-14);
}

void TstFlash::rescaleBugHarmlessWithOneKeyBlock() {
    // With a single key block there is nothing to rescale, whatever the scores do.
    for (InputPattern pattern : allInputPatterns()) {
        const Problem p = makeProblem(makeSpec(40, 40, 8, false, Precision::Double, pattern, 5));
        const FlashResult bad =
            flashForward(p, withoutRescale(makeOptions(16, 40, LoopOrder::QueryOuter)));
        const CheckReport report = compareOutputs(bad.o, referenceAttention(p), 1e-10);
        QVERIFY2(report.passed(), report.summary().c_str());
    }
}

void TstFlash::runningMaxOff_data() {
    QTest::addColumn<Precision>("precision");
    QTest::addColumn<InputPattern>("pattern");
    QTest::addColumn<LoopOrder>("order");
    for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter})
        for (Precision precision : {Precision::Double, Precision::Float})
            for (InputPattern pattern : {InputPattern::Gaussian, InputPattern::LargeScores})
                QTest::addRow("%s %s %s", toString(pattern), toString(precision), orderName(order))
                    << precision << pattern << order;
}

void TstFlash::runningMaxOff() {
    QFETCH(Precision, precision);
    QFETCH(InputPattern, pattern);
    QFETCH(LoopOrder, order);
    const Problem p = makeProblem(makeSpec(32, 32, 16, false, precision, pattern, 9));
    FlashOptions options = makeOptions(8, 8, order);
    options.runningMax = false;
    const FlashResult r = flashForward(p, options);
    const CheckReport report = compareOutputs(r.o, referenceAttention(p), toleranceFor(p));
    const double maxScore = (p.scale() * p.q * p.k.transpose()).maxCoeff();
    const double overflowAt = precision == Precision::Double
                                  ? std::log(std::numeric_limits<double>::max())
                                  : std::log(double(std::numeric_limits<float>::max()));
    if (maxScore > overflowAt) {
        qInfo("no running max, largest score %.1f: %d non-finite outputs", maxScore,
              report.nonFiniteCount);
        QVERIFY2(report.nonFiniteCount > 0,
                 "exp() of these scores overflows; the output cannot be finite");
        QVERIFY(!report.passed());
    } else {
        QVERIFY2(maxScore < overflowAt - std::log(32.0) - 1, "test inputs in the no-man's land");
        QVERIFY2(report.passed(), report.summary().c_str());
    }
    if (pattern == InputPattern::LargeScores) QVERIFY(maxScore > overflowAt);
    // With the maximum, the same inputs are fine.
    const FlashResult safe = flashForward(p, makeOptions(8, 8, order));
    const CheckReport safeReport = compareOutputs(safe.o, referenceAttention(p), toleranceFor(p));
    QVERIFY2(safeReport.passed(), safeReport.summary().c_str());
}

void TstFlash::keepFullScores_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<LoopOrder>("order");
    for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        QTest::addRow("24x24 %s", orderName(order)) << 24 << 24 << false << order;
        QTest::addRow("19x31 causal %s", orderName(order)) << 19 << 31 << true << order;
        QTest::addRow("31x19 causal %s", orderName(order)) << 31 << 19 << true << order;
    }
}

void TstFlash::keepFullScores() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(bool, causal);
    QFETCH(LoopOrder, order);
    const Problem p = makeProblem(
        makeSpec(queries, keys, 5, causal, Precision::Double, InputPattern::Gaussian, 6));
    FlashOptions options = makeOptions(8, 6, order);
    const FlashResult clean = flashForward(p, options);
    options.keepFullScores = true;
    const FlashResult kept = flashForward(p, options);
    QVERIFY(maxAbs(clean.o, kept.o) == 0.0); // the copy must not change the arithmetic
    QCOMPARE(kept.fullScores.rows(), Eigen::Index(queries));
    QCOMPARE(kept.fullScores.cols(), Eigen::Index(keys));
    const Matrix s = p.scale() * p.q * p.k.transpose();
    for (int i = 0; i < queries; ++i)
        for (int j = 0; j < keys; ++j)
            if (!causal || causallyVisible(i, j, queries, keys))
                QVERIFY2(std::abs(kept.fullScores(i, j) - s(i, j)) <= 1e-13,
                         qPrintable(QStringLiteral("S(%1,%2) = %3, expected %4")
                                        .arg(i)
                                        .arg(j)
                                        .arg(kept.fullScores(i, j))
                                        .arg(s(i, j))));
    QVERIFY(kept.counters.hbmWriteBytes > clean.counters.hbmWriteBytes);
    QCOMPARE(kept.counters.peakScratchElements,
             std::max<std::uint64_t>(clean.counters.peakScratchElements,
                                     std::uint64_t(queries) * std::uint64_t(keys)));
}

void TstFlash::tilePlaceMasks() {
    for (int queries : {5, 9, 12})
        for (int keys : {5, 9, 12})
            for (int r0 = 0; r0 < queries; r0 += 3)
                for (int c0 = 0; c0 < keys; c0 += 4) {
                    TilePlace place;
                    place.rows = {r0, std::min(queries, r0 + 3)};
                    place.cols = {c0, std::min(keys, c0 + 4)};
                    place.queries = queries;
                    place.keys = keys;
                    place.causal = true;
                    int visible = 0, total = 0;
                    for (int r = place.rows.begin; r < place.rows.end; ++r)
                        for (int c = place.cols.begin; c < place.cols.end; ++c, ++total)
                            if (causallyVisible(r, c, queries, keys)) ++visible;
                    QCOMPARE(place.fullyVisible(), visible == total);
                    QCOMPARE(place.fullyMasked(), visible == 0);
                    place.causal = false;
                    QVERIFY(place.fullyVisible());
                    QVERIFY(!place.fullyMasked());
                }
}

void TstFlash::tileUpdateIsOrderFree() {
    // Softmax does not care in which order the keys arrive; with the rescale, neither does the
    // online update. Feed the key blocks backwards and the answer must not move.
    const Problem p =
        makeProblem(makeSpec(12, 30, 4, false, Precision::Double, InputPattern::LateMaximum, 8));
    const Matrix reference = referenceAttention(p);
    FlashOptions options = makeOptions(12, 7, LoopOrder::QueryOuter);
    TilePlace place;
    place.rows = {0, 12};
    place.queries = 12;
    place.keys = 30;
    // Backwards in blocks of 7 from the end: keys 23..29, 16..22, 9..15, 2..8, 0..1.
    const int begins[] = {23, 16, 9, 2, 0};
    const Matrix s = p.scale() * p.q * p.k.transpose();
    for (int r = 0; r < 12; ++r) {
        Eigen::Index arg = 0;
        s.row(r).maxCoeff(&arg);
        QVERIFY2(arg >= 23, "late-max inputs should put each row's maximum in the last 7 keys");
    }
    for (bool rescale : {true, false}) {
        options.rescale = rescale;
        RowState<double> state;
        state.reset(12, 4);
        TileWorkspace<double> workspace;
        int end = 30;
        for (int begin : begins) {
            place.cols = {begin, end};
            updateTile<double>(state, p.q, p.k.middleRows(begin, end - begin),
                               p.v.middleRows(begin, end - begin), p.scale(), place, options,
                               workspace);
            end = begin;
        }
        Matrix out(12, 4);
        normaliseRows<double>(state, out);
        // With the rescale the order does not matter. Without it, this order is harmless too:
        // the first block seen holds every row's maximum, so m never rises.
        const double diff = maxAbs(out, reference);
        QVERIFY2(diff <= 1e-12,
                 qPrintable(QStringLiteral("rescale %1: max |diff| = %2").arg(rescale).arg(diff)));
    }
    // Forwards without the rescale, the same tiles give a wrong answer.
    options.rescale = false;
    RowState<double> state;
    state.reset(12, 4);
    TileWorkspace<double> workspace;
    for (int begin = 0; begin < 30; begin += 7) {
        const int end = std::min(30, begin + 7);
        place.cols = {begin, end};
        updateTile<double>(state, p.q, p.k.middleRows(begin, end - begin),
                           p.v.middleRows(begin, end - begin), p.scale(), place, options,
                           workspace);
    }
    Matrix out(12, 4);
    normaliseRows<double>(state, out);
    QVERIFY(maxAbs(out, reference) > 1e-2);
}

void TstFlash::tileUpdateDetail() {
    const Problem p =
        makeProblem(makeSpec(6, 10, 3, true, Precision::Double, InputPattern::Gaussian, 10));
    const FlashOptions options = makeOptions(6, 5, LoopOrder::QueryOuter);
    RowState<double> state;
    state.reset(6, 3);
    QCOMPARE(state.m.size(), Eigen::Index(6));
    QVERIFY((state.m.array() == -kInf).all());
    QVERIFY((state.l.array() == 0).all());
    QVERIFY(state.acc.rows() == 6 && state.acc.cols() == 3 && (state.acc.array() == 0).all());
    TileWorkspace<double> workspace;
    TilePlace place;
    place.rows = {0, 6};
    place.queries = 6;
    place.keys = 10;
    place.causal = true;
    for (int begin = 0; begin < 10; begin += 5) {
        place.cols = {begin, begin + 5};
        const Matrix kTile = p.k.middleRows(begin, 5);
        const Matrix vTile = p.v.middleRows(begin, 5);
        const RowState<double> before = state;
        TileDetail<double> detail;
        updateTile<double>(state, p.q, kTile, vTile, p.scale(), place, options, workspace, &detail);
        QVERIFY(detail.mOld == before.m);
        QVERIFY(detail.lOld == before.l);
        QVERIFY(detail.accOld == before.acc);
        QVERIFY(detail.mNew == state.m);
        QVERIFY(detail.lNew == state.l);
        QVERIFY(detail.accNew == state.acc);
        for (int r = 0; r < 6; ++r) {
            for (int c = 0; c < 5; ++c) {
                if (causallyVisible(r, begin + c, 6, 10)) {
                    QVERIFY(std::abs(detail.scores(r, c) -
                                     p.scale() * p.q.row(r).dot(kTile.row(c))) <= 1e-14);
                    QVERIFY(std::abs(detail.weights(r, c) -
                                     std::exp(detail.scores(r, c) - detail.mNew(r))) <= 1e-15);
                } else {
                    QCOMPARE(detail.scores(r, c), -kInf);
                    QCOMPARE(detail.weights(r, c), 0.0);
                }
            }
            const double expectedM = std::max(before.m(r), detail.scores.row(r).maxCoeff());
            QCOMPARE(detail.mNew(r), expectedM);
            const double correction =
                before.m(r) == -kInf ? 0.0 : std::exp(before.m(r) - expectedM);
            if (before.l(r) > 0) QVERIFY(std::abs(detail.correction(r) - correction) <= 1e-15);
            QVERIFY(std::abs(detail.lNew(r) -
                             (correction * before.l(r) + detail.weights.row(r).sum())) <= 1e-13);
            const Eigen::RowVectorXd acc =
                correction * before.acc.row(r) + detail.weights.row(r) * vTile;
            QVERIFY((detail.accNew.row(r) - acc).cwiseAbs().maxCoeff() <= 1e-13);
        }
    }
    Matrix out(6, 3);
    normaliseRows<double>(state, out);
    QVERIFY(maxAbs(out, referenceAttention(p)) <= 1e-12);
}

void TstFlash::normaliseEmptyRows() {
    RowState<float> state;
    state.reset(3, 2);
    state.l(1) = 2.0f;
    state.acc.row(1) << 1.0f, -4.0f;
    MatrixF out = MatrixF::Constant(3, 2, 7.0f);
    normaliseRows<float>(state, out);
    QCOMPARE(out(0, 0), 0.0f);
    QCOMPARE(out(0, 1), 0.0f);
    QCOMPARE(out(1, 0), 0.5f);
    QCOMPARE(out(1, 1), -2.0f);
    QCOMPARE(out(2, 0), 0.0f);
    QVERIFY(out.allFinite());
}

QTEST_APPLESS_MAIN(TstFlash)
#include "tst_flash.moc"
