// Problems: the deterministic generator, the input patterns and what each promises about the
// scores, wrapping given matrices, the names the CLI parses, and the problem options, defaults
// and units every face shares (core/setup.h, core/units.h).
#include "core/errors.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/setup.h"
#include "core/units.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <set>
#include <string>

using namespace flashviz;
using namespace flashviz::test;

namespace {

ProblemSpec spec(int nq, int nk, int d, std::uint64_t seed,
                 InputPattern pattern = InputPattern::Gaussian) {
    return makeSpec(nq, nk, d, false, Precision::Double, pattern, seed);
}

// The shapes on which the early- and late-maximum patterns must put each row's maximum in place.
void addMaximumPositionRows() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("headDim");
    QTest::newRow("8x8 d4") << 8 << 8 << 4;
    QTest::newRow("64x200 d16") << 64 << 200 << 16;
    QTest::newRow("100x37 d3") << 100 << 37 << 3;
    QTest::newRow("32x32 d64") << 32 << 32 << 64;
}

Matrix scoresOf(const Problem& p) {
    return p.scale() * p.q * p.k.transpose();
}

// The scores of the current data row's problem (seed 2) with the given pattern.
Matrix scoresOfRow(InputPattern pattern) {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, headDim);
    return scoresOf(makeProblem(spec(queries, keys, headDim, 2, pattern)));
}

double sampleStd(const Matrix& m) {
    const double mean = m.mean();
    return std::sqrt((m.array() - mean).square().sum() / double(m.size() - 1));
}

} // namespace

class TstProblem : public QObject {
    Q_OBJECT

  private slots:
    void generatorIsDeterministic();
    void generatorIsStandardNormal();
    void sameSpecSameInputs();
    void shapesAndGaussianSpread();
    void earlyMaximumPutsTheMaximumAtKeyZero_data();
    void earlyMaximumPutsTheMaximumAtKeyZero();
    void lateMaximumPutsTheMaximumLate_data();
    void lateMaximumPutsTheMaximumLate();
    void largeScoresAreInTheHundreds();
    void wrapsGivenMatrices();
    void namesRoundTrip();
    void problemOptionsReadOverTheBase_data();
    void problemOptionsReadOverTheBase();
    void backwardSwitchesReadByName();
    void problemOptionsRefused_data();
    void problemOptionsRefused();
    void blocksLargerThanTheSequenceAreRefused();
    void stepOptionIsNeverClamped();
    void memoryCapacityIsInBinaryUnits();
};

void TstProblem::generatorIsDeterministic() {
    NormalGenerator a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i < 1000; ++i) {
        const double x = a.next();
        QCOMPARE(b.next(), x);
        if (c.next() != x) differs = true;
    }
    QVERIFY2(differs, "different seeds must give different sequences");
    NormalGenerator d(7), e(7);
    const Matrix m1 = d.matrix(5, 3, 2.0);
    const Matrix m2 = e.matrix(5, 3, 2.0);
    QCOMPARE(m1.rows(), Eigen::Index(5));
    QCOMPARE(m1.cols(), Eigen::Index(3));
    QVERIFY(m1 == m2);
}

void TstProblem::generatorIsStandardNormal() {
    NormalGenerator g(1);
    const int count = 200000;
    double sum = 0, sumSq = 0, within1 = 0;
    for (int i = 0; i < count; ++i) {
        const double x = g.next();
        QVERIFY(std::isfinite(x));
        sum += x;
        sumSq += x * x;
        if (std::abs(x) <= 1) within1 += 1;
    }
    const double mean = sum / count;
    const double var = sumSq / count - mean * mean;
    QVERIFY2(std::abs(mean) < 0.01, qPrintable(QStringLiteral("mean %1").arg(mean)));
    QVERIFY2(std::abs(var - 1) < 0.02, qPrintable(QStringLiteral("variance %1").arg(var)));
    // About 68.27 % of a standard normal lies within one standard deviation.
    QVERIFY(std::abs(within1 / count - 0.6827) < 0.01);
}

void TstProblem::sameSpecSameInputs() {
    const Problem a = makeProblem(spec(20, 30, 8, 5));
    const Problem b = makeProblem(spec(20, 30, 8, 5));
    QVERIFY(a.q == b.q && a.k == b.k && a.v == b.v);
    const Problem c = makeProblem(spec(20, 30, 8, 6));
    QVERIFY(a.q != c.q);
    QVERIFY(a.spec == spec(20, 30, 8, 5));
}

