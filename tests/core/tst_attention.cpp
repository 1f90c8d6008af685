// Ordinary attention, the causal rule, the local-window stand-in, the safe and naive softmax and
// standard attention, each held to a plain loop written here independently of the engine.
#include "core/attention.h"
#include "core/flash.h"
#include "core/problem.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>

using namespace flashviz;
using namespace flashviz::test;

namespace {

// Attention by definition, one row at a time: scores, the visible keys' maximum, exp, sum, mix.
Matrix loopAttention(const Matrix& q, const Matrix& k, const Matrix& v, double scale, bool causal,
                     int halfWidth = -1) {
    const Eigen::Index nq = q.rows();
    const Eigen::Index nk = k.rows();
    Matrix o = Matrix::Zero(nq, v.cols());
    for (Eigen::Index i = 0; i < nq; ++i) {
        std::vector<double> s(static_cast<size_t>(nk), -kInf);
        double m = -kInf;
        for (Eigen::Index j = 0; j < nk; ++j) {
            if (causal && j > i + (nk - nq)) continue;
            if (halfWidth >= 0 && std::abs(static_cast<long>(i - j)) > halfWidth) continue;
            double dot = 0;
            for (Eigen::Index c = 0; c < q.cols(); ++c)
                dot += q(i, c) * k(j, c);
            s[static_cast<size_t>(j)] = scale * dot;
            m = std::max(m, s[static_cast<size_t>(j)]);
        }
        if (m == -kInf) continue; // no visible key: the row stays 0
        double sum = 0;
        for (Eigen::Index j = 0; j < nk; ++j) {
            const double w =
                s[static_cast<size_t>(j)] == -kInf ? 0.0 : std::exp(s[static_cast<size_t>(j)] - m);
            sum += w;
            o.row(i) += w * v.row(j);
        }
        o.row(i) /= sum;
    }
    return o;
}

Problem gaussian(int nq, int nk, int d, std::uint64_t seed, bool causal = false,
                 InputPattern pattern = InputPattern::Gaussian) {
    return makeProblem(makeSpec(nq, nk, d, causal, Precision::Double, pattern, seed));
}

} // namespace

class TstAttention : public QObject {
    Q_OBJECT

  private slots:
    void causalRule_data();
    void causalRule();
    void referenceMatchesLoops_data();
    void referenceMatchesLoops();
    void referenceInFloat_data();
    void referenceInFloat();
    void referenceOfProblemUsesItsScale();
    void rowsWithoutKeysAreZero();
    void localWindow_data();
    void localWindow();
    void safeSoftmaxByHand_data();
    void safeSoftmaxByHand();
    void naiveSoftmaxOverflows();
    void naiveEqualsSafeOnSmallScores();
    void standardForwardMatchesReference_data();
    void standardForwardMatchesReference();
};

void TstAttention::causalRule_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::newRow("square 6") << 6 << 6;
    QTest::newRow("more keys 4x9") << 4 << 9;
    QTest::newRow("more queries 9x4") << 9 << 4;
    QTest::newRow("single") << 1 << 1;
    QTest::newRow("one query, many keys") << 1 << 7;
    QTest::newRow("many queries, one key") << 7 << 1;
}

void TstAttention::causalRule() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    for (int row = 0; row < queries; ++row) {
        // Bottom-right aligned: the last query sees every key.
        const int expectedLast = std::min(keys - 1, row + keys - queries);
        // The header promises -1 (not any negative number) for a row that sees no key.
        QCOMPARE(lastVisibleKey(row, queries, keys, true), std::max(expectedLast, -1));
        QCOMPARE(lastVisibleKey(row, queries, keys, false), keys - 1);
        for (int col = 0; col < keys; ++col)
            QCOMPARE(causallyVisible(row, col, queries, keys), col <= expectedLast);
    }
    QVERIFY(causallyVisible(queries - 1, keys - 1, queries, keys));
    QCOMPARE(lastVisibleKey(queries - 1, queries, keys, true), keys - 1);
}

