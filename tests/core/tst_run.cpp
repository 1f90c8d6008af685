// The run-and-check use case (core/run.h): a correct run passes, a run without the rescale fails
// and names exactly the wrong rows, the stages come in order, and a backend other than the CPU
// is checked beside it, stood in for when it refuses, or its refusal passed on.
#include "core/attention.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/run.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <vector>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::Algorithm)
Q_DECLARE_METATYPE(flashviz::FlashOptions)
Q_DECLARE_METATYPE(flashviz::ProblemSpec)

namespace {

// Another backend: the CPU's arithmetic under another name, or one that refuses everything.
class OtherBackend final : public Backend {
  public:
    explicit OtherBackend(bool refuses, bool keepsScores = true)
        : m_refuses(refuses), m_keepsScores(keepsScores) {}
    std::string name() const override { return "Other"; }
    FlashResult flash(const Problem& problem, const FlashOptions& options) override {
        ++calls;
        refuseIfAsked();
        FlashResult r = m_cpu.flash(problem, options);
        if (!m_keepsScores) r.fullScores = Matrix();
        return r;
    }
    Matrix standard(const Problem& problem) override {
        ++calls;
        refuseIfAsked();
        return m_cpu.standard(problem);
    }
    FlashTrace trace(const Problem& problem, const FlashOptions& options) override {
        return m_cpu.trace(problem, options);
    }
    Precision arithmetic(const ProblemSpec& spec) const override { return spec.precision; }
    int calls = 0;

  private:
    void refuseIfAsked() const {
        if (m_refuses) throw EngineError(ErrorKind::Unsupported, "this backend takes nothing today");
    }
    bool m_refuses;
    bool m_keepsScores;
    CpuBackend m_cpu;
};

RunRequest request(Algorithm algorithm, const FlashOptions& options, bool cpuAlongside = false) {
    RunRequest r;
    r.algorithm = algorithm;
    r.options = options;
    r.cpuAlongside = cpuAlongside;
    return r;
}

// The rows where some entry is off by more than the tolerance, found entry by entry.
std::vector<int> rowsOff(const Matrix& output, const Matrix& reference, double tolerance) {
    std::vector<int> rows;
    for (Eigen::Index i = 0; i < output.rows(); ++i)
        for (Eigen::Index c = 0; c < output.cols(); ++c)
            if (!(std::abs(output(i, c) - reference(i, c)) <= tolerance)) {
                rows.push_back(int(i));
                break;
            }
    return rows;
}

} // namespace

class TstRun : public QObject {
    Q_OBJECT

  private slots:
    void passesOnCorrectOptions_data();
    void passesOnCorrectOptions();
    void failsWithoutRescaleNamingTheRows_data();
    void failsWithoutRescaleNamingTheRows();
    void stagesInOrder();
    void otherBackendIsCheckedBesideTheCpu_data();
    void otherBackendIsCheckedBesideTheCpu();
    void cpuStandsInForARefusal_data();
    void cpuStandsInForARefusal();
    void refusalPassedOnWhenAskedForTheBackendAlone();
    void debugCopyOfSWhenTheBackendKeptNone();
    void tooLargeIsRefusedBeforeTheBackendRuns();
};

void TstRun::passesOnCorrectOptions_data() {
    QTest::addColumn<ProblemSpec>("spec");
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<FlashOptions>("options");
    const auto flash = Algorithm::Flash;
    QTest::newRow("toy 8x8 d4 4x4") << makeSpec(8, 8, 4) << flash << makeOptions(4, 4);
    QTest::newRow("late-max 64 kv-outer")
        << makeSpec(64, 64, 8, false, Precision::Double, InputPattern::LateMaximum) << flash
        << makeOptions(16, 8, LoopOrder::KeyValueOuter);
    QTest::newRow("causal ragged 37x53 Br8 Bc5") << makeSpec(37, 53, 6, true) << flash
                                                 << makeOptions(8, 5);
    QTest::newRow("causal nq>nk 50x20 float")
        << makeSpec(50, 20, 4, true, Precision::Float) << flash << makeOptions(7, 3);
    QTest::newRow("debug copy of S") << makeSpec(30, 30, 4, true) << flash
                                     << keepingFullScores(makeOptions(8, 8));
    QTest::newRow("standard 40x33") << makeSpec(40, 33, 4, true) << Algorithm::Standard
                                    << makeOptions(8, 8);
}

void TstRun::passesOnCorrectOptions() {
    QFETCH(ProblemSpec, spec);
    QFETCH(Algorithm, algorithm);
    QFETCH(FlashOptions, options);
    const Problem p = makeProblem(spec);
    CpuBackend cpu;
    const RunResult run = runAndCheck(p, cpu, request(algorithm, options));
    QVERIFY2(run.check.passed(), run.check.summary().c_str());
    QCOMPARE(run.backendName, std::string("CPU"));
    QVERIFY(run.cpuStoodIn.empty());
    QVERIFY(!run.cpuCheck);
    QCOMPARE(run.check.tolerance, defaultTolerance(spec.precision));
    QCOMPARE(maxAbs(run.reference, referenceAttention(p)), 0.0);
    QVERIFY(maxAbs(run.output, run.reference) <= run.check.tolerance);
    QVERIFY(run.standardCounters == standardCounts(spec.queries, spec.keys, spec.headDim));
    if (algorithm == Algorithm::Flash) {
        QVERIFY(run.counters == flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal,
                                            options));
        QCOMPARE(run.fullScores.size() > 0, options.keepFullScores);
        QCOMPARE(run.fullWeights.size(), Eigen::Index(0));
    } else {
        const StandardResult standard = standardForward(p);
        QVERIFY(run.counters == standard.counters);
        QCOMPARE(maxAbs(run.output, standard.o), 0.0);
        QCOMPARE(run.fullScores.rows(), Eigen::Index(spec.queries));
        QCOMPARE(run.fullWeights.cols(), Eigen::Index(spec.keys));
    }
}