void TstProblem::shapesAndGaussianSpread() {
    const int d = 16;
    const Problem p = makeProblem(spec(300, 400, d, 11));
    QCOMPARE(p.q.rows(), Eigen::Index(300));
    QCOMPARE(p.k.rows(), Eigen::Index(400));
    QCOMPARE(p.v.rows(), Eigen::Index(400));
    QCOMPARE(p.q.cols(), Eigen::Index(d));
    QCOMPARE(p.k.cols(), Eigen::Index(d));
    QCOMPARE(p.v.cols(), Eigen::Index(d));
    // Q, K ~ N(0, 1)/sqrt(d), V ~ N(0, 1), as the script's toy inputs.
    QVERIFY(std::abs(sampleStd(p.q) - 0.25) < 0.01);
    QVERIFY(std::abs(sampleStd(p.k) - 0.25) < 0.01);
    QVERIFY(std::abs(sampleStd(p.v) - 1.0) < 0.03);
    QCOMPARE(p.scale(), 0.25);
}

void TstProblem::earlyMaximumPutsTheMaximumAtKeyZero_data() {
    addMaximumPositionRows();
}

void TstProblem::earlyMaximumPutsTheMaximumAtKeyZero() {
    const Matrix s = scoresOfRow(InputPattern::EarlyMaximum);
    for (int i = 0; i < s.rows(); ++i) {
        Eigen::Index arg = -1;
        s.row(i).maxCoeff(&arg);
        // Key 0 is in the first block for every Bc, so the maximum never rises after it.
        QCOMPARE(arg, Eigen::Index(0));
    }
}

void TstProblem::lateMaximumPutsTheMaximumLate_data() {
    addMaximumPositionRows();
}

void TstProblem::lateMaximumPutsTheMaximumLate() {
    const Matrix s = scoresOfRow(InputPattern::LateMaximum);
    for (int i = 0; i < s.rows(); ++i) {
        Eigen::Index arg = -1;
        const double rowMax = s.row(i).maxCoeff(&arg);
        const int keys = int(s.cols());
        QVERIFY2(arg >= (3 * keys) / 4,
                 qPrintable(
                     QStringLiteral("row %1: maximum at key %2 of %3").arg(i).arg(arg).arg(keys)));
        // The rise over the row must be large enough for a missing rescale to show.
        QVERIFY(rowMax - s(i, 0) > 2.0);
    }
}

void TstProblem::largeScoresAreInTheHundreds() {
    const Problem p = makeProblem(spec(32, 32, 16, 4, InputPattern::LargeScores));
    const Matrix s = scoresOf(p);
    QVERIFY(s.allFinite());
    // Past log(FLT_MAX) ~ 88.7 at least, so exp() overflows in float without a maximum.
    QVERIFY2(s.maxCoeff() > 100, qPrintable(QStringLiteral("max score %1").arg(s.maxCoeff())));
    int rowsOverFloatRange = 0;
    for (int i = 0; i < s.rows(); ++i)
        if (s.row(i).maxCoeff() > 88.8) ++rowsOverFloatRange;
    QVERIFY(rowsOverFloatRange > 16);
}

void TstProblem::wrapsGivenMatrices() {
    NormalGenerator g(3);
    const Matrix q = g.matrix(5, 3, 1.0);
    const Matrix k = g.matrix(7, 3, 1.0);
    const Matrix v = g.matrix(7, 3, 1.0);
    ProblemSpec label;
    label.seed = 99;
    label.pattern = InputPattern::LateMaximum;
    label.causal = true;
    label.scale = 0.3;
    const Problem p = makeProblem(q, k, v, label);
    QCOMPARE(p.spec.queries, 5);
    QCOMPARE(p.spec.keys, 7);
    QCOMPARE(p.spec.headDim, 3);
    QCOMPARE(p.spec.seed, std::uint64_t(99));
    QVERIFY(p.spec.pattern == InputPattern::LateMaximum);
    QVERIFY(p.spec.causal);
    QCOMPARE(p.scale(), 0.3);
    QVERIFY(p.q == q && p.k == k && p.v == v);
}