void TstAttention::referenceMatchesLoops_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<double>("scale");
    QTest::newRow("8x8 d4") << 8 << 8 << 4 << false << 0.5;
    QTest::newRow("8x8 d4 causal") << 8 << 8 << 4 << true << 0.5;
    QTest::newRow("13x29 d5") << 13 << 29 << 5 << false << 1.0 / std::sqrt(5.0);
    QTest::newRow("13x29 d5 causal") << 13 << 29 << 5 << true << 1.0 / std::sqrt(5.0);
    QTest::newRow("29x13 d3 causal") << 29 << 13 << 3 << true << 0.7;
    QTest::newRow("29x13 d3") << 29 << 13 << 3 << false << 0.7;
    QTest::newRow("1x1 d1") << 1 << 1 << 1 << false << 1.0;
    QTest::newRow("64x64 d16 causal") << 64 << 64 << 16 << true << 0.25;
    QTest::newRow("large scale") << 10 << 12 << 7 << false << 40.0;
}

void TstAttention::referenceMatchesLoops() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(bool, causal);
    QFETCH(double, scale);
    NormalGenerator rng(17);
    const Matrix q = rng.matrix(queries, headDim, 1.0);
    const Matrix k = rng.matrix(keys, headDim, 1.0);
    const Matrix v = rng.matrix(keys, headDim, 1.0);
    const Matrix got = referenceAttention<double>(q, k, v, scale, causal);
    const Matrix want = loopAttention(q, k, v, scale, causal);
    QCOMPARE(got.rows(), Eigen::Index(queries));
    QCOMPARE(got.cols(), Eigen::Index(headDim));
    QVERIFY(got.allFinite());
    const double diff = maxAbs(got, want);
    QVERIFY2(diff <= 1e-12, qPrintable(QStringLiteral("max |diff| = %1").arg(diff)));
}

void TstAttention::referenceInFloat_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<bool>("causal");
    QTest::newRow("32x32 d8") << 32 << 32 << 8 << false;
    QTest::newRow("20x45 d7 causal") << 20 << 45 << 7 << true;
    QTest::newRow("45x20 d7 causal") << 45 << 20 << 7 << true;
}

void TstAttention::referenceInFloat() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(bool, causal);
    NormalGenerator rng(5);
    const Matrix q = rng.matrix(queries, headDim, 1.0 / std::sqrt(double(headDim)));
    const Matrix k = rng.matrix(keys, headDim, 1.0 / std::sqrt(double(headDim)));
    const Matrix v = rng.matrix(keys, headDim, 1.0);
    const double scale = 1.0 / std::sqrt(double(headDim));
    const MatrixF got =
        referenceAttention<float>(q.cast<float>(), k.cast<float>(), v.cast<float>(), scale, causal);
    const Matrix want = loopAttention(q, k, v, scale, causal);
    QVERIFY(got.allFinite());
    const double diff = maxAbs(got.cast<double>(), want);
    QVERIFY2(diff <= 1e-5, qPrintable(QStringLiteral("float max |diff| = %1").arg(diff)));
    QVERIFY2(diff > 0, "a float computation that is bit-identical to double was not done in float");
}

void TstAttention::referenceOfProblemUsesItsScale() {
    ProblemSpec spec;
    spec.queries = 9;
    spec.keys = 11;
    spec.headDim = 6;
    spec.seed = 3;
    spec.scale = 0.9;
    const Problem p = makeProblem(spec);
    QCOMPARE(p.scale(), 0.9);
    QVERIFY(maxAbs(referenceAttention(p), loopAttention(p.q, p.k, p.v, 0.9, false)) <= 1e-12);
    // And the default scale is 1/sqrt(d).
    spec.scale.reset();
    QCOMPARE(spec.effectiveScale(), 1.0 / std::sqrt(6.0));
    const Problem p2 = makeProblem(spec);
    QVERIFY(maxAbs(referenceAttention(p2),
                   loopAttention(p2.q, p2.k, p2.v, 1.0 / std::sqrt(6.0), false)) <= 1e-12);
    // Different scales must give different outputs, or the scale is ignored.
    QVERIFY(maxAbs(referenceAttention(p), referenceAttention(p2)) > 1e-6);
}

