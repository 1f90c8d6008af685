// The GPU's per-tile trace (m, l, the correction and the O accumulator after every
// (query block, key block) update) against the CPU backend's trace and against the values the
// step engine shows in the tile detail, with the bug switches on and off.
#include "gpu_test_support.h"

#include "core/backend.h"
#include "core/steps.h"

using namespace flashviz;
using namespace flashviz::gputest;

Q_DECLARE_METATYPE(flashviz::InputPattern)

namespace {

double vectorError(const Vector& a, const Vector& b) {
    if (a.size() != b.size()) return std::nan("");
    return mixedError(Matrix(a), Matrix(b));
}

} // namespace

class TestCudaTrace : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<InputPattern>(); }

    void traceMatchesCpuAndSteps_data() {
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        QTest::addColumn<bool>("rescale");
        QTest::addColumn<bool>("runningMax");
        QTest::addColumn<InputPattern>("pattern");
        QTest::addColumn<bool>("withSteps");
        const auto G = InputPattern::Gaussian, L = InputPattern::LateMaximum;
        QTest::newRow("explainer toy 8 d4 4x4") << 8 << 8 << 4 << false << 4 << 4 << true << true << G << true;
        QTest::newRow("toy, rescale bug") << 8 << 8 << 4 << false << 4 << 4 << false << true << L << true;
        QTest::newRow("toy, no running max") << 8 << 8 << 4 << false << 4 << 4 << true << false << G << true;
        QTest::newRow("causal ragged 37x37 d5 8x8") << 37 << 37 << 5 << true << 8 << 8 << true << true << G << true;
        QTest::newRow("causal nq>nk 40x20 d8 8x6") << 40 << 20 << 8 << true << 8 << 6 << true << true << L << true;
        QTest::newRow("nq<nk 24x70 d7 16x8 bug") << 24 << 70 << 7 << false << 16 << 8 << false << true << L << true;
        QTest::newRow("256x256 d64 64x64") << 256 << 256 << 64 << false << 64 << 64 << true << true << G << false;
        QTest::newRow("causal 300x300 d128 64x32") << 300 << 300 << 128 << true << 64 << 32 << true << true << G << false;
        QTest::newRow("1024x1024 d32 64x64 bug") << 1024 << 1024 << 32 << false << 64 << 64 << false << true << L << false;
    }
    void traceMatchesCpuAndSteps() {
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(int, br);
        QFETCH(int, bc);
        QFETCH(bool, rescale);
        QFETCH(bool, runningMax);
        QFETCH(InputPattern, pattern);
        QFETCH(bool, withSteps);
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_IF_LARGE(double(nq) * nk);
        const Problem p = makeProblem(spec(nq, nk, d, causal, pattern));
        const FlashOptions o = blocks(br, bc, rescale, runningMax);
        CudaBackend gpuBackend;
        CpuBackend cpuBackend;
        const FlashTrace gpu = gpuBackend.trace(p, o);
        const FlashTrace cpu = cpuBackend.trace(p, o);
        QCOMPARE(gpu.tiles.size(), cpu.tiles.size());
        QVERIFY(!gpu.tiles.empty());
        for (std::size_t t = 0; t < gpu.tiles.size(); ++t) {
            const TileTrace& g = gpu.tiles[t];
            const TileTrace& c = cpu.tiles[t];
            const QString where = QString("tile (%1, %2)").arg(g.queryBlock).arg(g.keyBlock);
            QCOMPARE(g.queryBlock, c.queryBlock);
            QCOMPARE(g.keyBlock, c.keyBlock);
            QVERIFY(g.rows == c.rows);
            QVERIFY2(vectorError(g.mNew, c.mNew) <= 1e-5, qPrintable(where + " m"));
            QVERIFY2(vectorError(g.lNew, c.lNew) <= 1e-4, qPrintable(where + " l"));
            QVERIFY2(vectorError(g.correction, c.correction) <= 1e-5, qPrintable(where + " correction"));
            QVERIFY2(mixedError(g.accNew, c.accNew) <= 1e-4, qPrintable(where + " acc"));
            QVERIFY(gpu.find(g.queryBlock, g.keyBlock) == &g);
        }
        if (!withSteps) return;

        // The tile detail the app animates: the step engine's UpdateOutput state of each tile.
        const StepEngine engine(p, Algorithm::Flash, o);
        int matched = 0;
        for (int step = 0; step < engine.stepCount(); ++step) {
            const StepInfo info = engine.info(step);
            if (info.kind != StepKind::UpdateOutput) continue;
            const TileTrace* g = gpu.find(info.queryBlock, info.keyBlock);
            QVERIFY2(g, qPrintable(QString("the GPU trace lacks tile (%1, %2)")
                                       .arg(info.queryBlock)
                                       .arg(info.keyBlock)));
            const StepState s = engine.state(step);
            QVERIFY(vectorError(g->mNew, s.mNew) <= 1e-5);
            QVERIFY(vectorError(g->lNew, s.lNew) <= 1e-4);
            QVERIFY(vectorError(g->correction, s.correction) <= 1e-5);
            QVERIFY(mixedError(g->accNew, s.accNew) <= 1e-4);
            ++matched;
        }
        QCOMPARE(std::size_t(matched), gpu.tiles.size());
    }

    // The explainer's toy: every tile's correction is exp(m_old - m_new) <= 1, and 0 on a
    // row's first visible tile (m_old = -inf).
    void correctionIsTheRescaleFactor() {
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(8, 8, 4, false));
        const FlashTrace t = CudaBackend().trace(p, blocks(4, 4));
        QCOMPARE(t.tiles.size(), std::size_t(4));
        for (const auto& tile : t.tiles) {
            QVERIFY((tile.correction.array() <= 1.0).all());
            if (tile.keyBlock == 0) QVERIFY((tile.correction.array() == 0.0).all());
        }
        // With the bug the GPU reports a factor of 1: nothing was rescaled.
        const FlashTrace bug = CudaBackend().trace(p, blocks(4, 4, false));
        for (const auto& tile : bug.tiles) QVERIFY((tile.correction.array() == 1.0).all());
    }
};

QTEST_GUILESS_MAIN(TestCudaTrace)
#include "tst_cuda_trace.moc"
