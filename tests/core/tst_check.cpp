// The check every run is held to: max and per-row error, wrong rows, non-finite values.
#include "core/check.h"
#include "core/errors.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace flashviz;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Matrix sample(int rows, int cols) {
    Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            m(i, j) = std::sin(1.0 + i * 7 + j);
    return m;
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

} // namespace

class TstCheck : public QObject {
    Q_OBJECT

  private slots:
    void tolerances();
    void identicalPasses();
    void oneEntry_data();
    void oneEntry();
    void severalRowsAndNonFinite();
    void shapesMustAgree_data();
    void shapesMustAgree();
};

void TstCheck::tolerances() {
    QCOMPARE(defaultTolerance(Precision::Double), 1e-10);
    QCOMPARE(defaultTolerance(Precision::Float), 1e-4);
}

void TstCheck::identicalPasses() {
    const Matrix a = sample(6, 4);
    const CheckReport r = compareOutputs(a, a, 1e-10);
    QVERIFY(r.passed());
    QCOMPARE(r.maxAbsDiff, 0.0);
    QCOMPARE(r.nonFiniteCount, 0);
    QVERIFY(r.wrongRows.empty());
    QCOMPARE(r.rowMaxDiff.size(), Eigen::Index(6));
    QVERIFY((r.rowMaxDiff.array() == 0).all());
    QCOMPARE(r.tolerance, 1e-10);
    QVERIFY2(startsWith(r.summary(), "PASS"), r.summary().c_str());
}

void TstCheck::oneEntry_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("col");
    QTest::addColumn<double>("value"); // added to the entry, or put there when non-finite
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<bool>("wrong");
    QTest::addColumn<int>("nonFinite");
    QTest::newRow("below tolerance") << 2 << 1 << 5e-11 << 1e-10 << false << 0;
    QTest::newRow("above tolerance") << 2 << 1 << 1e-3 << 1e-10 << true << 0;
    QTest::newRow("negative error") << 0 << 3 << -0.25 << 1e-4 << true << 0;
    QTest::newRow("float tolerance, float noise") << 5 << 0 << 3e-6 << 1e-4 << false << 0;
    QTest::newRow("float tolerance, real error") << 5 << 0 << 3e-3 << 1e-4 << true << 0;
    QTest::newRow("NaN") << 1 << 2 << kNaN << 1e-10 << true << 1;
    QTest::newRow("+inf") << 3 << 0 << kInf << 1e-10 << true << 1;
    QTest::newRow("-inf") << 4 << 3 << -kInf << 1.0 << true << 1;
}

void TstCheck::oneEntry() {
    QFETCH(int, row);
    QFETCH(int, col);
    QFETCH(double, value);
    QFETCH(double, tolerance);
    QFETCH(bool, wrong);
    QFETCH(int, nonFinite);
    const Matrix reference = sample(6, 4);
    Matrix output = reference;
    if (std::isfinite(value))
        output(row, col) += value;
    else
        output(row, col) = value;

    const CheckReport r = compareOutputs(output, reference, tolerance);
    QCOMPARE(r.passed(), !wrong);
    QCOMPARE(r.nonFiniteCount, nonFinite);
    QCOMPARE(r.tolerance, tolerance);
    QCOMPARE(r.rowMaxDiff.size(), Eigen::Index(6));
    if (wrong) {
        QCOMPARE(int(r.wrongRows.size()), 1);
        QCOMPARE(r.wrongRows.front(), row);
        QVERIFY2(startsWith(r.summary(), "FAIL"), r.summary().c_str());
    } else {
        QVERIFY(r.wrongRows.empty());
        QVERIFY2(startsWith(r.summary(), "PASS"), r.summary().c_str());
    }
    for (int i = 0; i < 6; ++i)
        if (i != row) QCOMPARE(r.rowMaxDiff(i), 0.0);
    if (std::isfinite(value)) {
        QVERIFY(std::abs(r.maxAbsDiff - std::abs(value)) <= 1e-15);
        QVERIFY(std::abs(r.rowMaxDiff(row) - std::abs(value)) <= 1e-15);
    } else {
        QVERIFY(std::isinf(r.maxAbsDiff));
        QVERIFY(std::isinf(r.rowMaxDiff(row)));
    }
}

void TstCheck::severalRowsAndNonFinite() {
    const Matrix reference = sample(10, 3);
    Matrix output = reference;
    output(7, 2) = kNaN;
    output(7, 1) = kInf;
    output(1, 0) += 0.5;
    output(4, 2) -= 2e-3;
    output(9, 0) += 1e-12; // noise: not wrong
    const CheckReport r = compareOutputs(output, reference, 1e-10);
    QVERIFY(!r.passed());
    QCOMPARE(r.nonFiniteCount, 2);
    QCOMPARE(r.wrongRows, (std::vector<int>{1, 4, 7}));
    QVERIFY(std::isinf(r.maxAbsDiff));
    QVERIFY(std::isinf(r.rowMaxDiff(7)));
    QVERIFY(std::abs(r.rowMaxDiff(1) - 0.5) <= 1e-15);
    QVERIFY(std::abs(r.rowMaxDiff(4) - 2e-3) <= 1e-15);
    QVERIFY(r.rowMaxDiff(9) > 0 && r.rowMaxDiff(9) < 1e-11);
    QVERIFY2(startsWith(r.summary(), "FAIL"), r.summary().c_str());

    // Only non-finite values, no wrong finite entry: still a failure.
    Matrix onlyNaN = reference;
    onlyNaN(0, 0) = kNaN;
    const CheckReport n = compareOutputs(onlyNaN, reference, 1e-10);
    QVERIFY(!n.passed());
    QCOMPARE(n.nonFiniteCount, 1);
}

void TstCheck::shapesMustAgree_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::newRow("fewer rows") << 5 << 4;
    QTest::newRow("more rows") << 7 << 4;
    QTest::newRow("fewer columns") << 6 << 3;
    QTest::newRow("empty") << 0 << 0;
}

void TstCheck::shapesMustAgree() {
    QFETCH(int, rows);
    QFETCH(int, cols);
    try {
        (void)compareOutputs(Matrix::Zero(rows, cols), sample(6, 4), 1e-10);
        QFAIL("compareOutputs accepted matrices of different shapes");
    } catch (const EngineError& e) {
        QVERIFY(e.kind() == ErrorKind::InvalidArgument);
        QVERIFY(std::string(e.what()).size() > 10);
    }
}

QTEST_APPLESS_MAIN(TstCheck)
#include "tst_check.moc"
