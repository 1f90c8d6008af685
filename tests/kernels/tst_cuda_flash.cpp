// The GPU flash forward pass against the CPU engine (core's flashForward in float) and against
// ordinary attention: many shapes (ragged, n_q != n_k both ways, causal, d from 4 to 128, up to
// 16k keys), every fast-kernel variant, the rescale bug giving the CPU's wrong answer, no
// running max, the debug copy of S, and the Backend interface.
#include "gpu_test_support.h"

#include "core/attention.h"
#include "core/backend.h"
#include "core/errors.h"

using namespace flashviz;
using namespace flashviz::gputest;

Q_DECLARE_METATYPE(flashviz::InputPattern)

namespace {

struct Cpu {
    FlashOutputT<float> out;
    Matrix reference; // ordinary attention in double
};

Cpu runCpu(const Problem& p, const FlashOptions& o) {
    return {flashForward<float>(p.q.cast<float>(), p.k.cast<float>(), p.v.cast<float>(), p.scale(),
                                p.spec.causal, o),
            referenceAttention(p)};
}

CudaFlashOutput runGpu(const Problem& p, const FlashOptions& o,
                       CudaKernelPath path = CudaKernelPath::Auto, int fastKernel = -1) {
    return cudaFlashForward(p.q.cast<float>(), p.k.cast<float>(), p.v.cast<float>(), p.scale(),
                            p.spec.causal, o, path, fastKernel);
}

QString describe(const CudaFlashOutput& g, double err) {
    return QString("%1: max error %2").arg(QString::fromStdString(g.kernel)).arg(err);
}

} // namespace