void TstAttention::rowsWithoutKeysAreZero() {
    const Problem p = gaussian(12, 5, 4, 9, true);
    const Matrix o = referenceAttention(p);
    QVERIFY(o.allFinite());
    QCOMPARE(o.topRows(7).cwiseAbs().maxCoeff(), 0.0);
    // Row 7 sees exactly key 0, so it is V's first row.
    QVERIFY(maxAbs(o.row(7), p.v.row(0)) <= 1e-15);
    QVERIFY(o.bottomRows(5).cwiseAbs().maxCoeff() > 0);
}

void TstAttention::localWindow_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("halfWidth");
    QTest::newRow("n 40, w 0") << 40 << 0;
    QTest::newRow("n 40, w 3") << 40 << 3;
    QTest::newRow("n 64, w 16") << 64 << 16;
    QTest::newRow("n 33, w 32 (whole row)") << 33 << 32;
    QTest::newRow("n 20, w 100 (whole row)") << 20 << 100;
}

void TstAttention::localWindow() {
    QFETCH(int, n);
    QFETCH(int, halfWidth);
    const Problem p = gaussian(n, n, 8, 21);
    const Matrix got = localWindowAttention(p, halfWidth);
    const Matrix want = loopAttention(p.q, p.k, p.v, p.scale(), false, halfWidth);
    QVERIFY(maxAbs(got, want) <= 1e-12);
    const double fromReference = maxAbs(got, referenceAttention(p));
    if (halfWidth >= n - 1)
        QVERIFY2(fromReference <= 1e-12, "a window covering every key must be exact attention");
    else
        QVERIFY2(fromReference > 1e-3,
                 qPrintable(QStringLiteral("a narrow window should differ; max |diff| = %1")
                                .arg(fromReference)));
    if (halfWidth == 0) QVERIFY(maxAbs(got, p.v) <= 1e-15); // each query sees only its own key
}

void TstAttention::safeSoftmaxByHand_data() {
    QTest::addColumn<QList<double>>("scores");
    QTest::newRow("overflow demo") << QList<double>{800, 810, 805, 790};
    QTest::newRow("small") << QList<double>{0.5, -1.0, 2.0};
    QTest::newRow("single") << QList<double>{1234.5};
    QTest::newRow("ties") << QList<double>{3, 3, 3, 3};
    QTest::newRow("very negative") << QList<double>{-1000, -1001, -999};
}

void TstAttention::safeSoftmaxByHand() {
    QFETCH(QList<double>, scores);
    Vector x(scores.size());
    for (qsizetype i = 0; i < scores.size(); ++i)
        x(i) = scores[i];
    const double m = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (double s : scores)
        sum += std::exp(s - m);
    const Vector got = safeSoftmax(x);
    QCOMPARE(got.size(), x.size());
    QVERIFY(got.allFinite());
    for (qsizetype i = 0; i < scores.size(); ++i)
        QVERIFY2(std::abs(got(i) - std::exp(scores[i] - m) / sum) <= 1e-15,
                 qPrintable(QStringLiteral("weight %1: got %2, by hand %3")
                                .arg(i)
                                .arg(got(i))
                                .arg(std::exp(scores[i] - m) / sum)));
    QVERIFY(std::abs(got.sum() - 1.0) <= 1e-15);
}