void TstRun::failsWithoutRescaleNamingTheRows_data() {
    QTest::addColumn<ProblemSpec>("spec");
    QTest::addColumn<FlashOptions>("options");
    const auto late = [](int nq, int nk, bool causal) {
        return makeSpec(nq, nk, 4, causal, Precision::Double, InputPattern::LateMaximum, 0);
    };
    QTest::newRow("late-max 256 4x4") << late(256, 256, false) << makeOptions(4, 4);
    QTest::newRow("late-max causal 100x70 kv-outer")
        << late(100, 70, true) << makeOptions(16, 8, LoopOrder::KeyValueOuter);
    QTest::newRow("late-max 1 key block per row") << late(40, 40, true) << makeOptions(3, 5);
}

void TstRun::failsWithoutRescaleNamingTheRows() {
    QFETCH(ProblemSpec, spec);
    QFETCH(FlashOptions, options);
    options.rescale = false;
    const Problem p = makeProblem(spec);
    CpuBackend cpu;
    const RunResult run = runAndCheck(p, cpu, request(Algorithm::Flash, options));
    QVERIFY(!run.check.passed());
    QVERIFY(!run.check.wrongRows.empty());
    const Matrix expected = flashForward(p, options).o;
    QCOMPARE(maxAbs(run.output, expected), 0.0);
    QCOMPARE(run.check.wrongRows, rowsOff(expected, referenceAttention(p), run.check.tolerance));
    // With the rescale back on, the same problem passes.
    options.rescale = true;
    QVERIFY(runAndCheck(p, cpu, request(Algorithm::Flash, options)).check.passed());
}

void TstRun::stagesInOrder() {
    const Problem p = makeProblem(makeSpec(16, 16, 4));
    std::vector<RunStage> stages;
    RunRequest r = request(Algorithm::Flash, makeOptions(4, 4), true);
    r.onStage = [&](RunStage s) { stages.push_back(s); };
    CpuBackend cpu;
    runAndCheck(p, cpu, r);
    QVERIFY((stages == std::vector{RunStage::Reference, RunStage::Run})); // the CPU: nothing beside
    stages.clear();
    OtherBackend other(false);
    runAndCheck(p, other, r);
    QVERIFY((stages == std::vector{RunStage::Reference, RunStage::Run, RunStage::Alongside}));
}

void TstRun::otherBackendIsCheckedBesideTheCpu_data() {
    QTest::addColumn<Algorithm>("algorithm");
    QTest::newRow("flash") << Algorithm::Flash;
    QTest::newRow("standard") << Algorithm::Standard;
}

void TstRun::otherBackendIsCheckedBesideTheCpu() {
    QFETCH(Algorithm, algorithm);
    const Problem p = makeProblem(makeSpec(24, 40, 4, true));
    OtherBackend other(false);
    const RunResult run = runAndCheck(p, other, request(algorithm, makeOptions(8, 8), true));
    QCOMPARE(other.calls, 1);
    QCOMPARE(run.backendName, std::string("Other"));
    QVERIFY(run.check.passed());
    QVERIFY(run.cpuCheck);
    QVERIFY(run.cpuCheck->passed());
    // Asked for the backend alone, nothing runs beside it.
    const RunResult alone = runAndCheck(p, other, request(algorithm, makeOptions(8, 8)));
    QVERIFY(!alone.cpuCheck);
    QCOMPARE(other.calls, 2);
}

void TstRun::cpuStandsInForARefusal_data() { otherBackendIsCheckedBesideTheCpu_data(); }

void TstRun::cpuStandsInForARefusal() {
    QFETCH(Algorithm, algorithm);
    const Problem p = makeProblem(makeSpec(24, 40, 4, true));
    OtherBackend refusing(true);
    const RunResult run = runAndCheck(p, refusing, request(algorithm, makeOptions(8, 8), true));
    QCOMPARE(run.cpuStoodIn, std::string("this backend takes nothing today"));
    QCOMPARE(run.backendName, std::string("CPU"));
    QVERIFY(!run.cpuCheck); // the CPU is the run itself
    QVERIFY(run.check.passed());
}

void TstRun::refusalPassedOnWhenAskedForTheBackendAlone() {
    const Problem p = makeProblem(makeSpec(24, 40, 4, true));
    OtherBackend refusing(true);
    try {
        runAndCheck(p, refusing, request(Algorithm::Flash, makeOptions(8, 8)));
        QFAIL("the refusal was swallowed");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QCOMPARE(std::string(e.what()), std::string("this backend takes nothing today"));
    }
}

void TstRun::debugCopyOfSWhenTheBackendKeptNone() {
    const Problem p = makeProblem(makeSpec(20, 28, 4, true));
    const FlashOptions options = keepingFullScores(makeOptions(8, 8));
    OtherBackend noCopy(false, false);
    const RunResult run = runAndCheck(p, noCopy, request(Algorithm::Flash, options));
    QCOMPARE(maxAbs(run.fullScores, flashForward(p, options).fullScores), 0.0);
}

void TstRun::tooLargeIsRefusedBeforeTheBackendRuns() {
    const Problem p = makeProblem(makeSpec(kMaxSequenceLength, kMaxSequenceLength, 1));
    OtherBackend other(false);
    try {
        runAndCheck(p, other, request(Algorithm::Flash, makeOptions(64, 64), true));
        QFAIL("an n x n reference past this machine's memory was not refused");
    } catch (const EngineError& e) {
        QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
    }
    QCOMPARE(other.calls, 0);
}

QTEST_APPLESS_MAIN(TstRun)
#include "tst_run.moc"