class TestCudaFlash : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<InputPattern>(); }

    void matchesCpu_data() {
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        auto row = [](const char* name, int nq, int nk, int d, bool causal, int br, int bc) {
            QTest::newRow(name) << nq << nk << d << causal << br << bc;
        };
        row("toy 8x8 d4 Br4 Bc4", 8, 8, 4, false, 4, 4);
        row("toy causal 8x8 d4", 8, 8, 4, true, 4, 4);
        row("single 1x1 d4 Br1 Bc1", 1, 1, 4, false, 1, 1);
        row("ragged 37x37 d4 Br8 Bc8", 37, 37, 4, false, 8, 8);
        row("ragged causal 37x37 d16 Br8 Bc5", 37, 37, 16, true, 8, 5);
        row("nq>nk 100x70 d16 Br16 Bc24 causal", 100, 70, 16, true, 16, 24);
        row("nq<nk 70x100 d32 Br16 Bc8 causal", 70, 100, 32, true, 16, 8);
        row("nq<nk 70x100 d32 non-causal", 70, 100, 32, false, 32, 32);
        row("130x130 d16 Br64 Bc64", 130, 130, 16, false, 64, 64);
        row("blocks past n 20x13 d32 Br64 Bc64", 20, 13, 32, false, 64, 64);
        row("fast ragged 257x300 d64", 257, 300, 64, false, 64, 64);
        row("fast ragged causal 257x300 d64", 257, 300, 64, true, 64, 64);
        row("fast nq>nk causal 300x257 d64", 300, 257, 64, true, 64, 64);
        row("fast nq>>nk causal 200x50 d128", 200, 50, 128, true, 64, 64);
        row("fast 513x1000 d128", 513, 1000, 128, false, 64, 64);
        row("fast causal 513x1000 d128", 513, 1000, 128, true, 64, 64);
        row("fast causal 1024x1024 d64", 1024, 1024, 64, true, 64, 64);
        row("fast 1024x1024 d128", 1024, 1024, 128, false, 64, 64);
        row("fast 4096x4096 d64", 4096, 4096, 64, false, 64, 64);
        row("fast causal 2048x2048 d128", 2048, 2048, 128, true, 64, 64);
        row("few rows 3x16384 d64", 3, 16384, 64, false, 64, 64);
        row("few rows causal 5x16384 d128", 5, 16384, 128, true, 64, 64);
        row("few rows 7x16384 d16 Bc256", 7, 16384, 16, false, 64, 256);
        row("many rows causal 16384x40 d4", 16384, 40, 4, true, 64, 16);
        row("many rows 16384x300 d32", 16384, 300, 32, false, 32, 64);
    }
    void matchesCpu() {
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(int, br);
        QFETCH(int, bc);
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_IF_LARGE(double(nq) * nk);
        const Problem p = makeProblem(spec(nq, nk, d, causal));
        const FlashOptions o = blocks(br, bc);
        const Cpu cpu = runCpu(p, o);
        for (CudaKernelPath path : {CudaKernelPath::Auto, CudaKernelPath::Mirror}) {
            const CudaFlashOutput g = runGpu(p, o, path);
            const double vsCpu = mixedError(g.result.o, cpu.out.o);
            QVERIFY2(vsCpu <= 1e-4, qPrintable(describe(g, vsCpu)));
            const CheckReport check = compareOutputs(g.result.o.cast<double>(), cpu.reference, 1e-4);
            QVERIFY2(check.passed(), qPrintable(QString::fromStdString(g.kernel + " vs ordinary "
                                                                      "attention: " + check.summary())));
            QVERIFY2(mixedError(g.result.m, cpu.out.m) <= 1e-5, qPrintable(QString::fromStdString(g.kernel + " m")));
            QVERIFY2(mixedError(g.result.l, cpu.out.l) <= 1e-4, qPrintable(QString::fromStdString(g.kernel + " l")));
            if (path == CudaKernelPath::Mirror) QCOMPARE(g.path, CudaKernelPath::Mirror);
        }
        // Rows that see no key (causal with n_q > n_k) give exactly 0, as on the CPU.
        if (causal && nq > nk) {
            const CudaFlashOutput g = runGpu(p, o);
            for (int r = 0; r < nq - nk; ++r) QCOMPARE(g.result.o.row(r).cwiseAbs().maxCoeff(), 0.0f);
        }
    }

    void autoPicksFastKernelForExactAttention() {
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(64, 64, 64, false));
        const CudaFlashOutput fast = runGpu(p, blocks(64, 64));
        QCOMPARE(fast.path, CudaKernelPath::Fast);
        // 3xTF32 where the tensor cores outrun the FMAs (the A100, Hopper), fp32 FMA elsewhere.
        const auto info = cudaDeviceInfo();
        QVERIFY(info.has_value());
        const bool tensorCoresWin =
            (info->computeMajor == 8 && info->computeMinor == 0) || info->computeMajor == 9;
        QVERIFY2(QString::fromStdString(fast.kernel).startsWith("fast tf32x3_") == tensorCoresWin,
                 fast.kernel.c_str());
        QCOMPARE(runGpu(p, blocks(64, 64, false)).path, CudaKernelPath::Mirror);
        QCOMPARE(runGpu(p, blocks(64, 64, true, false)).path, CudaKernelPath::Mirror);
        const Problem small = makeProblem(spec(64, 64, 16, false));
        QCOMPARE(runGpu(small, blocks(64, 64)).path, CudaKernelPath::Mirror);
    }

    void everyFastVariant_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        for (const auto& k : cudaFastKernels())
            for (bool causal : {false, true})
                for (auto [nq, nk] : {std::pair{257, 300}, std::pair{300, 129}, std::pair{1, 70}}) {
                    const QString name = QString("%1 %2 %3x%4")
                                             .arg(QString::fromStdString(k.name))
                                             .arg(causal ? "causal" : "full")
                                             .arg(nq)
                                             .arg(nk);
                    QTest::newRow(qPrintable(name)) << k.id << k.headDim << causal << nq << nk;
                }
    }
    void everyFastVariant() {
        QFETCH(int, kernel);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(int, nq);
        QFETCH(int, nk);
        FLASHVIZ_REQUIRE_GPU();
        for (const auto& k : cudaFastKernels())
            if (k.id == kernel && !k.fitsDevice) QSKIP("variant needs more shared memory than this GPU has");
        if (underSanitizer() && (nq == 300 || (nq == 257 && !causal) || (nq == 1 && causal)))
            QSKIP("one ragged shape per variant under compute-sanitizer");
        const Problem p = makeProblem(spec(nq, nk, d, causal, InputPattern::Gaussian, 11));
        const FlashOptions o = blocks(64, 64);
        const Cpu cpu = runCpu(p, o);
        const CudaFlashOutput g = runGpu(p, o, CudaKernelPath::Fast, kernel);
        QCOMPARE(g.path, CudaKernelPath::Fast);
        const double err = mixedError(g.result.o, cpu.out.o);
        QVERIFY2(err <= 1e-4, qPrintable(describe(g, err)));
        QVERIFY(mixedError(g.result.m, cpu.out.m) <= 1e-5);
        QVERIFY(mixedError(g.result.l, cpu.out.l) <= 1e-4);
    }

    // The 3xTF32 variants keep fp32's accuracy over long rows. Their tensor cores round every
    // accumulation toward zero, and summing a row's P V straight into O made the error grow
    // with the number of keys: 35x the FMA kernel's at 16k keys before the fix (NOTES.md, v7).
    void tf32x3KeepsFp32Accuracy_data() {
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("nk");
        QTest::addColumn<bool>("causal");
        for (int d : {64, 128})
            for (int nk : {1024, 16384}) {
                const QString name = QString("d%1 %2 keys").arg(d).arg(nk);
                QTest::newRow(qPrintable(name)) << d << nk << false;
            }
        QTest::newRow("d128 16384 keys causal") << 128 << 16384 << true;
    }
    void tf32x3KeepsFp32Accuracy() {
        QFETCH(int, d);
        QFETCH(int, nk);
        QFETCH(bool, causal);
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_UNDER_SANITIZER("16k keys against a double-precision reference");
        // The last 256 query rows: under the causal mask they see (nearly) every key.
        const Problem p = makeProblem(spec(256, nk, d, causal, InputPattern::Gaussian, 5));
        const Cpu cpu = runCpu(p, blocks(64, 64));
        const double scale = cpu.reference.cwiseAbs().maxCoeff();
        double worstFma = 0, worstTf32x3 = 0;
        for (const auto& k : cudaFastKernels()) {
            if (k.headDim != d || !k.fitsDevice) continue;
            const CudaFlashOutput g = runGpu(p, blocks(64, 64), CudaKernelPath::Fast, k.id);
            const double err =
                (g.result.o.cast<double>() - cpu.reference).cwiseAbs().maxCoeff() / scale;
            qInfo("%s: max |O - O_double| / max |O_double| = %.2e", k.name.c_str(), err);
            (k.tf32x3 ? worstTf32x3 : worstFma) = std::max(k.tf32x3 ? worstTf32x3 : worstFma, err);
            QVERIFY2(mixedError(g.result.m, cpu.out.m) <= 1e-5, k.name.c_str());
            QVERIFY2(mixedError(g.result.l, cpu.out.l) <= 1e-4, k.name.c_str());
        }
        if (worstFma == 0 || worstTf32x3 == 0) QSKIP("this GPU fits no variant of each kind for d");
        // Measured on the H200: 3xTF32 4e-7 to 1.3e-6, fp32 FMA 1.8e-6 to 7.5e-6.
        QVERIFY2(worstTf32x3 <= 3 * worstFma && worstTf32x3 <= 5e-6,
                 qPrintable(QString("3xTF32 %1 against fp32 FMA %2").arg(worstTf32x3).arg(worstFma)));
    }

    // The rescale switched off: both sides add sums taken against different maxima, and the GPU
    // must produce the CPU's wrong answer, not the right one.
    void rescaleBugGivesCpuWrongAnswer_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        QTest::addColumn<InputPattern>("pattern");
        QTest::addColumn<double>("minWrong"); // how far from ordinary attention the bug lands
        const auto late = InputPattern::LateMaximum;
        QTest::newRow("toy 8 d4 4x4 late max") << 8 << 4 << false << 4 << 4 << late << 1e-2;
        QTest::newRow("64 d16 16x8 late max") << 64 << 16 << false << 16 << 8 << late << 1e-2;
        QTest::newRow("100 d32 causal 32x16 late max") << 100 << 32 << true << 32 << 16 << late << 1e-2;
        // Gaussian scores: block maxima differ little, so the wrong answer is only a bit wrong.
        QTest::newRow("256 d64 64x64 gaussian") << 256 << 64 << false << 64 << 64
                                                << InputPattern::Gaussian << 1e-4;
        QTest::newRow("300 d128 causal 64x32 late max") << 300 << 128 << true << 64 << 32 << late << 1e-2;
    }
    void rescaleBugGivesCpuWrongAnswer() {
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(int, br);
        QFETCH(int, bc);
        QFETCH(InputPattern, pattern);
        QFETCH(double, minWrong);
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(n, n, d, causal, pattern));
        const FlashOptions o = blocks(br, bc, false);
        const Cpu cpu = runCpu(p, o);
        const CudaFlashOutput g = runGpu(p, o);
        QCOMPARE(g.path, CudaKernelPath::Mirror);
        const double vsCpu = mixedError(g.result.o, cpu.out.o);
        QVERIFY2(vsCpu <= 1e-4, qPrintable(describe(g, vsCpu)));
        QVERIFY(mixedError(g.result.l, cpu.out.l) <= 1e-4);
        const CheckReport wrong = compareOutputs(g.result.o.cast<double>(), cpu.reference, 1e-4);
        QVERIFY2(!wrong.passed(), "the bug should make the GPU's answer wrong");
        QVERIFY2(wrong.maxAbsDiff > minWrong, qPrintable(QString::number(wrong.maxAbsDiff)));
    }

    void withoutRunningMax_data() {
        QTest::addColumn<InputPattern>("pattern");
        QTest::addColumn<bool>("overflows");
        QTest::newRow("gaussian: exact") << InputPattern::Gaussian << false;
        QTest::newRow("large scores: exp overflows") << InputPattern::LargeScores << true;
    }
    void withoutRunningMax() {
        QFETCH(InputPattern, pattern);
        QFETCH(bool, overflows);
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(96, 80, 16, false, pattern));
        const FlashOptions o = blocks(32, 16, true, false);
        const Cpu cpu = runCpu(p, o);
        const CudaFlashOutput g = runGpu(p, o);
        const Eigen::Index gpuBad = (!g.result.o.array().isFinite()).count();
        const Eigen::Index cpuBad = (!cpu.out.o.array().isFinite()).count();
        if (!overflows) {
            QCOMPARE(gpuBad, Eigen::Index(0));
            QVERIFY(mixedError(g.result.o, cpu.out.o) <= 1e-4);
            QVERIFY(compareOutputs(g.result.o.cast<double>(), cpu.reference, 1e-4).passed());
            return;
        }
        // Both overflow; where both stay finite they agree.
        QVERIFY(cpuBad > 0);
        QVERIFY(gpuBad > 0);
        double worst = 0;
        for (Eigen::Index i = 0; i < g.result.o.size(); ++i) {
            const float a = g.result.o.data()[i], b = cpu.out.o.data()[i];
            if (std::isfinite(a) && std::isfinite(b))
                worst = std::max(worst, double(std::fabs(a - b)) / std::max(1.0, double(std::fabs(b))));
        }
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }

    void debugCopyOfScores_data() {
        QTest::addColumn<bool>("causal");
        QTest::newRow("full") << false;
        QTest::newRow("causal: skipped tiles stay -inf") << true;
    }
    void debugCopyOfScores() {
        QFETCH(bool, causal);
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(70, 90, 8, causal));
        FlashOptions o = blocks(16, 16);
        o.keepFullScores = true;
        const Cpu cpu = runCpu(p, o);
        const CudaFlashOutput g = runGpu(p, o);
        QCOMPARE(g.path, CudaKernelPath::Mirror);
        QCOMPARE(g.result.fullScores.rows(), Eigen::Index(70));
        QCOMPARE(g.result.fullScores.cols(), Eigen::Index(90));
        for (Eigen::Index i = 0; i < 70; ++i)
            for (Eigen::Index j = 0; j < 90; ++j) {
                const float a = g.result.fullScores(i, j), b = cpu.out.fullScores(i, j);
                if (std::isinf(b)) {
                    QCOMPARE(a, b);
                } else {
                    QVERIFY(std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b)));
                }
            }
        QVERIFY(g.result.counters == cpu.out.counters);
    }

    void fastAndMirrorComputeTheSameFunction() {
        FLASHVIZ_REQUIRE_GPU();
        for (int d : {64, 128}) {
            const Problem p = makeProblem(spec(333, 444, d, true, InputPattern::EarlyMaximum, 3));
            const CudaFlashOutput fast = runGpu(p, blocks(16, 48), CudaKernelPath::Fast);
            const CudaFlashOutput mirror = runGpu(p, blocks(16, 48), CudaKernelPath::Mirror);
            QVERIFY(mixedError(fast.result.o, mirror.result.o) <= 1e-4);
            QVERIFY(mixedError(fast.result.m, mirror.result.m) <= 1e-5);
        }
    }

    void backendInterface() {
        FLASHVIZ_REQUIRE_GPU();
        CudaBackend gpu;
        CpuBackend cpu;
        ProblemSpec s = spec(200, 150, 64, true);
        s.precision = Precision::Double;
        const Problem p = makeProblem(s);
        const FlashOptions o = blocks(32, 32);
        const FlashResult g = gpu.flash(p, o);
        const FlashResult c = cpu.flash(p, o);
        QVERIFY(QString::fromStdString(gpu.lastKernel()).startsWith("fast"));
        QVERIFY(compareOutputs(g.o, c.o, 1e-4).passed());
        QVERIFY(compareOutputs(g.o, referenceAttention(p), 1e-4).passed());
        QVERIFY(g.counters == c.counters);
        QCOMPARE(g.m.size(), c.m.size());
        QVERIFY(compareOutputs(gpu.standard(p), cpu.standard(p), 1e-4).passed());
    }
};

QTEST_GUILESS_MAIN(TestCudaFlash)
#include "tst_cuda_flash.moc"