void TstAttention::naiveSoftmaxOverflows() {
    Vector x(4);
    x << 800, 810, 805, 790;
    const Vector naive = naiveSoftmax(x);
    QCOMPARE(naive.size(), Eigen::Index(4));
    for (Eigen::Index i = 0; i < 4; ++i)
        QVERIFY2(std::isnan(naive(i)), "exp(800) is inf in double, so inf/inf must be NaN");
    const Vector safe = safeSoftmax(x);
    QVERIFY(safe.allFinite());
    // e^-10, 1, e^-5, e^-20 over their sum, rounded as the script prints them.
    const double sum = std::exp(-10.0) + 1.0 + std::exp(-5.0) + std::exp(-20.0);
    QVERIFY(std::abs(safe(0) - std::exp(-10.0) / sum) <= 1e-17);
    QVERIFY(std::abs(safe(1) - 1.0 / sum) <= 1e-15);
    QVERIFY(std::abs(safe(2) - std::exp(-5.0) / sum) <= 1e-16);
    QVERIFY(std::abs(safe(3) - std::exp(-20.0) / sum) <= 1e-20);
    QVERIFY(std::abs(safe(1) - 0.993262) < 5e-7);
    QVERIFY(std::abs(safe(2) - 0.006693) < 5e-7);
    QVERIFY(std::abs(safe(0) - 0.000045) < 5e-7);
}

void TstAttention::naiveEqualsSafeOnSmallScores() {
    NormalGenerator rng(4);
    for (int n : {1, 5, 64}) {
        Vector x(n);
        for (int i = 0; i < n; ++i)
            x(i) = 3.0 * rng.next();
        const Vector naive = naiveSoftmax(x);
        QVERIFY(naive.allFinite());
        QVERIFY((naive - safeSoftmax(x)).cwiseAbs().maxCoeff() <= 1e-15);
        QVERIFY(std::abs(naive.sum() - 1.0) <= 1e-14);
    }
}

void TstAttention::standardForwardMatchesReference_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<bool>("causal");
    QTest::newRow("16x16 d4") << 16 << 16 << 4 << false;
    QTest::newRow("16x16 d4 causal") << 16 << 16 << 4 << true;
    QTest::newRow("21x9 d5 causal") << 21 << 9 << 5 << true;
    QTest::newRow("9x21 d3") << 9 << 21 << 3 << false;
    QTest::newRow("128x128 d64") << 128 << 128 << 64 << false;
}

void TstAttention::standardForwardMatchesReference() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    QFETCH(bool, causal);
    const Problem p = gaussian(queries, keys, headDim, 8, causal);
    const StandardResult r = standardForward(p);
    QCOMPARE(r.scores.rows(), Eigen::Index(queries));
    QCOMPARE(r.scores.cols(), Eigen::Index(keys));
    QCOMPARE(r.weights.rows(), Eigen::Index(queries));
    QCOMPARE(r.weights.cols(), Eigen::Index(keys));
    QVERIFY(maxAbs(r.o, loopAttention(p.q, p.k, p.v, p.scale(), causal)) <= 1e-12);
    for (int i = 0; i < queries; ++i) {
        const int last = std::min(keys - 1, i + keys - queries);
        double rowSum = 0;
        for (int j = 0; j < keys; ++j) {
            const bool visible = !causal || j <= last;
            if (visible) {
                QVERIFY(std::abs(r.scores(i, j) - p.scale() * p.q.row(i).dot(p.k.row(j))) <= 1e-12);
                QVERIFY(r.weights(i, j) >= 0);
            } else {
                QCOMPARE(r.scores(i, j), -kInf);
                QCOMPARE(r.weights(i, j), 0.0);
            }
            rowSum += r.weights(i, j);
        }
        if (!causal || last >= 0)
            QVERIFY(std::abs(rowSum - 1.0) <= 1e-12);
        else
            QCOMPARE(rowSum, 0.0);
    }
    QVERIFY(r.counters.hbmBytes() > 0);
}

QTEST_APPLESS_MAIN(TstAttention)
#include "tst_attention.moc"
