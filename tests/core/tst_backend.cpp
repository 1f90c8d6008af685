// The CPU backend (the reference every other backend mirrors) and the backend registry.
#include "core/attention.h"
#include "core/backend.h"
#include "core/errors.h"
#include "core/flash.h"
#include "kernels/backend_registry.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

using namespace flashviz;
using namespace flashviz::test;

Q_DECLARE_METATYPE(flashviz::Precision)

namespace {

Problem makeTestProblem(int nq, int nk, int d, bool causal, Precision precision) {
    return makeProblem(makeSpec(nq, nk, d, causal, precision, InputPattern::LateMaximum, 21));
}

int lastKey(int row, int nq, int nk, bool causal) {
    return causal ? std::min(nk - 1, row + nk - nq) : nk - 1;
}

} // namespace

class TstBackend : public QObject {
    Q_OBJECT

  private slots:
    void cpuBackendRuns_data();
    void cpuBackendRuns();
    void registryAlwaysHasTheCpu();
    void cudaWhenNotBuilt();
};

void TstBackend::cpuBackendRuns_data() {
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("blockRows");
    QTest::addColumn<int>("blockCols");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<Precision>("precision");
    QTest::newRow("32x32 Br8 Bc8") << 32 << 32 << 8 << 8 << false << Precision::Double;
    QTest::newRow("32x32 Br8 Bc8 causal") << 32 << 32 << 8 << 8 << true << Precision::Double;
    QTest::newRow("20x45 Br6 Bc10 causal") << 20 << 45 << 6 << 10 << true << Precision::Double;
    QTest::newRow("45x20 Br10 Bc6 causal") << 45 << 20 << 10 << 6 << true << Precision::Double;
    QTest::newRow("33x33 Br8 Bc7 float") << 33 << 33 << 8 << 7 << false << Precision::Float;
}

void TstBackend::cpuBackendRuns() {
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, blockRows);
    QFETCH(int, blockCols);
    QFETCH(bool, causal);
    QFETCH(Precision, precision);
    const Problem p = makeTestProblem(queries, keys, 5, causal, precision);
    const FlashOptions o = makeOptions(blockRows, blockCols);
    CpuBackend cpu;
    QCOMPARE(QString::fromStdString(cpu.name()), QStringLiteral("CPU"));

    const FlashResult direct = flashForward(p, o);
    const FlashResult viaBackend = cpu.flash(p, o);
    QVERIFY(viaBackend.o == direct.o);
    QVERIFY(viaBackend.counters == direct.counters);
    const double tol = precision == Precision::Double ? 1e-10 : 1e-4;
    QVERIFY((cpu.standard(p) - referenceAttention(p)).cwiseAbs().maxCoeff() <= 1e-12);
    QVERIFY((viaBackend.o - cpu.standard(p)).cwiseAbs().maxCoeff() <= tol);

    const FlashTrace trace = cpu.trace(p, o);
    // One entry per visible (query block, key block), key blocks in order within a query block.
    std::set<std::pair<int, int>> seen;
    int expectedTiles = 0;
    for (int i = 0, begin = 0; begin < queries; ++i, begin += blockRows) {
        const int end = std::min(queries, begin + blockRows);
        const int last = lastKey(end - 1, queries, keys, causal);
        const int visible = last < 0 ? 0 : last / blockCols + 1;
        expectedTiles += visible;
        for (int j = 0; j < visible; ++j) {
            const TileTrace* t = trace.find(i, j);
            QVERIFY2(t, qPrintable(QStringLiteral("tile (%1, %2) missing").arg(i).arg(j)));
            QVERIFY(t->rows == (Range{begin, end}));
            QCOMPARE(t->mNew.size(), Eigen::Index(end - begin));
            QVERIFY((t->correction.array() >= 0).all() && (t->correction.array() <= 1).all());
            if (j > 0) {
                const TileTrace* before = trace.find(i, j - 1);
                QVERIFY((t->mNew.array() >= before->mNew.array()).all()); // the maximum only rises
            }
            if (j == visible - 1) {
                // The last update, normalised, is the backend's own output.
                const double close = precision == Precision::Double ? 1e-12 : 1e-5;
                for (int r = 0; r < end - begin; ++r) {
                    if (t->lNew(r) == 0) { // this row sees no key: its output is 0
                        QVERIFY(viaBackend.o.row(begin + r).isZero(0));
                        continue;
                    }
                    const Eigen::RowVectorXd row = t->accNew.row(r) / t->lNew(r);
                    QVERIFY((row - viaBackend.o.row(begin + r)).cwiseAbs().maxCoeff() <= close);
                    QVERIFY(std::abs(t->mNew(r) - viaBackend.m(begin + r)) <=
                            1e-12 * (1 + std::abs(t->mNew(r))));
                }
            }
        }
        QVERIFY(trace.find(i, visible) == nullptr);
    }
    for (const TileTrace& t : trace.tiles)
        QVERIFY(seen.insert({t.queryBlock, t.keyBlock}).second);
    QCOMPARE(int(trace.tiles.size()), expectedTiles);
    QVERIFY(trace.find(-1, 0) == nullptr);
}

void TstBackend::registryAlwaysHasTheCpu() {
    const std::vector<BackendAvailability> all = listBackends();
    const auto cpu = std::find_if(all.begin(), all.end(), [](const BackendAvailability& b) {
        return b.kind == BackendKind::Cpu;
    });
    QVERIFY(cpu != all.end());
    QVERIFY(cpu->available);
    QVERIFY(!cpu->name.empty());
    const std::unique_ptr<Backend> backend = makeBackend(BackendKind::Cpu);
    QVERIFY(backend != nullptr);
    QCOMPARE(QString::fromStdString(backend->name()), QStringLiteral("CPU"));
    // The registry's CPU backend computes what the engine computes.
    const Problem p = makeTestProblem(16, 16, 4, false, Precision::Double);
    QVERIFY(backend->flash(p, FlashOptions{}).o == flashForward(p, FlashOptions{}).o);

    for (BackendKind kind : {BackendKind::Cpu, BackendKind::Cuda}) {
        const auto parsed = parseBackendKind(toString(kind));
        QVERIFY(parsed.has_value() && *parsed == kind);
    }
    QVERIFY(!parseBackendKind("tpu").has_value());
}

void TstBackend::cudaWhenNotBuilt() {
    const std::vector<BackendAvailability> all = listBackends();
    const auto cuda = std::find_if(all.begin(), all.end(), [](const BackendAvailability& b) {
        return b.kind == BackendKind::Cuda;
    });
    QVERIFY(cuda != all.end());
    if (cuda->available) QSKIP("a CUDA device is usable here; tests/kernels covers it");
    QVERIFY2(!cuda->reason.empty(), "an unavailable backend must say why");
    try {
        (void)makeBackend(BackendKind::Cuda);
        QFAIL("makeBackend gave a CUDA backend that listBackends calls unavailable");
    } catch (const EngineError& e) {
        QVERIFY(e.kind() == ErrorKind::Unsupported);
        QVERIFY2(std::string(e.what()).find(cuda->reason) != std::string::npos, e.what());
    }
    if (!cudaBackendBuilt()) QVERIFY(!currentGpuProfile().has_value());
}

QTEST_APPLESS_MAIN(TstBackend)
#include "tst_backend.moc"
