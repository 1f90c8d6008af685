// Online softmax over one row: exact with the rescale, wrong by a predictable amount without it,
// and the explainer script's demo 2 figures to the printed precision.
#include "core/analysis.h"
#include "core/attention.h"
#include "core/problem.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

using namespace flashviz;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Vector randomRow(int n, std::uint64_t seed, double stddev) {
    NormalGenerator g(seed);
    Vector x(n);
    for (int i = 0; i < n; ++i)
        x(i) = stddev * g.next();
    return x;
}

// What the bug computes, written out: each block's exponentials are taken against the running
// maximum of their own time and summed without ever being brought to a common baseline.
Vector brokenModel(const Vector& x, int block) {
    double m = -kInf;
    double l = 0;
    for (Eigen::Index begin = 0; begin < x.size(); begin += block) {
        const Eigen::Index size = std::min<Eigen::Index>(block, x.size() - begin);
        m = std::max(m, x.segment(begin, size).maxCoeff());
        for (Eigen::Index i = begin; i < begin + size; ++i)
            l += std::exp(x(i) - m);
    }
    return (x.array() - m).exp() / l;
}

std::string fixed6(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6f", value);
    return buffer;
}

std::string sci2(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.2e", value);
    return buffer;
}

std::string firstSix(const Vector& w) {
    std::string s;
    for (int i = 0; i < 6; ++i) {
        if (i > 0) s.push_back(' ');
        s.append(fixed6(w(i)));
    }
    return s;
}

} // namespace

class TstOnlineSoftmax : public QObject {
    Q_OBJECT

  private slots:
    void equalsSafeSoftmax_data();
    void equalsSafeSoftmax();
    void brokenMatchesTheBugsArithmetic_data();
    void brokenMatchesTheBugsArithmetic();
    void brokenIsExactWhenTheMaximumComesFirst();
    void brokenIsWrongWhenTheMaximumRises();
    void scriptDemoFigures();
};

void TstOnlineSoftmax::equalsSafeSoftmax_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("block");
    QTest::addColumn<double>("stddev");
    QTest::newRow("n 32, block 8") << 32 << 8 << 3.0;
    QTest::newRow("n 33, block 8 (ragged)") << 33 << 8 << 3.0;
    QTest::newRow("n 1, block 1") << 1 << 1 << 1.0;
    QTest::newRow("n 7, block 1") << 7 << 1 << 2.0;
    QTest::newRow("n 10, block 64 (block past n)") << 10 << 64 << 2.0;
    QTest::newRow("n 100, block 7") << 100 << 7 << 5.0;
    QTest::newRow("n 50, block 3, large scores") << 50 << 3 << 400.0;
}

void TstOnlineSoftmax::equalsSafeSoftmax() {
    QFETCH(int, n);
    QFETCH(int, block);
    QFETCH(double, stddev);
    const Vector x = randomRow(n, std::uint64_t(n * 31 + block), stddev);
    const OnlineSoftmaxResult r = onlineSoftmax(x, block, true);
    const Vector safe = safeSoftmax(x);
    QCOMPARE(r.weights.size(), x.size());
    QVERIFY(r.weights.allFinite());
    const double diff = (r.weights - safe).cwiseAbs().maxCoeff();
    QVERIFY2(diff <= 1e-14, qPrintable(QStringLiteral("max |diff| = %1").arg(diff)));

    // The blocks cover the row in order, and m, l evolve as the recurrences say.
    const int expectedBlocks = (n + block - 1) / block;
    QCOMPARE(int(r.blocks.size()), expectedBlocks);
    double m = -kInf;
    double l = 0;
    for (int b = 0; b < expectedBlocks; ++b) {
        const OnlineSoftmaxBlock& blk = r.blocks[size_t(b)];
        QCOMPARE(blk.range.begin, b * block);
        QCOMPARE(blk.range.end, std::min(n, (b + 1) * block));
        QCOMPARE(blk.mOld, m);
        QCOMPARE(blk.lOld, l);
        const double chunkMax = x.segment(blk.range.begin, blk.range.size()).maxCoeff();
        QCOMPARE(blk.mNew, std::max(m, chunkMax));
        if (b > 0) QCOMPARE(blk.correction, std::exp(blk.mOld - blk.mNew));
        const double lNew =
            (b > 0 ? std::exp(blk.mOld - blk.mNew) * l : 0.0) +
            (x.segment(blk.range.begin, blk.range.size()).array() - blk.mNew).exp().sum();
        QVERIFY(std::abs(blk.lNew - lNew) <= 1e-13 * lNew);
        m = blk.mNew;
        l = blk.lNew;
    }
    QCOMPARE(m, x.maxCoeff());
    const double fullSum = (x.array() - x.maxCoeff()).exp().sum();
    QVERIFY(std::abs(l - fullSum) <= 1e-13 * fullSum);
}