void TstProblem::namesRoundTrip() {
    QCOMPARE(int(allInputPatterns().size()), 4);
    std::set<std::string> names, descriptions;
    for (InputPattern pattern : allInputPatterns()) {
        const std::string name = toString(pattern);
        QVERIFY(!name.empty());
        names.insert(name);
        descriptions.insert(describe(pattern));
        QVERIFY(!describe(pattern).empty());
        const auto parsed = parseInputPattern(name);
        QVERIFY(parsed.has_value());
        QVERIFY(*parsed == pattern);
    }
    QCOMPARE(int(names.size()), 4);
    QCOMPARE(int(descriptions.size()), 4);
    QVERIFY(!parseInputPattern("no-such-pattern").has_value());
    QVERIFY(!parseInputPattern("").has_value());

    for (Precision precision : {Precision::Double, Precision::Float}) {
        const auto parsed = parsePrecision(toString(precision));
        QVERIFY(parsed.has_value() && *parsed == precision);
    }
    QVERIFY(std::string(toString(Precision::Double)) != toString(Precision::Float));
    QVERIFY(!parsePrecision("quad").has_value());

    for (LoopOrder order : {LoopOrder::QueryOuter, LoopOrder::KeyValueOuter}) {
        const auto parsed = parseLoopOrder(toString(order));
        QVERIFY(parsed.has_value() && *parsed == order);
    }
    QVERIFY(!parseLoopOrder("sideways").has_value());

    for (Algorithm algorithm : {Algorithm::Standard, Algorithm::Flash}) {
        const auto parsed = parseAlgorithm(toString(algorithm));
        QVERIFY(parsed.has_value() && *parsed == algorithm);
    }
    QVERIFY(!parseAlgorithm("approximate").has_value());
}

namespace {

// The message of the EngineError `call` throws; empty when it throws none.
template <class Call> std::string refusal(Call call) {
    try {
        call();
    } catch (const EngineError& e) {
        return e.what();
    }
    return {};
}

} // namespace

void TstProblem::problemOptionsReadOverTheBase_data() {
    QTest::addColumn<GivenOptions>("given");
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<qulonglong>("seed");
    QTest::newRow("nothing: the toy") << GivenOptions{} << 8 << 8 << 4 << 4 << qulonglong(kToySeed);
    QTest::newRow("n sets n_k") << GivenOptions{{"n", "64"}} << 64 << 64 << 4 << 4
                                << qulonglong(kToySeed);
    QTest::newRow("nk apart") << GivenOptions{{"n", "64"}, {"nk", "40"}, {"bc", "8"}} << 64 << 40
                              << 4 << 8 << qulonglong(kToySeed);
    QTest::newRow("blocks not given follow a short sequence")
        << GivenOptions{{"n", "2"}} << 2 << 2 << 2 << 2 << qulonglong(kToySeed);
    QTest::newRow("block as long as the sequence")
        << GivenOptions{{"br", "8"}, {"bc", "8"}} << 8 << 8 << 8 << 8 << qulonglong(kToySeed);
    QTest::newRow("largest seed") << GivenOptions{{"seed", std::to_string(kMaxSeed)}} << 8 << 8 << 4
                                  << 4 << qulonglong(kMaxSeed);
}

void TstProblem::problemOptionsReadOverTheBase() {
    QFETCH(GivenOptions, given);
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    QFETCH(qulonglong, seed);
    const RunSetup setup = readProblemOptions(given, toySetup());
    QCOMPARE(setup.spec.queries, queries);
    QCOMPARE(setup.spec.keys, keys);
    QCOMPARE(setup.options.blockRows, blockRows);
    QCOMPARE(setup.options.blockCols, blockCols);
    QCOMPARE(qulonglong(setup.spec.seed), seed);
}

// Every backward switch by its one name, on the backward; --backward is --algorithm backward.
void TstProblem::backwardSwitchesReadByName() {
    for (const BackwardSwitch& flag : backwardSwitches()) {
        const RunSetup setup = readProblemOptions({{"backward", ""}, {flag.name, ""}}, toySetup());
        QCOMPARE(setup.algorithm, Algorithm::Backward);
        QVERIFY2(isOn(setup.options.backward, flag), flag.name);
        QCOMPARE(setup.options.backward.anyBug(), flag.isBug);
    }
    QCOMPARE(readProblemOptions({{"algorithm", "backward"}}, toySetup()).algorithm, Algorithm::Backward);
}