void TstOnlineSoftmax::brokenMatchesTheBugsArithmetic_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("block");
    QTest::newRow("n 32, block 8") << 32 << 8;
    QTest::newRow("n 33, block 5") << 33 << 5;
    QTest::newRow("n 64, block 1") << 64 << 1;
    QTest::newRow("n 12, block 40") << 12 << 40;
}

void TstOnlineSoftmax::brokenMatchesTheBugsArithmetic() {
    QFETCH(int, n);
    QFETCH(int, block);
    const Vector x = randomRow(n, std::uint64_t(700 + n), 3.0);
    const OnlineSoftmaxResult r = onlineSoftmax(x, block, false);
    const Vector model = brokenModel(x, block);
    QVERIFY(r.weights.allFinite());
    const double diff = (r.weights - model).cwiseAbs().maxCoeff();
    QVERIFY2(diff <= 1e-14,
             qPrintable(QStringLiteral("max |diff| from the bug's model = %1").arg(diff)));
    // Without the rescale the sum only ever overcounts or stays exact: weights sum to <= 1.
    QVERIFY(r.weights.sum() <= 1.0 + 1e-14);
    for (const OnlineSoftmaxBlock& blk : r.blocks)
        if (blk.range.begin > 0)
            QVERIFY(std::abs(blk.lNew - blk.lOld -
                             (x.segment(blk.range.begin, blk.range.size()).array() - blk.mNew)
                                 .exp()
                                 .sum()) <= 1e-13 * blk.lNew);
}

void TstOnlineSoftmax::brokenIsExactWhenTheMaximumComesFirst() {
    Vector x = randomRow(40, 5, 2.0);
    x(3) = x.maxCoeff() + 4.0; // the maximum sits in the first block of 8
    const Vector broken = onlineSoftmax(x, 8, false).weights;
    QVERIFY((broken - safeSoftmax(x)).cwiseAbs().maxCoeff() <= 1e-15);
    QVERIFY(std::abs(broken.sum() - 1.0) <= 1e-14);
}

void TstOnlineSoftmax::brokenIsWrongWhenTheMaximumRises() {
    Vector x(32);
    for (int i = 0; i < 32; ++i)
        x(i) = 0.25 * i; // rises in every block
    const Vector good = onlineSoftmax(x, 8, true).weights;
    const Vector broken = onlineSoftmax(x, 8, false).weights;
    QVERIFY((good - safeSoftmax(x)).cwiseAbs().maxCoeff() <= 1e-15);
    const double diff = (broken - safeSoftmax(x)).cwiseAbs().maxCoeff();
    qInfo("rising row, no rescale: max |diff| = %.3e, weights sum to %.6f", diff, broken.sum());
    QVERIFY2(diff > 1e-2,
             qPrintable(QStringLiteral("the bug should show; max |diff| = %1").arg(diff)));
    QVERIFY(broken.sum() < 0.9);
}

void TstOnlineSoftmax::scriptDemoFigures() {
    const Vector row = scriptSoftmaxRow();
    QCOMPARE(row.size(), Eigen::Index(32));
    QVERIFY(row.allFinite());
    const OnlineSoftmaxDemo demo = onlineSoftmaxDemo(row, 8);
    QCOMPARE(demo.block, 8);
    QVERIFY(demo.scores == row);
    QVERIFY((demo.reference - safeSoftmax(row)).cwiseAbs().maxCoeff() <= 1e-17);
    QVERIFY((demo.online - onlineSoftmax(row, 8, true).weights).cwiseAbs().maxCoeff() <= 1e-17);
    QVERIFY((demo.broken - onlineSoftmax(row, 8, false).weights).cwiseAbs().maxCoeff() <= 1e-17);

    // The reference output prints 0.00e+00; the engine's figure must be float noise at most.
    QVERIFY2(demo.onlineMaxDiff <= 1e-15,
             qPrintable(QStringLiteral("online max |diff| = %1").arg(demo.onlineMaxDiff)));
    QCOMPARE(sci2(demo.brokenMaxDiff), std::string("6.53e-01"));
    QCOMPARE(fixed6(demo.brokenSum), std::string("0.190131"));
    QVERIFY(std::abs(demo.brokenSum - demo.broken.sum()) <= 1e-15);
    QVERIFY(std::abs(demo.brokenMaxDiff - (demo.broken - demo.reference).cwiseAbs().maxCoeff()) <=
            1e-16);

    QCOMPARE(firstSix(demo.reference),
             std::string("0.003957 0.016505 0.003782 0.000028 0.021219 0.005355"));
    QCOMPARE(firstSix(demo.online),
             std::string("0.003957 0.016505 0.003782 0.000028 0.021219 0.005355"));
    QCOMPARE(firstSix(demo.broken),
             std::string("0.000752 0.003138 0.000719 0.000005 0.004034 0.001018"));
}

QTEST_APPLESS_MAIN(TstOnlineSoftmax)
#include "tst_online_softmax.moc"