void TstProblem::problemOptionsRefused_data() {
    QTest::addColumn<GivenOptions>("given");
    QTest::addColumn<QString>("message"); // a fragment: the option, the value and the range
    QTest::newRow("Br past n") << GivenOptions{{"br", "1000000"}}
                               << "Br = 1000000 is larger than n_q = 8 (allowed: 1 to 8)";
    QTest::newRow("Bc past n_k") << GivenOptions{{"nk", "6"}, {"bc", "7"}}
                                 << "Bc = 7 is larger than n_k = 6 (allowed: 1 to 6)";
    QTest::newRow("seed negative") << GivenOptions{{"seed", "-1"}}
                                   << "--seed '-1': the seed expects a whole number from 0 to "
                                      "9223372036854775807";
    QTest::newRow("seed past 2^63-1")
        << GivenOptions{{"seed", "9223372036854775808"}} << "from 0 to 9223372036854775807";
    QTest::newRow("n 0") << GivenOptions{{"n", "0"}}
                         << "--n '0': n_q (queries) must be at least 1 (allowed: 1 to 1048576)";
    QTest::newRow("n past the limit")
        << GivenOptions{{"n", "99999999999999999999"}} << "is past the limit of 1048576";
    QTest::newRow("d garbage") << GivenOptions{{"d", "4x"}}
                               << "--d '4x': d (head dimension) expects";
    QTest::newRow("pattern") << GivenOptions{{"pattern", "zigzag"}}
                             << "--pattern 'zigzag': use gaussian, late-max";
    QTest::newRow("loop order") << GivenOptions{{"loop-order", "sideways"}} << "--loop-order";
    QTest::newRow("scale nan") << GivenOptions{{"scale", "nan"}} << "--scale 'nan'";
    QTest::newRow("not a problem option") << GivenOptions{{"frobnicate", ""}} << "--frobnicate";
    QTest::newRow("backward switch on the forward")
        << GivenOptions{{"no-row-dot", ""}} << "--no-row-dot is a switch of the backward pass";
    QTest::newRow("two algorithms") << GivenOptions{{"backward", ""}, {"algorithm", "standard"}}
                                    << "ask for two algorithms";
}

void TstProblem::problemOptionsRefused() {
    QFETCH(GivenOptions, given);
    QFETCH(QString, message);
    const std::string error = refusal([&] { (void)readProblemOptions(given, toySetup()); });
    QVERIFY2(error.find(message.toStdString()) != std::string::npos,
             error.empty() ? "accepted" : error.c_str());
}

// "Br = 1000000 with n = 8" was accepted and shown as 1000000 x 4 tiles.
void TstProblem::blocksLargerThanTheSequenceAreRefused() {
    RunSetup toy = toySetup();
    validate(toy.spec, toy.options); // the toy itself is fine
    toy.options.blockRows = 1000000;
    QVERIFY(refusal([&] { validate(toy.spec, toy.options); }).find("allowed: 1 to 8") !=
            std::string::npos);
    toy.options.blockRows = 4;
    toy.options.blockCols = 9;
    QVERIFY(refusal([&] { validate(toy.spec, toy.options); }).find("Bc = 9") != std::string::npos);
}

void TstProblem::stepOptionIsNeverClamped() {
    const auto none = [] { return std::optional<int>(); };
    QCOMPARE(resolveStepOption("end", 30, none), 29);
    QCOMPARE(resolveStepOption("first-rescale+1", 30, [] { return std::optional<int>(11); }), 12);
    QVERIFY(refusal([&] {
                (void)resolveStepOption("999999", 30, none);
            }).find("names step 999999; this run has steps 0 to 29") != std::string::npos);
    QVERIFY(refusal([&] { (void)resolveStepOption("end+1", 30, none); }).find("0 to 29") !=
            std::string::npos);
    QVERIFY(refusal([&] {
                (void)resolveStepOption("first-rescale", 30, none);
            }).find("no step of this run rescales") != std::string::npos);
}

// The window showed the A100's HBM as "40 GB" and flashviz-cli as "42.9 GB".
void TstProblem::memoryCapacityIsInBinaryUnits() {
    QCOMPARE(formatMemoryCapacity(40.0 * (1 << 30)), std::string("40.0 GiB"));
    QCOMPARE(formatMemoryCapacity(141e9), std::string("131.3 GiB"));
    QCOMPARE(formatMemoryCapacity(512.0 * (1 << 20)), std::string("512 MiB"));
}

QTEST_APPLESS_MAIN(TstProblem)
#include "tst_problem.moc"
